/**
 * bun bench/search/latency.ts <snapshot.tome> [--queries N] [--warm-up W] [--json] [--before-classes] [--class K]...
 *
 * Search latency in process, one core, on a warm process, as issue 58 measures it: for each
 * class of the benchmark's mix (bench/queries.ts, its fixed seed), N queries, each timed
 *   - first: its first run, after a warm-up of W (default 1,000) other queries of the mix;
 *   - best of 3: its best of three runs after that first one (as the search-benchmark-game
 *     measures: what a warm engine does with a warm query).
 * Prints per class the p50 / p99 ms of both, and the median postings decoded and chunks scored
 * per query (SearchWork), and how many first runs were cut off at the search's time limit (D91:
 * work.cutOff; an engine older than D91 did not say so, and a first run of 100 ms or more, its
 * limit then, is counted), and the median minor page faults of a first run; "mix" is every class's
 * queries together. --before-classes adds issue 44's question class (a third of its queries
 * function words only) beside the new ones.
 * --class K (repeatable) measures only those classes, the same queries as in the whole run.
 * --cpu times each search by the process's CPU (user + system, every thread) rather than the
 * clock: on a machine other work shares, a search's CPU moves less than its wall time. --thread-cpu times it by the
 * searching thread's CPU alone: after 1,000 warm-up queries JavaScriptCore's compiler threads still spend 0.4 ms
 * or more a first run on other threads (bench/search/RESULTS.md, session 70), which --cpu counts. --threads
 * prints what each thread of the process (by its name: bun, JITWorker, HeapHelper…) spent in the first runs.
 * --slowest N prints each class's N slowest first runs, with their plan and work (where a p99 comes from); --plans
 * each class's first runs by the plan that ranked them (a words plan given way to counts as words). --populate maps the
 * whole file in the process's page tables first and says how long it took (Engine.populate; measured and not adopted
 * by the server, D204): first runs then take no page fault on the mapping.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { median, quantile } from "../stats";

const USAGE = `Usage: bun bench/search/latency.ts <snapshot.tome> [--queries N] [--warm-up W] [--json] [--before-classes] [--class K]...
  --queries N        queries per class (default 100)
  --warm-up W        other queries run first (default 1000)
  --json             print the figures as JSON
  --before-classes   also issue 44's question class ("question (issue 44)")
  --class K          only class K (repeatable: "typo", "function words"…); the queries are the whole run's
  --cpu              time by the process's CPU rather than the clock (a shared, busy machine)
  --thread-cpu       time by the searching thread's CPU alone (not the compiler's and collector's threads)
  --threads          also the CPU each of the process's threads spent in the first runs, ms a first run (Linux)
  --slowest N        also each class's N slowest first runs: ms, plan, postings, chunks scored, the query
  --plans            also each class's first runs by the plan that ranked them: how many, p50 / p99, share of the time
  --populate         map the whole file in the page tables first (Engine.populate, D204)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    queries: { type: "string", default: "100" },
    "warm-up": { type: "string", default: "1000" },
    json: { type: "boolean" },
    "before-classes": { type: "boolean" },
    class: { type: "string", multiple: true },
    cpu: { type: "boolean" },
    "thread-cpu": { type: "boolean" },
    threads: { type: "boolean" },
    slowest: { type: "string", default: "0" },
    plans: { type: "boolean" },
    populate: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { open } = await import("../../src/search");
const { mixClass, queryMix, questionBefore } = await import("../queries");

const engine = open(positionals[0]);
if (values.populate) {
  const started = performance.now();
  if (await engine.populate())
    console.error(`--populate: the file mapped in ${(performance.now() - started).toFixed(0)} ms`);
  else console.error("--populate: this kernel cannot (Linux 5.14 or later)");
}
const perClass = Number(values.queries);
const mix = queryMix(engine.snapshot);
const classes: Record<string, () => string> = { ...mix };
if (values["before-classes"]) classes["question (issue 44)"] = questionBefore(engine.snapshot, 7);
const only = values.class ?? [];
for (const k of only)
  if (!(k in classes)) {
    console.error(`no class "${k}"; the classes are: ${Object.keys(classes).join(", ")}`);
    process.exit(2);
  }
const queries = Object.fromEntries(
  Object.keys(classes)
    .map((k) => [k, Array.from({ length: perClass }, mixClass(classes, k)).filter((q) => q.trim())] as const)
    .filter(([k]) => !only.length || only.includes(k)),
);

// Warm-up: other queries of the same kinds (another seed), never the measured ones.
const other = queryMix(engine.snapshot, 99);
const kinds = Object.keys(other);
for (let i = 0; i < Number(values["warm-up"]); i++) engine.search(other[kinds[i % kinds.length]!]!());

/**
 * What a search is timed by, in ms: the searching thread's CPU, the process's, or the clock. The thread's is read by
 * clock_gettime(CLOCK_THREAD_CPUTIME_ID): Bun's process.threadCpuUsage() counts in the kernel's ticks (4 ms here)
 * once a thread has run a while, so a search read 0 or 4 ms by it (found in session 71).
 */
