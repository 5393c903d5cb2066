/**
 * Chunk text in zstd-compressed blocks of about BLOCK_BYTES: a block is decompressed only
 * when a response shows one of its chunks, and the most recent blocks are kept. Every block
 * is compressed with one dictionary, slices of the build's first text, written before them.
 *
 * Sections: text.dictionary (zstd raw-content dictionary; absent: blocks compressed without
 * one), text.blocks.N (compressed blocks, each part under 4 GiB), text.blockPart (u8),
 * text.blockStart (f64, offset within its part), text.blockLength (u32),
 * text.blockFirst (u32, the first chunk of each block, and the chunk count last),
 * text.chunkEnd (u32, each chunk's end within its block's decompressed bytes).
 */
import { constants, zstdCompress, zstdCompressSync } from "node:zlib";
import { Growable, viewOf } from "../columns";
import { damagedSections, MAX_SECTION_BYTES, type Container, type ContainerWriter } from "./container";
import { SnapshotError } from "./format";
import { sameBytes } from "./hash";
import { Compressors } from "./compressors";
import {
  blockCompressor,
  blockDecompressor,
  type BlockCompressor,
  type BlockDecompressor,
  type Dictionary,
} from "./zstd";

/**
 * A hit's text costs the decompression of its block (D49, with a dictionary): 4 KB blocks show a hit in about half
 * the time of 8 KB ones for 2% more text bytes (D205).
 */
const BLOCK_BYTES = 4 * 1024;
const ZSTD_LEVEL = 9;
/** Decompressed blocks kept, room for the hits of 50 searches of 10 (a search formats at most 100): one slot of SLOT_BYTES each, and one more, about 8 MB at most. */
const CACHE_BLOCKS = 512;
/**
 * A kept block's room, reused when it is evicted: a block is at least BLOCK_BYTES, plus its last chunk, and files
 * built before D205 hold blocks of 8 KB and more. Larger blocks get their own.
 */
const SLOT_BYTES = 16 * 1024;
/** The dictionary: DICTIONARY_BYTES of slices spread over the first SAMPLE_BYTES of text. */
const DICTIONARY_BYTES = 128 * 1024;
const SLICE_BYTES = 512;
const SAMPLE_BYTES = 4 * 1024 * 1024;
/** Less text than this is compressed without a dictionary: the dictionary would weigh more than it saves. */
const DICTIONARY_FROM = 1024 * 1024;
/**
 * Blocks compressing off the main thread at once; past it, a block is compressed on the main
 * thread. Each holds a zstd context of about 2 MB with the dictionary: 64 at once took 134 MB.
 */
const IN_FLIGHT = 8;
/**
 * Blocks queued to the compressor threads (4 KB each) past which ready() asks for a wait; at
 * twice as many (a caller that does not wait, or one long page), the main thread compresses the next.
 */
const IN_FLIGHT_THREADS = 64;
/** Compressed bytes a copy reads between two calls of its readThrough. */
const COPY_STEP_BYTES = 16 << 20;

const withDictionary = (dictionary: Uint8Array) => ({
  dictionary,
  params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL },
});

/** Each dictionary's compressor through libzstd (blockCompressor): made once, as it digests the dictionary. */
const compressors = new WeakMap<Uint8Array, BlockCompressor | null>();

function compressorFor(dictionary: Uint8Array): BlockCompressor | null {
  let compressor = compressors.get(dictionary);
  if (compressor === undefined)
    compressors.set(dictionary, (compressor = blockCompressor(dictionary, ZSTD_LEVEL) ?? null));
  return compressor;
}

/** A text block compressed as the build compresses it (bench/search/text-blocks.ts compares block sizes with it). */
export function compressTextBlock(bytes: Uint8Array, dictionary: Dictionary): Uint8Array {
  if (!dictionary) return Bun.zstdCompressSync(bytes, { level: ZSTD_LEVEL });
  return compressorFor(dictionary)?.(bytes) ?? zstdCompressSync(bytes, withDictionary(dictionary));
}

