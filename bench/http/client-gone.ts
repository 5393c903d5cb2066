/**
 * bun bench/http/client-gone.ts [--snapshot FILE] [--workers W] [--requests N] [--leave-ms MS] [--rounds R]
 *
 * Clients that leave before their answer (D28, D108): the real server (`TOME_SEARCH_WORKERS=W`, default 2; a business
 * key made by the key tool) is sent N searches at once (default 60, a 17-word query each), as `/v1/search` and then as
 * MCP `tools/call` searches, each client leaving after MS ms (default 40); R rounds (default 2). For each: the statuses
 * the server logged for them and the credits charged (the quota's remaining before and after, less the reads of it).
 * Without --snapshot it builds the enwiki-2016-sample and enwik8-head fixtures into a temporary folder.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildSnapshot, ROOT, runToExit, spawnServer, START, tempDir } from "../support";

const USAGE = `Usage: bun bench/http/client-gone.ts [--snapshot FILE] [--workers W] [--requests N] [--leave-ms MS] [--rounds R]
  --snapshot FILE  the snapshot served (default: the fixtures' sample, built now)
  --workers W      TOME_SEARCH_WORKERS (default 2; 0 answers searches on the request thread)
  --requests N     searches sent at once, each way (default 60)
  --leave-ms MS    when each client leaves (default 40)
  --rounds R       rounds of both ways (default 2)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    workers: { type: "string", default: "2" },
    requests: { type: "string", default: "60" },
    "leave-ms": { type: "string", default: "40" },
    rounds: { type: "string", default: "2" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const [workers, n, leaveMs, rounds] = [values.workers, values.requests, values["leave-ms"], values.rounds].map(Number);
if (![workers, n, leaveMs, rounds].every((v) => Number.isInteger(v) && v! >= 0) || !n || !rounds) {
  console.error(`Each option takes a whole number (--requests and --rounds from 1).\n${USAGE}`);
  process.exit(2);
}

let snapshot = values.snapshot;
if (!snapshot) {
  const dumps = ["enwiki-2016-sample.xml.bz2", "enwik8-head.xml.bz2"].map((d) =>
    join(ROOT, "test/fixtures/data/dumps", d),
  );
  snapshot = join(tempDir("client-gone-"), "bench.tome");
  await buildSnapshot({ dumps }, snapshot);
}
const data = tempDir("client-gone-data-");
const server = await spawnServer(["bun", START], {
  TOME_SNAPSHOT: snapshot,
  TOME_DATA: data,
  TOME_SEARCH_WORKERS: String(workers),
  TOME_KEY_MS_PER_SECOND: "0",
});
const made = await runToExit(
  [
    "bun",
    join(ROOT, "src/cli/keys.ts"),
    "create",
    "--json",
    "--name",
    "bench",
    "--account",
    "bench",
    "--plan",
    "business",
  ],
  { TOME_DATA: data },
);
const key = (JSON.parse(made.stdout) as { key: string }).key;

// The key's rate (business: 100 a second, D21) is spent by a round's burst: each read of the quota and each burst
// waits for a second of its own, so that no request is refused with 429 (a refused read counted no credit: -1).
const nextSecond = () => Bun.sleep(1_100);
const remaining = async (): Promise<number> => {
  await nextSecond();
  const r = await fetch(`${server.url}/v1/meta`, { headers: { "X-API-Key": key } });
  await r.text();
  if (r.status !== 200) throw new Error(`/v1/meta answered ${r.status}: the quota could not be read`);
  return Number(r.headers.get("x-quota-remaining"));
};
const QUERY = "the history of the united states of america and its people in the nineteenth century war";

async function round(way: "rest" | "mcp"): Promise<void> {
  const before = await remaining();
  await nextSecond();
  const logged = server.stdout().length;
  await Promise.all(
    Array.from({ length: n! }, async (_, i) => {
      const leaving = new AbortController();
      setTimeout(() => leaving.abort(), leaveMs);
      const q = `${QUERY} ${i}`;
      const init: RequestInit =
        way === "rest"
          ? { headers: { "X-API-Key": key } }
          : {
              method: "POST",
              headers: {
                "X-API-Key": key,
                "Content-Type": "application/json",
                Accept: "application/json, text/event-stream",
              },
              body: JSON.stringify({
                jsonrpc: "2.0",
                id: i,
                method: "tools/call",
                params: { name: "search", arguments: { q, limit: 20 } },
              }),
            };
      const url = way === "rest" ? `${server.url}/v1/search?q=${encodeURIComponent(q)}&limit=20` : `${server.url}/mcp`;
      try {
        await (await fetch(url, { ...init, signal: leaving.signal })).arrayBuffer();
      } catch {
        // Left.
      }
    }),
  );
  // Every request logged (a search sent to a worker runs to its end), then the quota read again.
  const line = way === "rest" ? /^GET \/v1\/search (\d+) /gm : /^POST \/mcp (\d+) /gm;
  const statuses = () => [...server.stdout().slice(logged).matchAll(line)].map((m) => m[1]!);
  for (let waited = 0; statuses().length < n! && waited < 10_000; waited += 100) await Bun.sleep(100);
  const counts: Record<string, number> = {};
  for (const status of statuses()) counts[status] = (counts[status] ?? 0) + 1;
  const charged = before - (await remaining()) - 1;
  console.log(
    `| ${workers} | ${way === "rest" ? "/v1/search" : "MCP search"} | ${n} | ${JSON.stringify(counts)} | ${charged} |`,
  );
}

try {
  console.log(`Clients leaving after ${leaveMs} ms (${new Date().toISOString()}):\n`);
  console.log("| workers | way | sent | statuses logged | credits charged |\n|---|---|---|---|---|");
  for (let r = 0; r < rounds!; r++) for (const way of ["rest", "mcp"] as const) await round(way);
} finally {
  await server.stop();
}
