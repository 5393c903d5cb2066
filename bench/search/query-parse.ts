/**
 * bun bench/search/query-parse.ts [--spaces N,N,...] [--root DIR]
 *
 * parseQuery alone on a q of N spaces before one word typed on ("albe"): the library's search() counts q's 500
 * characters with its spaces around it trimmed, so the run is not bounded; its parse is not under the search's time
 * limit. Prints the median ms of 5 parses a length. --root DIR parses with another checkout's code (a git worktree of
 * an earlier commit: 45ab7eb^ read the end of q with a pattern tried from every space, quadratic).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";

const USAGE = `Usage: bun bench/search/query-parse.ts [--spaces N,N,...] [--root DIR]
  --spaces N,...  the lengths of the run of spaces (default 10000,20000,40000)
  --root DIR      the checkout whose parseQuery runs (default: this one)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    spaces: { type: "string", default: "10000,20000,40000" },
    root: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const lengths = values.spaces.split(",").map(Number);
if (lengths.some((n) => !Number.isInteger(n) || n < 0)) {
  console.error(`--spaces takes whole numbers separated by commas, not "${values.spaces}".\n${USAGE}`);
  process.exit(2);
}
const root = resolve(values.root ?? resolve(import.meta.dir, "../.."));
const { parseQuery } = (await import(`${root}/src/search/text/query`)) as typeof import("../../src/search/text/query");

console.log("| spaces before the word | parse ms (median of 5) |\n|---|---|");
for (const n of lengths) {
  const q = `${" ".repeat(n)}albe`;
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    parseQuery(q, "en");
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(`| ${n.toLocaleString("en")} | ${times[2]!.toFixed(1)} |`);
}
