/**
 * bun bench/search/against.ts <snapshot.tome> --rev REV [--runs R] [--queries N]
 *
 * The search benchmark (search.ts, this checkout's version and query mix) run on the engine of
 * an earlier commit and on this checkout's, alternately, R times each, on the same snapshot;
 * prints each class's median p50 / p99 ms and postings per query, both ways, and the ratio
 * of the p50s (earlier ÷ now). The earlier commit is checked out once into a git worktree
 * under the system's temporary directory (dependencies installed there); search.ts and
 * queries.ts are copied into it, so both sides ask the same queries. The snapshot must be one
 * both engines read (its format and its orders' rules fingerprint, D63).
 */
import { cpSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { quantile } from "../stats";

const USAGE = `Usage: bun bench/search/against.ts <snapshot.tome> --rev REV [--runs R] [--queries N]
  --rev REV     the earlier commit (any git revision)
  --runs R      runs of each side, alternating (default 3)
  --queries N   queries per class (default 200)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    rev: { type: "string" },
    runs: { type: "string", default: "3" },
    queries: { type: "string", default: "200" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0] || !values.rev) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const ROOT = resolve(import.meta.dir, "../..");
const snapshot = resolve(positionals[0]);

function run(cmd: string[], cwd: string): string {
  const child = Bun.spawnSync(cmd, { cwd, stderr: "inherit" });
  if (child.exitCode !== 0) {
    console.error(`failed (exit ${child.exitCode}): ${cmd.join(" ")}`);
    process.exit(1);
  }
  return child.stdout.toString().trim();
}

const commit = run(["git", "rev-parse", values.rev], ROOT);
const earlier = join(tmpdir(), `tome-against-${commit.slice(0, 12)}`);
if (!existsSync(earlier)) {
  run(["git", "worktree", "add", "--detach", earlier, commit], ROOT);
  run(["bun", "install", "--frozen-lockfile"], earlier);
}
for (const file of ["bench/search/search.ts", "bench/queries.ts"]) cpSync(join(ROOT, file), join(earlier, file));

interface Measured {
  latencyMs: Record<string, { p50: number; p99: number; postings: number }>;
  overall: { p50: number; p99: number };
}
const sides = { earlier: [] as Measured[], now: [] as Measured[] };
for (let r = 0; r < Number(values.runs); r++)
  for (const [side, dir] of [
    ["earlier", earlier],
    ["now", ROOT],
  ] as const) {
    console.error(`run ${r + 1}/${values.runs}: ${side}`);
    const out = run(["bun", "bench/search/search.ts", snapshot, "--queries", values.queries!, "--json"], dir);
    sides[side].push(JSON.parse(out.slice(out.indexOf("{"))) as Measured);
  }

const median = (runs: Measured[], f: (m: Measured) => number) => quantile(runs.map(f), 0.5);
console.log(`${snapshot}: ${commit.slice(0, 7)} (earlier) against this checkout, medians of ${values.runs} runs each`);
console.log(
  "| queries | earlier p50 / p99 ms | now p50 / p99 ms | earlier ÷ now (p50) | postings a query, earlier → now |",
);
console.log("|---|---|---|---|---|");
const classes = Object.keys(sides.now[0]!.latencyMs);
for (const k of classes) {
  const [e, n] = [sides.earlier, sides.now].map((runs) => ({
    p50: median(runs, (m) => m.latencyMs[k]?.p50 ?? Number.NaN),
    p99: median(runs, (m) => m.latencyMs[k]?.p99 ?? Number.NaN),
    postings: median(runs, (m) => m.latencyMs[k]?.postings ?? Number.NaN),
  })) as [{ p50: number; p99: number; postings: number }, { p50: number; p99: number; postings: number }];
  console.log(
    `| ${k} | ${e.p50.toFixed(2)} / ${e.p99.toFixed(2)} | ${n.p50.toFixed(2)} / ${n.p99.toFixed(2)} | ${(e.p50 / n.p50).toFixed(2)} | ${e.postings.toFixed(0)} → ${n.postings.toFixed(0)} |`,
  );
}
const [eAll, nAll] = [sides.earlier, sides.now].map((runs) => ({
  p50: median(runs, (m) => m.overall.p50),
  p99: median(runs, (m) => m.overall.p99),
})) as [{ p50: number; p99: number }, { p50: number; p99: number }];
console.log(
  `| **all** | ${eAll.p50.toFixed(2)} / ${eAll.p99.toFixed(2)} | ${nAll.p50.toFixed(2)} / ${nAll.p99.toFixed(2)} | ${(eAll.p50 / nAll.p50).toFixed(2)} | |`,
);
