/**
 * bun bench/scale/scale.ts --chunks N [--dump FILE] [--memory SIZE] [--queries Q] [--save FILE] [--against FILE] [--work DIR] [--keep]
 *
 * The figures of issue 14's closing note, at one size: an English-like corpus of N chunks
 * (bench/corpus/gen-corpus.ts, or the export given with --dump) is built by `bun run snapshot:build`
 * in a child process (wall time, CPU time user+sys, peak RSS: /usr/bin/time -v, else polled
 * from /proc), then a fresh process opens the snapshot (open()), answers a first search, runs
 * Q queries of bench/search/search.ts's mix (bench/queries.ts, drawn by another process, so that the
 * mix's word lists are not in its heap) and reports its resident memory split
 * into file-backed (RssFile, of which the snapshot's own mapping from /proc/self/smaps) and
 * private (RssAnon). Bytes per chunk = (file size + RssAnon) / chunks. Each figure is projected
 * to 25M chunks with its arithmetic: proportionally to the chunks, or, given the figures of a
 * smaller run (--against, written by --save), along the line through the two sizes.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { open } from "../../src/search";
import type { Snapshot } from "../../src/snapshot";
import { FIRST_QUERY, queryMix } from "../queries";

const USAGE = `Usage: bun bench/scale/scale.ts --chunks N [options]

  --chunks N        chunks of the English-like corpus to generate (bench/corpus/gen-corpus.ts)
  --dump FILE       build this export instead of generating one (--chunks is then ignored)
  --memory SIZE     snapshot:build's memory budget (default 500M)
  --queries Q       queries of bench/search/search.ts's mix after boot (default 1000)
  --save FILE       also write the figures as JSON (for --against)
  --against FILE    figures of another size (from --save): project along the line through both
  --work DIR        where the corpus and the snapshot go (default: a new temporary directory)
  --keep            keep the corpus and the snapshot (default: remove what this run made)
  --serve FILE      (used by the benchmark itself) open the snapshot, search, print JSON
  --draw FILE       (used by --serve) draw the queries from the snapshot, print them as JSON
  -h, --help        this help`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    chunks: { type: "string" },
    dump: { type: "string" },
    memory: { type: "string", default: "500M" },
    queries: { type: "string", default: "1000" },
    save: { type: "string" },
    against: { type: "string" },
    work: { type: "string" },
    keep: { type: "boolean" },
    serve: { type: "string" },
    draw: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
const fail = (message: string): never => {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
};
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const queryCount = Number(values.queries);
if (!Number.isInteger(queryCount) || queryCount < 1)
  fail(`--queries must be a positive whole number, not ${values.queries}`);

const TARGET_CHUNKS = 25_000_000;
const ROOT = resolve(import.meta.dir, "../..");

/** What the serving process measures. */
interface Served {
  chunks: number;
  pages: number;
  /** Process start (Bun's time origin) to the first answered search, in ms. */
  bootMs: number;
  openMs: number;
  firstSearchMs: number;
  queries: number;
  kinds: Record<string, number>;
  latencyMs: { median: number; p90: number; p99: number; mean: number };
  /** /proc/self/status after the queries, in bytes. */
  memory: { rss: number; rssAnon: number; rssFile: number; rssShmem: number; hwm: number; snapshotMapped: number };
  /** The same after a full garbage collection. */
  afterGc: { rssAnon: number };
  /** Private resident bytes before open(), and after it (before any search). */
  rssAnonBeforeOpen: number;
  rssAnonAfterOpen: number;
  rssAnonBeforeQueries: number;
}

const status = () => {
  const text = readFileSync("/proc/self/status", "utf8");
  const kB = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN) * 1024;
  return {
    rss: kB("VmRSS"),
    rssAnon: kB("RssAnon"),
    rssFile: kB("RssFile"),
    rssShmem: kB("RssShmem"),
    hwm: kB("VmHWM"),
  };
};

/** Resident bytes of the mappings of one file (/proc/self/smaps). */
function mappedResident(path: string): number {
  let total = 0;
  let inFile = false;
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.trimEnd().endsWith(` ${path}`);
    else if (inFile && line.startsWith("Rss:")) total += Number(/(\d+) kB/.exec(line)![1]) * 1024;
  }
  return total;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** The queries, drawn in a child process: the mix's word lists are the benchmark's, and would stay in a server's heap. */
