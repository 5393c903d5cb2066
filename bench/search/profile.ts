/**
 * bun --cpu-prof-md --cpu-prof-dir=DIR bench/search/profile.ts <snapshot.tome> --class C [--plan P] [--queries N]
 *
 * The queries of one class of the benchmark's mix (bench/queries.ts, its fixed seed), kept to
 * those run by one plan (src/search/plans/plan.ts: the first name of SearchWork.plan) when
 * --plan is given, searched three times over: a workload for Bun's CPU profiler, to see where
 * one plan's time goes. Prints how many queries ran and their mean time.
 */
import { parseArgs } from "node:util";
import { open } from "../../src/search";
import { mixClass, queryMix } from "../queries";

const USAGE = `Usage: bun --cpu-prof-md --cpu-prof-dir=DIR bench/search/profile.ts <snapshot.tome> --class C [--plan P] [--queries N]
  --class C     a class of bench/queries.ts's mix ("2-4 words", question, phrase, …); several joined by commas
  --plan P      only the queries whose plan is P (e.g. conjunction, phrases)
  --queries N   queries drawn per class (default 200)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    class: { type: "string" },
    plan: { type: "string" },
    queries: { type: "string", default: "200" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0] || !values.class) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const engine = open(positionals[0]);
const mix = queryMix(engine.snapshot);
const queries: string[] = [];
for (const name of values.class.split(",")) {
  const make = mixClass(mix, name);
  for (let i = 0; i < Number(values.queries); i++) queries.push(make());
}
const chosen = queries.filter((q) => !values.plan || engine.search(q).work.plan.split(", then ")[0] === values.plan);
const started = performance.now();
for (let round = 0; round < 3; round++) for (const q of chosen) engine.search(q);
const ms = (performance.now() - started) / Math.max(1, chosen.length * 3);
console.log(`${chosen.length} queries${values.plan ? ` run by ${values.plan}` : ""}: ${ms.toFixed(2)} ms a search`);
