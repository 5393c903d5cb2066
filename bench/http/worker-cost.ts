/**
 * bun bench/http/worker-cost.ts [--snapshot FILE] [--seconds S] [--rounds R]
 *
 * What running in a worker thread costs a search, apart from HTTP and the pool (issue 60, D109):
 *
 * 1. The search mix's searches and their JSON (as a search worker makes them for a request without options:
 *    answers.search with the API's defaults, JSON.stringify, UTF-8) in a loop for S seconds after 4 s of warm-up, on
 *    this (the main) thread and in one worker, and the same searches sent as tasks to a search worker
 *    (src/http/search-worker.ts, as the pool sends them, eight at a time so that it never waits for the next), in turns,
 *    R times: each thread's own CPU per search (/proc/thread-self), and its heap.
 * 2. A message to a worker and its answer, the worker busy 50, 500 or 2,000 µs a message (two workers, one request
 *    at a time each, as the pool sends them): the request thread's CPU per message, and the workers'.
 * 3. A read of a worker's clock of waits for a core (src/scheduling.ts coreWaitClock), which a search worker makes twice
 *    a task (D144): µs a read in a worker, 200,000 reads, R rounds.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { heapStats } from "bun:jsc";
import { apiContext } from "../../src/http";
import { coreWaitClock } from "../../src/scheduling";
import { type Engine, open } from "../../src/search";
import type { WorkerRequest } from "../../src/http/pool/messages";
import { queryMix, REQUEST_DEFAULTS } from "../queries";
import { threadCpu } from "../servers";
import { median } from "../stats";

declare const self: Worker;

/** This thread's own CPU, ms. */
function threadMs(): number {
  const stat = readFileSync("/proc/thread-self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

type Ask =
  | { kind: "searches"; snapshot: string; seconds: number; warmup: number }
  | { kind: "busy"; job: number; us: number }
  | { kind: "clock"; reads: number };
interface Searched {
  cpuUs: number;
  heapMb: number;
}

/** Tasks a search worker holds at once in part 1: enough that it never waits for the next. */
const TASKS_IN_FLIGHT = 8;

/** The mix's queries, 100 of each class, the empty ones left out. */
function mixQueries(engine: Engine): string[] {
  return Object.values(queryMix(engine.snapshot))
    .flatMap((make) => Array.from({ length: 100 }, make))
    .filter((q) => q.replace(/"/g, "").trim());
}

/**
 * Part 1, pooled: the mix's searches sent to a search worker as tasks for `ms`, TASKS_IN_FLIGHT at a time, so that it
 * never waits for the next; the tasks answered.
 */
function pooledTasks(worker: Worker, queries: string[], ms: number): Promise<number> {
  return new Promise((resolve) => {
    const until = performance.now() + ms;
    let job = 0;
    let inFlight = 0;
    let answered = 0;
    const send = () => {
      const args = JSON.stringify({ q: queries[job % queries.length]!, ...REQUEST_DEFAULTS });
      worker.postMessage({ kind: "run", job: ++job, generation: 1, task: "search", args } satisfies WorkerRequest);
      inFlight++;
    };
    worker.onmessage = (e: MessageEvent<ArrayBuffer | object>) => {
      if (!(e.data instanceof ArrayBuffer || "job" in e.data)) return;
      inFlight--;
      answered++;
      if (performance.now() < until) send();
      else if (!inFlight) resolve(answered);
    };
    for (let i = 0; i < TASKS_IN_FLIGHT; i++) send();
  });
}

/** Part 1: the mix's searches and their JSON on the calling thread. */
function searches(snapshot: string, seconds: number, warmup: number): Searched {
  const engine = open(snapshot);
  const { answers } = apiContext(engine, [], 100);
  const queries = mixQueries(engine);
  const utf8 = new TextEncoder();
  let i = 0;
  const loop = (ms: number) => {
    const until = performance.now() + ms;
    let n = 0;
    while (performance.now() < until) {
      // The answer a request without options gets, as the servers of pool.ts are sent.
      const query = { q: queries[i++ % queries.length]!, ...REQUEST_DEFAULTS };
      utf8.encode(JSON.stringify(answers.search(query as Parameters<typeof answers.search>[0])));
      n++;
    }
    return n;
  };
  loop(warmup * 1000);
  const cpu = threadMs();
  const n = loop(seconds * 1000);
  const result = { cpuUs: ((threadMs() - cpu) * 1000) / n, heapMb: heapStats().heapSize / 1e6 };
  engine.snapshot.container.letGo();
  return result;
}

if (!Bun.isMainThread) {
  self.onmessage = (event: MessageEvent<Ask>) => {
    const ask = event.data;
    if (ask.kind === "searches") self.postMessage(searches(ask.snapshot, ask.seconds, ask.warmup));
    else if (ask.kind === "clock") {
      const clock = coreWaitClock();
      const started = performance.now();
      for (let i = 0; i < ask.reads; i++) clock.read();
      self.postMessage(((performance.now() - started) * 1000) / ask.reads);
    } else {
      const until = performance.now() + ask.us / 1000;
      while (performance.now() < until);
      self.postMessage({ job: ask.job, json: new Uint8Array(2000) });
    }
  };
} else {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      snapshot: { type: "string" },
      seconds: { type: "string", default: "5" },
      rounds: { type: "string", default: "5" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help || !values.snapshot) {
    console.log(`Usage: bun bench/http/worker-cost.ts --snapshot FILE [--seconds S] [--rounds R]

  --snapshot FILE   the snapshot searched (e.g. one built from the shared English dumps)
  --seconds S       seconds of searches per thread and round, after 4 s of warm-up (default 5)
  --rounds R        rounds, the main thread and a worker in turn (default 5)`);
    process.exit(values.help ? 0 : 2);
  }
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const snapshot = values.snapshot;
  const url = new URL(import.meta.url);
  // One worker for every round, as a search worker lives as long as the server: its JIT warms up as the main thread's does.
  const searcher = new Worker(url);
  const inWorker = (ask: Ask) =>
    new Promise<Searched>((resolve) => {
      searcher.onmessage = (e: MessageEvent<Searched>) => resolve(e.data);
      searcher.postMessage(ask);
    });
  // The search worker the pool runs, its snapshot opened as the pool opens it, warmed up once as `searcher` is each round.
  const engine = open(snapshot);
  const queries = mixQueries(engine);
  const searchWorker = new Worker(new URL("../../src/http/search-worker.ts", import.meta.url).href);
  await new Promise<void>((resolve) => {
    searchWorker.onmessage = (e: MessageEvent<object>) => "opened" in e.data && resolve();
    const id = engine.snapshot.meta.contentHash;
    searchWorker.postMessage({
      kind: "open",
      generation: 1,
      path: snapshot,
      id,
      checked: engine.snapshot.checked,
      searchTimeoutMs: 100,
    } satisfies WorkerRequest);
  });
  await pooledTasks(searchWorker, queries, 4000);
  const tasksCpuUs = async () => {
    const before = threadCpu().workers;
    const answered = await pooledTasks(searchWorker, queries, seconds * 1000);
    return ((threadCpu().workers - before) * 1000) / answered;
  };
  const main: Searched[] = [];
  const worker: Searched[] = [];
  const tasks: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const runs = [
      () => main.push(searches(snapshot, seconds, 4)),
      async () => worker.push(await inWorker({ kind: "searches", snapshot, seconds, warmup: 4 })),
      async () => tasks.push(await tasksCpuUs()),
    ];
    for (const run of round % 2 ? runs : runs.toReversed()) await run();
    const [m, w] = [main.at(-1)!, worker.at(-1)!];
    console.log(
      `round ${round}: CPU µs per search + JSON: main thread ${m.cpuUs.toFixed(0)} (heap ${m.heapMb.toFixed(0)} MB), worker ${w.cpuUs.toFixed(0)} (heap ${w.heapMb.toFixed(0)} MB), a search worker's task ${tasks.at(-1)!.toFixed(0)}`,
    );
  }
  searcher.terminate();
  searchWorker.terminate();
  engine.snapshot.container.letGo();
  const medianCpu = (rs: Searched[]) => median(rs.map((r) => r.cpuUs));
  console.log(
    `medians: main thread ${medianCpu(main).toFixed(0)} µs, worker ${medianCpu(worker).toFixed(0)} µs a search (${(medianCpu(worker) / medianCpu(main)).toFixed(2)}×), a search worker's task, never waiting, ${median(tasks).toFixed(0)} µs (${(median(tasks) / medianCpu(worker)).toFixed(2)}× the worker's loop)`,
  );

  // Part 2: the request thread's cost of a message to a busy worker and its answer.
  const workers = [0, 1].map(() => new Worker(url));
  const waiting = new Map<number, () => void>();
  for (const w of workers) w.onmessage = (e: MessageEvent<{ job: number }>) => waiting.get(e.data.job)?.();
  let job = 0;
  const ask = (w: Worker, us: number) =>
    new Promise<void>((resolve) => {
      const j = ++job;
      waiting.set(j, () => {
        waiting.delete(j);
        resolve();
      });
      w.postMessage({ kind: "busy", job: j, us } satisfies Ask);
    });
  const holder = setInterval(() => {}, 1000);
  for (const us of [50, 500, 2000]) {
    const each = async (w: Worker, n: number) => {
      for (let i = 0; i < n; i++) await ask(w, us);
    };
    const n = Math.round((seconds * 1e6) / us / 2);
    await Promise.all(workers.map((w) => each(w, 100)));
    const before = threadCpu();
    await Promise.all(workers.map((w) => each(w, n)));
    const after = threadCpu();
    const per = (k: "main" | "workers") => (((after[k] - before[k]) * 1000) / (2 * n)).toFixed(1);
    console.log(
      `a worker busy ${us} µs a message: CPU µs a message: request thread ${per("main")}, workers ${per("workers")}`,
    );
  }
  clearInterval(holder);
  for (const w of workers) w.terminate();

  // Part 3: a worker's clock of waits for a core, read as a search worker reads it (D144).
  const reads: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const clocked = new Worker(url);
    reads.push(
      await new Promise<number>((resolve) => {
        clocked.onmessage = (e: MessageEvent<number>) => resolve(e.data);
        clocked.postMessage({ kind: "clock", reads: 200_000 } satisfies Ask);
      }),
    );
    clocked.terminate();
  }
  console.log(
    `a worker's clock of waits for a core: ${median(reads).toFixed(2)} µs a read (median of ${rounds} workers)`,
  );
}