function compress(bytes: Uint8Array, dictionary: Dictionary): Promise<Uint8Array> {
  if (!dictionary) return Bun.zstdCompress(bytes, { level: ZSTD_LEVEL });
  return new Promise((resolve, reject) =>
    zstdCompress(bytes, withDictionary(dictionary), (error, block) => (error ? reject(error) : resolve(block))),
  );
}

/** The dictionary a snapshot's text blocks were compressed with (null: none, as before there was one). */
export function textDictionaryOf(container: Container): Dictionary {
  return container.has("text.dictionary") ? container.section("text.dictionary") : null;
}

/** A raw-content dictionary: slices spread evenly over the sample's blocks (zstd finds repeats in it as in earlier text). */
function dictionaryOf(sample: Uint8Array[], bytes: number): Dictionary {
  if (bytes < DICTIONARY_FROM) return null;
  const dictionary = new Uint8Array(DICTIONARY_BYTES);
  const slices = DICTIONARY_BYTES / SLICE_BYTES;
  const step = bytes / slices;
  let block = 0;
  let blockStart = 0;
  for (let s = 0; s < slices; s++) {
    const at = Math.floor(s * step);
    while (at >= blockStart + sample[block]!.byteLength) blockStart += sample[block++]!.byteLength;
    const from = Math.max(0, Math.min(at - blockStart, sample[block]!.byteLength - SLICE_BYTES));
    dictionary.set(
      sample[block]!.subarray(from, Math.min(from + SLICE_BYTES, sample[block]!.byteLength)),
      s * SLICE_BYTES,
    );
  }
  return dictionary;
}

/** A block on its way to the file: blocks are written in their order, whichever finishes first. */
interface Compressing {
  raw: number;
  block?: Uint8Array;
  done?: Promise<void>;
}

export class TextWriter {
  private readonly encoder = new TextEncoder();
  private pending = new Uint8Array(BLOCK_BYTES * 2);
  private used = 0;
  private chunks = 0;
  private blockPart = new Growable(Uint8Array);
  private blockStart = new Growable(Float64Array);
  private blockLength = new Growable(Uint32Array);
  private blockFirst = new Growable(Uint32Array);
  private chunkEnd = new Growable(Uint32Array);
  private part = -1;
  private partBytes = 0;
  private readonly queue: Compressing[] = [];
  private compressing = 0;
  /** Callers of ready() waiting for the compressor threads. */
  private waiters: (() => void)[] = [];
  /** The first error of a block compressed or written in the background: settle() throws it. */
  private failure: { error: unknown } | undefined;
  bytesIn = 0;
  bytesOut = 0;
  /** Undefined while the first text is held to learn it from. */
  private dictionary: Dictionary | undefined;
  private sample: Uint8Array[] = [];
  private sampleBytes = 0;
  /** Whether settle() was called: finish() asks for it in the background. */
  private settled = false;
  /** In the background with libzstd: the threads compressing blocks, started with the first block. */
  private compressors: Compressors | undefined;

  private threadsFor(dictionary: Uint8Array): Compressors {
    return (this.compressors ??= new Compressors(dictionary, ZSTD_LEVEL));
  }

  /**
   * Text goes into `out`'s sections text.blocks.N, which stay open between add() calls. In the
   * `background`, blocks are compressed on Bun's thread pool (zstd took a quarter of a build's
   * main thread): then settle() before finish(). `dictionary`: the one to compress with (null:
   * none), as an update keeps its base's so as to copy its blocks; by default, one is made from
   * the first text.
   */
  constructor(
    private readonly out: ContainerWriter,
    private readonly background = false,
    dictionary?: Dictionary,
  ) {
    if (dictionary !== undefined) this.useDictionary(dictionary);
  }

  private useDictionary(dictionary: Dictionary): void {
    this.dictionary = dictionary;
    if (dictionary) this.out.section("text.dictionary", dictionary);
  }

