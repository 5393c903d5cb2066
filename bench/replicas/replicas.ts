/**
 * bun bench/replicas/replicas.ts [--pairs P] [--duration S] [--connections N] [--snapshot FILE] [--json]
 *
 * Keys in Redis (TOME_REDIS_URL, issue 18) against keys in files, and one replica against two.
 *
 * 1. What Redis costs authentication: two servers serving /v1/chunk with the same key, one
 *    with its keys in files (TOME_DATA) and one in Redis (the file store moved there by
 *    `keys import`), loaded at the same time on the same core (as bench/http/http.ts measures the
 *    cost of keys: whatever else the machine does falls on both alike, and each one's
 *    requests/s go as the inverse of its cost). P pairs of runs, one started each way; the
 *    median of the pairs' ratios, with each server's CPU per request and Redis's own.
 * 2. One replica against two on the same Redis: the search mix (bench/queries.ts), whose
 *    requests cost the server far more than the load generator, sent to one replica, then
 *    round robin to two (one load generator per replica, half the connections each).
 *
 * Redis runs with the persistence docs/redis.md asks for (AOF, appendfsync everysec). On a
 * two-core machine: servers on core 0 and the load generator and Redis on core 1 for part 1
 * (Redis stands for another machine); for part 2 the second replica takes core 1, shared with
 * the load generator and Redis, so two replicas cannot reach twice one's figure here.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { BenchServer } from "../servers";
import { median, quantile } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    pairs: { type: "string", default: "8" },
    duration: { type: "string", default: "4" },
    connections: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    snapshot: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(`Usage: bun bench/replicas/replicas.ts [--pairs P] [--duration S] [--connections N] [--rounds R] [--snapshot FILE] [--json]

  --pairs P         pairs of 2-second runs, files against Redis (default 8)
  --duration S      seconds per run of part 2 (default 4)
  --connections N   concurrent connections (default 10)
  --rounds R        rounds of part 2, one replica then two (default 3)
  --snapshot FILE   serve this snapshot (default: build one from the shared English dumps)
Needs redis-server (Debian: apt-get install redis-server).`);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { PINNED, pinLoadGenerator } = await import("../cores");
const { startRedis } = await import("../redis-server");
const { queryMix } = await import("../queries");
const { BENCH_WORK_SHARE, benchKey, benchSnapshot, cpuMs, randomChunkIds, ROOT, spawnServer } = await import(
  "../servers"
);

if (!Bun.which("redis-server")) {
  console.error("redis-server is not installed (Debian: apt-get install redis-server).");
  process.exit(1);
}
const pairs = Number(values.pairs);
const duration = Number(values.duration);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const tempDir = (await Bun.$`mktemp -d`.text()).trim();
const onCore = (core: number, command: string[]) => (PINNED ? ["taskset", "-c", String(core), ...command] : command);

// Redis on a free port, with its own directory, on core 1.
const redis = await startRedis({ command: (argv) => onCore(1, argv) });
const redisUrl = redis.url;
const redisPid = redis.pid();

await pinLoadGenerator();
const { path, snapshot } = await benchSnapshot(values.snapshot, tempDir);
const data = join(tempDir, "data-on");
const key = await benchKey(data);
await Bun.$`bun ${join(ROOT, "src/cli/keys.ts")} import`
  .env({ ...process.env, TOME_DATA: data, TOME_REDIS_URL: redisUrl })
  .quiet();

const server = (core: number, env: Record<string, string>) =>
  spawnServer(onCore(core, ["bun", join(ROOT, "src/cli/start.ts")]), {
    TOME_SNAPSHOT: path,
    TOME_KEY_MS_PER_SECOND: BENCH_WORK_SHARE,
    ...env,
  });

console.error("starting the servers (the first start builds the search indexes)…");
const files = await server(0, { TOME_DATA: data });
const [viaRedis, second] = await Promise.all([
  server(0, { TOME_REDIS_URL: redisUrl }),
  server(1, { TOME_REDIS_URL: redisUrl }),
]);

interface Run {
  rps: number;
  cpuUs: number;
  redisCpuUs: number;
  p50: number;
  p99: number;
  failures: number;
}

async function load(target: BenchServer, paths: string[], seconds: number, conns = connections): Promise<Run> {
  const cpu0 = cpuMs(target.pid);
  const redis0 = cpuMs(redisPid);
  const r = await autocannon({
    url: target.url,
    connections: conns,
    duration: seconds,
    headers: { "x-api-key": key },
    requests: paths.map((p) => ({ method: "GET", path: p })),
  });
  const n = Math.max(1, r.requests.total);
  return {
    rps: r.requests.average,
    cpuUs: ((cpuMs(target.pid) - cpu0) * 1000) / n,
    redisCpuUs: ((cpuMs(redisPid) - redis0) * 1000) / n,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failures: r.non2xx + r.errors,
  };
}

// Part 1: files against Redis, /v1/chunk, at the same time on core 0.
const chunks = randomChunkIds(snapshot).map((id) => `/v1/chunk/${id}`);
await Promise.all([load(files, chunks, 1), load(viaRedis, chunks, 1)]);
const ratios: number[] = [];
const filesRuns: Run[] = [];
const redisRuns: Run[] = [];
for (let pair = 1; pair <= pairs; pair++) {
  const [f1, r1] = await Promise.all([load(files, chunks, 2), load(viaRedis, chunks, 2)]);
  const [r2, f2] = await Promise.all([load(viaRedis, chunks, 2), load(files, chunks, 2)]);
  ratios.push(Math.sqrt((r1.rps / f1.rps) * (r2.rps / f2.rps)));
  filesRuns.push(f1, f2);
  redisRuns.push(r1, r2);
  console.error(
    `pair ${pair}: files ${f1.rps.toFixed(0)} and ${f2.rps.toFixed(0)} req/s (${f1.cpuUs.toFixed(0)} µs CPU/request), ` +
      `Redis ${r1.rps.toFixed(0)} and ${r2.rps.toFixed(0)} req/s (${r1.cpuUs.toFixed(0)} µs): Redis ÷ files ${ratios.at(-1)!.toFixed(3)}`,
  );
}

// Part 2: one replica, then two round robin, on the search mix.
const mix = queryMix(snapshot);
const searches = Object.values(mix)
  .flatMap((make) => Array.from({ length: 100 }, make))
  .filter((q) => q.replace(/"/g, "").trim())
  .map((q) => `/v1/search?q=${encodeURIComponent(q)}`);
await Promise.all([load(viaRedis, searches, 1), load(second, searches, 1)]);
const one: number[] = [];
const two: number[] = [];
let failures = 0;
for (let round = 1; round <= rounds; round++) {
  const single = await load(viaRedis, searches, duration);
  const both = await Promise.all([
    load(viaRedis, searches, duration, Math.ceil(connections / 2)),
    load(second, searches, duration, Math.ceil(connections / 2)),
  ]);
  one.push(single.rps);
  two.push(both[0].rps + both[1].rps);
  failures += single.failures + both[0].failures + both[1].failures;
  console.error(`round ${round}: one replica ${single.rps.toFixed(0)} req/s, two ${two.at(-1)!.toFixed(0)} req/s`);
}

await Promise.all([files, viaRedis, second].map((s) => s.stop()));
await redis.stop();

const summary = (runs: Run[]) => ({
  requestsPerSecond: median(runs.map((r) => r.rps)),
  serverCpuUsPerRequest: median(runs.map((r) => r.cpuUs)),
  p50Ms: median(runs.map((r) => r.p50)),
  p99Ms: median(runs.map((r) => r.p99)),
  failures: runs.reduce((n, r) => n + r.failures, 0),
});
const report = {
  snapshot: path,
  pinned: PINNED,
  connections,
  pairs,
  files: summary(filesRuns),
  redis: { ...summary(redisRuns), redisCpuUsPerRequest: median(redisRuns.map((r) => r.redisCpuUs)) },
  /** Requests/s with keys in Redis ÷ with keys in files, at the same time on one core: the median of the pairs, and the quartiles. */
  redisToFiles: median(ratios),
  redisToFilesQuartiles: [quantile(ratios, 0.25), quantile(ratios, 0.75)],
  search: {
    durationSeconds: duration,
    rounds,
    oneReplica: median(one),
    twoReplicas: median(two),
    twoToOne: median(two.map((t, i) => t / one[i]!)),
    failures,
  },
};
if (values.json) console.log(JSON.stringify(report, null, 2));
else {
  const [q1, q3] = report.redisToFilesQuartiles;
  console.log(
    `/v1/chunk, ${connections} connections, ${pairs} pairs of 2-second runs at the same time${PINNED ? " on core 0 (load generator and Redis on core 1)" : ""}:`,
  );
  console.log(
    "| keys in | requests/s | server CPU µs/request | Redis CPU µs/request | p50 ms | p99 ms | non-2xx or errors |",
  );
  console.log("|---|---|---|---|---|---|---|");
  console.log(
    `| files | ${report.files.requestsPerSecond.toFixed(0)} | ${report.files.serverCpuUsPerRequest.toFixed(1)} | – | ${report.files.p50Ms} | ${report.files.p99Ms} | ${report.files.failures} |`,
  );
  console.log(
    `| Redis | ${report.redis.requestsPerSecond.toFixed(0)} | ${report.redis.serverCpuUsPerRequest.toFixed(1)} | ${report.redis.redisCpuUsPerRequest.toFixed(1)} | ${report.redis.p50Ms} | ${report.redis.p99Ms} | ${report.redis.failures} |`,
  );
  console.log(
    `Redis ÷ files requests/s: ${report.redisToFiles.toFixed(3)} (median of the pairs; quartiles ${q1!.toFixed(3)}–${q3!.toFixed(3)})`,
  );
  const s = report.search;
  console.log(
    `search mix, ${connections} connections, medians of ${rounds} rounds of ${duration} s: one replica ${s.oneReplica.toFixed(0)} req/s, ` +
      `two replicas ${s.twoReplicas.toFixed(0)} req/s (× ${s.twoToOne.toFixed(2)})${s.failures ? `; ${s.failures} non-2xx or errors` : ""}`,
  );
}
