/**
 * bun bench/http/pool.ts [--duration S] [--connections N] [--rounds R] [--workers W] [--warmup S] [--cheap Q] [--client autocannon|wrk] [--http-only] [--baseline DIR] [--snapshot FILE] [--json]
 *
 * The search pool (issue 60, D101): two real servers on one snapshot, one with
 * TOME_SEARCH_WORKERS=0 (every search on the request thread) and one with W workers (default 2),
 * loaded in turn with autocannon from this process, each round the same scenarios on both: the
 * search mix (the query kinds of bench/search/search.ts), and the cheapest query alone (`albedo`
 * by default), whose server rate is set against the library's single-thread in-process rate
 * (open().search() in this process, for --duration seconds, in the same round). Neither server
 * nor this process is pinned to a core: the pool is meant to use them all (the load generator
 * takes its share of them, in both servers' runs alike). Reports medians over the rounds, and
 * the per-round ratios' medians; then each server's resident and proportional memory (PSS:
 * pages mapped by several threads counted once), with the pool's part of it.
 *
 * Then the pool alone, without HTTP or the load generator: the app in this process (no keys),
 * its search mix through app.handle() from --connections requests at a time, with 0 and with W
 * workers in turn, each round; the request thread's CPU and the workers' per request (from
 * /proc/self/task), so that what stays on the request thread per request can be read off.
 */
import { cpSync, readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { BenchServer } from "../servers";
import { median } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "16" },
    rounds: { type: "string", default: "3" },
    workers: { type: "string", default: "2" },
    warmup: { type: "string", default: "15" },
    cheap: { type: "string", default: "albedo" },
    client: { type: "string", default: "autocannon" },
    "http-only": { type: "boolean" },
    baseline: { type: "string" },
    snapshot: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(`Usage: bun bench/http/pool.ts [--duration S] [--connections N] [--rounds R] [--workers W] [--warmup S] [--cheap Q] [--client autocannon|wrk] [--http-only] [--baseline DIR] [--snapshot FILE] [--json]

  --duration S      seconds per scenario, server and round (default 5)
  --connections N   concurrent connections (default 16)
  --rounds R        rounds; figures are medians over them (default 3)
  --workers W       TOME_SEARCH_WORKERS of the pooled server (default 2)
  --warmup S        seconds of each scenario on each server (and in process) before the rounds (default 15)
  --cheap Q         the cheapest query, measured alone and in process (default albedo)
  --client C        the load generator: autocannon (in this process, the issue's figures) or wrk (apt-get install
                    wrk; its own process, a fraction of autocannon's CPU a request, so the server gets more of 2 cores)
  --http-only       the servers only, not the pool in process after them
  --baseline DIR    also a pooled server (W workers) of the checkout in DIR (node_modules beside it), in the same
                    rounds: this checkout's pooled server against it, before/after
  --snapshot FILE   serve this snapshot as is (default: build one from the shared English dumps)`);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { createApp } = await import("../../src/http");
const { open } = await import("../../src/search");
const { queryMix } = await import("../queries");
const { BENCH_WORK_SHARE, benchKey, benchSnapshot, compilerMs, cpuMs, ROOT, spawnServer, threadCpu } = await import(
  "../servers"
);

const duration = Number(values.duration);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const workers = Number(values.workers);
const warmup = Number(values.warmup);
const cheap = values.cheap;
const client = values.client;
if (client !== "autocannon" && client !== "wrk") {
  console.error(`--client is autocannon or wrk, not ${client}.`);
  process.exit(2);
}

const tempDir = (await Bun.$`mktemp -d`.text()).trim();
const { path, snapshot } = await benchSnapshot(values.snapshot, tempDir);
const key = await benchKey(join(tempDir, "data"));
const load0 = loadavg()[0]!;