  /** Makes the dictionary from the text held, then compresses that text. */
  private learn(): void {
    if (this.dictionary !== undefined) return;
    this.useDictionary(dictionaryOf(this.sample, this.sampleBytes));
    const held = this.sample;
    this.sample = [];
    for (const bytes of held) this.compressBlock(bytes);
  }

  /** Adds a chunk's text; returns its chunk number. */
  add(text: string): number {
    this.reserve(text.length * 3);
    this.used += this.encoder.encodeInto(text, this.pending.subarray(this.used)).written;
    return this.endChunk();
  }

  /** Room for `bytes` more bytes of the current chunk, which opens a block when none is open. */
  private reserve(bytes: number): void {
    if (this.used === 0) this.blockFirst.push(this.chunks);
    const need = this.used + bytes;
    if (need > this.pending.length) {
      const grown = new Uint8Array(need * 2);
      grown.set(this.pending.subarray(0, this.used));
      this.pending = grown;
    }
  }

  /** Ends the chunk written since the last one (flushing a full block): its chunk number. */
  private endChunk(): number {
    this.chunkEnd.push(this.used);
    if (this.used >= BLOCK_BYTES) this.flush();
    return this.chunks++;
  }

  private flush(): void {
    const raw = this.used;
    if (!raw) return;
    this.used = 0;
    if (this.dictionary !== undefined) {
      this.compressBlock(this.pending.subarray(0, raw));
      return;
    }
    this.sample.push(this.pending.slice(0, raw));
    this.sampleBytes += raw;
    if (this.sampleBytes >= SAMPLE_BYTES) this.learn();
  }

  /** Compresses a block's bytes (copied when compressed in the background) and queues it to be written in its turn. */
  private compressBlock(bytes: Uint8Array): void {
    const raw = bytes.byteLength;
    const dictionary = this.dictionary!;
    // With libzstd, the compressor threads, which digest the dictionary once (D112); else Bun's thread pool.
    const threads =
      this.background && dictionary && compressorFor(dictionary) ? this.threadsFor(dictionary) : undefined;
    if (!this.background || this.compressing >= (threads ? 2 * IN_FLIGHT_THREADS : IN_FLIGHT)) {
      this.enqueue({ raw, block: compressTextBlock(bytes, dictionary) });
      return;
    }
    const entry: Compressing = { raw };
    this.compressing++;
    entry.done = (
      threads?.compress(bytes) ?? compress(bytes.buffer === this.pending.buffer ? bytes.slice() : bytes, dictionary)
    )
      .then((block) => {
        entry.block = block;
        this.writeReady();
      })
      .catch((error: unknown) => void (this.failure ??= { error }))
      .finally(() => {
        this.compressing--;
        if (this.compressing < IN_FLIGHT_THREADS) this.wakeWaiters();
      });
    this.queue.push(entry);
  }

