/**
 * bun bench/search/typo-walk.ts <snapshot.tome> [--root DIR] [--queries N]
 *
 * The vocabulary's typo walk alone (Vocabulary.typoTerms, what derive() runs for a word the index
 * does not know), on the typo class of the benchmark's mix (bench/queries.ts, its fixed seed):
 * each word walked with the typos its length allows (1 from 5 letters, 2 from 9), three rounds;
 * prints the last round's p50 / p90 / p99 ms. --root DIR runs the engine of another checkout
 * (a git worktree of an earlier commit) on the same words. --derive times what a search runs
 * instead: the word's terms derived (the walk and the choice among its terms), its
 * typo terms listed with --terms. --cold: before each word, 128 MB are read, so that the walk finds
 * nothing of the vocabulary in the processor's caches (a first search of a word, after others).
 * --boot: what each search thread makes for the walk when it opens (Vocabulary.typoRuns(): the
 * keys' run skips and the trie's top levels), made again 9 times; prints the median CPU ms.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";

const USAGE = `Usage: bun bench/search/typo-walk.ts <snapshot.tome> [--root DIR] [--queries N] [--derive [--terms]] [--cold] [--boot]
  --root DIR    the checkout whose engine walks (default: this one)
  --queries N   words of the typo class (default 100)
  --derive      time derive() of each word (the walk and the choice of its terms), not the walk alone
  --terms       with --derive: print each word's terms (to compare two checkouts)
  --cold        read 128 MB before each word: the vocabulary out of the processor's caches
  --boot        time what a search thread makes for the walk when it opens (run skips, the trie's top levels)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    root: { type: "string" },
    queries: { type: "string", default: "100" },
    derive: { type: "boolean", default: false },
    terms: { type: "boolean", default: false },
    cold: { type: "boolean", default: false },
    boot: { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { mixClass, queryMix } = await import("../queries");

const root = resolve(values.root ?? resolve(import.meta.dir, "../.."));
const { open } = (await import(`${root}/src/search`)) as typeof import("../../src/search");
const engine = open(positionals[0]);
const vocabulary = engine.text["vocabulary"] as { typoTerms(q: string, max: number, found: () => void): void };
if (values.boot) {
  // Made once at open: let go and made again (the fields are the vocabulary's own, private to it).
  const made = vocabulary as unknown as { typoRuns(): void; runSkips: unknown; top: unknown };
  const times: number[] = [];
  for (let i = 0; i < 9; i++) {
    made.runSkips = made.top = undefined;
    const started = process.cpuUsage();
    made.typoRuns();
    const spent = process.cpuUsage(started);
    times.push((spent.user + spent.system) / 1000);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${root}: the walk's runs and top levels made at open, CPU ms median of 9: ${times[4]!.toFixed(1)} (${times.map((t) => t.toFixed(0)).join(", ")})`,
  );
  process.exit(0);
}
const n = Number(values.queries);
const words = Array.from({ length: n }, mixClass(queryMix(engine.snapshot), "typo"));
const allowed = (w: string) => (w.length >= 9 ? 2 : w.length >= 5 ? 1 : 0);
const { indexKey } = (await import(
  `${root}/src/search/text/analyze`
)) as typeof import("../../src/search/text/analyze");
const specs = words.map((w) => [{ key: indexKey(w), prefix: false, fuzzy: allowed(w) }]);
// Read through before each word with --cold: larger than the processor's caches.
const elsewhere = new Float64Array(values.cold ? 16 << 20 : 0);
let times: number[] = [];
for (let round = 0; round < 3; round++) {
  times = words.map((w, i) => {
    for (let j = 0; j < elsewhere.length; j += 8) elsewhere[j]!++;
    const started = performance.now();
    if (values.derive) engine.text.derive(specs[i]!, false);
    else vocabulary.typoTerms(w, allowed(w), () => {});
    return performance.now() - started;
  });
}
if (values.terms)
  for (const [i, w] of words.entries())
    console.log(
      w,
      engine.text
        .derive(specs[i]!, false)
        .map((d) => `${engine.text.keyOf(d.term)}:${d.weight.toFixed(4)}`)
        .join(" "),
    );
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3);
console.log(
  `${root}: ${values.derive ? "derive()" : "typo walk"} of ${n} words${values.cold ? " (cold)" : ""}, ms p50 ${at(0.5)} / p90 ${at(0.9)} / p99 ${at(0.99)}`,
);
