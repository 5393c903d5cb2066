/**
 * bun bench/relevance/passage-misses.ts [--snapshots DIR] [--show N] [--kinds]
 *
 * Where SQuAD's answer is missed (relevance.ts's "answer in the top chunk"), for studying the
 * passage rules (D62, D93, D94): each question's top hit is either right (its chunk holds an
 * answer), or on the right page with the wrong chunk (another chunk of the page holds one), or
 * on the wrong page, or on the right page none of whose chunks holds an answer as written.
 * --show N prints the first N questions of the second kind, with the chunk chosen and the
 * chunks holding the answer; --kinds splits them by the question's kind ("when", "how many",
 * other) and counts those whose chosen chunk lacks a year or a number, the most an answer-type
 * rule could win.
 */
import { mkdirSync } from "node:fs";
import { parseArgs } from "node:util";

const USAGE = `Usage: bun bench/relevance/passage-misses.ts [--snapshots DIR] [--show N] [--kinds]
  --snapshots DIR  build SQuAD's snapshot there once (squad.tome, as tune.ts names it) and reuse it (default: /tmp/tome-passage-misses)
  --show N         print the first N questions answered on the right page but in the wrong chunk
  --kinds          split those by the question's kind, and count the chosen chunks lacking a year or a number`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshots: { type: "string", default: "/tmp/tome-passage-misses" },
    show: { type: "string", default: "0" },
    kinds: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { sharedDataDir } = await import("../support");
const { engineOf, holdsAnswer, setSnapshot, squadQuestions } = await import("./question-sets");

const data = sharedDataDir();
mkdirSync(values.snapshots, { recursive: true });
const engine = engineOf(await setSnapshot(values.snapshots, "squad", ["squad-dev-articles.xml.bz2"], data));
const questions = await squadQuestions(engine, data);
const pageIndex = new Map(engine.snapshot.pages.list().map((p, i) => [p.pageId, i]));

const YEAR =
  /\b(1[0-9]{3}|20[0-9]{2})\b|\b(January|February|March|April|May|June|July|August|September|October|November|December)\b|\bcentur(y|ies)\b/;
const kindOf = (q: string) =>
  /^(when|what year|in what year|in which year|which year|what century|in what century|what decade|what date|on what date)\b/i.test(
    q,
  )
    ? "when"
    : /^how (many|much|long|old|far|large|big)\b/i.test(q) || /\bwhat (percentage|percent|number)\b/i.test(q)
      ? "how many"
      : "other";

const counts = { right: 0, wrongChunk: 0, wrongPage: 0, noChunkHolds: 0 };
const kinds = new Map<string, { questions: number; wrongChunk: number; lacking: number }>();
const shown: string[] = [];
for (const q of questions) {
  const { hits } = engine.search(q.text.slice(0, 500), { limit: 10, highlight: false, budgetMs: Infinity });
  const holds = (t: string) => holdsAnswer(t, q.answers);
  const kind = kindOf(q.text);
  const k = kinds.get(kind) ?? { questions: 0, wrongChunk: 0, lacking: 0 };
  kinds.set(kind, k);
  k.questions++;
  const hit = hits[0];
  const top = hit ? hit.page.chunks[hit.chunk]!.text : "";
  if (hit && holds(top)) counts.right++;
  else if (!hit || pageIndex.get(hit.page.pageId) !== [...q.gold.keys()][0]) counts.wrongPage++;
  else {
    const holders = hit.page.chunks.flatMap((c, i) => (holds(c.text) ? [i] : []));
    if (!holders.length) counts.noChunkHolds++;
    else {
      counts.wrongChunk++;
      k.wrongChunk++;
      if (!(kind === "when" ? YEAR : /\d/).test(top)) k.lacking++;
      if (shown.length < Number(values.show))
        shown.push(
          `${q.text}\n  answers: ${q.answers!.join(" | ")}\n  chosen, chunk ${hit.chunk} of ${hit.page.chunks.length}: ${top.slice(0, 160)}\n  holding it: ${holders.join(", ")}`,
        );
    }
  }
}
const n = questions.length;
console.log(
  `${n.toLocaleString()} SQuAD questions: answer in the top chunk ${counts.right.toLocaleString()} (${(counts.right / n).toFixed(4)}); right page, wrong chunk ${counts.wrongChunk.toLocaleString()}; wrong page ${counts.wrongPage.toLocaleString()}; right page holding no answer as written ${counts.noChunkHolds}`,
);
if (values.kinds) {
  console.log(
    "| kind | questions | right page, wrong chunk | of which the chunk chosen lacks a year (when) or a number |",
  );
  console.log("|---|---|---|---|");
  for (const [kind, k] of kinds) console.log(`| ${kind} | ${k.questions} | ${k.wrongChunk} | ${k.lacking} |`);
}
if (shown.length) console.log(`\n${shown.join("\n\n")}`);