function queriesFromAnotherProcess(path: string): Drawn {
  const child = Bun.spawnSync(["bun", import.meta.path, "--draw", path, "--queries", String(queryCount)], {
    cwd: ROOT,
    stderr: "inherit",
  });
  if (child.exitCode !== 0) fail(`drawing the queries failed (exit ${child.exitCode})`);
  return JSON.parse(child.stdout.toString()) as Drawn;
}

function serve(path: string): Served {
  const drawStarted = performance.now();
  const { queries, warmUp } = queriesFromAnotherProcess(path);
  // Boot is counted from the process's start, without the time the other process took to draw.
  const drawMs = performance.now() - drawStarted;
  const rssAnonBeforeOpen = status().rssAnon;
  const t0 = performance.now();
  const tome = open(path);
  const openMs = performance.now() - t0;
  const rssAnonAfterOpen = status().rssAnon;
  tome.search(FIRST_QUERY);
  const searched = performance.now();
  const bootMs = searched - drawMs;
  const firstSearchMs = searched - t0 - openMs;

  const rssAnonBeforeQueries = status().rssAnon;
  for (const q of warmUp) tome.search(q);
  const times: number[] = [];
  const kinds: Record<string, number> = {};
  for (const { kind, q } of queries) {
    const started = performance.now();
    tome.search(q);
    times.push(performance.now() - started);
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  const sorted = [...times].sort((a, b) => a - b);
  const memory = { ...status(), snapshotMapped: mappedResident(resolve(path)) };
  Bun.gc(true);
  return {
    chunks: tome.snapshot.meta.indexedChunks,
    pages: tome.snapshot.pages.length,
    bootMs,
    openMs,
    firstSearchMs,
    queries: times.length,
    kinds,
    latencyMs: {
      median: quantile(sorted, 0.5),
      p90: quantile(sorted, 0.9),
      p99: quantile(sorted, 0.99),
      mean: times.reduce((a, b) => a + b, 0) / times.length,
    },
    memory,
    afterGc: { rssAnon: status().rssAnon },
    rssAnonBeforeOpen,
    rssAnonAfterOpen,
    rssAnonBeforeQueries,
  };
}

/**
 * The mix, drawn in turn kind by kind (a kind that gives only empty queries, Japanese in
 * English, is left out); and the warm-up as bench/search/search.ts does it: 10 of each kind, not timed.
 */
interface Drawn {
  queries: { kind: string; q: string }[];
  warmUp: string[];
}

function drawQueries(snapshot: Snapshot): Drawn {
  const mix = Object.entries(queryMix(snapshot));
  const usable = mix.filter(([, make]) => Array.from({ length: 5 }, make).some((q) => q.replace(/"/g, "").trim()));
  const queries: { kind: string; q: string }[] = [];
  for (let i = 0; queries.length < queryCount && i < queryCount * 10; i++) {
    const [kind, make] = usable[i % usable.length]!;
    const q = make();
    if (q.replace(/"/g, "").trim()) queries.push({ kind, q });
  }
  return { queries, warmUp: usable.flatMap(([, make]) => Array.from({ length: 10 }, make)) };
}

if (values.draw) {
  console.log(JSON.stringify(drawQueries(open(values.draw).snapshot)));
  process.exit(0);
}
if (values.serve) {
  console.log(JSON.stringify(serve(values.serve)));
  process.exit(0);
}

/** A child process, its stderr passed through; resolves with its exit code and the tail of its stderr. */
async function run(
  command: string[],
): Promise<{ code: number; stderr: string; pid: number; proc: Bun.Subprocess<"ignore", "inherit", "pipe"> }> {
  const proc = Bun.spawn(command, { cwd: ROOT, stdin: "ignore", stdout: "inherit", stderr: "pipe" });
  let tail = "";
  for await (const part of proc.stderr) {
    process.stderr.write(part);
    tail = (tail + new TextDecoder().decode(part)).slice(-20_000);
  }
  return { code: await proc.exited, stderr: tail, pid: proc.pid, proc };
}

interface Built {
  wallSeconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
  runs: number;
  measuredBy: string;
}

/** Builds dump into out with `bun run snapshot:build`, measured from outside. */
async function build(dump: string, out: string, memory: string): Promise<Built> {
  const command = ["bun", "run", "snapshot:build", "--dump", dump, "--out", out, "--memory", memory];
  const runsOf = (stderr: string) => Number(/(\d+) index run\(s\)/.exec(stderr)?.[1] ?? Number.NaN);
  if (existsSync("/usr/bin/time")) {
    const report = `${out}.time`;
    const r = await run(["/usr/bin/time", "-v", "-o", report, ...command]);
    const text = existsSync(report) ? readFileSync(report, "utf8") : "";
    rmSync(report, { force: true });
    if (r.code !== 0) throw new Error(`snapshot:build failed (exit ${r.code})`);
    const field = (name: string) => /: (.*)$/.exec(text.split("\n").find((l) => l.includes(name)) ?? "")?.[1] ?? "";
    const wall = field("Elapsed (wall clock) time")
      .split(":")
      .reduce((s, x) => s * 60 + Number(x), 0);
    return {
      wallSeconds: wall,
      cpuSeconds: Number(field("User time (seconds)")) + Number(field("System time (seconds)")),
      peakRssBytes: Number(field("Maximum resident set size (kbytes)")) * 1024,
      runs: runsOf(r.stderr),
      measuredBy: "/usr/bin/time -v",
    };
  }
  // No /usr/bin/time: the builder itself (not through `bun run`, whose process would hide it), its peak polled.
  const t0 = performance.now();
  const proc = Bun.spawn(["bun", "src/cli/snapshot-build.ts", ...command.slice(3)], {
    cwd: ROOT,
    stdin: "ignore",
    stdout: "inherit",
    stderr: "pipe",
  });
  let hwm = 0;
  const poll = setInterval(() => {
    const m = existsSync(`/proc/${proc.pid}/status`)
      ? /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))
      : null;
    if (m) hwm = Math.max(hwm, Number(m[1]) * 1024);
  }, 100);
  let tail = "";
  for await (const part of proc.stderr) {
    process.stderr.write(part);
    tail = (tail + new TextDecoder().decode(part)).slice(-20_000);
  }
  const code = await proc.exited;
  clearInterval(poll);
  if (code !== 0) throw new Error(`snapshot:build failed (exit ${code})`);
  const usage = proc.resourceUsage();
  return {
    wallSeconds: (performance.now() - t0) / 1000,
    cpuSeconds: usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6 : Number.NaN,
    peakRssBytes: Math.max(hwm, usage ? usage.maxRSS * 1024 : 0),
    runs: runsOf(tail),
    measuredBy: "/proc/PID/status VmHWM (polled) and wait4's rusage",
  };
}

interface Figures {
  /** /proc/loadavg's 1-minute figure when the build started, when it ended, and after serving (the machine is shared). */
  load: number[];
  chunks: number;
  pages: number;
  command: { generate?: string; build: string; serve: string };
  generateSeconds?: number;
  build: Built;
  fileBytes: number;
  served: Served;
  bytesPerChunk: number;
}

if (!values.dump && !values.chunks) fail("give --chunks N (or --dump FILE)");
const target = Number(values.chunks);
if (!values.dump && !(Number.isInteger(target) && target > 0))
  fail(`--chunks must be a positive whole number, not ${values.chunks}`);
if (!/^\d+(\.\d+)?[KMG]?$/i.test(values.memory!)) fail(`--memory is a size such as 500M or 2G, not ${values.memory}`);
const against: Figures | undefined = values.against ? JSON.parse(readFileSync(values.against, "utf8")) : undefined;

const work = values.work ? resolve(values.work) : mkdtempSync(join(tmpdir(), "tome-scale-"));
mkdirSync(work, { recursive: true });
const made: string[] = [];
const dump = values.dump ? resolve(values.dump) : join(work, `english-${target}.xml`);
let generateSeconds: number | undefined;
let generateCommand: string | undefined;
if (!values.dump) {
  generateCommand = `bun bench/corpus/gen-corpus.ts --chunks ${target} --out ${dump}`;
  console.error(`$ ${generateCommand}`);
  const t0 = performance.now();
  const r = await run(["bun", "bench/corpus/gen-corpus.ts", "--chunks", String(target), "--out", dump]);
  if (r.code !== 0) fail(`gen-corpus failed (exit ${r.code})`);
  generateSeconds = (performance.now() - t0) / 1000;
  made.push(dump);
}
const out = join(work, "scale.tome");
made.push(out);
const buildCommand = `bun run snapshot:build --dump ${dump} --out ${out} --memory ${values.memory}`;
console.error(`$ ${buildCommand}`);
const loadNow = () => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
const load = [loadNow()];
const built = await build(dump, out, values.memory!);
const fileBytes = statSync(out).size;
load.push(loadNow());

const serveCommand = `bun bench/scale/scale.ts --serve ${out} --queries ${queryCount}`;
console.error(`$ ${serveCommand}`);
const child = Bun.spawnSync(["bun", import.meta.path, "--serve", out, "--queries", String(queryCount)], {
  cwd: ROOT,
  stderr: "inherit",
});
if (child.exitCode !== 0) fail(`the serving process failed (exit ${child.exitCode})`);
const served = JSON.parse(child.stdout.toString().trim()) as Served;
load.push(loadNow());
if (!values.keep) for (const f of made) rmSync(f, { force: true });
if (!values.keep && !values.work) rmSync(work, { recursive: true, force: true });

const figures: Figures = {
  load,
  chunks: served.chunks,
  pages: served.pages,
  command: { generate: generateCommand, build: buildCommand, serve: serveCommand },
  generateSeconds,
  build: built,
  fileBytes,
  served,
  bytesPerChunk: (fileBytes + served.memory.rssAnon) / served.chunks,
};
if (values.save) writeFileSync(values.save, JSON.stringify(figures, null, 2));

// The table: each figure, per chunk where that means something, and its projection with the arithmetic.
const n = figures.chunks;
const M = (b: number) => `${(b / 1e6).toFixed(0)} MB`;
const G = (b: number) => `${(b / 1e9).toFixed(2)} GB`;
const fmt = {
  bytes: (b: number) => (b >= 1e9 ? G(b) : M(b)),
  s: (x: number) => `${x.toFixed(1)} s`,
  ms: (x: number) => `${x.toFixed(2)} ms`,
};
type Unit = keyof typeof fmt;
/** value at 25M chunks with its arithmetic: proportional to chunks, or along the line through (against, this run). */
function project(value: number, unit: Unit, pick?: (f: Figures) => number): string {
  const show = fmt[unit];
  const small = against && pick ? { n: against.chunks, v: pick(against) } : undefined;
  if (small && small.n !== n) {
    const slope = (value - small.v) / (n - small.n);
    const intercept = value - slope * n;
    const at = intercept + slope * TARGET_CHUNKS;
    const per =
      unit === "bytes"
        ? `${slope.toFixed(1)} B`
        : unit === "s"
          ? `${(slope * 1e6).toFixed(2)} µs`
          : `${(slope * 1e6).toFixed(4)} ns`;
    return `${show(intercept)} + 25M × ${per} = **${show(at)}** (line through ${small.n.toLocaleString("en")} and ${n.toLocaleString("en")} chunks)`;
  }
  const per = value / n;
  const perText =
    unit === "bytes"
      ? `${per.toFixed(1)} B`
      : unit === "s"
        ? `${(per * 1e6).toFixed(2)} µs`
        : `${(per * 1e6).toFixed(4)} ns`;
  return `25M × ${perText} = **${show(per * TARGET_CHUNKS)}** (proportional)`;
}
const s = served;
const rows: [string, string, string, string, string][] = [
  [
    "build: wall time",
    fmt.s(built.wallSeconds),
    `${((built.wallSeconds / n) * 1e6).toFixed(1)} µs`,
    project(built.wallSeconds, "s", (f) => f.build.wallSeconds),
    "",
  ],
  [
    "build: CPU time (user+sys)",
    `${fmt.s(built.cpuSeconds)} (${(built.cpuSeconds / built.wallSeconds).toFixed(2)} cores busy)`,
    `${((built.cpuSeconds / n) * 1e6).toFixed(1)} µs`,
    project(built.cpuSeconds, "s", (f) => f.build.cpuSeconds),
    "",
  ],
  [
    `build: peak RSS (--memory ${values.memory}, ${built.runs} runs)`,
    M(built.peakRssBytes),
    `${(built.peakRssBytes / n).toFixed(0)} B`,
    project(built.peakRssBytes, "bytes", (f) => f.build.peakRssBytes),
    "≤ 2 GB",
  ],
  [
    "snapshot file",
    M(fileBytes),
    `${(fileBytes / n).toFixed(1)} B`,
    project(fileBytes, "bytes", (f) => f.fileBytes),
    "",
  ],
  [
    "serve: private resident (RssAnon) after boot and the queries",
    `${M(s.memory.rssAnon)} (${M(s.afterGc.rssAnon)} after a full GC; ${M(s.rssAnonBeforeOpen)} before open(), ${M(s.rssAnonAfterOpen)} after it, ${M(s.rssAnonBeforeQueries)} after the first search; the queries drawn in another process)`,
    `${(s.memory.rssAnon / n).toFixed(1)} B`,
    project(s.memory.rssAnon, "bytes", (f) => f.served.memory.rssAnon),
    "",
  ],
  [
    "serve: file-backed resident (RssFile)",
    `${M(s.memory.rssFile)}, of it the snapshot's mapping ${M(s.memory.snapshotMapped)} (${((100 * s.memory.snapshotMapped) / fileBytes).toFixed(0)}% of the file)`,
    "",
    "at most the file (its pages are the page cache's)",
    "",
  ],
  [
    "**memory to serve from RAM: (file + RssAnon) / chunks**",
    `(${M(fileBytes)} + ${M(s.memory.rssAnon)}) / ${n.toLocaleString("en")}`,
    `**${figures.bytesPerChunk.toFixed(0)} B** (${((fileBytes + s.afterGc.rssAnon) / n).toFixed(0)} B after a full GC)`,
    project(fileBytes + s.memory.rssAnon, "bytes", (f) => f.fileBytes + f.served.memory.rssAnon),
    "≤ 1,000 B per chunk (25 GB)",
  ],
  [
    "boot: process start → first answered search",
    `${(s.bootMs / 1000).toFixed(3)} s (open() ${s.openMs.toFixed(0)} ms, first search ${s.firstSearchMs.toFixed(0)} ms)`,
    "",
    project(s.bootMs / 1000, "s", (f) => f.served.bootMs / 1000),
    "≤ 2 s at 5M",
  ],
  [
    "query latency: median",
    fmt.ms(s.latencyMs.median),
    "",
    project(s.latencyMs.median, "ms", (f) => f.served.latencyMs.median),
    "no worse than format 1",
  ],
  [
    "query latency: p90",
    fmt.ms(s.latencyMs.p90),
    "",
    project(s.latencyMs.p90, "ms", (f) => f.served.latencyMs.p90),
    "",
  ],
  [
    "query latency: p99",
    fmt.ms(s.latencyMs.p99),
    "",
    project(s.latencyMs.p99, "ms", (f) => f.served.latencyMs.p99),
    "",
  ],
];
console.log(`### ${n.toLocaleString("en")} chunks, ${figures.pages.toLocaleString("en")} pages\n`);
console.log(`| figure | measured | per chunk | projected to 25M chunks | target |`);
console.log(`|---|---|---|---|---|`);
for (const r of rows) console.log(`| ${r.join(" | ")} |`);
console.log(
  `\n${s.queries} queries (${Object.entries(s.kinds)
    .map(([k, c]) => `${k} ${c}`)
    .join(
      ", ",
    )}), after 10 warm-up queries per kind; the serving process's peak RSS ${M(s.memory.hwm)}. Build measured by ${built.measuredBy}. ` +
    `Load average (1 min) at the build's start, its end and after serving: ${load.map((l) => l.toFixed(1)).join(", ")} on ${availableParallelism()} cores.`,
);
console.log(
  `\n${generateCommand ? `    ${generateCommand}   # ${generateSeconds!.toFixed(0)} s\n` : ""}    ${buildCommand}\n    ${serveCommand}`,
);
