/**
 * bun bench/load/hostile-search.ts [--snapshot FILE] [--limit-ms N,N…] [--rounds R]
 *
 * fairness.ts's hostile searches (bench/queries.ts hostileQueries) in process, one after
 * another, at each time limit given (D91's budgetMs): how long one admitted search holds the
 * server's thread. Prints p50 / p90 / p99 / max ms per limit, and how many were cut off.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { quantile } from "../stats";

const USAGE = `Usage: bun bench/load/hostile-search.ts [--snapshot FILE] [--limit-ms N,N…] [--rounds R]
  --snapshot FILE   the snapshot to search (default: one built from the shared English dumps)
  --limit-ms LIST   the time limits to try, comma-separated (default 100,1)
  --rounds R        times each of the 12 queries is run per limit (default 20)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    "limit-ms": { type: "string", default: "100,1" },
    rounds: { type: "string", default: "20" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { open } = await import("../../src/search");
const { hostileQueries } = await import("../queries");
const { benchSnapshot } = await import("../servers");

const work = mkdtempSync(join(tmpdir(), "tome-hostile-"));
try {
  const { path } = await benchSnapshot(values.snapshot, work);
  const engine = open(path);
  const queries = hostileQueries();
  console.log("| limit ms | p50 | p90 | p99 | max | cut off |");
  console.log("|---|---|---|---|---|---|");
  for (const limit of values["limit-ms"]!.split(",").map(Number)) {
    const ms: number[] = [];
    let cut = 0;
    for (let i = 0; i < Number(values.rounds) * queries.length; i++) {
      const started = performance.now();
      if (engine.search(queries[i % queries.length]!, { budgetMs: limit }).timedOut) cut++;
      ms.push(performance.now() - started);
    }
    const f = (q: number) => quantile(ms, q).toFixed(1);
    console.log(`| ${limit} | ${f(0.5)} | ${f(0.9)} | ${f(0.99)} | ${f(1)} | ${cut} of ${ms.length} |`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
