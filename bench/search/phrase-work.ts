/**
 * bun bench/search/phrase-work.ts <snapshot.tome> [--root DIR] [--queries N]
 *
 * What a quoted phrase costs in work, not time (so the same on a busy machine): the phrases of
 * bench/search/phrases-fts5.ts (2 consecutive words of the snapshot's own text, its fixed
 * seed), each searched once with no time limit; prints the mean a phrase of the chunks scored,
 * postings decoded, chunks asked of the phrase check, and blocks decoded (by any cursor), and
 * the process's CPU ms at the median phrase. --root DIR runs the engine of another checkout (a
 * git worktree of an earlier commit) on the same phrases.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { quantile } from "../stats";

const USAGE = `Usage: bun bench/search/phrase-work.ts <snapshot.tome> [--root DIR] [--queries N]
  --root DIR    the checkout whose engine searches (default: this one)
  --queries N   phrases (default 500)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    root: { type: "string" },
    queries: { type: "string", default: "500" },
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
const block = BlockCursor.prototype as unknown as { decoded: number; decode(b: number): number };
const decode = block.decode;
block.decode = function (this: { decoded: number }, b) {
  if (this.decoded !== b) decodes++;
  return decode.call(this, b);
};

let candidates = 0;
let postings = 0;
const cpu: number[] = [];
for (const phrase of phrases) {
  const started = process.cpuUsage();
  const { work } = engine.search(`"${phrase}"`, { budgetMs: Number.POSITIVE_INFINITY });
  const used = process.cpuUsage(started);
  cpu.push((used.user + used.system) / 1000);
  candidates += work.candidates;
  postings += work.postings;
}
const n = phrases.length;
const f = (x: number) => Math.round(x / n).toLocaleString();
console.log(`${root}: ${n} phrases of 2 words, no time limit; a phrase on average:`);
console.log(
  `chunks scored ${f(candidates)}, postings ${f(postings)}, phrase checks ${f(checks)}, blocks decoded ${f(decodes)}; CPU p50 ${quantile(cpu, 0.5).toFixed(2)} ms`,
);
