/**
 * bun bench/search/class-work.ts <snapshot.tome> --class C [--queries N] [--root DIR] [--hits FILE]
 *
 * What a class of the benchmark's mix (bench/queries.ts, its fixed seed) costs in work, not time
 * (so the same on a busy machine): each query searched once with no time limit, then the plans
 * they ran by (SearchWork.plan), the postings decoded and candidates scored over the class, and the
 * blocks every cursor decoded (counted at BlockCursor.decode, whatever SearchWork counts), and the text blocks
 * decompressed (those not in the text store's cache). --root
 * DIR runs the engine of another checkout (a git worktree of an earlier commit) on the same queries;
 * --hits FILE writes each query's hits (page, chunk, score) and estimatedTotalHits as JSON lines,
 * to diff two checkouts.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";

const USAGE = `Usage: bun bench/search/class-work.ts <snapshot.tome> --class C [--queries N] [--root DIR] [--hits FILE]
  --class C     a class of bench/queries.ts's mix (typo, prefix, "2-4 words", …)
  --queries N   queries drawn (default 200)
  --root DIR    the checkout whose engine searches (default: this one)
  --hits FILE   each query's hits and estimatedTotalHits as JSON lines`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    class: { type: "string" },
    queries: { type: "string", default: "200" },
    root: { type: "string" },
    hits: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0] || !values.class) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { mixClass, queryMix } = await import("../queries");

const count = Number(values.queries);
if (!Number.isInteger(count) || count < 1) {
  console.error(`--queries is a whole number of queries, at least 1, not ${values.queries}`);
  process.exit(2);
}
const root = resolve(values.root ?? `${import.meta.dir}/../..`);
const { open } = (await import(`${root}/src/search`)) as typeof import("../../src/search");
const engine = open(resolve(positionals[0]));
// Every block any cursor decodes, counted at the cursors (before 7bb04fc SearchWork.postings counted only range scoring's postings inside the range).
const { BlockCursor } = (await import(
  `${root}/src/search/postings/block-cursor`
)) as typeof import("../../src/search/postings/block-cursor");
const decode = BlockCursor.prototype.decode;
let blocksDecoded = 0;
BlockCursor.prototype.decode = function (this: InstanceType<typeof BlockCursor>, b: number) {
  const before = this.decodedPostings;
  const n = decode.call(this, b);
  if (this.decodedPostings !== before) blocksDecoded++;
  return n;
};
// The text blocks a search decompresses (not in the store's cache): one for each hit whose chunk's block no search before read.
const { TextStore } = (await import(`${root}/src/snapshot`)) as typeof import("../../src/snapshot");
const store = TextStore.prototype as unknown as { block(b: number): Uint8Array; cache: Map<number, Uint8Array> };
const block = store.block;
let textBlocks = 0;
store.block = function (this: typeof store, b: number) {
  if (!this.cache.has(b)) textBlocks++;
  return block.call(this, b);
};
const make = mixClass(queryMix(engine.snapshot), values.class);
const queries = Array.from({ length: count }, make);

blocksDecoded = 0;
textBlocks = 0;
const plans: Record<string, number> = {};
let postings = 0;
let candidates = 0;
const lines: string[] = [];
for (const q of queries) {
  const found = engine.search(q, { limit: 10, budgetMs: Number.POSITIVE_INFINITY });
  const { work } = found;
  plans[work.plan] = (plans[work.plan] ?? 0) + 1;
  postings += work.postings;
  candidates += work.candidates;
  const hits = found.hits.map((h) => [h.page.pageId, h.chunk, h.score]);
  lines.push(JSON.stringify({ q, hits, estimatedTotalHits: found.estimatedTotalHits }));
}
if (values.hits) await Bun.write(values.hits, `${lines.join("\n")}\n`);
console.log(`${root}: ${queries.length} queries of class ${values.class}`);
console.log(`plans: ${JSON.stringify(plans)}`);
console.log(
  `postings decoded ${postings}, candidates scored ${candidates} (SearchWork.candidates: chunks, and titles)`,
);
console.log(`blocks decoded ${blocksDecoded} (by every cursor, counted at BlockCursor.decode)`);
console.log(`text blocks decompressed ${textBlocks} (not in the text store's cache: the hits' chunks, and passages')`);