const clockMs: () => number = values["thread-cpu"]
  ? threadCpuClock()
  : values.cpu
    ? () => {
        const { user, system } = process.cpuUsage();
        return (user + system) / 1000;
      }
    : () => performance.now();

/** The time limit of engines older than D91, which cut a search off without saying so. */
const OLD_LIMIT_MS = 100;
const time = (
  q: string,
): { q: string; ms: number; plan: string; postings: number; candidates: number; cutOff: boolean; faults: number } => {
  const started = clockMs();
  const faulted = process.resourceUsage().minorPageFault;
  const { work } = engine.search(q);
  const faults = process.resourceUsage().minorPageFault - faulted;
  const ms = clockMs() - started;
  const said = (work as { cutOff?: boolean }).cutOff;
  const plan = (work as { plan?: string }).plan ?? "";
  return {
    q,
    ms,
    plan,
    postings: work.postings,
    candidates: work.candidates,
    cutOff: said ?? ms >= OLD_LIMIT_MS,
    faults,
  };
};

interface ClassFigures {
  queries: number;
  first: { p50: number; p99: number };
  best: { p50: number; p99: number };
  postings: number;
  candidates: number;
  cutOff: number;
  /** Median minor page faults of a first run (the whole process's: a fault on the mapping is most of them). */
  faults: number;
}
const figures: Record<string, ClassFigures> = {};
const all = { first: [] as number[], best: [] as number[] };
const firsts: Record<string, ReturnType<typeof time>[]> = {};
// Every class's first runs, before any query is run a second time.
const threadsBefore = values.threads ? threadCpuMs() : undefined;
for (const [k, qs] of Object.entries(queries)) firsts[k] = qs.map(time);
const threadsAfter = threadsBefore && threadCpuMs();
for (const [k, qs] of Object.entries(queries)) {
  const best = qs.map((q) => Math.min(time(q).ms, time(q).ms, time(q).ms));
  const first = firsts[k]!;
  const f = first.map((r) => r.ms);
  if (k in mix) {
    all.first.push(...f);
    all.best.push(...best);
  }
  figures[k] = {
    queries: qs.length,
    first: { p50: quantile(f, 0.5), p99: quantile(f, 0.99) },
    best: { p50: quantile(best, 0.5), p99: quantile(best, 0.99) },
    postings: median(first.map((r) => r.postings)),
    candidates: median(first.map((r) => r.candidates)),
    cutOff: first.filter((r) => r.cutOff).length,
    faults: median(first.map((r) => r.faults)),
  };
}
const mixFigures = {
  first: { p50: quantile(all.first, 0.5), p99: quantile(all.first, 0.99) },
  best: { p50: quantile(all.best, 0.5), p99: quantile(all.best, 0.99) },
};

