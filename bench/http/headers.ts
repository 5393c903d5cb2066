/**
 * bun bench/http/headers.ts [--rounds R]
 *
 * What six more response headers cost Bun's HTTP server, whatever the application does:
 * the same ~1.7 KB JSON answer with and without the six X-RateLimit-* / X-Quota-* headers
 * D19 and D20 put on every authenticated response, set on the response as the server sets
 * them. Server CPU per request (from /proc) and requests/s under autocannon, medians of R
 * alternating rounds; the servers on core 0 and the load on core 1, as in bench/http/http.ts.
 */
import { parseArgs } from "node:util";
import { median } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { rounds: { type: "string", default: "5" }, help: { type: "boolean", short: "h" } },
});
if (values.help) {
  console.log("Usage: bun bench/http/headers.ts [--rounds R]");
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { onServerCore, pinLoadGenerator } = await import("../cores");
const { cpuMs } = await import("../servers");

const SERVER = `
const body = JSON.stringify({ text: "x".repeat(1700) });
const extra = ${JSON.stringify({ "x-ratelimit-limit": "100", "x-ratelimit-remaining": "99", "x-ratelimit-reset": "1795246178", "x-quota-limit": "1000000", "x-quota-remaining": "999950", "x-quota-reset": "1796083200" })};
const withLimits = process.env.LIMITS === "1";
let n = 0;
const s = Bun.serve({ port: 0, fetch: () => {
  const response = new Response(body, { headers: { "content-type": "application/json; charset=utf-8" } });
  if (withLimits) {
    const h = response.headers;
    for (const [k, v] of Object.entries(extra)) h.set(k, v);
    h.set("x-ratelimit-remaining", String(++n % 100));
  }
  return response;
} });
console.log(s.port);
`;
await pinLoadGenerator();
async function start(limits: boolean) {
  const proc = Bun.spawn(onServerCore(["bun", "-e", SERVER]), {
    env: { ...process.env, LIMITS: limits ? "1" : "0" },
    stdout: "pipe",
  });
  const reader = proc.stdout.getReader();
  const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
  return { proc, url: `http://localhost:${port}/` };
}
const servers = { without: await start(false), with: await start(true) };
const run = async (s: { proc: { pid: number }; url: string }) => {
  const c0 = cpuMs(s.proc.pid);
  const r = await autocannon({ url: s.url, connections: 10, duration: 3 });
  return { rps: r.requests.average, cpuUs: ((cpuMs(s.proc.pid) - c0) * 1000) / r.requests.total };
};
await run(servers.without);
await run(servers.with);
const rows: { without: { rps: number; cpuUs: number }; with: { rps: number; cpuUs: number } }[] = [];
for (let i = 0; i < Number(values.rounds); i++)
  rows.push({ without: await run(servers.without), with: await run(servers.with) });
for (const s of Object.values(servers)) s.proc.kill();
const extraCpu = median(rows.map((r) => r.with.cpuUs - r.without.cpuUs));
const rpsCost = median(rows.map((r) => 1 - r.with.rps / r.without.rps));
console.log(
  `without the six headers: ${median(rows.map((r) => r.without.rps)).toFixed(0)} req/s, ${median(rows.map((r) => r.without.cpuUs)).toFixed(1)} µs server CPU/request`,
);
console.log(
  `with them:               ${median(rows.map((r) => r.with.rps)).toFixed(0)} req/s, ${median(rows.map((r) => r.with.cpuUs)).toFixed(1)} µs server CPU/request`,
);
console.log(
  `the six headers cost ${extraCpu.toFixed(1)} µs of server CPU and ${(rpsCost * 100).toFixed(1)}% of requests/s (medians)`,
);