  /**
   * Undefined when more text may come now; otherwise a promise of when it may: the compressor
   * threads are behind. Waiting rather than compressing here keeps a build's main thread (its
   * one serial thread) to its own work (D139).
   */
  ready(): Promise<void> | undefined {
    if (!this.compressors || this.compressing < IN_FLIGHT_THREADS) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private wakeWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private enqueue(entry: Compressing): void {
    this.queue.push(entry);
    this.writeReady();
  }

  /** Writes the blocks at the head of the queue that are compressed. */
  private writeReady(): void {
    while (!this.failure && this.queue.length && this.queue[0]!.block) {
      const { block, raw } = this.queue.shift()!;
      this.writeBlock(block!, raw);
    }
  }

  /** Flushes the last block and waits until every block is written (a failed compression throws). */
  async settle(): Promise<void> {
    this.settled = true;
    this.flush();
    this.learn();
    // Each block's handler writes the ready head of the queue: when the last is done, all are written.
    await Promise.all(this.queue.map((entry) => entry.done));
    this.compressors?.close();
    this.compressors = undefined;
    if (this.failure) throw this.failure.error;
  }

  /**
   * Copies the chunks of another store that `alive` marks (one byte per chunk there), in
   * their order: a block whose chunks all live is copied as it is compressed, the others'
   * living chunks are added anew. Returns each chunk's number here (-1: not copied).
   * `readThrough` is called every 16 MB of blocks read (to let them and the copy's garbage go).
   */
  copyFrom(from: TextStore, alive: Uint8Array, readThrough?: () => void): Int32Array {
    const numbers = new Int32Array(from.chunkCount).fill(-1);
    let read = 0;
    // A block is copied as it is only when this file decompresses it with the same dictionary.
    const asCompressed =
      this.dictionary !== undefined &&
      (this.dictionary && from.dictionary
        ? sameBytes(this.dictionary, from.dictionary)
        : this.dictionary === from.dictionary);
    const blocks = from.blockFirst.length - 1;
    for (let b = 0; b < blocks; b++) {
      const first = from.blockFirst[b]!;
      const end = from.blockFirst[b + 1]!;
      let living = 0;
      for (let c = first; c < end; c++) living += alive[c]!;
      if (!living) continue;
      read += from.compressedBlock(b).byteLength;
      if (readThrough && read >= COPY_STEP_BYTES) {
        readThrough();
        read = 0;
      }
      if (asCompressed && living === end - first) {
        this.flush();
        this.blockFirst.push(this.chunks);
        for (let c = first; c < end; c++) {
          this.chunkEnd.push(from.chunkEnd[c]!);
          numbers[c] = this.chunks++;
        }
        this.enqueue({ raw: from.chunkEnd[end - 1]!, block: from.compressedBlock(b) });
        continue;
      }
      const bytes = from.blockBytes(b);
      for (let c = first; c < end; c++) {
        if (!alive[c]) continue;
        numbers[c] = this.addBytes(bytes.subarray(c === first ? 0 : from.chunkEnd[c - 1]!, from.chunkEnd[c]!));
      }
    }
    return numbers;
  }

  /** Adds a chunk's text already encoded as UTF-8; returns its chunk number. */
  private addBytes(text: Uint8Array): number {
    this.reserve(text.byteLength);
    this.pending.set(text, this.used);
    this.used += text.byteLength;
    return this.endChunk();
  }

  /** Writes a compressed block of `raw` bytes into the current part (a new one when full). */
  private writeBlock(block: Uint8Array, raw: number): void {
    if (this.part < 0 || this.partBytes + block.byteLength > MAX_SECTION_BYTES) {
      if (this.part >= 0) this.out.end();
      this.part++;
      this.partBytes = 0;
      this.out.begin(`text.blocks.${this.part}`);
    }
    this.blockPart.push(this.part);
    this.blockStart.push(this.partBytes);
    this.blockLength.push(block.byteLength);
    this.out.write(block);
    this.partBytes += block.byteLength;
    this.bytesIn += raw;
    this.bytesOut += block.byteLength;
  }

  /** Ends the text sections and writes the block tables. */
  finish(): void {
    this.flush();
    this.learn();
    // In the background, settle() first even when every block happened to be compressed here (libzstd does them at once).
    if (this.queue.length || (this.background && !this.settled))
      throw new Error("text: finish() while blocks are compressing: settle() first");
    if (this.part >= 0) this.out.end();
    this.blockFirst.push(this.chunks);
    this.out.section("text.blockPart", this.blockPart.view());
    this.out.section("text.blockStart", this.blockStart.view());
    this.out.section("text.blockLength", this.blockLength.view());
    this.out.section("text.blockFirst", this.blockFirst.view());
    this.out.section("text.chunkEnd", this.chunkEnd.view());
    // Written: each chunk's end (4 bytes a chunk, and the room it grew by) is not held through the indexes.
    this.blockPart = new Growable(Uint8Array, 0);
    this.blockStart = new Growable(Float64Array, 0);
    this.blockLength = new Growable(Uint32Array, 0);
    this.blockFirst = new Growable(Uint32Array, 0);
    this.chunkEnd = new Growable(Uint32Array, 0);
  }
}

export class TextStore {
  private readonly parts: Uint8Array[] = [];
  private readonly partNames: string[] = [];
  /** A block's compressed bytes as read from the file (D207): blocks of the usual size, larger ones on their own. */
  private readonly readRoom = new Uint8Array(SLOT_BYTES);
  private readonly blockPart: Uint8Array;
  private readonly blockStart: Float64Array;
  private readonly blockLength: Uint32Array;
  /** The first chunk of each block, and the chunk count last. */
  readonly blockFirst: Uint32Array;
  /** Each chunk's end within its block's decompressed bytes. */
  readonly chunkEnd: Uint32Array;
  /** What every block was compressed with. */
  readonly dictionary: Dictionary;
  /** The blocks kept, least recently used first: views of slots, or (past SLOT_BYTES) their own bytes. */
  private readonly cache = new Map<number, Uint8Array>();
  /** The slots of evicted blocks, to decompress the next ones into. */
  private readonly freeSlots: Uint8Array[] = [];
  private readonly decoder = new TextDecoder();
  /**
   * Made at the first block read, not at open: libzstd's context and digested dictionary are C heap, and an open past
   * what the process may map is to fail at its mapping, saying to close() engines (D151), not at libzstd's allocation.
   */
  private decompressor: BlockDecompressor | undefined;

