/**
 * Chunk text in zstd-compressed blocks of about BLOCK_BYTES: a block is decompressed only
 * when a response shows one of its chunks, and the most recent blocks are kept.
 *
 * Sections: text.blocks.N (compressed blocks, each part under 4 GiB), text.blockPart (u8),
 * text.blockStart (f64, offset within its part), text.blockLength (u32),
 * text.blockFirst (u32, the first chunk of each block, and the chunk count last),
 * text.chunkEnd (u32, each chunk's end within its block's decompressed bytes).
 */
import { Growable, viewOf } from "../columns";
import { MAX_SECTION_BYTES, type Container, type ContainerWriter } from "./container";

/**
 * A hit's text costs the decompression of its block: at 16 KB about 75 µs on this machine,
 * against 200 µs at 64 KB, for 9% more compressed text (bench/RESULTS-scale.md, D49).
 */
const BLOCK_BYTES = 16 * 1024;
const ZSTD_LEVEL = 9;
/** Decompressed blocks kept: 256 × 16 KB = 4 MB, room for the hits of 25 searches of 10 (a search formats at most 100). */
const CACHE_BLOCKS = 256;
/** Blocks compressing off the main thread at once; past it, a block is compressed on the main thread. */
const IN_FLIGHT = 64;

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
  private readonly blockPart = new Growable(Uint8Array);
  private readonly blockStart = new Growable(Float64Array);
  private readonly blockLength = new Growable(Uint32Array);
  private readonly blockFirst = new Growable(Uint32Array);
  private readonly chunkEnd = new Growable(Uint32Array);
  private part = -1;
  private partBytes = 0;
  private readonly queue: Compressing[] = [];
  private compressing = 0;
  /** The first error of a block compressed or written in the background: settle() throws it. */
  private failure: { error: unknown } | undefined;
  bytesIn = 0;
  bytesOut = 0;

  /**
   * Text goes into `out`'s sections text.blocks.N, which stay open between add() calls. In the
   * `background`, blocks are compressed on Bun's thread pool (zstd took a quarter of a build's
   * main thread): then settle() before finish().
   */
  constructor(
    private readonly out: ContainerWriter,
    private readonly background = false,
  ) {}

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
    if (!this.background || this.compressing >= IN_FLIGHT) return this.enqueue({ raw, block: Bun.zstdCompressSync(this.pending.subarray(0, raw), { level: ZSTD_LEVEL }) });
    const entry: Compressing = { raw };
    this.compressing++;
    entry.done = Bun.zstdCompress(this.pending.slice(0, raw), { level: ZSTD_LEVEL })
      .then((block) => {
        entry.block = block;
        this.writeReady();
      })
      .catch((error: unknown) => void (this.failure ??= { error }))
      .finally(() => this.compressing--);
    this.queue.push(entry);
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
    this.flush();
    // Each block's handler writes the ready head of the queue: when the last is done, all are written.
    await Promise.all(this.queue.map((entry) => entry.done));
    if (this.failure) throw this.failure.error;
  }

  /**
   * Copies the chunks of another store that `alive` marks (one byte per chunk there), in
   * their order: a block whose chunks all live is copied as it is compressed, the others'
   * living chunks are added anew. Returns each chunk's number here (-1: not copied).
   */
  copyFrom(from: TextStore, alive: Uint8Array): Int32Array {
    const numbers = new Int32Array(from.chunkCount).fill(-1);
    const blocks = from.blockFirst.length - 1;
    for (let b = 0; b < blocks; b++) {
      const first = from.blockFirst[b]!;
      const end = from.blockFirst[b + 1]!;
      let living = 0;
      for (let c = first; c < end; c++) living += alive[c]!;
      if (!living) continue;
      if (living === end - first) {
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
    if (this.queue.length) throw new Error("text: finish() while blocks are compressing: settle() first");
    if (this.part >= 0) this.out.end();
    this.blockFirst.push(this.chunks);
    this.out.section("text.blockPart", this.blockPart.view());
    this.out.section("text.blockStart", this.blockStart.view());
    this.out.section("text.blockLength", this.blockLength.view());
    this.out.section("text.blockFirst", this.blockFirst.view());
    this.out.section("text.chunkEnd", this.chunkEnd.view());
  }
}

export class TextStore {
  private readonly parts: Uint8Array[] = [];
  private readonly blockPart: Uint8Array;
  private readonly blockStart: Float64Array;
  private readonly blockLength: Uint32Array;
  /** The first chunk of each block, and the chunk count last. */
  readonly blockFirst: Uint32Array;
  /** Each chunk's end within its block's decompressed bytes. */
  readonly chunkEnd: Uint32Array;
  private readonly cache = new Map<number, Uint8Array>();
  private readonly decoder = new TextDecoder();

  constructor(
    container: Container,
    private readonly cacheBlocks = CACHE_BLOCKS,
  ) {
    for (let p = 0; container.has(`text.blocks.${p}`); p++) this.parts.push(container.section(`text.blocks.${p}`));
    this.blockPart = container.section("text.blockPart");
    this.blockStart = viewOf(Float64Array, container.section("text.blockStart"));
    this.blockLength = viewOf(Uint32Array, container.section("text.blockLength"));
    this.blockFirst = viewOf(Uint32Array, container.section("text.blockFirst"));
    this.chunkEnd = viewOf(Uint32Array, container.section("text.chunkEnd"));
  }

  get chunkCount(): number {
    return this.chunkEnd.length;
  }

  /** A chunk's text. */
  chunk(i: number): string {
    const b = this.blockOf(i);
    const bytes = this.block(b);
    const start = i === this.blockFirst[b] ? 0 : this.chunkEnd[i - 1]!;
    return this.decoder.decode(bytes.subarray(start, this.chunkEnd[i]!));
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

  /** Block b decompressed, not cached (a copy reads each block once). */
  blockBytes(b: number): Uint8Array {
    return Bun.zstdDecompressSync(this.compressedBlock(b));
  }

  private block(b: number): Uint8Array {
    let bytes = this.cache.get(b);
    if (bytes) {
      this.cache.delete(b);
      this.cache.set(b, bytes);
      return bytes;
    }
    const part = this.parts[this.blockPart[b]!]!;
    const start = this.blockStart[b]!;
    bytes = Bun.zstdDecompressSync(part.subarray(start, start + this.blockLength[b]!));
    this.cache.set(b, bytes);
    if (this.cache.size > this.cacheBlocks) {
      const oldest = this.cache.keys().next().value!;
      release(this.cache.get(oldest)!);
      this.cache.delete(oldest);
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
  if (buffer instanceof ArrayBuffer && block.byteOffset === 0 && block.byteLength === buffer.byteLength) buffer.transfer(0);
}
