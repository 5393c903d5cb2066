/**
 * bun bench/search/changes-order.ts [--pages N] [--rounds R]
 *
 * /v1/changes' order (D12: by time of change, then page id) over N pages (default 7,000,000, English Wikipedia's
 * articles): as a server made it on the first /v1/changes of each snapshot before it was stored (a comparator's sort,
 * on the request thread), and as timeOrder makes it now, in a build's page table (and for a snapshot written before,
 * on its first call). The times are whole seconds drawn uniformly from Wikipedia's life (2001-01-15 to 2026-12-01),
 * in page id order, as a latest-revisions dump's are spread; both orders are checked equal. Medians of the rounds.
 */
import { parseArgs } from "node:util";
import { timeOrder } from "../../src/snapshot";
import { median } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    pages: { type: "string", default: "7000000" },
    rounds: { type: "string", default: "3" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "Usage: bun bench/search/changes-order.ts [--pages N] [--rounds R]   (default: 7,000,000 pages, 3 rounds)",
  );
  process.exit(0);
}
const pages = Number(values.pages);
const rounds = Number(values.rounds);
if (!Number.isInteger(pages) || pages < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error("--pages and --rounds take whole numbers of 1 or more.");
  process.exit(2);
}

const FIRST = Date.UTC(2001, 0, 15) / 1000;
const LAST = Date.UTC(2026, 11, 1) / 1000;
let seed = 1;
const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
const times = Float64Array.from({ length: pages }, () => FIRST + Math.floor(next() * (LAST - FIRST)));

const comparator = () => {
  const order = Int32Array.from({ length: pages }, (_x, i) => i);
  return order.sort((a, b) => times[a]! - times[b]! || a - b);
};

const ms: { comparator: number[]; timeOrder: number[] } = { comparator: [], timeOrder: [] };
for (let r = 0; r < rounds; r++) {
  let t = performance.now();
  const before = comparator();
  ms.comparator.push(performance.now() - t);
  t = performance.now();
  const now = timeOrder(times);
  ms.timeOrder.push(performance.now() - t);
  for (let i = 0; i < pages; i++)
    if (before[i] !== now[i]) throw new Error(`the orders differ at ${i}: ${before[i]} against ${now[i]}`);
}
const a = median(ms.comparator);
const b = median(ms.timeOrder);
console.log(`${pages.toLocaleString("en-US")} pages, medians of ${rounds} rounds (the orders equal):`);
console.log(`| order | ms |\n|---|---|`);
console.log(`| a comparator's sort (the server's first /v1/changes before) | ${a.toFixed(0)} |`);
console.log(`| timeOrder (the build's page table now) | ${b.toFixed(0)} |`);
console.log(`timeOrder ÷ comparator: ${(b / a).toFixed(3)}`);