if (values.json) console.log(JSON.stringify({ classes: figures, mix: mixFigures }));
else {
  console.log(
    `${positionals[0]}: ${perClass} queries a class, after ${values["warm-up"]} others${values["thread-cpu"] ? " (the searching thread's CPU ms)" : values.cpu ? " (CPU ms)" : ""}`,
  );
  console.log(
    "| class | first p50 / p99 ms | best of 3 p50 / p99 ms | postings | chunks scored | cut off | page faults, first |",
  );
  console.log("|---|---|---|---|---|---|---|");
  const ms = (x: { p50: number; p99: number }) => `${x.p50.toFixed(2)} / ${x.p99.toFixed(2)}`;
  for (const [k, c] of Object.entries(figures))
    console.log(
      `| ${k} | ${ms(c.first)} | ${ms(c.best)} | ${c.postings.toFixed(0)} | ${c.candidates.toFixed(0)} | ${c.cutOff} | ${c.faults} |`,
    );
  console.log(`| **mix** | ${ms(mixFigures.first)} | ${ms(mixFigures.best)} | | | | |`);
}
if (values.plans)
  for (const [k, first] of Object.entries(firsts)) {
    console.log(`\n${k}: first runs by the plan that ranked them (work.plan)`);
    console.log("| plan | queries | first p50 / p99 ms | share of the class's time |");
    console.log("|---|---|---|---|");
    const total = first.reduce((n, r) => n + r.ms, 0);
    for (const plan of [...new Set(first.map((r) => r.plan))].sort()) {
      const f = first.filter((r) => r.plan === plan).map((r) => r.ms);
      const spent = f.reduce((n, ms) => n + ms, 0);
      console.log(
        `| ${plan || "(none)"} | ${f.length} | ${quantile(f, 0.5).toFixed(2)} / ${quantile(f, 0.99).toFixed(2)} | ${((100 * spent) / total).toFixed(0)}% |`,
      );
    }
  }
const slowest = Number(values.slowest);
if (slowest > 0)
  for (const [k, first] of Object.entries(firsts)) {
    console.log(`\n${k}: the ${slowest} slowest first runs (ms, plan, postings, chunks scored, query)`);
    for (const r of [...first].sort((a, b) => b.ms - a.ms).slice(0, slowest))
      console.log(`${r.ms.toFixed(2)}\t${r.plan}\t${r.postings}\t${r.candidates}\t${r.q}`);
  }
if (threadsBefore && threadsAfter) {
  const runs = Object.values(firsts).reduce((n, f) => n + f.length, 0);
  console.log(`\nCPU by thread in the ${runs} first runs, ms a first run (/proc/self/task/*/schedstat)`);
  console.log("| thread | ms a first run |");
  console.log("|---|---|");
  const byName = new Map<string, number>();
  for (const [id, { name, ms }] of threadsAfter)
    byName.set(name, (byName.get(name) ?? 0) + ms - (threadsBefore.get(id)?.ms ?? 0));
  for (const [name, ms] of [...byName].sort((a, b) => b[1] - a[1]))
    if (ms > 0) console.log(`| ${name} | ${(ms / runs).toFixed(3)} |`);
}

/** Each thread of the process (by id) with its name and the CPU ms it has run. */
function threadCpuMs(): Map<string, { name: string; ms: number }> {
  const out = new Map<string, { name: string; ms: number }>();
  for (const id of readdirSync("/proc/self/task"))
    try {
      const name = readFileSync(`/proc/self/task/${id}/comm`, "utf8").trim();
      const ns = Number(readFileSync(`/proc/self/task/${id}/schedstat`, "utf8").split(" ")[0]);
      out.set(id, { name, ms: ns / 1e6 });
    } catch {
      // A thread that ended between the listing and the read.
    }
  return out;
}

/** This thread's CPU time in ms, to the nanosecond (Linux's CLOCK_THREAD_CPUTIME_ID). */
function threadCpuClock(): () => number {
  const CLOCK_THREAD_CPUTIME_ID = 3;
  const libc = dlopen("libc.so.6", { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
  const timespec = new BigInt64Array(2);
  const at = ptr(timespec);
  if (libc.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, at) !== 0) {
    console.error("--thread-cpu: this system has no thread CPU clock (clock_gettime failed)");
    process.exit(2);
  }
  return () => {
    libc.symbols.clock_gettime(CLOCK_THREAD_CPUTIME_ID, at);
    return Number(timespec[0]) * 1e3 + Number(timespec[1]) / 1e6;
  };
}
