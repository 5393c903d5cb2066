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
 * With --cold, what a search's first read of a block costs: each of N random blocks (R rounds, a new sample each)
 * decompressed once from pages of the mapping no read has touched, after 8 MB of other memory is written (the CPU's
 * caches as a search leaves them), against the same for blocks whose pages were touched first, and against one read
 * of the compressed bytes with pread(2) (no page of the mapping touched). Medians in µs.
 *
 * With --sizes, what the block size costs instead: the chunks of 40 runs of 50 consecutive
 * blocks, spread over the file, are grouped again into blocks of each size (0: a block a
 * chunk) and compressed as the build compresses them (the snapshot's dictionary, its level).
 * Reports, per size, the compressed share of the text, the µs to show a random chunk's text
 * from its block not cached (one decompression by the system libzstd, 20,000 chunks, median
 * of R rounds), the index bytes each block adds, and the MB/s one thread compresses.
 */
import { openSync, readSync } from "node:fs";
import { parseArgs } from "node:util";
import { blockDecompressor, compressTextBlock, openSnapshot, TextStore } from "../../src/snapshot";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    blocks: { type: "string", default: "2000" },
    rounds: { type: "string", default: "5" },
    sizes: { type: "string" },
    cold: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(`Usage: bun bench/search/text-blocks.ts <snapshot.tome> [--blocks N] [--rounds R] [--sizes B,B,…]

  --blocks N   random blocks decompressed a round, each way (default 2000)
  --rounds R   rounds, the two ways interleaved; figures are medians (default 5)
  --sizes B,…  compare block sizes instead (bytes; 0: a block a chunk), e.g. --sizes 0,2048,4096,8192
  --cold       a block's first read, from pages never touched, against pages touched and against pread(2)`);
  process.exit(values.help ? 0 : 2);
}

/** Bytes the store keeps a block, besides its text: blockPart (u8), blockStart (f64), blockLength and blockFirst (u32). */
const INDEX_BYTES_A_BLOCK = 1 + 8 + 4 + 4;
const { container } = openSnapshot(positionals[0]);
const store = new TextStore(container, 0);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
let seed = 1;
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
// biome-ignore lint/correctness/noUnusedVariables: summed so that the pages are read (mapped in); the sum itself is not used
let touched = 0;
if (values.sizes) {
  compareSizes(values.sizes.split(",").map(Number));
  process.exit(0);
}
if (values.cold) {
  firstReads(Number(values.blocks), Number(values.rounds));
  process.exit(0);
}
const blocks = store.blockFirst.length - 1;
const chosen = Array.from({ length: Number(values.blocks) }, () => Math.floor(random() * blocks));
let compressedBytes = 0;
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

/** --cold: µs to decompress a block read for the first time, three ways (see the head of this file). */
function firstReads(count: number, rounds: number): void {
  const decompress = blockDecompressor(store.dictionary, "system");
  const blocks = store.blockFirst.length - 1;
  // Where a block lies in the file: its part's offset, and its place in the part's mapping.
  const parts = container.sections.filter((s) => s.name.startsWith("text.blocks."));
  const fileOffset = (b: number) => {
    const block = store.compressedBlock(b);
    const part = parts.find((s) => container.section(s.name).buffer === block.buffer)!;
    return part.offset + block.byteOffset - container.section(part.name).byteOffset;
  };
  const file = openSync(positionals[0]!, "r");
  const room = new Uint8Array(1 << 20);
  const read = new Uint8Array(1 << 20);
  const other = new Uint8Array(8 << 20);
  const spoil = () => {
    for (let i = 0; i < other.length; i += 64) other[i]!++;
  };
  const ways = { untouched: [] as number[], touched: [] as number[], pread: [] as number[] };
  // Blocks are drawn afresh each round and each way: none is read twice.
  const seen = new Set<number>();
  const fresh = () => {
    for (;;) {
      const b = Math.floor(random() * blocks);
      if (seen.has(b)) continue;
      seen.add(b);
      return b;
    }
  };
  for (let round = 0; round < rounds; round++) {
    const took = { untouched: [] as number[], touched: [] as number[], pread: [] as number[] };
    for (let i = 0; i < count; i++) {
      let b = fresh();
      spoil();
      let started = performance.now();
      decompress(store.compressedBlock(b), store.blockSize(b), room);
      took.untouched.push(performance.now() - started);
      b = fresh();
      const bytes = store.compressedBlock(b);
      for (let at = 0; at < bytes.byteLength; at += 512) touched += bytes[at]!;
      spoil();
      started = performance.now();
      decompress(bytes, store.blockSize(b), room);
      took.touched.push(performance.now() - started);
      b = fresh();
      spoil();
      started = performance.now();
      const n = readSync(file, read, 0, store.compressedBlock(b).byteLength, fileOffset(b));
      decompress(read.subarray(0, n), store.blockSize(b), room);
      took.pread.push(performance.now() - started);
    }
    for (const way of Object.keys(ways) as (keyof typeof ways)[]) ways[way].push(median(took[way]) * 1000);
  }
  console.log(`${blocks} blocks; ${count} a round each way, ${rounds} rounds; µs a block, medians`);
  console.log(`from pages never touched      ${median(ways.untouched).toFixed(1)}`);
  console.log(`from pages touched before     ${median(ways.touched).toFixed(1)}`);
  console.log(`read by pread(2), then        ${median(ways.pread).toFixed(1)}`);
}