  /** `checked`: this file's structure was checked already (openSnapshot's `checked`): the pass is not run again. */
  constructor(
    private readonly container: Container,
    private readonly cacheBlocks = CACHE_BLOCKS,
    checked = false,
  ) {
    for (let p = 0; container.has(`text.blocks.${p}`); p++) {
      this.partNames.push(`text.blocks.${p}`);
      this.parts.push(container.section(`text.blocks.${p}`));
    }
    this.blockPart = container.section("text.blockPart");
    this.blockStart = viewOf(Float64Array, container.section("text.blockStart"));
    this.blockLength = viewOf(Uint32Array, container.section("text.blockLength"));
    this.blockFirst = viewOf(Uint32Array, container.section("text.blockFirst"));
    this.chunkEnd = viewOf(Uint32Array, container.section("text.chunkEnd"));
    this.dictionary = textDictionaryOf(container);
    const fault = checked ? undefined : this.fault();
    if (fault) throw damagedSections(container.path, fault);
  }

  /**
   * What reading a chunk relies on to stay within the sections (D119), in one pass over the blocks: each block in a
   * part there is and within it, their first chunks rising from 0 to the chunk count. Damage there was a TypeError
   * from inside ("this.parts[this.blockPart[b]]"), or a size zstd could not take ("cannot convert argument to 'u64'").
   */
  private fault(): string | undefined {
    const { blockPart, blockStart, blockLength, blockFirst, parts } = this;
    const blocks = blockLength.length;
    if (blockPart.length !== blocks || blockStart.length !== blocks || blockFirst.length !== blocks + 1)
      return `text.blockLength holds ${blocks} blocks, text.blockPart ${blockPart.length}, text.blockStart ${blockStart.length}, text.blockFirst ${blockFirst.length - 1}`;
    if (blockFirst[0] !== 0 || blockFirst[blocks] !== this.chunkCount)
      return `text.blockFirst runs from ${blockFirst[0]} to ${blockFirst[blocks]}, not from 0 to the ${this.chunkCount} chunks of text.chunkEnd`;
    for (let b = 0; b < blocks; b++) {
      const part = parts[blockPart[b]!];
      const start = blockStart[b]!;
      if (!part || !(Number.isInteger(start) && start >= 0 && start + blockLength[b]! <= part.byteLength))
        return `text block ${b} lies outside the text (part ${blockPart[b]} of ${parts.length}, at ${start})`;
      if (blockFirst[b + 1]! < blockFirst[b]!) return `text.blockFirst falls at block ${b}`;
    }
    return undefined;
  }

  get chunkCount(): number {
    return this.chunkEnd.length;
  }

