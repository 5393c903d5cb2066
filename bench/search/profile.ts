/**
 * bun bench/search/profile.ts <snapshot.tome> --class C [--plan P] [--queries N] [--out DIR]
 *
 * The queries of one class of the benchmark's mix (bench/queries.ts, its fixed seed), kept to
 * those run by one plan (src/search/plans/plan.ts: the first name of SearchWork.plan) when
 * --plan is given, searched three times over under Bun's CPU profiler, to see where one plan's
 * time goes. The queries are made here and searched in a child process of their own, the one
 * profiled (`bun --cpu-prof-md`): making them reads chunks of text (the mix samples words from
 * them), which profiled with the searches passed for a third of a typo search's time. --once searches each
 * query once (its first run: the typo walk, the text blocks and the pages of the mapping no search has read yet),
 * so ask for more queries (--queries 2000) to outweigh the snapshot's open. Prints how
 * many queries ran, their mean time, and the profile's file.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const USAGE = `Usage: bun bench/search/profile.ts <snapshot.tome> --class C [--plan P] [--queries N] [--out DIR]
  --class C     a class of bench/queries.ts's mix ("2-4 words", question, phrase, …); several joined by commas
  --plan P      only the queries whose plan is P (e.g. conjunction, phrases)
  --queries N   queries drawn per class (default 200)
  --once        each query searched once, not three times (first runs)
  --out DIR     where the profile (Markdown) is written (default: a new folder in the system's temporary folder)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    class: { type: "string" },
    plan: { type: "string" },
    queries: { type: "string", default: "200" },
    out: { type: "string" },
    once: { type: "boolean" },
    /** The child: the file of queries to search, profiled. */
    searches: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0] || (!values.class && !values.searches)) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { open } = await import("../../src/search");
const { mixClass, queryMix } = await import("../queries");
const { tempDir } = await import("../support");

const engine = open(positionals[0]);
if (values.searches) {
  const chosen = JSON.parse(readFileSync(values.searches, "utf8")) as string[];
  const rounds = values.once ? 1 : 3;
  const started = performance.now();
  for (let round = 0; round < rounds; round++) for (const q of chosen) engine.search(q);
  console.log(((performance.now() - started) / Math.max(1, chosen.length * rounds)).toFixed(2));
  process.exit(0);
}

const mix = queryMix(engine.snapshot);
const queries: string[] = [];
for (const name of values.class!.split(",")) {
  const make = mixClass(mix, name);
  for (let i = 0; i < Number(values.queries); i++) queries.push(make());
}
const chosen = queries.filter((q) => !values.plan || engine.search(q).work.plan.split(", then ")[0] === values.plan);
const file = join(tempDir("tome-profile-queries-"), "queries.json");
writeFileSync(file, JSON.stringify(chosen));
const out = resolve(values.out ?? mkdtempSync(join(tmpdir(), "tome-profile-")));
const child = Bun.spawnSync(
  [
    "bun",
    "--cpu-prof-md",
    `--cpu-prof-dir=${out}`,
    import.meta.path,
    positionals[0],
    "--searches",
    file,
    ...(values.once ? ["--once"] : []),
  ],
  { stderr: "inherit" },
);
if (child.exitCode !== 0) process.exit(child.exitCode ?? 1);
const ms = Number(child.stdout.toString().trim());
console.log(`${chosen.length} queries${values.plan ? ` run by ${values.plan}` : ""}: ${ms.toFixed(2)} ms a search`);
const profiles = readdirSync(out).filter((name) => name.endsWith(".md"));
console.log(`profile: ${join(out, profiles.sort().at(-1) ?? "(none written)")}`);
