/**
 * bun bench/http/http.ts [--duration S] [--connections N] [--rounds R] [--auth-pairs P] [--snapshot FILE] [--json]
 *
 * The real server (`bun run start`, its own process) on a snapshot of the shared English
 * dumps, loaded with autocannon from this process (2 cores: one each). Reports requests/s
 * and p50/p99 latency per scenario, as medians over rounds that interleave the scenarios,
 * and the ratio of search requests/s to /healthz requests/s measured in the same round.
 *
 * Scenarios: /healthz (on the server without keys: D188 would have one address's flood of it open a connection an
 * answer); a search mix (the query kinds of bench/search/search.ts); the same with
 * limit=50; /v1/page over every page; /v1/chunk over random chunks; format=concat over the
 * longest real page, and over a page of 10,000 chunks (the shared text, repeated: no page
 * of the shared dumps is that long) served by a second server from its own snapshot; and
 * /v1/chunk on a third server with TOME_AUTH=off, for what keys, rate limits and quota cost.
 * Requests carry an enterprise key whose rate limit is set out of the way.
 *
 * The servers run on core 0 and this process on core 1 (taskset, when there are two cores),
 * so the load generator does not take the servers' CPU.
 *
 * That cost is measured between two servers that serve nothing but /v1/chunk, one with keys
 * and one without (the main server's other work would weigh on one side only), loaded at the
 * same time on the same core: this machine is shared, and runs one after the other differed
 * by ±20% from the machine alone. P pairs of 2-second runs (one started each way, see below);
 * the median and the quartiles of the pairs' figures.
 */
import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Snapshot } from "../../src/snapshot";
import type { BenchServer } from "../servers";
import { median, quantile } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    "auth-pairs": { type: "string", default: "10" },
    snapshot: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(`Usage: bun bench/http/http.ts [--duration S] [--connections N] [--rounds R] [--auth-pairs P] [--snapshot FILE] [--json]

  --duration S      seconds per scenario and round (default 5)
  --connections N   concurrent connections (default 10)
  --rounds R        rounds; figures are medians over them (default 3)
  --auth-pairs P    2-second runs of /v1/chunk with and without keys at the same time,
                    for what authentication and accounting cost (default 10)
  --snapshot FILE   serve this snapshot as is (default: build one from the shared English
                    dumps, plus a 10,000-chunk page)`);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { buildFromPages } = await import("../../src/build");
const { onServerCore, pinLoadGenerator, PINNED } = await import("../cores");
const { queryMix } = await import("../queries");
const { BENCH_WORK_SHARE, benchKey, benchSnapshot, cpuMs, randomChunkIds, ROOT, spawnServer } = await import(
  "../servers"
);

const duration = Number(values.duration);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const authPairs = Number(values["auth-pairs"]);
const LONG_CHUNKS = 10_000;

const tempDir = (await Bun.$`mktemp -d`.text()).trim();

/** A snapshot of one page of 10,000 chunks (the shared text, repeated), served by its own server so it does not skew the others. */
function longPageSnapshot(shared: Snapshot): { path: string; pageId: number } {
  const table = shared.pages;
  const texts: string[] = [];
  for (let i = 0; i < table.length && texts.length < LONG_CHUNKS; i++)
    for (let c = 0; c < table.chunkCounts[i]!; c++) texts.push(table.chunkText(i, c));
  const pageId = 1;
  const page = {
    pageId,
    revId: 1,
    title: "Benchmark page of 10,000 chunks",
    tsUnix: 1451606400,
    sections: [{ heading: "", level: 1 }],
    chunks: Array.from({ length: LONG_CHUNKS }, (_, i) => ({ section: 0, text: texts[i % texts.length]! })),
  };
  const path = join(tempDir, "long-page.tome");
  const { meta } = shared;
  buildFromPages(
    [page],
    [],
    { wiki: meta.wiki, sources: meta.sources, truncated: meta.truncated },
    { out: path, chunkWords: meta.chunkWords, createdAt: new Date(meta.createdAt) },
  );
  return { path, pageId };
}

await pinLoadGenerator();

/** A server in its own process, with its own TOME_DATA (a copy of the one holding the key). */
async function startServer(snapshotPath: string, name: string, auth: "on" | "off" = "on"): Promise<BenchServer> {
  const data = join(tempDir, `data-${name}`);
  if (auth === "on" && !existsSync(data)) cpSync(join(tempDir, "data-on"), data, { recursive: true });
  return spawnServer(onServerCore(["bun", join(ROOT, "src/cli/start.ts")]), {
    TOME_SNAPSHOT: snapshotPath,
    TOME_DATA: data,
    TOME_AUTH: auth,
    TOME_KEY_MS_PER_SECOND: BENCH_WORK_SHARE,
  });
}

