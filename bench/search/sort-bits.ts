/**
 * bun bench/search/sort-bits.ts [--documents N] [--runs R]
 *
 * What sorting a conjunction's first documents costs each way (src/search/ranking/conjunction.ts):
 * n distinct documents of N, in 6 runs each in order (as several lists of the rarest word give
 * them), sorted by the typed array's sort(), by sortThroughBits() (a bit a document), and by a
 * pass over a mask a document (the way before sortThroughBits). Prints the median ms of R runs
 * of each, for n from N/2,500 to N/5: where sortThroughBits starts to pay.
 */
import { parseArgs } from "node:util";
import { sortThroughBits } from "../../src/search/ranking/conjunction";
import { median } from "../stats";

const USAGE = `Usage: bun bench/search/sort-bits.ts [--documents N] [--runs R]
  --documents N   documents in the shard (default 5000000)
  --runs R        timed sorts of each kind and size (default 7)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    documents: { type: "string", default: "5000000" },
    runs: { type: "string", default: "7" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const N = Number(values.documents);
const runs = Number(values.runs);
const bits = new Uint32Array(Math.ceil(N / 32));
const masks = new Uint32Array(N);

let seed = 5;
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;

/** n distinct documents in 6 ascending runs. */
function documents(n: number): Uint32Array {
  const chosen = new Set<number>();
  while (chosen.size < n) chosen.add(Math.floor(random() * N));
  const all = [...chosen];
  const runsOf = 6;
  return Uint32Array.from(
    Array.from({ length: runsOf }, (_r, r) =>
      all.slice((r * n) / runsOf, ((r + 1) * n) / runsOf).sort((a, b) => a - b),
    ).flat(),
  );
}

/** The pass over the masks the conjunction made before sortThroughBits: set, then read in order (and cleared here, for the next run). */
function byMasks(docs: Uint32Array): void {
  for (let i = 0; i < docs.length; i++) masks[docs[i]!] = 1;
  for (let d = 0, k = 0; k < docs.length; d++)
    if (masks[d]) {
      docs[k++] = d;
      masks[d] = 0;
    }
}

const kinds: [string, (docs: Uint32Array) => void][] = [
  ["sort()", (docs) => docs.sort()],
  ["sortThroughBits", (docs) => sortThroughBits(docs, bits)],
  ["masks", byMasks],
];

console.log(`${N} documents, median ms of ${runs} runs`);
console.log(`| documents sorted | ${kinds.map(([name]) => name).join(" | ")} |`);
console.log(`|---|${kinds.map(() => "---").join("|")}|`);
for (const divisor of [2500, 1000, 250, 64, 16, 5]) {
  const base = documents(Math.floor(N / divisor));
  const times = kinds.map(([, sort]) =>
    median(
      Array.from({ length: runs }, () => {
        const docs = base.slice();
        const started = performance.now();
        sort(docs);
        return performance.now() - started;
      }),
    ),
  );
  console.log(`| ${base.length} (N/${divisor}) | ${times.map((t) => t.toFixed(3)).join(" | ")} |`);
}
