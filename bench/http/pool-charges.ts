/**
 * bun bench/http/pool-charges.ts [--snapshot FILE] [--workers W] [--concurrency N] [--seconds S] [--cheap Q]
 *
 * What a pooled search is charged (`ms`, the worker's time on it less its waits for a core: D102, D144), the figure a
 * key's lane averages to decide whether its searches go two to a message (D166): the cheapest query alone, then the
 * search mix, each from N requests at a time of one key for S seconds after as many of warm-up, in process (no HTTP),
 * W workers sending one request a message (batchBelowMs 0). Prints p10, p50, p90 and the mean, in ms.
 */
import { tmpdir } from "node:os";
import { parseArgs } from "node:util";

const USAGE = `Usage: bun bench/http/pool-charges.ts [--snapshot FILE] [--workers W] [--concurrency N] [--seconds S] [--cheap Q]
  --snapshot FILE   the snapshot (default: enwiki-2016-sample and enwik8-head, built into a temporary folder)
  --workers W       search workers (default 2)
  --concurrency N   requests at a time, of one key (default 16)
  --seconds S       seconds measured, after as many of warm-up (default 4)
  --cheap Q         the cheapest query (default albedo)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    workers: { type: "string", default: "2" },
    concurrency: { type: "string", default: "16" },
    seconds: { type: "string", default: "4" },
    cheap: { type: "string", default: "albedo" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { SearchPool } = await import("../../src/http/pool/pool");
const { open } = await import("../../src/search");
const { queryMix, REQUEST_DEFAULTS } = await import("../queries");
const { benchSnapshot } = await import("../servers");

const { path, snapshot } = await benchSnapshot(values.snapshot, tmpdir());
const mix = Object.values(queryMix(snapshot));
const pool = new SearchPool({ workers: Number(values.workers), batchBelowMs: 0 });
const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
await generation.ready;

const at = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const scenarios: [string, () => string][] = [
  [values.cheap, () => values.cheap],
  ["search mix", () => mix[Math.floor(Math.random() * mix.length)]!()],
];
for (const [name, query] of scenarios) {
  let charges: number[] = [];
  // Twice: a warm-up, then the charges kept.
  for (let pass = 0; pass < 2; pass++) {
    charges = [];
    const until = performance.now() + Number(values.seconds) * 1000;
    await Promise.all(
      Array.from({ length: Number(values.concurrency) }, async () => {
        while (performance.now() < until) {
          const reply = await pool.run(generation.generation, "search", { ...REQUEST_DEFAULTS, q: query() }, "bench");
          charges.push(reply.ms);
        }
      }),
    );
  }
  const sorted = charges.sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  const f = (ms: number) => ms.toFixed(3);
  console.log(
    `${name}: ${sorted.length} searches charged p10 ${f(at(sorted, 0.1))}, p50 ${f(at(sorted, 0.5))}, p90 ${f(at(sorted, 0.9))}, mean ${f(mean)} ms`,
  );
}
pool.stop();