let started = 0;
/** A server on the snapshot, with a data folder of its own holding the bench key (one server a folder: server.lock). */
function startServer(searchWorkers: number, root = ROOT): Promise<BenchServer> {
  const data = join(tempDir, `data-${++started}`);
  cpSync(join(tempDir, "data"), data, { recursive: true });
  return spawnServer(["bun", join(root, "src/cli/start.ts")], {
    TOME_SNAPSHOT: path,
    TOME_SNAPSHOT_WATCH: "off",
    TOME_DATA: data,
    TOME_KEY_MS_PER_SECOND: BENCH_WORK_SHARE,
    TOME_SEARCH_WORKERS: String(searchWorkers),
  });
}

console.error(`starting the servers (TOME_SEARCH_WORKERS=0 and ${workers})…`);
const single = await startServer(0);
const pooled = await startServer(workers);
const baseline = values.baseline ? await startServer(workers, values.baseline) : undefined;
const servers: Partial<Record<Which, BenchServer>> & { single: BenchServer; pooled: BenchServer } = {
  single,
  pooled,
  ...(baseline && { baseline }),
};
type Which = "single" | "pooled" | "baseline";

const mix = queryMix(snapshot);
const mixPaths = Object.values(mix)
  .flatMap((make) => Array.from({ length: 100 }, make))
  .filter((q) => q.replace(/"/g, "").trim())
  .map((q) => `/v1/search?q=${encodeURIComponent(q)}`);
const cheapPaths = [`/v1/search?q=${encodeURIComponent(cheap)}`];

interface Run {
  rps: number;
  /** Server CPU per request (all its threads), µs. */
  cpuUs: number;
  /** The server's request thread's part of it, its search workers', its optimizing compilers' and its other threads' (GC, the allocator), µs. */
  mainUs: number;
  workersUs: number;
  jitUs: number;
  otherUs: number;
  /** The load generator's CPU per request, µs: on 2 cores it takes from the server's. */
  clientUs: number;
  p50: number;
  p99: number;
  failures: number;
}

/** What a load generator reports of one run. */
interface Loaded {
  total: number;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  /** Its CPU over the run, µs. */
  cpuUs: number;
}

/** autocannon in this process (JavaScript: its CPU is this process's). */
async function autocannonRun(url: string, paths: string[], seconds: number): Promise<Loaded> {
  const before = process.cpuUsage();
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    headers: { "x-api-key": key },
    requests: paths.map((p) => ({ method: "GET", path: p })),
  });
  const cpu = process.cpuUsage(before);
  const [p50, p99, failures] = [r.latency.p50, r.latency.p99, r.non2xx + r.errors];
  return { total: r.requests.total, rps: r.requests.average, p50, p99, failures, cpuUs: cpu.user + cpu.system };
}