const { path, snapshot } = await benchSnapshot(values.snapshot, tempDir);
const long = longPageSnapshot(snapshot);
const key = await benchKey(join(tempDir, "data-on"));
console.error("starting the servers (the first start builds the search indexes)…");
const [main, longServer] = await Promise.all([startServer(path, "main"), startServer(long.path, "long")]);
// The same snapshot with authentication and accounting skipped, to measure what they cost.
const open = await startServer(path, "open", "off");
// For the cost of keys, a server with them that also serves nothing but /v1/chunk: the main
// server's history (search, long pages) would weigh on its figures and not on the other's.
const keyedChunks = await startServer(path, "chunks");

// Request lists, fixed per scenario.
const mix = queryMix(snapshot);
const queries = Object.values(mix)
  .flatMap((make) => Array.from({ length: 100 }, make))
  .filter((q) => q.replace(/"/g, "").trim());
const withText = snapshot.pages.list().filter((p) => p.chunks.length);
const longest = withText.reduce((a, b) => (b.chunks.length > a.chunks.length ? b : a));
const chunkIds = randomChunkIds(snapshot);

// The format=concat scenarios use one connection: their responses are megabytes, and with
// ten at once the figure would be queueing (and the client's parsing), not the server's work.
interface Scenario {
  url: string;
  paths: string[];
  connections?: number;
}
const pidOf = new Map([main, longServer, open, keyedChunks].map((s) => [s.url, s.pid]));
const scenarios: Record<string, Scenario> = {
  // On the server without keys: with them, one address's /healthz past 100 in 10 s has each answer end its connection
  // (D188), and the load generator, one address, would measure new connections. /healthz asks for no key on either.
  "/healthz": { url: open.url, paths: ["/healthz"] },
  "search mix": { url: main.url, paths: queries.map((q) => `/v1/search?q=${encodeURIComponent(q)}`) },
  "search mix, limit=50": {
    url: main.url,
    paths: queries.map((q) => `/v1/search?q=${encodeURIComponent(q)}&limit=50`),
  },
  "/v1/page (every page)": { url: main.url, paths: withText.map((p) => `/v1/page/${p.pageId}`) },
  "/v1/chunk (random)": { url: main.url, paths: chunkIds.map((id) => `/v1/chunk/${id}`) },
  "/v1/chunk (random), auth skipped": { url: open.url, paths: chunkIds.map((id) => `/v1/chunk/${id}`) },
  [`/v1/page concat, longest real page (${longest.chunks.length} chunks)`]: {
    url: main.url,
    paths: [`/v1/page/${longest.pageId}?format=concat`],
    connections: 1,
  },
  [`/v1/page concat, ${LONG_CHUNKS} chunks`]: {
    url: longServer.url,
    paths: [`/v1/page/${long.pageId}?format=concat`],
    connections: 1,
  },
};

interface Run {
  rps: number;
  /** Server CPU time per request (all threads), µs: what the server spends, whatever the client costs. */
  cpuUs: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function load(scenario: Scenario, seconds = duration): Promise<Run> {
  const { url, paths } = scenario;
  const pid = pidOf.get(url)!;
  const cpu0 = cpuMs(pid);
  const r = await autocannon({
    url,
    connections: scenario.connections ?? connections,
    duration: seconds,
    headers: { "x-api-key": key },
    requests: paths.map((p) => ({ method: "GET", path: p })),
  });
  const cpuUs = ((cpuMs(pid) - cpu0) * 1000) / Math.max(1, r.requests.total);
  return { rps: r.requests.average, cpuUs, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

// Warm-up: every scenario once, briefly.
for (const scenario of Object.values(scenarios)) await load(scenario, 1);

const runs: Record<string, Run[]> = Object.fromEntries(Object.keys(scenarios).map((k) => [k, []]));
const ratios: number[] = [];
for (let round = 1; round <= rounds; round++) {
  for (const [name, scenario] of Object.entries(scenarios)) {
    const r = await load(scenario);
    runs[name]!.push(r);
    console.error(
      `round ${round}: ${name}: ${r.rps.toFixed(0)} req/s, ${r.cpuUs.toFixed(1)} µs server CPU/request, p50 ${r.p50} ms, p99 ${r.p99} ms${r.non2xx || r.errors ? `, ${r.non2xx} non-2xx, ${r.errors} errors` : ""}`,
    );
  }
  ratios.push(runs["search mix"]!.at(-1)!.rps / runs["/healthz"]!.at(-1)!.rps);
}

// What keys, rate limits and quota cost: the two /v1/chunk servers loaded at the same time,
// sharing core 0, so that whatever else the machine does falls on both alike; each gets the
// core's time in turn, and its requests/s then go as the inverse of its cost per request.
// The load generator favours the run it starts first (by about 4% here), so a pair is two
// such runs, one started each way, and its figure their geometric mean.
const keyed = { url: keyedChunks.url, paths: scenarios["/v1/chunk (random)"]!.paths };
const unkeyed = scenarios["/v1/chunk (random), auth skipped"]!;
const authOverheads: number[] = [];
const authCpu: number[] = [];
await Promise.all([load(keyed, 1), load(unkeyed, 1)]);
for (let pair = 1; pair <= authPairs; pair++) {
  const [on1, off1] = await Promise.all([load(keyed, 2), load(unkeyed, 2)]);
  const [off2, on2] = await Promise.all([load(unkeyed, 2), load(keyed, 2)]);
  authOverheads.push(1 - Math.sqrt((on1.rps / off1.rps) * (on2.rps / off2.rps)));
  authCpu.push((on1.cpuUs + on2.cpuUs - off1.cpuUs - off2.cpuUs) / 2);
  console.error(
    `auth pair ${pair}: with keys ${on1.rps.toFixed(0)} and ${on2.rps.toFixed(0)} req/s, without ${off1.rps.toFixed(0)} and ${off2.rps.toFixed(0)}: ` +
      `${(authOverheads.at(-1)! * 100).toFixed(1)}%, ${authCpu.at(-1)!.toFixed(1)} µs server CPU/request`,
  );
}

await Promise.all([main, longServer, open, keyedChunks].map((s) => s.stop()));

const table = Object.entries(runs).map(([name, rs]) => ({
  scenario: name,
  connections: scenarios[name]!.connections ?? connections,
  requestsPerSecond: median(rs.map((r) => r.rps)),
  serverCpuUsPerRequest: median(rs.map((r) => r.cpuUs)),
  p50Ms: median(rs.map((r) => r.p50)),
  p99Ms: median(rs.map((r) => r.p99)),
  failures: rs.reduce((n, r) => n + r.non2xx + r.errors, 0),
}));
const report = {
  snapshot: path,
  pages: snapshot.pages.length,
  longPageSnapshot: long.path,
  chunks: snapshot.meta.indexedChunks,
  connections,
  durationSeconds: duration,
  rounds,
  scenarios: table,
  searchToHealthzRatio: median(ratios),
  pinned: PINNED,
  authPairs,
  /** 1 − authenticated /v1/chunk requests/s ÷ the same with auth skipped: median of the pairs, and their quartiles. */
  authOverhead: median(authOverheads),
  authOverheadQuartiles: [quantile(authOverheads, 0.25), quantile(authOverheads, 0.75)],
  /** Server CPU µs per request that authentication and accounting add on /v1/chunk (median of the pairs). */
  authCpuUs: median(authCpu),
};
if (values.json) console.log(JSON.stringify(report, null, 2));
else {
  console.log(
    `${report.pages} pages, ${report.chunks} chunks; ${connections} connections, ${duration} s per scenario, medians of ${rounds} rounds${PINNED ? "; servers on core 0, load on core 1" : ""}`,
  );
  console.log("| scenario | connections | requests/s | server CPU µs/request | p50 ms | p99 ms | non-2xx or errors |");
  console.log("|---|---|---|---|---|---|---|");
  for (const r of table) {
    console.log(
      `| ${r.scenario} | ${r.connections} | ${r.requestsPerSecond.toFixed(0)} | ${r.serverCpuUsPerRequest.toFixed(1)} | ${r.p50Ms} | ${r.p99Ms} | ${r.failures} |`,
    );
  }
  console.log(
    `search mix requests/s ÷ /healthz requests/s: ${report.searchToHealthzRatio.toFixed(3)} (median of the per-round ratios)`,
  );
  const [q1, q3] = report.authOverheadQuartiles;
  if (!authPairs) console.log("authentication and accounting cost on /v1/chunk: not measured (--auth-pairs 0)");
  else
    console.log(
      `authentication and accounting cost on /v1/chunk: ${(report.authOverhead * 100).toFixed(1)}% of requests/s ` +
        `(quartiles ${(q1! * 100).toFixed(1)}%–${(q3! * 100).toFixed(1)}%), ${report.authCpuUs.toFixed(1)} µs of server CPU per request ` +
        `(medians of ${authPairs} pairs of simultaneous 2-second runs on one core)`,
    );
}
