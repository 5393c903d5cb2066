/**
 * bun bench/http/microtask-order.ts [--seconds S] [--connections C]
 *
 * What D57 rests on: Bun runs a request's microtasks (awaits of resolved promises, as Elysia
 * and the pipeline make) before it takes the next request, so the time from a request's start
 * to its answer is that request's alone. A Bun.serve here answers each request after awaits
 * and a 50 µs busy wait; autocannon, in another process, loads it with C connections (pipelined
 * 4 deep); the figure is how many requests started while another was open (expected 0).
 */
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    seconds: { type: "string", default: "4" },
    connections: { type: "string", default: "16" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(
    "Usage: bun bench/http/microtask-order.ts [--seconds S (default 4)] [--connections C (default 16)]\n",
  );
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { ROOT } = await import("../servers");

let open = 0;
let requests = 0;
let interleaved = 0;
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch() {
    requests++;
    if (open++ > 0) interleaved++;
    for (let i = 0; i < 5; i++) await Promise.resolve();
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    const until = performance.now() + 0.05;
    while (performance.now() < until);
    open--;
    return new Response("x".repeat(100_000));
  },
});
const load = Bun.spawn(
  [
    join(ROOT, "node_modules/.bin/autocannon"),
    "-c",
    values.connections!,
    "-d",
    values.seconds!,
    "-p",
    "4",
    `http://127.0.0.1:${server.port}/`,
  ],
  {
    stdout: "ignore",
    stderr: "ignore",
  },
);
await load.exited;
server.stop(true);
console.log(`${requests} requests; started while another was open: ${interleaved}`);
