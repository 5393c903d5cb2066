/**
 * bun [--cpu-prof-md] bench/http/keyed-pipeline.ts [--snapshot FILE] [--seconds S] [--path PATH] [--workers W] [--concurrency N] [--root DIR]
 *
 * The whole request pipeline with a key, in this process (app.handle, no HTTP), on one request
 * path in a loop: requests a second, and, run under `bun --cpu-prof-md`, a profile of where the
 * keyed path spends its time (it showed keys.gen's pread taking 7 µs on every request, issue 43).
 * The key's rate and work share are out of the way, so nothing is refused. With --workers, the
 * app has a search pool (issue 60): --concurrency requests at a time keep its request thread busy,
 * and the request thread's and the workers' CPU per request are printed (from /proc/self/task).
 * --core-clock off gives the keys step a clock of waits for a core that reads 0 (D25 amended: its two reads of
 * /proc/thread-self/schedstat a request left out), for a before and after in turns; and every run prints how many
 * times a request read that clock and what a read costs on this thread, measured in the same run.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    seconds: { type: "string", default: "6" },
    path: { type: "string", default: "/v1/chunk/39_3" },
    workers: { type: "string", default: "0" },
    concurrency: { type: "string", default: "1" },
    root: { type: "string" },
    warmup: { type: "string", default: "0" },
    "core-clock": { type: "string", default: "on" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(
    "Usage: bun [--cpu-prof-md] bench/http/keyed-pipeline.ts [--snapshot FILE] [--seconds S (default 6)] [--path PATH (default /v1/chunk/39_3)]\n" +
      "       [--workers W (TOME_SEARCH_WORKERS, default 0)] [--concurrency N (requests at a time, default 1)]\n" +
      "       [--root DIR (the checkout whose app is measured, default this one)] [--warmup S (seconds first, not counted; default 0)]\n" +
      "       [--core-clock on|off (off: the keys step's clock of waits for a core reads 0; default on)]\n",
  );
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { benchSnapshot, inProcessBenchKey, ROOT, threadCpu } = await import("../servers");

// The app of --root (another checkout: before and after, in turns), its access layer and engine with it.
const root = values.root ?? ROOT;
const tools = (await import(`${root}/src/access`)) as typeof import("../../src/access");
const { createApp } = (await import(`${root}/src/http`)) as typeof import("../../src/http");
const { open } = (await import(`${root}/src/search`)) as typeof import("../../src/search");
const work = mkdtempSync(join(tmpdir(), "tome-keyed-pipeline-"));
const { path } = await benchSnapshot(values.snapshot, work);
const { key, access } = inProcessBenchKey(tools, join(work, "data"));
// The keys step's clock of waits for a core, as its default reads it, its reads counted.
const { coreWaitClock } = (await import(`${root}/src/scheduling`)) as typeof import("../../src/scheduling");
const clock = coreWaitClock();
let clockReads = 0;
const countedClock = () => {
  clockReads++;
  const ms = clock.read();
  return Number.isNaN(ms) ? 0 : ms;
};
const app = createApp(open(path), {
  pdf: { render: () => Promise.reject(new Error("no PDFs here")), close() {} } as never,
  access,
  searchWorkers: Number(values.workers),
  coreWaited: values["core-clock"] === "off" ? () => 0 : countedClock,
});
const url = `http://localhost${values.path}`;
const seconds = Number(values.seconds);
// Something to hold the event loop while the pool answers, as a server's socket does (D101: with nothing, Bun's main thread spins).
const holder = setInterval(() => {}, 1000);
let end = performance.now() + Number(values.warmup) * 1000;
let n = 0;
const one = async () => {
  while (performance.now() < end) {
    const response = await app.handle(new Request(url, { headers: { "x-api-key": key } }));
    if (response.status !== 200) throw new Error(`${values.path}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
    n++;
  }
};
await Promise.all(Array.from({ length: Number(values.concurrency) }, one));
end = performance.now() + seconds * 1000;
n = 0;
clockReads = 0;
const before = threadCpu();
await Promise.all(Array.from({ length: Number(values.concurrency) }, one));
const after = threadCpu();
clearInterval(holder);
const per = (k: "main" | "workers" | "other") => (((after[k] - before[k]) * 1000) / n).toFixed(0);
console.log(`${values.path}: ${(n / seconds).toFixed(0)} requests a second through the keyed pipeline, in process`);
console.log(
  `CPU µs per request: request thread ${per("main")}, search workers ${per("workers")}, other threads ${per("other")}`,
);
console.log(`reads of the clock of waits for a core per request: ${(clockReads / n).toFixed(2)}`);
// What one of them costs on this thread, alone.
const reads = 200_000;
const started = performance.now();
for (let i = 0; i < reads; i++) clock.read();
console.log(
  `a read of the clock of waits for a core: ${(((performance.now() - started) * 1000) / reads).toFixed(2)} µs`,
);
access.stop();
app.close();
