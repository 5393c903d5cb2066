/**
 * bun bench/replicas/redis-inproc.ts [--requests N] [--rounds R] [--snapshot FILE]
 *
 * Where the CPU of keys in Redis goes, without HTTP: the app's handle() for /v1/chunk in this
 * process, 10 requests in flight, this process's user and system CPU per request, for:
 *   files        keys in files (TOME_DATA), as a single server;
 *   redis        keys in Redis (RedisAccess: the admission and settlement scripts);
 *   files+2 ping keys in files, each request also waiting for two PINGs through Bun's RedisClient;
 *   files+2 raw  the same two PINGs written to a plain TCP socket (Bun.connect).
 * The last two separate what any store in another process costs (two round trips) from what
 * Bun's client adds to them. Starts its own redis-server (AOF, everysec).
 */
import { RedisClient } from "bun";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Gate, Grant, Refusal } from "../../src/access";
import { median } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    requests: { type: "string", default: "20000" },
    rounds: { type: "string", default: "3" },
    snapshot: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "Usage: bun bench/replicas/redis-inproc.ts [--requests N] [--rounds R] [--snapshot FILE]\nNeeds redis-server (Debian: apt-get install redis-server).",
  );
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { Access } = await import("../../src/access");
const { RedisAccess } = await import("../../src/access/redis");
const { createApp } = await import("../../src/http");
const { open } = await import("../../src/search");
const { startRedis } = await import("../redis-server");
const { benchKey, benchSnapshot, randomChunkIds, ROOT } = await import("../servers");

const requests = Number(values.requests);
const rounds = Number(values.rounds);
const tempDir = (await Bun.$`mktemp -d`.text()).trim();

const redisServer = await startRedis();
const url = redisServer.url;

const { path, snapshot } = await benchSnapshot(values.snapshot, tempDir);
const data = join(tempDir, "data");
const key = await benchKey(data);
await Bun.$`bun ${join(ROOT, "src/cli/keys.ts")} import`
  .env({ ...process.env, TOME_DATA: data, TOME_REDIS_URL: url })
  .quiet();
const engine = open(path);

const files = new Access({ dataDir: data, keyMsPerSecond: 0 });
files.start();
const redis = new RedisAccess({ url, keyMsPerSecond: 0 });
await redis.start();

/** Keys in files, each admission and settlement also waiting for `wait()`. */
function waitingOn(wait: () => Promise<unknown>): Gate {
  const gate = Object.create(files) as Gate;
  return Object.assign(gate, {
    admit: (headers: Headers, cost: number, needs?: "read" | "full"): Promise<Grant | Refusal> =>
      wait().then(() => files.admit(headers, cost, needs)),
    settle: (grant: Grant, ok: boolean): Promise<boolean> =>
      wait().then(() => {
        files.settle(grant, ok);
        return true;
      }),
    now: files.now,
  });
}
const client = new RedisClient(url, { enableOfflineQueue: false, autoReconnect: false });
await client.connect();
const waiters: (() => void)[] = [];
const socket = await Bun.connect({
  hostname: "127.0.0.1",
  port: redisServer.port,
  socket: {
    data(_s, bytes) {
      for (let i = bytes.toString().split("\r\n").length - 1; i > 0; i--) waiters.shift()?.();
    },
  },
});
const rawPing = () =>
  new Promise<void>((resolve) => {
    waiters.push(resolve);
    socket.write("PING\r\n");
  });

const apps = {
  files: createApp(engine, { access: files }),
  redis: createApp(engine, { access: redis }),
  "files+2 ping": createApp(engine, { access: waitingOn(() => client.send("PING", [])) }),
  "files+2 raw": createApp(engine, { access: waitingOn(rawPing) }),
};
const paths = randomChunkIds(snapshot).map((id) => `http://localhost/v1/chunk/${id}`);

async function run(name: keyof typeof apps, n: number): Promise<{ user: number; system: number }> {
  const app = apps[name];
  let i = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (i < n) {
        const r = await app.handle(new Request(paths[i++ % paths.length]!, { headers: { "x-api-key": key } }));
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`${name}: ${r.status}`);
      }
    }),
  );
  const used = process.cpuUsage(before);
  return { user: used.user / n, system: used.system / n };
}

const names = Object.keys(apps) as (keyof typeof apps)[];
for (const name of names) await run(name, 3000);
const results = new Map(names.map((n) => [n, [] as { user: number; system: number }[]]));
for (let round = 1; round <= rounds; round++) {
  for (const name of names) {
    const r = await run(name, requests);
    results.get(name)!.push(r);
    console.error(
      `round ${round}: ${name}: ${r.user.toFixed(1)} µs user, ${r.system.toFixed(1)} µs system per request`,
    );
  }
}
files.stop();
redis.stop();
client.close();
socket.end();
await redisServer.stop();

console.log(
  `/v1/chunk through app.handle(), 10 in flight, ${requests} requests × ${rounds} rounds (medians), CPU of this process per request:`,
);
console.log("| keys | user µs | system µs | total µs |");
console.log("|---|---|---|---|");
for (const [name, rs] of results) {
  const user = median(rs.map((r) => r.user));
  const system = median(rs.map((r) => r.system));
  console.log(`| ${name} | ${user.toFixed(1)} | ${system.toFixed(1)} | ${(user + system).toFixed(1)} |`);
}
process.exit(0);
