/**
 * bun bench/relevance.ts [--limit N]
 *
 * Runs the SQuAD dev questions (../shared/data/eval/squad-dev-questions.jsonl) against a
 * snapshot of squad-dev-articles.xml.bz2, and against a baseline in the same run:
 * MiniSearch with its default options over the same chunks (results deduplicated by page).
 * Reports page Recall@1, Recall@10, MRR@10, and how often the top hit's chunk holds one
 * of the answers.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { tmpdir } from "node:os";
import MiniSearch from "minisearch";
import { ingest } from "../src/ingest";
import { open } from "../src/search";
import { fromIngest, writeSnapshot } from "../src/snapshot";
import { sharedData } from "../src/cli/shared-data";

const SHARED = sharedData();

interface Question {
  question: string;
  answers: string[];
  page_id: number;
}

interface Ranked {
  pages: number[];
  topChunk: string;
}

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { limit: { type: "string" }, help: { type: "boolean", short: "h" } },
});
if (values.help) {
  console.log("Usage: bun bench/relevance.ts [--limit N]   (N questions; default all 10,570)");
  process.exit(0);
}

const questions: Question[] = (await Bun.file(join(SHARED, "eval/squad-dev-questions.jsonl")).text())
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .slice(0, values.limit ? Number(values.limit) : undefined);

const result = await ingest({ dumps: [join(SHARED, "dumps/squad-dev-articles.xml.bz2")] });
const path = join(tmpdir(), `tome-relevance-${process.pid}.tome`);
writeSnapshot(path, fromIngest(result, 300));
const tome = await open(path);
const snapshot = tome.snapshot;

// Baseline: MiniSearch defaults, same chunks.
const baseline = new MiniSearch<{ id: number; text: string; page: number }>({ fields: ["text"], storeFields: ["page", "text"] });
let g = 0;
for (const p of snapshot.pages) for (const c of p.chunks) baseline.add({ id: g++, text: c.text, page: p.pageId });

function rankTome(q: string): Ranked {
  const { hits } = tome.search(q.slice(0, 500), { limit: 10 });
  return { pages: hits.map((h) => h.page.pageId), topChunk: hits[0] ? hits[0].page.chunks[hits[0].chunk]!.text : "" };
}

function rankBaseline(q: string): Ranked {
  const pages: number[] = [];
  let topChunk = "";
  for (const r of baseline.search(q)) {
    if (!topChunk) topChunk = r.text as string;
    if (!pages.includes(r.page as number)) pages.push(r.page as number);
    if (pages.length === 10) break;
  }
  return { pages, topChunk };
}

function evaluate(rank: (q: string) => Ranked) {
  let r1 = 0;
  let r10 = 0;
  let mrr = 0;
  let answer = 0;
  const started = performance.now();
  for (const q of questions) {
    const { pages, topChunk } = rank(q.question);
    const at = pages.indexOf(q.page_id);
    if (at === 0) r1++;
    if (at >= 0) {
      r10++;
      mrr += 1 / (at + 1);
    }
    const lower = topChunk.toLowerCase();
    if (q.answers.some((a) => lower.includes(a.toLowerCase()))) answer++;
  }
  const n = questions.length;
  return {
    recallAt1: r1 / n,
    recallAt10: r10 / n,
    mrrAt10: mrr / n,
    topChunkHoldsAnswer: answer / n,
    msPerQuery: (performance.now() - started) / n,
  };
}

const ours = evaluate(rankTome);
const base = evaluate(rankBaseline);
await Bun.file(path).delete();
await Bun.file(`${path}.idx`).delete();

const f = (x: number) => x.toFixed(3);
console.log(`${questions.length} questions, ${snapshot.pages.length} pages, ${snapshot.meta.indexedChunks} chunks`);
console.log("| metric | Tome | MiniSearch defaults | difference |");
console.log("|---|---|---|---|");
for (const k of ["recallAt1", "recallAt10", "mrrAt10", "topChunkHoldsAnswer"] as const) {
  console.log(`| ${k} | ${f(ours[k])} | ${f(base[k])} | ${ours[k] - base[k] >= 0 ? "+" : ""}${f(ours[k] - base[k])} |`);
}
console.log(`| ms per query | ${ours.msPerQuery.toFixed(2)} | ${base.msPerQuery.toFixed(2)} | |`);
