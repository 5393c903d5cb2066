/**
 * bun bench/search/stemmers.ts <snapshot.tome> [--limit N]
 *
 * English stems two ways, on every word of a snapshot's vocabulary: snowball-stemmers' English (Snowball's own
 * algorithm, ported) and porter2 (the same algorithm, written for speed), which src/search/text/stem.ts uses for
 * English. Prints the words, each library's time for them all, and every word whose stems differ (the first 20).
 */
import { parseArgs } from "node:util";

const USAGE = `Usage: bun bench/search/stemmers.ts <snapshot.tome> [--limit N]
  --limit N   only the vocabulary's first N words (default: all)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { limit: { type: "string" }, help: { type: "boolean", short: "h" } },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { stem: porter2 } = await import("porter2");
const { newStemmer } = await import("snowball-stemmers");
const { open } = await import("../../src/search");
const { termOfKey } = await import("../../src/search/text/analyze");

const engine = open(positionals[0]);
const limit = values.limit ? Number(values.limit) : Number.POSITIVE_INFINITY;
const words: string[] = [];
engine.text.eachTerm((key) => {
  if (words.length < limit) words.push(termOfKey(key));
});
const snowball = newStemmer("english");
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let t = cpu();
const bySnowball = words.map((w) => snowball.stem(w));
const snowballMs = cpu() - t;
t = cpu();
const byPorter2 = words.map((w) => porter2(w));
const porter2Ms = cpu() - t;
const differ = words.filter((_w, i) => bySnowball[i] !== byPorter2[i]);
console.log(
  `${words.length.toLocaleString()} words: snowball-stemmers ${Math.round(snowballMs).toLocaleString()} ms, porter2 ${Math.round(porter2Ms).toLocaleString()} ms (CPU); ${differ.length} stemmed differently`,
);
for (const w of differ.slice(0, 20)) console.log(`  ${w}: ${snowball.stem(w)} / ${porter2(w)}`);