/** wrk (C, one thread, its own process: a fraction of autocannon's CPU a request), the paths taken in turn by a Lua script. */
async function wrkRun(url: string, paths: string[], seconds: number): Promise<Loaded> {
  const script = join(tempDir, `wrk-${paths.length}.lua`);
  await Bun.write(
    script,
    `local paths = {${paths.map((p) => JSON.stringify(p)).join(",")}}\nlocal i = 0\n` +
      `wrk.headers["x-api-key"] = ${JSON.stringify(key)}\n` +
      `request = function() i = i % #paths + 1; return wrk.format("GET", paths[i]) end\n`,
  );
  const wrk = Bun.spawn(["wrk", "-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", script, url], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(wrk.stdout).text();
  if ((await wrk.exited) !== 0) throw new Error(`wrk failed:\n${out}`);
  const usage = wrk.resourceUsage()!;
  const number = (pattern: RegExp) => Number(pattern.exec(out)?.[1] ?? 0);
  const ms = (pattern: RegExp) => {
    const m = pattern.exec(out);
    if (!m) return NaN;
    const unit = { us: 0.001, ms: 1, s: 1000 }[m[2] as "us" | "ms" | "s"] ?? NaN;
    return Number(m[1]) * unit;
  };
  const total = number(/(\d+) requests in/);
  return {
    total,
    rps: number(/Requests\/sec:\s+([\d.]+)/),
    p50: ms(/50%\s+([\d.]+)(us|ms|s)/),
    p99: ms(/99%\s+([\d.]+)(us|ms|s)/),
    failures: number(/Non-2xx or 3xx responses: (\d+)/) + number(/Socket errors: .*?timeout (\d+)/),
    cpuUs: Number(usage.cpuTime.user + usage.cpuTime.system),
  };
}

async function load(server: BenchServer, paths: string[], seconds = duration): Promise<Run> {
  const cpu0 = cpuMs(server.pid);
  const threads0 = threadCpu(server.pid);
  const r = await (client === "wrk" ? wrkRun : autocannonRun)(server.url, paths, seconds);
  const threads1 = threadCpu(server.pid);
  const per = (ms: number) => (ms * 1000) / Math.max(1, r.total);
  return {
    rps: r.rps,
    cpuUs: per(cpuMs(server.pid) - cpu0),
    mainUs: per(threads1.main - threads0.main),
    workersUs: per(threads1.workers - threads0.workers),
    jitUs: per(compilerMs(threads0, threads1)),
    otherUs: per(threads1.other - threads0.other - compilerMs(threads0, threads1)),
    clientUs: r.cpuUs / Math.max(1, r.total),
    p50: r.p50,
    p99: r.p99,
    failures: r.failures,
  };
}

/** open().search() in this process, as a RAG pipeline calls it: searches a second over `seconds`. */
const engine = open(path);
function libraryRate(seconds = duration): number {
  const until = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 100; i++) engine.search(cheap);
    n += 100;
  }
  return n / seconds;
}

// Warm-up: both servers, both scenarios, for --warmup seconds each: every search worker compiles the engine's code
// for itself (its own JIT), so a short warm-up charges the pool for compiling.
for (const server of Object.values(servers))
  for (const paths of [mixPaths, cheapPaths]) await load(server!, paths, warmup);
libraryRate(1);

type Name = "mix" | "cheap";
const runs: Record<Name, Record<Which, Run[]>> = {
  mix: { single: [], pooled: [], baseline: [] },
  cheap: { single: [], pooled: [], baseline: [] },
};
const library: number[] = [];
const ratios = {
  mix: [] as number[],
  cheapToLibrary: [] as number[],
  singleCheapToLibrary: [] as number[],
  /** This checkout's pooled server against the baseline's, per scenario. */
  mixToBaseline: [] as number[],
  cheapToBaseline: [] as number[],
  /** The same for the request thread's CPU per request (what the pool leaves on it). */
  mixMainToBaseline: [] as number[],
  cheapMainToBaseline: [] as number[],
};
for (let round = 1; round <= rounds; round++) {
  for (const [name, paths] of [
    ["mix", mixPaths],
    ["cheap", cheapPaths],
  ] as const) {
    // The order of the servers alternates, so that none always runs after another.
    const names = (["single", "pooled", "baseline"] as const).filter((w) => servers[w]);
    const order = round % 2 ? names : names.toReversed();
    for (const which of order) {
      const r = await load(servers[which]!, paths);
      runs[name][which].push(r);
      console.error(
        `round ${round}: ${name}, ${which}: ${r.rps.toFixed(0)} req/s, ${r.cpuUs.toFixed(0)} µs CPU/request (request thread ${r.mainUs.toFixed(0)}, workers ${r.workersUs.toFixed(0)}, JIT ${r.jitUs.toFixed(0)}, other ${r.otherUs.toFixed(0)}; client ${r.clientUs.toFixed(0)}), p50 ${r.p50} ms, p99 ${r.p99} ms${r.failures ? `, ${r.failures} failures` : ""}`,
      );
    }
  }
  library.push(libraryRate());
  console.error(`round ${round}: library, in process: ${library.at(-1)!.toFixed(0)} searches/s of ${cheap}`);
  ratios.mix.push(runs.mix.pooled.at(-1)!.rps / runs.mix.single.at(-1)!.rps);
  ratios.cheapToLibrary.push(runs.cheap.pooled.at(-1)!.rps / library.at(-1)!);
  ratios.singleCheapToLibrary.push(runs.cheap.single.at(-1)!.rps / library.at(-1)!);
  if (baseline) {
    ratios.mixToBaseline.push(runs.mix.pooled.at(-1)!.rps / runs.mix.baseline.at(-1)!.rps);
    ratios.cheapToBaseline.push(runs.cheap.pooled.at(-1)!.rps / runs.cheap.baseline.at(-1)!.rps);
    ratios.mixMainToBaseline.push(runs.mix.pooled.at(-1)!.mainUs / runs.mix.baseline.at(-1)!.mainUs);
    ratios.cheapMainToBaseline.push(runs.cheap.pooled.at(-1)!.mainUs / runs.cheap.baseline.at(-1)!.mainUs);
  }
}

