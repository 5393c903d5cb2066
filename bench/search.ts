/**
 * bun bench/search.ts <snapshot.tome> [--queries N] [--json]
 *
 * In process, one core. Measures, on a snapshot:
 *   - build time of the search indexes (first open, indexes not yet kept beside it)
 *   - boot time (open with the kept indexes: decode snapshot + indexes)
 *   - heap bytes per chunk after boot (JSC's heap size after GC, typed arrays and strings
 *     included, minus the heap before), and what boot added to the resident memory;
 *     boot is measured in a fresh process (--boot-only)
 *   - p50/p99 query latency for a mix: single words, 2–4 words, phrases, very common
 *     words, typos, prefixes, Japanese
 * Queries are drawn from the snapshot's own text (fixed seed), so every kind has matches.
 * Snapshot build time is measured by `bun run snapshot:build` itself (it prints it).
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { heapStats } from "bun:jsc";
import { indexPath, open } from "../src/search";
import { queryMix } from "./queries";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    queries: { type: "string", default: "200" },
    json: { type: "boolean" },
    "boot-only": { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(`Usage: bun bench/search.ts <snapshot.tome> [--queries N per kind] [--json]

  --queries N   queries per kind (default 200)
  --json        one JSON object instead of the table
  --boot-only   (used by the benchmark itself) open the snapshot with its kept indexes and
                print boot time, heap and resident memory as JSON`);
  process.exit(values.help ? 0 : 2);
}
const path = positionals[0];
const perKind = Number(values.queries);

const heap = () => {
  Bun.gc(true);
  return heapStats().heapSize;
};

interface Boot {
  bootSeconds: number;
  heapBytes: number;
  rssBytes: number;
}

// Boot is measured in a fresh process: nothing of the build is left in its heap.
if (values["boot-only"]) {
  const heapBefore = heap();
  const rssBefore = process.memoryUsage().rss;
  const t = performance.now();
  const booted = await open(path);
  const boot: Boot = { bootSeconds: (performance.now() - t) / 1000, heapBytes: heap() - heapBefore, rssBytes: process.memoryUsage().rss - rssBefore };
  console.log(JSON.stringify({ ...boot, chunks: booted.snapshot.meta.indexedChunks }));
  process.exit(0);
}

rmSync(indexPath(path), { force: true });
const t0 = performance.now();
const tome = await open(path);
const buildIndexSeconds = (performance.now() - t0) / 1000;
const chunks = tome.snapshot.meta.indexedChunks;

const child = Bun.spawnSync(["bun", import.meta.path, path, "--boot-only"], { stderr: "inherit" });
const boot = JSON.parse(child.stdout.toString().trim()) as Boot;
const bootSeconds = boot.bootSeconds;
const heapBytesPerChunk = boot.heapBytes / chunks;
const rssAfterBoot = boot.rssBytes;

const kinds = queryMix(tome.snapshot);

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

const results: Record<string, { p50: number; p99: number; n: number; meanHits: number }> = {};
const all: number[] = [];
for (const [kind, make] of Object.entries(kinds)) {
  const queries = Array.from({ length: perKind }, make).filter((q) => q.replace(/"/g, "").trim());
  if (!queries.length) continue;
  for (const q of queries.slice(0, 10)) tome.search(q); // warm-up
  const times: number[] = [];
  let hits = 0;
  for (const q of queries) {
    const t = performance.now();
    const r = tome.search(q);
    times.push(performance.now() - t);
    hits += r.estimatedTotalHits;
  }
  all.push(...times);
  results[kind] = { p50: percentile(times, 0.5), p99: percentile(times, 0.99), n: times.length, meanHits: hits / times.length };
}

const report = {
  snapshot: path,
  pages: tome.snapshot.pages.length,
  chunks,
  buildIndexSeconds,
  bootSeconds,
  heapBytesPerChunk,
  rssAfterBoot,
  latencyMs: results,
  overall: { p50: percentile(all, 0.5), p99: percentile(all, 0.99), n: all.length },
};
if (values.json) console.log(JSON.stringify(report));
else {
  console.log(`${path}: ${report.pages} pages, ${chunks} chunks`);
  console.log(`index build ${buildIndexSeconds.toFixed(1)} s; boot ${bootSeconds.toFixed(2)} s; heap ${(heapBytesPerChunk / 1024).toFixed(2)} KB per chunk; boot adds ${(rssAfterBoot / 2 ** 30).toFixed(2)} GiB resident`);
  console.log("| queries | n | p50 ms | p99 ms | mean matching pages |");
  console.log("|---|---|---|---|---|");
  for (const [k, r] of Object.entries(results)) console.log(`| ${k} | ${r.n} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.meanHits.toFixed(0)} |`);
  console.log(`| **all** | ${report.overall.n} | ${report.overall.p50.toFixed(2)} | ${report.overall.p99.toFixed(2)} | |`);
}
