/**
 * bun bench/search/page-bounds.ts <snapshot.tome> [--class K]... [--queries N] [--runs R] [--bytes]
 *
 * What D133 saves, on one snapshot and one engine: each query of the benchmark's mix
 * (bench/queries.ts, its fixed seed) searched as the executor now bounds a window (a word's page
 * bound from page impacts; a list's sparse block's postings in the window read for its bound), and as it did before D133 (1.75 × the chunk bound, every overlapping block's impact:
 * the same windows skipped, the same essential words), alternating, R times each after one
 * warm-up of both, no time limit. Prints per class the CPU ms (p50 / p90 / p99 of each query's
 * median) and the postings decoded (median, p99, sum) both ways, and checks the pages agree.
 * --bytes: what the page impacts add to the file (2 bytes a short list, 6 a block and a coarse
 * run of a long one), from the lists' sizes.
 */
import { parseArgs } from "node:util";
import { open } from "../../src/search";
import { BLOCK, COARSE } from "../../src/search/postings/postings-format";
import { ListReader } from "../../src/search/ranking/list-reader";
import { pageFactor } from "../../src/search/ranking/rules";
import { WordReader } from "../../src/search/ranking/word-reader";
import { mixClass, queryMix } from "../queries";
import { median, quantile } from "../stats";

const USAGE = `Usage: bun bench/search/page-bounds.ts <snapshot.tome> [--class K]... [--queries N] [--runs R] [--bytes]
  --class K     a class of bench/queries.ts's mix (repeatable; default typo, single word, 2-4 words)
  --queries N   queries per class (default 100)
  --runs R      searches of each query each way, alternating (default 3)
  --bytes       also count the bytes page impacts add to the snapshot's text index`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    class: { type: "string", multiple: true },
    queries: { type: "string", default: "100" },
    runs: { type: "string", default: "3" },
    bytes: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const engine = open(positionals[0]);

if (values.bytes) {
  const { text } = engine;
  let shorts = 0;
  let blocks = 0;
  let coarse = 0;
  text.eachTerm((key) => {
    for (const list of text.termLists(text.termOf(key)!)) {
      if (list.df < BLOCK) shorts++;
      else {
        const b = Math.ceil(list.df / BLOCK);
        blocks += b;
        coarse += Math.ceil(b / COARSE);
      }
    }
  });
  const added = 2 * shorts + 6 * (blocks + coarse);
  console.log(
    `page impacts: ${shorts} short lists × 2 B + (${blocks} blocks + ${coarse} coarse runs) × 6 B = ${(added / 1e6).toFixed(1)} MB, ${(added / text.documentCount).toFixed(2)} B a chunk`,
  );
}

// Off: a word's page bound is 1.75 × its chunk bound and no block is read for the bound, as before D133.
let pageBounds = true;
const readers = ListReader.prototype as unknown as { exactly(b: number, from: number, to: number): number };
const exactly = readers.exactly;
readers.exactly = function (this: ListReader, b: number, from: number, to: number): number {
  return pageBounds ? exactly.call(this, b, from, to) : -1;
};
const bound = WordReader.prototype.bound;
WordReader.prototype.bound = function (this: WordReader, from: number, to: number): number {
  const b = bound.call(this, from, to);
  if (!pageBounds) this.pageBound = pageFactor() * b;
  return b;
};

const mix = queryMix(engine.snapshot);
const classes = values.class ?? ["typo", "single word", "2-4 words"];
const n = Number(values.queries);
const runs = Number(values.runs);
const cpuMs = (f: () => void): number => {
  const start = process.cpuUsage();
  f();
  const spent = process.cpuUsage(start);
  return (spent.user + spent.system) / 1000;
};
const fmt = (x: number) => x.toFixed(2);

console.log(`${positionals[0]}: ${n} queries a class, ${runs} runs each way, alternating; CPU ms, no time limit`);
console.log(
  "| class | with page bounds p50 / p90 / p99 | before D133 p50 / p90 / p99 | postings median / p99 / sum, with → without |",
);
console.log("|---|---|---|---|");
for (const k of classes) {
  if (!(k in mix)) {
    console.error(`no class "${k}"; the classes are: ${Object.keys(mix).join(", ")}`);
    process.exit(2);
  }
  const queries = Array.from({ length: n }, mixClass(mix, k)).filter((q) => q.trim());
  const times = { on: [] as number[], off: [] as number[] };
  const postings = { on: [] as number[], off: [] as number[] };
  let differ = 0;
  for (const q of queries) {
    const search = (on: boolean) => {
      pageBounds = on;
      return engine.search(q, { limit: 10, budgetMs: Number.POSITIVE_INFINITY });
    };
    const a = search(true);
    const b = search(false);
    const order = (r: typeof a) => JSON.stringify(r.hits.map((h) => [h.page.pageId, h.chunk, h.score]));
    if (order(a) !== order(b)) differ++;
    postings.on.push(a.work.postings);
    postings.off.push(b.work.postings);
    const each = { on: [] as number[], off: [] as number[] };
    for (let r = 0; r < runs; r++)
      for (const on of r % 2 ? [false, true] : [true, false]) each[on ? "on" : "off"].push(cpuMs(() => search(on)));
    times.on.push(median(each.on));
    times.off.push(median(each.off));
  }
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  const row = (xs: number[]) => [0.5, 0.9, 0.99].map((p) => fmt(quantile(xs, p))).join(" / ");
  console.log(
    `| ${k} | ${row(times.on)} | ${row(times.off)} | ${median(postings.on)} / ${quantile(postings.on, 0.99)} / ${sum(postings.on)} → ${median(postings.off)} / ${quantile(postings.off, 0.99)} / ${sum(postings.off)} |`,
  );
  if (differ) console.log(`  ${differ} of ${queries.length} queries' pages differ: the bounds are wrong`);
}
