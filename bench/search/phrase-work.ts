/**
 * bun bench/search/phrase-work.ts <snapshot.tome> [--root DIR] [--queries N]
 *
 * What a quoted phrase costs in work, not time (so the same on a busy machine): the phrases of
 * bench/search/phrases-fts5.ts (2 consecutive words of the snapshot's own text, its fixed
 * seed), each searched once with no time limit; prints the mean a phrase of the chunks scored,
 * postings decoded, chunks asked of the phrase check (on the pages that may rank, and first:
 * before the other words are read, D132, D138), and blocks decoded (by any cursor), and the
 * process's CPU ms at the median phrase and for them all. --root DIR runs the engine of another
 * checkout (a git worktree of an earlier commit) on the same phrases. --hits FILE writes each
 * phrase's hits (page, chunk, score) and estimatedTotalHits as JSON lines, to diff two checkouts;
 * --truth counts the pages truly holding each phrase (every chunk of its rarest word checked, in
 * its text or heading) and prints how far estimatedTotalHits is from it (D123).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { quantile } from "../stats";

const USAGE = `Usage: bun bench/search/phrase-work.ts <snapshot.tome> [--root DIR] [--queries N] [--hits FILE] [--truth]
  --root DIR    the checkout whose engine searches (default: this one)
  --queries N   phrases (default 500)
  --hits FILE   each phrase's hits and estimatedTotalHits as JSON lines
  --truth       estimatedTotalHits against the pages truly holding each phrase`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    root: { type: "string" },
    queries: { type: "string", default: "500" },
    hits: { type: "string" },
    truth: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const root = resolve(values.root ?? resolve(import.meta.dir, "../.."));
const { open } = (await import(`${root}/src/search`)) as typeof import("../../src/search");
const { querySampler } = (await import(`${root}/bench/queries`)) as typeof import("../queries");
const { PageGatherer } = (await import(
  `${root}/src/search/ranking/page-gather`
)) as typeof import("../../src/search/ranking/page-gather");
const { BlockCursor } = (await import(
  `${root}/src/search/postings/block-cursor`
)) as typeof import("../../src/search/postings/block-cursor");
const { Executor } = (await import(
  `${root}/src/search/ranking/executor`
)) as typeof import("../../src/search/ranking/executor");
const engine = open(positionals[0]);
const { sampleWords } = querySampler(engine.snapshot, 23);
const plain = (w: string) => /^[\p{L}\p{N}]+$/u.test(w);
const phrases: string[] = [];
while (phrases.length < Number(values.queries)) {
  const ws = sampleWords(2, plain);
  if (ws.length === 2) phrases.push(ws.join(" "));
}

// Counted where they happen: the chunks asked of the phrase check, and each block a cursor decodes anew.
let checks = 0;
let decodes = 0;
const gatherer = PageGatherer.prototype as unknown as { keeps(keep: unknown, chunk: number): boolean };
const keeps = gatherer.keeps;
gatherer.keeps = function (this: unknown, keep, chunk) {
  checks++;
  return keeps.call(this, keep, chunk);
};
// The chunks the conjunction asks of the phrase check before the other words are read (D132's Executor.kept).
let askedFirst = 0;
const executor = Executor.prototype as unknown as { kept(...args: unknown[]): number };
const kept = executor.kept;
executor.kept = function (this: unknown, ...args) {
  // The candidates' count is kept()'s last argument, whatever its others (kept(keep, from, n) before D203 and again
  // after its review; kept(pass, keep, from, n) between), so that --root may name a checkout of either.
  askedFirst += args.at(-1) as number;
  return kept.apply(this, args);
};
const block = BlockCursor.prototype as unknown as { decoded: number; decode(b: number): number };
const decode = block.decode;
block.decode = function (this: { decoded: number }, b) {
  if (this.decoded !== b) decodes++;
  return decode.call(this, b);
};

let candidates = 0;
let postings = 0;
const cpu: number[] = [];
const lines: string[] = [];
const totals: number[] = [];
for (const phrase of phrases) {
  const started = process.cpuUsage();
  const { work, hits, estimatedTotalHits } = engine.search(`"${phrase}"`, { budgetMs: Number.POSITIVE_INFINITY });
  const used = process.cpuUsage(started);
  cpu.push((used.user + used.system) / 1000);
  candidates += work.candidates;
  postings += work.postings;
  totals.push(estimatedTotalHits);
  if (values.hits)
    lines.push(
      JSON.stringify({ phrase, estimatedTotalHits, hits: hits.map((h) => [h.page.pageId, h.chunk, h.score]) }),
    );
}
const n = phrases.length;
const f = (x: number) => Math.round(x / n).toLocaleString();
console.log(`${root}: ${n} phrases of 2 words, no time limit; a phrase on average:`);
console.log(
  `chunks scored ${f(candidates)}, postings ${f(postings)}, phrase checks ${f(checks)} (and ${f(askedFirst)} asked first), blocks decoded ${f(decodes)}; CPU p50 ${quantile(cpu, 0.5).toFixed(2)} ms, all ${Math.round(cpu.reduce((a, b) => a + b, 0)).toLocaleString()} ms`,
);
if (values.hits) await Bun.write(values.hits, `${lines.join("\n")}\n`);
if (values.truth) {
  const { indexKey } = (await import(
    `${root}/src/search/text/analyze`
  )) as typeof import("../../src/search/text/analyze");
  const { SECTION_FIELD, TEXT_FIELD } = (await import(
    `${root}/src/search/postings/fields`
  )) as typeof import("../../src/search/postings/fields");
  const { text } = engine;
  const pages = engine.snapshot.pages;
  const pageOf = new Int32Array(text.documentCount);
  for (let p = 0; p < pages.length; p++) pageOf.fill(p, pages.firstDoc[p]!, pages.firstDoc[p]! + pages.chunkCounts[p]!);
  const logs: number[] = [];
  for (const [i, phrase] of phrases.entries()) {
    const terms = phrase.split(" ").map((w) => text.termOf(indexKey(w)));
    if (terms.some((t) => t === undefined) || !totals[i]) continue;
    const sequence = terms as number[];
    const checks = [TEXT_FIELD, SECTION_FIELD].flatMap((field) => text.sequenceCheck(sequence, field) ?? []);
    const rarest = sequence.reduce((a, b) => (text.frequency(b) < text.frequency(a) ? b : a));
    const holding = new Set<number>();
    const cursor = text.newCursor();
    for (const list of text.termLists(rarest)) {
      if (list.field !== TEXT_FIELD && list.field !== SECTION_FIELD) continue;
      cursor.open(list.address);
      cursor.forEach((d) => {
        if (checks.some((holds) => holds(d))) holding.add(pageOf[d]!);
      });
    }
    if (holding.size) logs.push(Math.log(totals[i]! / holding.size));
  }
  const mean = logs.reduce((a, b) => a + b, 0) / logs.length;
  const within = logs.filter((l) => Math.abs(l) < Math.LN2).length;
  console.log(
    `estimatedTotalHits against the pages holding the phrase (${logs.length} phrases): mean log ratio ${mean.toFixed(3)}, median |log| ${quantile(
      logs.map(Math.abs),
      0.5,
    ).toFixed(3)}, within a factor of 2 for ${within}`,
  );
}
