/**
 * bun bench/search/text-blocks.ts <snapshot.tome> [--blocks N] [--rounds R]
 *
 * What a hit's text costs: N random text blocks of a snapshot decompressed by the system's
 * libzstd (one context, the dictionary digested once: src/snapshot/zstd.ts) and by node:zlib
 * (a context and the dictionary loaded per block), interleaved, R rounds, each into one reused
 * buffer as the store's cache decompresses them (src/snapshot/text.ts). Reports the median
 * microseconds a block each way and their ratio. The compressed blocks are read once first,
 * so that the file's pages are mapped before either way is timed.
 *
 * With --sizes, what the block size costs instead: the chunks of 40 runs of 50 consecutive
 * blocks, spread over the file, are grouped again into blocks of each size (0: a block a
 * chunk) and compressed as the build compresses them (the snapshot's dictionary, its level).
 * Reports, per size, the compressed share of the text, the µs to show a random chunk's text
 * from its block not cached (one decompression by the system libzstd, 20,000 chunks, median
 * of R rounds), the index bytes each block adds, and the MB/s one thread compresses.
 */
import { parseArgs } from "node:util";
import { blockDecompressor, compressTextBlock, openSnapshot, TextStore } from "../../src/snapshot";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    blocks: { type: "string", default: "2000" },
    rounds: { type: "string", default: "5" },
    sizes: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(`Usage: bun bench/search/text-blocks.ts <snapshot.tome> [--blocks N] [--rounds R] [--sizes B,B,…]

  --blocks N   random blocks decompressed a round, each way (default 2000)
  --rounds R   rounds, the two ways interleaved; figures are medians (default 5)
  --sizes B,…  compare block sizes instead (bytes; 0: a block a chunk), e.g. --sizes 0,2048,4096,8192`);
  process.exit(values.help ? 0 : 2);
}

/** Bytes the store keeps a block, besides its text: blockPart (u8), blockStart (f64), blockLength and blockFirst (u32). */
const INDEX_BYTES_A_BLOCK = 1 + 8 + 4 + 4;
const store = new TextStore(openSnapshot(positionals[0]).container, 0);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
let seed = 1;
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
if (values.sizes) {
  compareSizes(values.sizes.split(",").map(Number));
  process.exit(0);
}
const blocks = store.blockFirst.length - 1;
const chosen = Array.from({ length: Number(values.blocks) }, () => Math.floor(random() * blocks));
let compressedBytes = 0;
// biome-ignore lint/correctness/noUnusedVariables: summed so that the pages are read (mapped in); the sum itself is not used
let touched = 0;
for (const b of chosen) {
  const block = store.compressedBlock(b);
  for (let i = 0; i < block.byteLength; i += 1024) touched += block[i]!;
  compressedBytes += block.byteLength;
}
const ways = {
  system: blockDecompressor(store.dictionary, "system"),
  node: blockDecompressor(store.dictionary, "node"),
};
const micros: Record<keyof typeof ways, number[]> = { system: [], node: [] };
const room = new Uint8Array(chosen.reduce((most, b) => Math.max(most, store.blockSize(b)), 0));
for (let round = 0; round < Number(values.rounds); round++) {
  for (const way of round % 2 ? (["node", "system"] as const) : (["system", "node"] as const)) {
    const started = performance.now();
    for (const b of chosen) ways[way](store.compressedBlock(b), store.blockSize(b), room);
    micros[way].push(((performance.now() - started) * 1000) / chosen.length);
  }
}
const rawBytes = chosen.reduce((n, b) => n + store.blockSize(b), 0) / chosen.length;
console.log(
  `${blocks} blocks, ${chosen.length} decompressed a round: ${rawBytes.toFixed(0)} bytes each (${(compressedBytes / chosen.length).toFixed(0)} compressed), dictionary ${store.dictionary ? `${store.dictionary.byteLength} bytes` : "none"}`,
);
console.log(`system libzstd  ${median(micros.system).toFixed(1)} µs a block`);
console.log(`node:zlib       ${median(micros.node).toFixed(1)} µs a block`);
console.log(`node ÷ system   ${(median(micros.node) / median(micros.system)).toFixed(2)}`);

function compareSizes(sizes: number[]): void {
  const stored = store.blockFirst.length - 1;
  // Each block once: a snapshot of fewer than 2,000 blocks gives all of them.
  const sampled = new Set<number>();
  for (let run = 0; run < 40; run++) {
    const first = Math.floor(((run + 0.5) / 40) * Math.max(0, stored - 50));
    for (let b = first; b < Math.min(stored, first + 50); b++) sampled.add(b);
  }
  const chunks: Uint8Array[] = [];
  for (const b of [...sampled].sort((x, y) => x - y)) {
    const bytes = store.blockBytes(b);
    for (let c = store.blockFirst[b]!, start = 0; c < store.blockFirst[b + 1]!; c++) {
      chunks.push(bytes.slice(start, store.chunkEnd[c]!));
      start = store.chunkEnd[c]!;
    }
  }
  const raw = chunks.reduce((n, c) => n + c.byteLength, 0);
  console.log(
    `${chunks.length} chunks of ${sampled.size} of ${stored} blocks, ${(raw / chunks.length).toFixed(0)} bytes a chunk; dictionary ${store.dictionary ? `${store.dictionary.byteLength} bytes` : "none"}`,
  );
  console.log(
    "| block size | blocks | compressed ÷ text | µs a chunk shown (block not cached) | index bytes a chunk | compression MB/s, one thread |",
  );
  console.log("|---|---|---|---|---|---|");
  const decompress = blockDecompressor(store.dictionary, "system");
  for (const size of sizes) {
    const blocks: { bytes: Uint8Array; size: number }[] = [];
    const blockOfChunk: number[] = [];
    let held: Uint8Array[] = [];
    let heldBytes = 0;
    let compressMs = 0;
    const flush = () => {
      const bytes = new Uint8Array(heldBytes);
      let at = 0;
      for (const c of held) {
        bytes.set(c, at);
        at += c.byteLength;
      }
      const started = performance.now();
      blocks.push({ bytes: compressTextBlock(bytes, store.dictionary), size: heldBytes });
      compressMs += performance.now() - started;
      held = [];
      heldBytes = 0;
    };
    for (const c of chunks) {
      held.push(c);
      heldBytes += c.byteLength;
      blockOfChunk.push(blocks.length);
      if (heldBytes >= Math.max(1, size)) flush();
    }
    if (held.length) flush();
    const shown = Array.from({ length: 20_000 }, () => blockOfChunk[Math.floor(random() * blockOfChunk.length)]!);
    const room = new Uint8Array(blocks.reduce((most, b) => Math.max(most, b.size), 0));
    const micros: number[] = [];
    for (let round = 0; round < Number(values.rounds); round++) {
      const started = performance.now();
      for (const b of shown) decompress(blocks[b]!.bytes, blocks[b]!.size, room);
      micros.push(((performance.now() - started) * 1000) / shown.length);
    }
    const compressed = blocks.reduce((n, b) => n + b.bytes.byteLength, 0);
    console.log(
      `| ${size || "a chunk"} | ${blocks.length} | ${(compressed / raw).toFixed(3)} | ${median(micros).toFixed(2)} | ${((blocks.length * INDEX_BYTES_A_BLOCK) / chunks.length).toFixed(1)} | ${(raw / 1e3 / compressMs).toFixed(1)} |`,
    );
  }
}
