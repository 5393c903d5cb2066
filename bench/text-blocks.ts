/**
 * bun bench/text-blocks.ts <snapshot.tome> [--blocks N] [--rounds R]
 *
 * What a hit's text costs: N random text blocks of a snapshot decompressed by the system's
 * libzstd (one context, the dictionary digested once: src/snapshot/zstd.ts) and by node:zlib
 * (a context and the dictionary loaded per block), interleaved, R rounds, each into one reused
 * buffer as the store's cache decompresses them (src/snapshot/text.ts). Reports the median
 * microseconds a block each way and their ratio. The compressed blocks are read once first,
 * so that the file's pages are mapped before either way is timed.
 */
import { parseArgs } from "node:util";
import { blockDecompressor, openSnapshot, TextStore } from "../src/snapshot";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { blocks: { type: "string", default: "2000" }, rounds: { type: "string", default: "5" }, help: { type: "boolean", short: "h" } },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(`Usage: bun bench/text-blocks.ts <snapshot.tome> [--blocks N] [--rounds R]

  --blocks N   random blocks decompressed a round, each way (default 2000)
  --rounds R   rounds, the two ways interleaved; figures are medians (default 5)`);
  process.exit(values.help ? 0 : 2);
}

const store = new TextStore(openSnapshot(positionals[0]).container, 0);
const blocks = store.blockFirst.length - 1;
let seed = 1;
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
const chosen = Array.from({ length: Number(values.blocks) }, () => Math.floor(random() * blocks));
let compressedBytes = 0;
let touched = 0; // read so that the pages are mapped; the sum itself is not used
for (const b of chosen) {
  const block = store.compressedBlock(b);
  for (let i = 0; i < block.byteLength; i += 1024) touched += block[i]!;
  compressedBytes += block.byteLength;
}
const ways = { system: blockDecompressor(store.dictionary, "system"), node: blockDecompressor(store.dictionary, "node") };
const micros: Record<keyof typeof ways, number[]> = { system: [], node: [] };
const room = new Uint8Array(chosen.reduce((most, b) => Math.max(most, store.blockSize(b)), 0));
for (let round = 0; round < Number(values.rounds); round++) {
  for (const way of round % 2 ? (["node", "system"] as const) : (["system", "node"] as const)) {
    const started = performance.now();
    for (const b of chosen) ways[way](store.compressedBlock(b), store.blockSize(b), room);
    micros[way].push(((performance.now() - started) * 1000) / chosen.length);
  }
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const rawBytes = chosen.reduce((n, b) => n + store.blockSize(b), 0) / chosen.length;
console.log(
  `${blocks} blocks, ${chosen.length} decompressed a round: ${rawBytes.toFixed(0)} bytes each (${(compressedBytes / chosen.length).toFixed(0)} compressed), dictionary ${store.dictionary ? `${store.dictionary.byteLength} bytes` : "none"}`,
);
console.log(`system libzstd  ${median(micros.system).toFixed(1)} µs a block`);
console.log(`node:zlib       ${median(micros.node).toFixed(1)} µs a block`);
console.log(`node ÷ system   ${(median(micros.node) / median(micros.system)).toFixed(2)}`);
