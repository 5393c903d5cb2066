/**
 * bun bench/search/before-after.ts --before-root DIR --before SNAP --after SNAP [--runs R] [--queries N] [--before-classes] [--class K]...
 *
 * latency.ts on two engines whose snapshots differ (an index layout changed between them: the
 * same corpus built by each), alternately, R times each, each run a fresh process: the earlier
 * engine is a checkout at DIR (a git worktree of the earlier commit, its dependencies in place),
 * into which this checkout's latency.ts and queries.ts are copied so that both ask the same
 * queries. Prints per class the medians over the runs of each side's p50 / p99 ms (first run
 * after the warm-up, and best of 3), the postings decoded and chunks scored per query, and the
 * ratio of the first runs' p50s (before ÷ after), and the first runs cut off at the time limit.
 * --cpu: both sides timed by their process's CPU (latency.ts --cpu).
 */
import { cpSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const USAGE = `Usage: bun bench/search/before-after.ts --before-root DIR --before SNAP --after SNAP [--runs R] [--queries N] [--before-classes] [--class K]...
  --before-root DIR   a checkout of the earlier commit (git worktree add DIR REV; bun install there)
  --before SNAP       the snapshot the earlier engine reads
  --after SNAP        the same corpus built by this checkout
  --runs R            runs of each side, alternating (default 3)
  --queries N         queries per class (default 100)
  --before-classes    also issue 44's question class
  --class K           only class K (repeatable), as latency.ts takes it
  --cpu               time by CPU rather than the clock (latency.ts --cpu)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    "before-root": { type: "string" },
    before: { type: "string" },
    after: { type: "string" },
    cpu: { type: "boolean" },
    runs: { type: "string", default: "3" },
    queries: { type: "string", default: "100" },
    "before-classes": { type: "boolean" },
    class: { type: "string", multiple: true },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help || !values["before-root"] || !values.before || !values.after) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const ROOT = resolve(import.meta.dir, "../..");
const earlier = resolve(values["before-root"]);
for (const file of ["bench/search/latency.ts", "bench/queries.ts"]) cpSync(join(ROOT, file), join(earlier, file));

interface Figures {
  classes: Record<
    string,
    {
      first: { p50: number; p99: number };
      best: { p50: number; p99: number };
      postings: number;
      candidates: number;
      cutOff?: number;
    }
  >;
  mix: { first: { p50: number; p99: number }; best: { p50: number; p99: number } };
}

function run(dir: string, snapshot: string): Figures {
  const args = ["bun", "bench/search/latency.ts", resolve(snapshot), "--queries", values.queries!, "--json"];
  if (values["before-classes"]) args.push("--before-classes");
  if (values.cpu) args.push("--cpu");
  for (const k of values.class ?? []) args.push("--class", k);
  const child = Bun.spawnSync(args, { cwd: dir, stderr: "inherit" });
  if (child.exitCode !== 0) throw new Error(`failed (exit ${child.exitCode}) in ${dir}`);
  const out = child.stdout.toString();
  return JSON.parse(out.slice(out.indexOf("{"))) as Figures;
}

const sides = { before: [] as Figures[], after: [] as Figures[] };
for (let r = 0; r < Number(values.runs); r++) {
  console.error(`run ${r + 1}/${values.runs}: before`);
  sides.before.push(run(earlier, values.before));
  console.error(`run ${r + 1}/${values.runs}: after`);
  sides.after.push(run(ROOT, values.after));
}

const m = (runs: Figures[], f: (x: Figures) => number) => median(runs.map(f));
const pair = (runs: Figures[], k: string, mode: "first" | "best") =>
  `${m(runs, (x) => x.classes[k]?.[mode].p50 ?? Number.NaN).toFixed(2)} / ${m(runs, (x) => x.classes[k]?.[mode].p99 ?? Number.NaN).toFixed(2)}`;
console.log(
  `${values.cpu ? "CPU ms, " : ""}medians of ${values.runs} runs each side; before: ${values.before} at ${earlier}; after: ${values.after}`,
);
console.log(
  "| class | before first p50 / p99 | after first p50 / p99 | before ÷ after (p50) | before best-of-3 | after best-of-3 | postings before → after | chunks scored before → after | cut off before → after |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const k of Object.keys(sides.after[0]!.classes)) {
  const ratio =
    m(sides.before, (x) => x.classes[k]?.first.p50 ?? Number.NaN) /
    m(sides.after, (x) => x.classes[k]?.first.p50 ?? Number.NaN);
  const work = (runs: Figures[], f: "postings" | "candidates" | "cutOff") =>
    m(runs, (x) => x.classes[k]?.[f] ?? Number.NaN).toFixed(0);
  console.log(
    `| ${k} | ${pair(sides.before, k, "first")} | ${pair(sides.after, k, "first")} | ${ratio.toFixed(2)} | ${pair(sides.before, k, "best")} | ${pair(sides.after, k, "best")} | ${work(sides.before, "postings")} → ${work(sides.after, "postings")} | ${work(sides.before, "candidates")} → ${work(sides.after, "candidates")} | ${work(sides.before, "cutOff")} → ${work(sides.after, "cutOff")} |`,
  );
}
const mixOf = (runs: Figures[], mode: "first" | "best") =>
  `${m(runs, (x) => x.mix[mode].p50).toFixed(2)} / ${m(runs, (x) => x.mix[mode].p99).toFixed(2)}`;
console.log(
  `| **mix** | ${mixOf(sides.before, "first")} | ${mixOf(sides.after, "first")} | ${(m(sides.before, (x) => x.mix.first.p50) / m(sides.after, (x) => x.mix.first.p50)).toFixed(2)} | ${mixOf(sides.before, "best")} | ${mixOf(sides.after, "best")} | | | |`,
);