/** The pool alone, without HTTP, keys or a load generator: the app in this process with 0 and with W workers. */
async function inProcessPart() {
  /** The app in process, with 0 and with W workers, made once (and warmed up once). */
  const apps = { single: createApp(open(path)), pooled: createApp(open(path), { searchWorkers: workers }) };
  // Something to hold the event loop, as a server's socket does (see D101: with nothing, Bun's main thread spins).
  const holder = setInterval(() => {}, 1000);

  /** An app's search mix through app.handle(), `connections` at a time, for `seconds`. */
  async function inProcess(app: (typeof apps)["single"], seconds: number) {
    const run = async (ms: number) => {
      const until = performance.now() + ms;
      let i = 0;
      let n = 0;
      const one = async () => {
        while (performance.now() < until) {
          const answer = await app.handle(new Request(`http://localhost${mixPaths[i++ % mixPaths.length]}`));
          await answer.arrayBuffer();
          n++;
        }
      };
      await Promise.all(Array.from({ length: connections }, one));
      return n;
    };
    const before = threadCpu();
    const started = performance.now();
    const n = await run(seconds * 1000);
    const elapsed = (performance.now() - started) / 1000;
    const after = threadCpu();
    const per = (k: "main" | "workers" | "other") => ((after[k] - before[k]) * 1000) / n;
    // Both apps share this process's compilers: their time stays with the other threads'.
    return { rps: n / elapsed, mainUs: per("main"), workersUs: per("workers"), otherUs: per("other") };
  }

  const inProcessRuns = {
    single: [] as Awaited<ReturnType<typeof inProcess>>[],
    pooled: [] as Awaited<ReturnType<typeof inProcess>>[],
  };
  for (const app of Object.values(apps)) await inProcess(app, warmup);
  for (let round = 1; round <= rounds; round++) {
    for (const which of round % 2 ? (["single", "pooled"] as const) : (["pooled", "single"] as const)) {
      const r = await inProcess(apps[which], duration);
      inProcessRuns[which].push(r);
      console.error(
        `round ${round}: in process, ${which}: ${r.rps.toFixed(0)} searches/s; CPU µs/request: request thread ${r.mainUs.toFixed(0)}, workers ${r.workersUs.toFixed(0)}, JIT + other ${r.otherUs.toFixed(0)}`,
      );
    }
  }
  const inProcessSummary = (rs: Awaited<ReturnType<typeof inProcess>>[]) => ({
    searchesPerSecond: median(rs.map((r) => r.rps)),
    mainUs: median(rs.map((r) => r.mainUs)),
    workersUs: median(rs.map((r) => r.workersUs)),
    otherUs: median(rs.map((r) => r.otherUs)),
  });
  clearInterval(holder);
  for (const app of Object.values(apps)) app.close();
  const inProcessRatio = median(inProcessRuns.pooled.map((r, i) => r.rps / inProcessRuns.single[i]!.rps));
  return {
    single: inProcessSummary(inProcessRuns.single),
    pooled: inProcessSummary(inProcessRuns.pooled),
    ratio: inProcessRatio,
  };
}
const inProcessReport = values["http-only"] ? undefined : await inProcessPart();

