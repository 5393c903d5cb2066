/**
 * bun bench/search/block-checks.ts <snapshot.tome> --root DIR [--rounds N] [--queries N]
 *
 * What the postings' checks (D163) cost, in one process so that a busy machine's drift falls on both sides alike:
 * this checkout's engine and another checkout's (--root: a git worktree of the commit before), on the same snapshot,
 * round after round in turn (A B, B A, A B …). Two workloads: every block of every list of both indexes decoded (its
 * documents, its skip data's last document, and the positions' counts), the decoder alone; and the search mix of
 * bench/queries.ts (every class, N queries each, no time limit). Prints each side's CPU ms per round at the median and
 * the ratio this ÷ other of each pair of rounds, at the median and its quartiles; and the ratio of the fastest rounds
 * (the least disturbed on a shared machine).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { quantile } from "../stats";

const USAGE = `Usage: bun bench/search/block-checks.ts <snapshot.tome> --root DIR [--rounds N] [--queries N]
  --root DIR    the other checkout (a git worktree of an earlier commit)
  --rounds N    rounds of each side, in turn (default 30)
  --queries N   queries per class of the search mix (default 20)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    root: { type: "string" },
    rounds: { type: "string", default: "30" },
    queries: { type: "string", default: "20" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0] || !values.root) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}
const path = resolve(positionals[0]);
type Search = typeof import("../../src/search");
type Postings = typeof import("../../src/search/postings/postings");

/** One side: its engine on the snapshot, and a decode of every block of its indexes with its own cursors. */
async function side(root: string) {
  const { open } = (await import(`${root}/src/search`)) as Search;
  const { PostingsReader } = (await import(`${root}/src/search/postings/postings`)) as Postings;
  const engine = open(path);
  const shards = [engine.text, engine.titleIndex].map((shard) => {
    const addresses: number[] = [];
    for (let term = 0; term < shard.data.vocabulary.starts.length - 1; term++)
      for (const l of shard.termLists(term)) addresses.push(l.address);
    // The other checkout's reader takes the parts alone; this one's the documents too.
    return { cursor: new PostingsReader(shard.data.postings, shard.documentCount).cursor(), addresses };
  });
  let sink = 0;
  return {
    engine,
    decodeAll(): number {
      for (const { cursor, addresses } of shards)
        for (const address of addresses) {
          cursor.open(address);
          for (let b = 0; b < cursor.blocks; b++) sink += cursor.decodePositions(b) + cursor.lastDoc(b);
        }
      return sink;
    },
  };
}

const here = await side(resolve(import.meta.dir, "../.."));
const other = await side(resolve(values.root));
const { queryMix } = await import("../queries");
const mix = queryMix(here.engine.snapshot);
const perClass = Number(values.queries);
const queries = Object.values(mix)
  .flatMap((draw) => Array.from({ length: perClass }, draw))
  .filter((q) => q.trim());

const cpuMs = (run: () => unknown): number => {
  const started = process.cpuUsage();
  run();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
};
const workloads = {
  "every block decoded": (s: typeof here) => s.decodeAll(),
  [`search mix (${queries.length} queries)`]: (s: typeof here) => {
    for (const q of queries) s.engine.search(q, { budgetMs: Number.POSITIVE_INFINITY });
  },
};
const rounds = Number(values.rounds);
console.log(`${path}: this checkout against ${resolve(values.root)}, ${rounds} rounds each in turn, CPU ms a round`);
for (const [name, work] of Object.entries(workloads)) {
  // A warm-up round each: both sides' code compiled, the file's pages read.
  work(here);
  work(other);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // A B, then B A: the side run second in a pair measured slower or faster by the order alone.
    if (r % 2) b.push(cpuMs(() => work(other)));
    a.push(cpuMs(() => work(here)));
    if (!(r % 2)) b.push(cpuMs(() => work(other)));
  }
  const ratios = a.map((x, i) => x / b[i]!);
  const f = (x: number) => x.toFixed(2);
  const least = (xs: number[]) => Math.min(...xs);
  console.log(
    `${name}: this ${f(quantile(a, 0.5))} ms, other ${f(quantile(b, 0.5))} ms; this ÷ other ${quantile(ratios, 0.5).toFixed(3)} (quartiles ${quantile(ratios, 0.25).toFixed(3)}–${quantile(ratios, 0.75).toFixed(3)}); fastest rounds ${f(least(a))} and ${f(least(b))} ms, ${(least(a) / least(b)).toFixed(3)}`,
  );
}
here.engine.close();
other.engine.close();
