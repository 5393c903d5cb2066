/**
 * bun bench/http/mcp-message.ts [--snapshot FILE] [--requests N] [--rounds R] [--root DIR] [--baseline DIR]
 *
 * What one POST /mcp costs the request thread by the shape of its message (D155): a small
 * tools/call, the same call with its params widened to 256 members in all (D155's limit), and
 * the same call widened to just under the 64 KiB body limit (D54) with thousands of members.
 * Each request goes through the whole keyed pipeline in this process (app.handle, no HTTP), one
 * at a time; the figure is the median time of N requests, then the median over rounds, with
 * each shape's ratio to the small call's in the same round. --root DIR measures another
 * checkout's app; --baseline DIR adds a second checkout's app (B) to the same rounds, in turns,
 * and prints A/B for each shape, pair by pair (before and after on a noisy machine).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    requests: { type: "string", default: "200" },
    rounds: { type: "string", default: "5" },
    root: { type: "string" },
    baseline: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(
    "Usage: bun bench/http/mcp-message.ts [--snapshot FILE] [--requests N (a shape and round, default 200)]\n" +
      "       [--rounds R (default 5)] [--root DIR (the checkout whose app is measured, default this one)]\n" +
      "       [--baseline DIR (another checkout's app in the same rounds, in turns: A/B)]\n",
  );
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { benchSnapshot, inProcessBenchKey, ROOT } = await import("../servers");

const work = mkdtempSync(join(tmpdir(), "tome-mcp-message-"));
const { path } = await benchSnapshot(values.snapshot, work);

/** The keyed app of the checkout at root, its key's rate and work share out of the way (nothing is refused). */
async function appOf(root: string, name: string) {
  const tools = (await import(`${root}/src/access`)) as typeof import("../../src/access");
  const { createApp } = (await import(`${root}/src/http`)) as typeof import("../../src/http");
  const { open } = (await import(`${root}/src/search`)) as typeof import("../../src/search");
  const { key, access } = inProcessBenchKey(tools, join(work, `data-${name}`));
  const app = createApp(open(path), {
    pdf: { render: () => Promise.reject(new Error("no PDFs here")), close() {} } as never,
    access,
  });
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "x-api-key": key,
  };
  return {
    name,
    root,
    /** The median time of n requests with this body, and the last one's status. */
    async timed(body: string, n: number): Promise<{ ms: number; status: number }> {
      const times: number[] = [];
      let status = 0;
      for (let i = 0; i < n; i++) {
        const start = performance.now();
        const response = await app.handle(new Request("http://localhost/mcp", { method: "POST", headers, body }));
        await response.arrayBuffer();
        times.push(performance.now() - start);
        status = response.status;
      }
      return { ms: median(times), status };
    },
    close() {
      access.stop();
      app.close();
    },
  };
}
const apps = [await appOf(values.root ?? ROOT, "A")];
if (values.baseline) apps.push(await appOf(values.baseline, "B"));

const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_chunk", arguments: { id: "39_0" } } };
/** The call with its params widened by `extra` members (each "kNNNN": 0, which the SDK's schemas copy). */
const widened = (extra: number) => {
  const params: Record<string, unknown> = { ...call.params };
  for (let i = 0; i < extra; i++) params[`k${i}`] = 0;
  return JSON.stringify({ ...call, params });
};
// The call's own members: 4 at the top, 2 in params, 1 in arguments.
const OWN = 7;
let most = 0;
while (widened(most + 100).length < 60_000) most += 100;
const SHAPES: [string, string][] = [
  ["small tools/call", JSON.stringify(call)],
  ["256 members", widened(256 - OWN)],
  [`${most + OWN} members, ${widened(most).length} bytes`, widened(most)],
];

const n = Number(values.requests);
for (const app of apps) for (const [, body] of SHAPES) await app.timed(body, n); // warm-up
const figures = apps.map(() => SHAPES.map(() => ({ ms: [] as number[], small: [] as number[], status: 0 })));
const vsB = SHAPES.map(() => [] as number[]);
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [i, [, body]] of SHAPES.entries()) {
    // A then B, B then A, in turns: the pair's ratio is taken in the same moment of a noisy machine.
    const order = round % 2 ? [...apps].reverse() : apps;
    const ms = new Map<string, number>();
    for (const app of order) {
      const timed = await app.timed(body, n);
      const f = figures[apps.indexOf(app)]![i]!;
      f.ms.push(timed.ms);
      f.status = timed.status;
      ms.set(app.name, timed.ms);
    }
    if (apps.length > 1) vsB[i]!.push(ms.get("A")! / ms.get("B")!);
  }
  for (const f of figures) for (const shape of f) shape.small.push(shape.ms.at(-1)! / f[0]!.ms.at(-1)!);
}
console.log(
  `POST /mcp through the keyed pipeline, in process: median ms a request (${n} a shape and round, ${values.rounds} rounds)`,
);
for (const [a, app] of apps.entries()) {
  console.log(`${app.name}: ${app.root}`);
  for (const [i, [name]] of SHAPES.entries()) {
    const f = figures[a]![i]!;
    const vs = app.name === "A" && apps.length > 1 ? `  A/B ${median(vsB[i]!).toFixed(2)}` : "";
    console.log(
      `  ${name.padEnd(30)} ${f.status}  ${median(f.ms).toFixed(3)} ms  ×${median(f.small).toFixed(1)} the small call${vs}`,
    );
  }
}
for (const app of apps) app.close();