/** Resident and proportional set sizes of a process, in MB (PSS counts a page mapped by several threads or processes once, shared). */
function memory(pid: number): { rssMb: number; pssMb: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? NaN);
  return { rssMb: kb("Rss") / 1024, pssMb: kb("Pss") / 1024 };
}
const memories = { single: memory(single.pid), pooled: memory(pooled.pid) };
const load1 = loadavg()[0]!;
await Promise.all(Object.values(servers).map((s) => s!.stop()));

const summary = (rs: Run[]) => ({
  requestsPerSecond: median(rs.map((r) => r.rps)),
  cpuUsPerRequest: median(rs.map((r) => r.cpuUs)),
  requestThreadUs: median(rs.map((r) => r.mainUs)),
  workersUs: median(rs.map((r) => r.workersUs)),
  jitUs: median(rs.map((r) => r.jitUs)),
  otherUs: median(rs.map((r) => r.otherUs)),
  clientUs: median(rs.map((r) => r.clientUs)),
  p50Ms: median(rs.map((r) => r.p50)),
  p99Ms: median(rs.map((r) => r.p99)),
  failures: rs.reduce((n, r) => n + r.failures, 0),
});
const baselineSummary = (r: Record<Which, Run[]>) => (baseline ? { baseline: summary(r.baseline) } : {});
const report0 = { mix: { single: summary(runs.mix.single), pooled: summary(runs.mix.pooled) } };
function cpuBound(r: (typeof report0)["mix"], withClient: boolean): number {
  const rate = (s: ReturnType<typeof summary>) =>
    Math.min(1e6 / s.requestThreadUs, (cores * 1e6) / (s.cpuUsPerRequest + (withClient ? s.clientUs : 0)));
  return rate(r.pooled) / rate(r.single);
}
const cores = availableParallelism();
const report = {
  snapshot: path,
  chunks: snapshot.meta.indexedChunks,
  cores: availableParallelism(),
  workers,
  client,
  connections,
  durationSeconds: duration,
  rounds,
  loadAverageBefore: load0,
  loadAverageAfter: load1,
  mix: { single: summary(runs.mix.single), pooled: summary(runs.mix.pooled), ...baselineSummary(runs.mix) },
  cheap: {
    query: cheap,
    single: summary(runs.cheap.single),
    pooled: summary(runs.cheap.pooled),
    ...baselineSummary(runs.cheap),
  },
  libraryPerSecond: median(library),
  /** Medians of the per-round ratios. */
  mixPooledToSingle: median(ratios.mix),
  cheapPooledToLibrary: median(ratios.cheapToLibrary),
  cheapSingleToLibrary: median(ratios.singleCheapToLibrary),
  /** This checkout's pooled server ÷ the baseline's (--baseline). */
  mixToBaseline: baseline ? median(ratios.mixToBaseline) : undefined,
  cheapToBaseline: baseline ? median(ratios.cheapToBaseline) : undefined,
  /** The request thread's CPU per request, this checkout's pooled server ÷ the baseline's. */
  mixMainToBaseline: baseline ? median(ratios.mixMainToBaseline) : undefined,
  cheapMainToBaseline: baseline ? median(ratios.cheapMainToBaseline) : undefined,
  /**
   * The mix's ratio as the CPU counted would allow it on this many idle cores: each server's rate bound by its
   * request thread (one core at most) and by all its threads' CPU with the client's beside it, or without it (a client
   * on another machine). What the machine's other work and the threads' contention take is left out.
   */
  cpuBoundMix: {
    withClient: cpuBound(report0.mix, true),
    withoutClient: cpuBound(report0.mix, false),
  },
  memory: memories,
  /** The app in process (no HTTP, no keys): the search mix through app.handle(). */
  inProcess: inProcessReport,
};
if (values.json) console.log(JSON.stringify(report, null, 2));
else {
  console.log(
    `${report.chunks} chunks; ${report.cores} cores; ${client}, ${connections} connections, ${duration} s per run, medians of ${rounds} rounds; load average ${load0.toFixed(2)} before, ${load1.toFixed(2)} after`,
  );
  console.log(
    "| scenario | server | requests/s | server CPU µs/request | request thread / workers / JIT / other µs | client µs/request | p50 ms | p99 ms | failures |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const name of ["mix", "cheap"] as const) {
    for (const which of ["single", "pooled", "baseline"] as const) {
      const s = report[name][which as "single"];
      if (!s) continue;
      const label =
        which === "single" ? "0 workers" : which === "pooled" ? `${workers} workers` : `${workers} workers, baseline`;
      console.log(
        `| ${name === "mix" ? "search mix" : `cheapest (${cheap})`} | ${label} | ${s.requestsPerSecond.toFixed(0)} | ${s.cpuUsPerRequest.toFixed(0)} | ${s.requestThreadUs.toFixed(0)} / ${s.workersUs.toFixed(0)} / ${s.jitUs.toFixed(0)} / ${s.otherUs.toFixed(0)} | ${s.clientUs.toFixed(0)} | ${s.p50Ms} | ${s.p99Ms} | ${s.failures} |`,
      );
    }
  }
  console.log(`library in process, ${cheap}: ${report.libraryPerSecond.toFixed(0)} searches/s`);
  console.log(`search mix, ${workers} workers ÷ 0: ${report.mixPooledToSingle.toFixed(2)}×`);
  console.log(
    `the same as the CPU counted allows on ${cores} idle cores: ${report.cpuBoundMix.withClient.toFixed(2)}× with this client beside the server, ${report.cpuBoundMix.withoutClient.toFixed(2)}× without`,
  );
  if (baseline)
    console.log(
      `${workers} workers ÷ baseline (${values.baseline}): search mix ${report.mixToBaseline!.toFixed(2)}×, ${cheap} ${report.cheapToBaseline!.toFixed(2)}×; the request thread's CPU a request: search mix ${report.mixMainToBaseline!.toFixed(2)}×, ${cheap} ${report.cheapMainToBaseline!.toFixed(2)}× (medians of per-round ratios)`,
    );
  console.log(
    `${cheap} through HTTP ÷ library in process: ${report.cheapPooledToLibrary.toFixed(2)} with ${workers} workers, ${report.cheapSingleToLibrary.toFixed(2)} with 0`,
  );
  console.log(
    `memory after the runs: 0 workers RSS ${memories.single.rssMb.toFixed(0)} MB, PSS ${memories.single.pssMb.toFixed(0)} MB; ` +
      `${workers} workers RSS ${memories.pooled.rssMb.toFixed(0)} MB, PSS ${memories.pooled.pssMb.toFixed(0)} MB`,
  );
  if (report.inProcess) {
    const { single: s, pooled: p } = report.inProcess;
    console.log(
      `in process (app.handle, no HTTP, no keys), search mix: ${s.searchesPerSecond.toFixed(0)} searches/s with 0 workers, ` +
        `${p.searchesPerSecond.toFixed(0)} with ${workers} (${report.inProcess.ratio.toFixed(2)}×); CPU µs per search: ` +
        `0 workers ${s.mainUs.toFixed(0)} + ${s.otherUs.toFixed(0)} JIT and other, ${workers} workers: request thread ${p.mainUs.toFixed(0)}, workers ${p.workersUs.toFixed(0)}, JIT and other ${p.otherUs.toFixed(0)}`,
    );
  }
}