  /** A chunk's text. */
  chunk(i: number): string {
    // A chunk asked for after its engine's close() (a hit kept) read zeros: "" or a TypeError from inside.
    this.container.checkReadable();
    const b = this.blockOf(i);
    const bytes = this.block(b);
    const start = i === this.blockFirst[b] ? 0 : this.chunkEnd[i - 1]!;
    const end = this.chunkEnd[i]!;
    // Ends are checked as a block is read, not at open (one a chunk): a damaged one read another chunk's text, or none.
    if (!(start <= end && end <= bytes.byteLength))
      throw new SnapshotError(
        `a text block is damaged: chunk ${i} runs from ${start} to ${end} of its ${bytes.byteLength} bytes`,
      );
    return this.decoder.decode(bytes.subarray(start, end));
  }

  private blockOf(chunk: number): number {
    let lo = 0;
    let hi = this.blockFirst.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.blockFirst[mid]! <= chunk) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Block b as stored (compressed): a view of the mapped file. */
  compressedBlock(b: number): Uint8Array {
    const start = this.blockStart[b]!;
    return this.parts[this.blockPart[b]!]!.subarray(start, start + this.blockLength[b]!);
  }

  /**
   * Block b as stored, for a search to decompress: read from the file by pread(2), not through the mapping, so that a
   * block's first read takes no page fault (D207); the mapping's view where the file cannot be read so.
   */
  private readBlock(b: number): Uint8Array {
    const length = this.blockLength[b]!;
    const into = length <= this.readRoom.byteLength ? this.readRoom.subarray(0, length) : new Uint8Array(length);
    return (
      this.container.readFromFile(this.partNames[this.blockPart[b]!]!, this.blockStart[b]!, into) ??
      this.compressedBlock(b)
    );
  }

  /** Block b decompressed, not cached (a copy reads each block once). */
  blockBytes(b: number): Uint8Array {
    return this.decompress(this.compressedBlock(b), this.blockSize(b));
  }

  /** Block b's size decompressed: where its last chunk ends. */
  blockSize(b: number): number {
    return this.chunkEnd[this.blockFirst[b + 1]! - 1]!;
  }

  private decompress(block: Uint8Array, size: number, into?: Uint8Array): Uint8Array {
    this.decompressor ??= blockDecompressor(this.dictionary);
    return this.decompressor(block, size, into);
  }

  private block(b: number): Uint8Array {
    let bytes = this.cache.get(b);
    if (bytes) {
      this.cache.delete(b);
      this.cache.set(b, bytes);
      return bytes;
    }
    const size = this.blockSize(b);
    const slot = size <= SLOT_BYTES ? (this.freeSlots.pop() ?? new Uint8Array(SLOT_BYTES)) : undefined;
    bytes = this.decompress(this.readBlock(b), size, slot);
    this.cache.set(b, bytes);
    if (this.cache.size > this.cacheBlocks) {
      const oldest = this.cache.keys().next().value!;
      const evicted = this.cache.get(oldest)!;
      this.cache.delete(oldest);
      // Whether a block sits in a slot follows from its size. With no block kept, the one just made is evicted at
      // once: its slot is freed, read by its caller first; one past SLOT_BYTES is left to the collector, not released
      // (released, its caller read 0 bytes: "a text block is damaged").
      if (this.blockSize(oldest) <= SLOT_BYTES) this.freeSlots.push(new Uint8Array(evicted.buffer));
      else if (oldest !== b) release(evicted);
    }
    return bytes;
  }
}

/**
 * Frees a decompressed block now rather than when the collector gets to it: blocks live
 * outside the JS heap, so the collector sees little pressure from them and, under phrase
 * checks, lets gigabytes of evicted blocks pile up. Transferring the buffer to a new empty
 * one detaches it and frees its bytes; only done when the block owns its whole buffer and
 * nothing else can still hold a view of it (chunk() copies the text out).
 */
function release(block: Uint8Array): void {
  const buffer = block.buffer;
  if (buffer instanceof ArrayBuffer && block.byteOffset === 0 && block.byteLength === buffer.byteLength)
    buffer.transfer(0);
}
