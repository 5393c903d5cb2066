/**
 * What searches leave for the collector: the JS objects, by type, that 100 searches of each
 * kind of the benchmark mix make (queries drawn beforehand, so their drawing is not counted).
 *
 *   bun bench/search/garbage.ts SNAPSHOT [COUNT]
 *
 * One line per kind: the most made types with their count per search.
 */
import { heapStats } from "bun:jsc";

const [path, count = "100"] = process.argv.slice(2);
if (!path || path === "--help") {
  console.error("usage: bun bench/search/garbage.ts SNAPSHOT [COUNT]");
  process.exit(path ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { open } = await import("../../src/search");
const { queryMix } = await import("../queries");

const n = Number(count);
const tome = open(path);
const mix = queryMix(tome.snapshot);
for (const [kind, make] of Object.entries(mix)) {
  const queries = Array.from({ length: n }, make);
  for (const q of queries.slice(0, 5)) tome.search(q);
  Bun.gc(true);
  const before = heapStats().objectTypeCounts as Record<string, number>;
  for (const q of queries) tome.search(q);
  const after = heapStats().objectTypeCounts as Record<string, number>;
  const made = Object.keys(after)
    .map((type) => [type, ((after[type] ?? 0) - (before[type] ?? 0)) / n] as const)
    .filter(([, k]) => k >= 1)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8);
  console.log(`${kind.padEnd(12)} ${made.map(([type, k]) => `${type} ${Math.round(k)}`).join(", ")}`);
}
