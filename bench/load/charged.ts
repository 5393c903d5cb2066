/**
 * bun bench/load/charged.ts [--requests N] [--connections C] [--rounds R] [--snapshot FILE] [--json]
 *
 * What a key is charged against its work share (D25, D57) beside what its requests cost the
 * server (issue 43): for each request kind, N requests from C connections; the server's CPU
 * (all its threads, from /proc) and the work charged (tome_work_charged_seconds_total on
 * /metrics) are read before and after, each divided by N. The target: CPU ÷ charged at most 1.5
 * for the big answers (page concat, page, changes at limit 1000, lucky). The server runs on
 * core 0, this process on core 1. Medians over rounds.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const HELP = `Usage: bun bench/load/charged.ts [options]

  --requests N      requests per kind and round (default 400)
  --connections C   concurrent connections (default 4)
  --rounds R        rounds (default 3)
  --snapshot FILE   serve this snapshot (default: one built from the shared English dumps)
  --json            print the figures as JSON
`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    requests: { type: "string", default: "400" },
    connections: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    snapshot: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { onServerCore, pinLoadGenerator } = await import("../cores");
const { longestPageId } = await import("../queries");
const { benchKey, benchSnapshot, cpuMs, randomChunkIds, ROOT, spawnServer } = await import("../servers");

const requests = Number(values.requests);
const connections = Number(values.connections);
const rounds = Number(values.rounds);

await pinLoadGenerator();
const work = mkdtempSync(join(tmpdir(), "tome-charged-"));
const { path, snapshot } = await benchSnapshot(values.snapshot, work);
const dataDir = join(work, "data");
const key = await benchKey(dataDir);
const ADMIN = "bench-admin-token";
// The share itself out of the way (nothing is refused); its bookkeeping still runs on every request.
const server = await spawnServer(onServerCore(["bun", join(ROOT, "src/cli/start.ts")]), {
  TOME_SNAPSHOT: path,
  TOME_DATA: dataDir,
  TOME_ADMIN_TOKEN: ADMIN,
  TOME_KEY_MS_PER_SECOND: "1000000000",
});

const bigPage = longestPageId(snapshot);
const chunkIds = randomChunkIds(snapshot);

const mcp = (name: string, args: Record<string, unknown>) => ({
  method: "POST",
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
});
interface Kind {
  name: string;
  path: (i: number) => string;
  method?: string;
  body?: string;
}
const KINDS: Kind[] = [
  { name: `page ${bigPage} concat`, path: () => `/v1/page/${bigPage}?format=concat` },
  { name: `page ${bigPage}`, path: () => `/v1/page/${bigPage}` },
  { name: "changes limit 1000", path: () => "/v1/changes?limit=1000" },
  { name: "lucky the", path: () => "/v1/lucky?q=the" },
  { name: "search albedo", path: () => "/v1/search?q=albedo" },
  { name: "chunk", path: (i) => `/v1/chunk/${chunkIds[i % chunkIds.length]}` },
  { name: `mcp get_page ${bigPage}`, ...mcp("get_page", { page_id: bigPage }), path: () => "/mcp" },
];

async function chargedMs(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  let seconds = 0;
  for (const m of text.matchAll(/^tome_work_charged_seconds_total\{[^}]*\} ([0-9.e+-]+)$/gm)) seconds += Number(m[1]);
  return seconds * 1000;
}

const headers = { "x-api-key": key, "content-type": "application/json", accept: "application/json, text/event-stream" };
async function load(kind: Kind, n: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const r = await fetch(server.url + kind.path(i), { method: kind.method ?? "GET", headers, body: kind.body });
      if (r.status !== 200) throw new Error(`${kind.name}: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
}

const rows: { kind: string; cpuMs: number; chargedMs: number; ratio: number }[] = [];
try {
  for (const kind of KINDS) {
    await load(kind, 100); // warm-up: the route compiled, the page's blocks cached
    const perRound: { cpu: number; charged: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      const [cpu0, charged0] = [cpuMs(server.pid), await chargedMs()];
      await load(kind, requests);
      // The metrics scrape itself is charged to no key, but its CPU is the server's: read the CPU first.
      const cpu1 = cpuMs(server.pid);
      const charged1 = await chargedMs();
      perRound.push({ cpu: (cpu1 - cpu0) / requests, charged: (charged1 - charged0) / requests });
    }
    const cpu = median(perRound.map((p) => p.cpu));
    const charged = median(perRound.map((p) => p.charged));
    rows.push({
      kind: kind.name,
      cpuMs: cpu,
      chargedMs: charged,
      ratio: median(perRound.map((p) => p.cpu / p.charged)),
    });
    console.error(`${kind.name}: server CPU ${cpu.toFixed(3)} ms, charged ${charged.toFixed(3)} ms a request`);
  }
} finally {
  await server.stop();
}

if (values.json) console.log(JSON.stringify({ requests, connections, rounds, rows }, null, 2));
else {
  console.log(`| request | server CPU ms a request | charged ms a request | CPU ÷ charged |`);
  console.log(`|---|---|---|---|`);
  for (const r of rows)
    console.log(`| ${r.kind} | ${r.cpuMs.toFixed(3)} | ${r.chargedMs.toFixed(3)} | ${r.ratio.toFixed(2)} |`);
}
