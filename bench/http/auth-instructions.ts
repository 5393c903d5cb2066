/**
 * bun bench/http/auth-instructions.ts [--warmup N] [--requests N] [--snapshot FILE] [--root DIR] [--json]
 *
 * What authentication and accounting cost on /v1/chunk, counted in machine instructions
 * rather than timed: two servers serving random chunks, one with keys and one with
 * TOME_AUTH=off, run under valgrind's callgrind; after a warm-up (enough requests for the
 * JIT's top tier), the instructions of each server's main thread over the same number of
 * requests. Unlike a timing, the count does not depend on what else this shared machine
 * is doing; it still varies between runs of the same code (by up to about 4% of a request,
 * as the JIT's choices differ), so compare the medians of a few runs. It does not see what
 * the kernel does (sockets, file writes) nor cache misses, and leaves out the JIT's and the
 * collector's own threads: bench/http/http.ts's requests/s remain the figure that counts.
 *
 * --root DIR measures another checkout (its src/) with this script, for a before/after.
 * Needs valgrind (Debian: apt-get install valgrind). About 3 minutes on this machine.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { BenchServer } from "../servers";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    warmup: { type: "string", default: "150000" },
    requests: { type: "string", default: "10000" },
    snapshot: { type: "string" },
    root: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(`Usage: bun bench/http/auth-instructions.ts [--warmup N] [--requests N] [--snapshot FILE] [--root DIR] [--json]

  --warmup N       requests to each server before counting (default 150000: the JIT's top tier)
  --requests N     requests counted on each server (default 10000)
  --snapshot FILE  serve this snapshot (default: build one from the shared English dumps)
  --root DIR       the checkout whose server to measure (default: this one)
Needs valgrind (Debian: apt-get install valgrind).`);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { BENCH_WORK_SHARE, benchKey, benchSnapshot, randomChunkIds, ROOT, spawnServer } = await import("../servers");

for (const tool of ["valgrind", "callgrind_control"]) {
  if (!Bun.which(tool)) {
    console.error(`${tool} is not installed; install valgrind (Debian: apt-get install valgrind) and run again.`);
    process.exit(1);
  }
}
const warmup = Number(values.warmup);
const requests = Number(values.requests);
const root = resolve(values.root ?? ROOT);
const tempDir = (await Bun.$`mktemp -d`.text()).trim();

const { path, snapshot } = await benchSnapshot(values.snapshot, tempDir);
const key = await benchKey(join(tempDir, "data-on"), root);
const paths = randomChunkIds(snapshot).map((id) => `/v1/chunk/${id}`);

interface Counted extends BenchServer {
  name: string;
  out: string;
}

/** A server under callgrind, counting nothing until told to, one output file per thread. */
async function countedServer(auth: "on" | "off"): Promise<Counted> {
  const out = join(tempDir, `callgrind-${auth}.out`);
  const command = [
    "valgrind",
    "--tool=callgrind",
    "--instr-atstart=no",
    "--separate-threads=yes",
    `--callgrind-out-file=${out}`,
    "bun",
    join(root, "src/cli/start.ts"),
  ];
  const server = await spawnServer(command, {
    TOME_SNAPSHOT: path,
    TOME_DATA: join(tempDir, `data-${auth}`),
    TOME_AUTH: auth,
    TOME_KEY_MS_PER_SECOND: BENCH_WORK_SHARE,
  });
  return { ...server, name: auth === "on" ? "with keys" : "auth skipped", out };
}

async function load(server: Counted, amount: number): Promise<void> {
  const r = await autocannon({
    url: server.url,
    connections: 10,
    amount,
    headers: { "x-api-key": key },
    requests: paths.map((p) => ({ method: "GET", path: p })),
  });
  if (r.non2xx || r.errors) throw new Error(`${server.name}: ${r.non2xx} non-2xx answers and ${r.errors} errors`);
}

/** Instructions the server's main thread ran while counting: the first dump's file of thread 1. */
function mainThreadInstructions(server: Counted): number {
  const file = `${server.out}.1-01`;
  const totals = /^totals: (\d+)$/m.exec(readFileSync(file, "utf8"));
  if (!totals) throw new Error(`${file} has no totals line`);
  return Number(totals[1]);
}

console.error(`starting both servers under callgrind (${root})…`);
const servers = await Promise.all([countedServer("on"), countedServer("off")]);
let keyed: number, open: number;
try {
  console.error(`warming up: ${warmup} requests to each…`);
  await Promise.all(servers.map((s) => load(s, warmup)));
  console.error(`counting ${requests} requests on each…`);
  await Promise.all(
    servers.map(async (s) => {
      await Bun.$`callgrind_control -i on ${s.pid}`.quiet();
      await load(s, requests);
      await Bun.$`callgrind_control -i off ${s.pid}`.quiet();
      await Bun.$`callgrind_control -d ${s.pid}`.quiet();
    }),
  );
  [keyed, open] = servers.map((s) => mainThreadInstructions(s) / requests) as [number, number];
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  await Bun.$`rm -rf ${tempDir}`.quiet();
}

const report = {
  root,
  warmup,
  requests,
  keyedInstructionsPerRequest: keyed,
  openInstructionsPerRequest: open,
  authInstructionsPerRequest: keyed - open,
  authShare: 1 - open / keyed,
};
if (values.json) console.log(JSON.stringify(report, null, 2));
else {
  console.log(
    `main-thread instructions per /v1/chunk request (${requests} counted after ${warmup}): with keys ${keyed.toFixed(0)}, auth skipped ${open.toFixed(0)}`,
  );
  console.log(
    `authentication and accounting: ${(keyed - open).toFixed(0)} instructions per request, ${(report.authShare * 100).toFixed(1)}% of an authenticated request's`,
  );
}
