/**
 * bun bench/search/search.ts <snapshot.tome> [--queries N] [--runs R] [--json]
 *
 * In process, one core. Measures, on a snapshot:
 *   - boot time: open() of the snapshot (format 2: its sections mapped, not decoded; the
 *     search indexes are sections of the same file), step by step, and the first search
 *   - heap bytes per chunk after boot (JSC's heap size after GC, typed arrays and strings
 *     included, minus the heap before), and what boot added to the resident memory
 *   - p50/p99 query latency for a mix: single words, 2–4 words, phrases, very common
 *     words, typos, prefixes, Japanese
 * Boot and queries run in a fresh process (--measure), as in a server: nothing of the
 * build is left in its heap. Queries are drawn from the snapshot's own text (fixed seed),
 * so every kind has matches. Snapshot build time is printed by `bun run snapshot:build`.
 */
import { parseArgs } from "node:util";
import { heapStats } from "bun:jsc";
import type { SearchResult } from "../../src/search";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    queries: { type: "string", default: "200" },
    json: { type: "boolean" },
    runs: { type: "string", default: "1" },
    measure: { type: "boolean" },
    pruned: { type: "boolean" },
    "no-orders": { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(`Usage: bun bench/search/search.ts <snapshot.tome> [--queries N per kind] [--runs R] [--json] [--no-orders]

  --queries N   queries per kind (default 200)
  --runs R      boot and query R times, each in a fresh process; figures are medians (default 1)
  --json        one JSON object instead of the table
  --no-orders   search as if the snapshot stored no page orders (D51): do they pay?
  --pruned      run every query twice, interleaved: exhaustive (pruning: false) and as
                by default (pruned where D48 says), and report both, the postings each
                read and the default's speed-up
  --measure     (used by the benchmark itself) open the snapshot,
                run the queries, print boot time, memory and latencies as JSON`);
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { Engine, loadIndexes } = await import("../../src/search");
const { openSnapshot } = await import("../../src/snapshot");
const { FIRST_QUERY, queryMix } = await import("../queries");

const path = positionals[0];
const perKind = Number(values.queries);

interface Measured {
  pages: number;
  chunks: number;
  bootSeconds: number;
  /** The first search after boot (its pages of the file not yet read), in ms. */
  firstSearchMs: number;
  heapBytes: number;
  rssBytes: number;
  /** Boot, step by step: seconds and heap bytes of the snapshot, its indexes, the engine. */
  bootParts: Record<"snapshot" | "indexes" | "engine", { seconds: number; heapBytes: number }>;
  latencyMs: Record<
    string,
    {
      p50: number;
      p99: number;
      n: number;
      meanHits: number;
      postings: number;
      /** How many of the class's queries ran by each plan (src/search/plans/plan.ts), searched by default. */
      plans: Record<string, number>;
      pruned?: { p50: number; p99: number; postings: number };
    }
  >;
  overall: { p50: number; p99: number; n: number; pruned?: { p50: number; p99: number } };
}

const heap = () => {
  Bun.gc(true);
  return heapStats().heapSize;
};

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

async function measure(): Promise<Measured> {
  const heapBefore = heap();
  const rssBefore = process.memoryUsage().rss;
  // open(), step by step.
  let mark = { t: performance.now(), heap: heapBefore };
  const step = () => {
    const now = { t: performance.now(), heap: heap() };
    const part = { seconds: (now.t - mark.t) / 1000, heapBytes: now.heap - mark.heap };
    mark = { t: performance.now(), heap: now.heap };
    return part;
  };
  const snapshot = openSnapshot(path);
  const snapshotPart = step();
  const indexes = loadIndexes(snapshot);
  const indexesPart = step();
  const tome = new Engine(snapshot, indexes.text, indexes.titles);
  const bootParts = { snapshot: snapshotPart, indexes: indexesPart, engine: step() };
  const bootSeconds = bootParts.snapshot.seconds + bootParts.indexes.seconds + bootParts.engine.seconds;
  const heapBytes = heap() - heapBefore;
  const rssBytes = process.memoryUsage().rss - rssBefore;
  // A fixed query, before the mix reads any text: nothing of the file is warm but what open() read.
  const firstStarted = performance.now();
  tome.search(FIRST_QUERY);
  const firstSearchMs = performance.now() - firstStarted;
  const mix = queryMix(tome.snapshot);
  const latencyMs: Measured["latencyMs"] = {};
  const all: number[] = [];
  const allPruned: number[] = [];
  for (const [kind, make] of Object.entries(mix)) {
    const queries = Array.from({ length: perKind }, make).filter((q) => q.replace(/"/g, "").trim());
    if (!queries.length) continue;
    for (const q of queries.slice(0, 10)) tome.search(q); // warm-up
    const times: number[] = [];
    const prunedTimes: number[] = [];
    let hits = 0;
    let postings = 0;
    let prunedPostings = 0;
    const plans: Record<string, number> = {};
    const allDefault: number[] = [];
    for (const [i, q] of queries.entries()) {
      // With --pruned, each query runs both ways, the order alternating (the second run finds warmer caches).
      const timed = (pruning: false | undefined) => {
        const started = performance.now();
        const r = tome.search(q, { pruning });
        return { r, ms: performance.now() - started };
      };
      const runs = values.pruned
        ? i % 2
          ? [timed(undefined), timed(false)].reverse()
          : [timed(false), timed(undefined)]
        : [timed(undefined)];
      const [exhaustive, byDefault] = runs as [
        { r: SearchResult; ms: number },
        { r: SearchResult; ms: number } | undefined,
      ];
      const plan = (byDefault ?? exhaustive).r.work.plan;
      plans[plan] = (plans[plan] ?? 0) + 1;
      times.push(exhaustive.ms);
      hits += exhaustive.r.estimatedTotalHits;
      postings += exhaustive.r.work.postings;
      if (byDefault) {
        prunedTimes.push(byDefault.ms);
        prunedPostings += byDefault.r.work.postings;
        allDefault.push(byDefault.ms);
      }
    }
    if (values.pruned) allPruned.push(...allDefault);
    all.push(...times);
    latencyMs[kind] = {
      p50: percentile(times, 0.5),
      p99: percentile(times, 0.99),
      n: times.length,
      meanHits: hits / times.length,
      postings: postings / times.length,
      plans,
    };
    if (values.pruned)
      latencyMs[kind].pruned = {
        p50: percentile(prunedTimes, 0.5),
        p99: percentile(prunedTimes, 0.99),
        postings: prunedPostings / times.length,
      };
  }
  return {
    pages: tome.snapshot.pages.length,
    chunks: tome.snapshot.meta.indexedChunks,
    bootSeconds,
    firstSearchMs,
    heapBytes,
    rssBytes,
    bootParts,
    latencyMs,
    overall: {
      p50: percentile(all, 0.5),
      p99: percentile(all, 0.99),
      n: all.length,
      pruned: values.pruned ? { p50: percentile(allPruned, 0.5), p99: percentile(allPruned, 0.99) } : undefined,
    },
  };
}

if (values.measure) {
  console.log(JSON.stringify(await measure()));
  process.exit(0);
}

const runs: Measured[] = [];
for (let r = 0; r < Number(values.runs); r++) {
  const child = Bun.spawnSync(
    [
      "bun",
      import.meta.path,
      path,
      "--measure",
      "--queries",
      String(perKind),
      ...(values.pruned ? ["--pruned"] : []),
      ...(values["no-orders"] ? ["--no-orders"] : []),
    ],
    { stderr: "inherit" },
  );
  if (child.exitCode !== 0) {
    console.error(`the measuring process failed (exit ${child.exitCode})`);
    process.exit(1);
  }
  runs.push(JSON.parse(child.stdout.toString().trim()) as Measured);
}
const median = (f: (m: Measured) => number) => percentile(runs.map(f), 0.5);
const m: Measured = {
  ...runs[0]!,
  bootSeconds: median((x) => x.bootSeconds),
  firstSearchMs: median((x) => x.firstSearchMs),
  heapBytes: median((x) => x.heapBytes),
  rssBytes: median((x) => x.rssBytes),
  latencyMs: Object.fromEntries(
    Object.entries(runs[0]!.latencyMs).map(([k, v]) => [
      k,
      { ...v, p50: median((x) => x.latencyMs[k]!.p50), p99: median((x) => x.latencyMs[k]!.p99) },
    ]),
  ),
  overall: {
    ...runs[0]!.overall,
    p50: median((x) => x.overall.p50),
    p99: median((x) => x.overall.p99),
    pruned: values.pruned
      ? { p50: median((x) => x.overall.pruned!.p50), p99: median((x) => x.overall.pruned!.p99) }
      : undefined,
  },
};
const report = { snapshot: path, runs: runs.length, heapBytesPerChunk: m.heapBytes / m.chunks, ...m };

if (values.json) console.log(JSON.stringify(report));
else {
  console.log(`${path}: ${m.pages} pages, ${m.chunks} chunks`);
  console.log(
    `${runs.length > 1 ? `medians of ${runs.length} runs; ` : ""}boot (open) ${m.bootSeconds.toFixed(3)} s, first search ${m.firstSearchMs.toFixed(1)} ms; heap ${(report.heapBytesPerChunk / 1024).toFixed(2)} KB per chunk; ` +
      `boot adds ${(m.rssBytes / 2 ** 30).toFixed(2)} GiB resident`,
  );
  const parts = Object.entries(m.bootParts).map(
    ([k, v]) => `${k} ${v.seconds.toFixed(2)} s, ${(v.heapBytes / m.chunks / 1024).toFixed(2)} KB/chunk`,
  );
  console.log(`boot, step by step (first run): ${parts.join("; ")}`);
  console.log(
    (values.pruned
      ? "| queries | n | exhaustive p50 ms | exhaustive p99 ms | mean matching pages | postings per query |"
      : "| queries | n | p50 ms | p99 ms | mean matching pages | postings per query | plans |") +
      (values.pruned
        ? " default p50 ms | default p99 ms | default postings per query | p50 exhaustive ÷ default |"
        : ""),
  );
  console.log(`|---|---|---|---|---|---|${values.pruned ? "---|---|---|---|" : "---|"}`);
  for (const [k, r] of Object.entries(m.latencyMs)) {
    const pruned = r.pruned
      ? ` ${r.pruned.p50.toFixed(2)} | ${r.pruned.p99.toFixed(2)} | ${r.pruned.postings.toFixed(0)} | ${(r.p50 / r.pruned.p50).toFixed(2)} |`
      : ` ${Object.entries(r.plans)
          .sort((a, b) => b[1] - a[1])
          .map(([plan, n]) => `${plan} ${n}`)
          .join(", ")} |`;
    console.log(
      `| ${k} | ${r.n} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.meanHits.toFixed(0)} | ${r.postings.toFixed(0)} |${pruned}`,
    );
  }
  const overallPruned = m.overall.pruned
    ? ` ${m.overall.pruned.p50.toFixed(2)} | ${m.overall.pruned.p99.toFixed(2)} | | ${(m.overall.p50 / m.overall.pruned.p50).toFixed(2)} |`
    : "";
  console.log(
    `| **all** | ${m.overall.n} | ${m.overall.p50.toFixed(2)} | ${m.overall.p99.toFixed(2)} | | |${overallPruned}`,
  );
}
