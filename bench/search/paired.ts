/**
 * bun bench/search/paired.ts <before.tome> <after.tome> [--class K]... [--queries N] [--warm-up W] [--before-text-mapped]
 *
 * Two snapshots of one corpus (built before and after a change to the files' layout) opened in one process, and each
 * query's first run timed on both, query by query, in alternating order (pairing.ts). On this machine a standalone run's p50 moves
 * by half from run to run; the per-query ratio moves by a few percent. Prints per class each side's p50 / p99, the
 * median of the per-query ratio after ÷ before, and how many queries' hits differ (their pages, chunks and
 * snippets, in order: a layout change must not change an answer). Give the same file twice for the ratio's spread with no difference.
 * --before-text-mapped: the before engine reads its text blocks through its mapping, as before D207 (its container
 * refuses readFromFile); with the same file twice, what reading them by pread changes.
 */
import { parseArgs } from "node:util";
import { median, quantile } from "../stats";

const USAGE = `Usage: bun bench/search/paired.ts <before.tome> <after.tome> [--class K]... [--queries N] [--warm-up W] [--before-text-mapped]
  --class K      a class of the benchmark's mix (repeatable; default typo)
  --queries N    queries a class (default 300)
  --warm-up W    other queries each engine runs first (default 1000)
  --before-text-mapped   the before engine reads text blocks through its mapping, as before D207`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    class: { type: "string", multiple: true },
    queries: { type: "string", default: "300" },
    "warm-up": { type: "string", default: "1000" },
    "before-text-mapped": { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || positionals.length !== 2) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const { open } = await import("../../src/search");
const { mixClass, queryMix } = await import("../queries");
const { pairFirstRuns, warmBoth } = await import("./pairing");

const before = open(positionals[0]!);
const after = open(positionals[1]!);
// The store then reads each block from the mapping's view (Container.readFromFile's undefined: D207).
if (values["before-text-mapped"]) before.snapshot.container.readFromFile = () => undefined;
const mix = queryMix(before.snapshot);
const classes = values.class ?? ["typo"];
for (const k of classes)
  if (!(k in mix)) {
    console.error(`no class "${k}"; the classes are: ${Object.keys(mix).join(", ")}`);
    process.exit(2);
  }
const queries = classes.map(
  (k) => [k, Array.from({ length: Number(values.queries) }, mixClass(mix, k)).filter((q) => q.trim())] as const,
);

warmBoth(before, after, Number(values["warm-up"]));
const ms = (v: number[]) => `${quantile(v, 0.5).toFixed(2)} / ${quantile(v, 0.99).toFixed(2)}`;
console.log(`${positionals[0]} (before) and ${positionals[1]} (after), first runs paired, CPU ms`);
console.log(
  "| class | queries | before p50 / p99 | after p50 / p99 | after ÷ before, median of the queries | hits differ |",
);
console.log("|---|---|---|---|---|---|");
for (const [k, qs] of queries) {
  const { onA, onB, ratios, differ } = pairFirstRuns(before, after, qs);
  console.log(`| ${k} | ${qs.length} | ${ms(onA)} | ${ms(onB)} | ${median(ratios).toFixed(3)} | ${differ} |`);
}
