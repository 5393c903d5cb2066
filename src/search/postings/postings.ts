/** Postings lists read (the layout: postings-format.ts; writing them: postings-writer.ts). */
import { BlockCursor } from "./block-cursor";
import { readRun, readRunPart, skipRun } from "./packed-runs";
import { ALIGN, BLOCK, MAX_DOC, MAX_TF, RUN } from "./postings-format";

/**
 * More positions than one document of a list can hold: a page's wikitext is at most 8 M characters (D150), a word at
 * least one. A count past it (or a block's past what its bytes can hold) is damage (D163), not an array to make.
 */
const MAX_DOC_POSITIONS = 2 ** 24;

/**
 * Reads lists from their parts (typed-array views of a mapped file, or memory). Each part
 * must start at a multiple of 4 bytes in its buffer.
 */
export class PostingsReader {
  readonly parts: Uint8Array[];
  readonly words: Uint32Array[];

  /** The shard's documents, which every list's lie within (D163); unknown for a build's runs. */
  readonly documents: number;

  constructor(parts: Uint8Array[], documents = MAX_DOC + 1) {
    this.parts = parts;
    this.documents = documents;
    this.words = parts.map((p) => {
      if (p.byteOffset % ALIGN) throw new Error("postings: a part must start at a multiple of 4 bytes");
      return new Uint32Array(p.buffer, p.byteOffset, p.byteLength >>> 2);
    });
  }

  /** A cursor with its own scratch arrays: one per concurrent reader, reused for list after list. */
  cursor(): PostingsCursor {
    return new PostingsCursor(this);
  }
}

/**
 * One list at a time: open(address), then its blocks decoded into `docs` and `tfs` (reused,
 * valid until the next decode), its skip data, lookups of a document and its positions.
 */
export class PostingsCursor extends BlockCursor {
  private positionScratch = new Uint32Array(64);
  /**
   * positionsInto()'s block: where each document's position values start (tf sums), and where
   * each of its runs starts (located up to runsLocated, skipped over, not unpacked). Checking a
   * phrase asks for document after document of a block: each reads its own values' bits only.
   */
  private readonly valueStarts = new Uint32Array(BLOCK + 1);
  private runAt = new Int32Array(8);
  private runsLocated = 0;
  private blockValueCount = 0;

  /**
   * The positions of doc in the list, in a scratch array valid until the next call (a view:
   * copy it to keep it), or undefined when the list does not hold doc or has no positions.
   */
  positions(doc: number): Uint32Array | undefined {
    const count = this.positionsInto(doc);
    return count < 0 ? undefined : this.positionScratch.subarray(0, count);
  }

  /**
   * positions() without the view: the number of positions of doc (-1 when the list does not
   * hold doc or has no positions), decoded into scratchPositions, valid until the next call.
   * Only doc's own values are read, from the runs holding them; the runs before are skipped.
   */
  positionsInto(doc: number): number {
    if (!this.hasPositions) return -1;
    if (this.dense) return this.densePositionsInto(this.dense, doc);
    const b = this.blockHolding(doc);
    if (b >= this.blocks) return -1;
    const index = this.indexIn(b, doc);
    if (index < 0) return -1;
    if (this.positionBlock !== b) this.openPositions(b);
    const first = this.valueStarts[index]!;
    return this.readPositions(first, this.valueStarts[index + 1]! - first);
  }

  /** Whether the list holds doc: from its tfs a chunk when dense (no block decoded), else as holds(). */
  holdsDoc(doc: number): boolean {
    return this.dense ? this.dense[doc]! > 0 : this.holds(doc);
  }

  /**
   * The list's tfs a chunk, when it is one of the dense ones (dense-lists.ts) and set after
   * open(): positionsInto() then finds a document's values from them, its block's documents
   * not decoded (a phrase check asks a common word's positions in chunk after chunk).
   */
  dense: Uint8Array | undefined;
  /** densePositionsInto()'s block: its first chunk, and where each chunk's values start from there. */
  private denseFrom = 0;
  private denseStarts = new Uint32Array(BLOCK * 4 + 1);

  override open(address: number): this {
    this.dense = undefined;
    return super.open(address);
  }

  private densePositionsInto(dense: Uint8Array, doc: number): number {
    if (!dense[doc]) return -1;
    const b = this.blockOf(doc);
    if (b >= this.blocks) return -1;
    if (this.positionBlock !== b) this.openDensePositions(dense, b);
    const at = doc - this.denseFrom;
    const first = this.denseStarts[at]!;
    return this.readPositions(first, this.denseStarts[at + 1]! - first);
  }

  /** Starts densePositionsInto()'s reading of block b: each chunk's first value from the tfs a chunk (past MAX_TF read from the block's row). */
  private openDensePositions(dense: Uint8Array, b: number): void {
    const from = b > 0 ? this.lastDoc(b - 1) + 1 : 0;
    const span = this.lastDoc(b) - from + 1;
    if (span < 1) throw this.damaged(`has block ${b} end before block ${b - 1}`);
    if (this.denseStarts.length <= span) this.denseStarts = new Uint32Array(span * 2 + 1);
    const starts = this.denseStarts;
    const bytes = this.bytes;
    let at = this.positionsOf(b);
    let total = 0;
    for (let i = 0; i < span; i++) {
      starts[i] = total;
      let c = dense[from + i]!;
      if (c === MAX_TF) {
        c = this.overflow(bytes, at);
        at = this.next;
      }
      total += c;
    }
    starts[span] = total;
    this.checkValues(at, total);
    this.startRuns(b, at, total);
    this.denseFrom = from;
  }

  /** Block b's position values, `total` of them, start at `at`: none of its runs located past the first yet. */
  private startRuns(b: number, at: number, total: number): void {
    const runs = Math.ceil(total / RUN);
    if (this.runAt.length <= runs) this.runAt = new Int32Array(runs * 2 + 1);
    this.runAt[0] = at;
    this.runsLocated = 1;
    this.blockValueCount = total;
    this.positionBlock = b;
  }

  /** Reads `count` position values from the open block's value `first` into scratchPositions, as positions: their number. */
  private readPositions(first: number, count: number): number {
    if (count > this.positionScratch.length)
      this.positionScratch = new Uint32Array(Math.max(count, this.positionScratch.length * 2));
    const out = this.positionScratch;
    const total = this.blockValueCount;
    for (let done = 0; done < count; ) {
      const r = ((first + done) / RUN) | 0;
      const inRun = first + done - r * RUN;
      const take = Math.min(count - done, RUN - inRun);
      readRunPart(this.bytes, this.runStart(r), Math.min(RUN, total - r * RUN), inRun, take, out, done);
      done += take;
    }
    let p = -1;
    for (let i = 0; i < count; i++) {
      p += out[i]! + 1;
      out[i] = p;
    }
    return count;
  }

  /** Starts positionsInto()'s reading of decoded block b: each document's first value (the tf sums, past MAX_TF read from the row), no run read. */
  private openPositions(b: number): void {
    const n = this.decodedCount;
    const at = this.sumCounts(b, n, this.valueStarts);
    this.startRuns(b, at, this.valueStarts[n]!);
  }

  /**
   * The first position value of each of decoded block b's n documents into starts (their tf
   * sums, a count past MAX_TF read from the block's row), and their total at starts[n]: where
   * the block's runs of values start.
   */
  private sumCounts(b: number, n: number, starts: Uint32Array): number {
    const bytes = this.bytes;
    const tfs = this.tfs;
    let at = this.positionsOf(b);
    let total = 0;
    for (let i = 0; i < n; i++) {
      let c = tfs[i]!;
      if (c === MAX_TF) {
        c = this.overflow(bytes, at);
        at = this.next;
      }
      starts[i] = total;
      total += c;
    }
    starts[n] = total;
    this.checkValues(at, total);
    return at;
  }

  /** A document's count of positions, past MAX_TF: read from the block's row at `at` (this.next then past it). */
  private overflow(bytes: Uint8Array, at: number): number {
    const c = MAX_TF + this.varint(bytes, at);
    if (c > MAX_DOC_POSITIONS) throw this.damaged(`has a document of ${c} positions`);
    return c;
  }

  /** Whether `total` position values can start at `at`: a run of them takes a byte at least. */
  private checkValues(at: number, total: number): void {
    if (total > RUN * (this.bytes.length - at))
      throw this.damaged(`has a block of ${total} positions from byte ${at} of ${this.bytes.length}`);
  }

  /** Where run r of positionsInto()'s block starts, the runs before it located first (skipped, not read). */
  private runStart(r: number): number {
    const runAt = this.runAt;
    const total = this.blockValueCount;
    while (this.runsLocated <= r) {
      const k = this.runsLocated - 1;
      runAt[this.runsLocated++] = skipRun(this.bytes, runAt[k]!, Math.min(RUN, total - k * RUN));
    }
    return runAt[r]!;
  }

  /** Where positionsInto() leaves its positions. */
  get scratchPositions(): Uint32Array {
    return this.positionScratch;
  }

  /** After decodePositions(b): document i of the block has positionValues[positionStarts[i]] up to positionValues[positionStarts[i + 1]]. */
  readonly positionStarts = new Uint32Array(BLOCK + 1);
  positionValues = new Uint32Array(1024);

  /** Decodes block b with the positions of all its documents (a merge reads lists through, in order). */
  decodePositions(b: number): number {
    const n = this.decode(b);
    if (!this.hasPositions) {
      this.positionStarts.fill(0, 0, n + 1);
      return n;
    }
    const bytes = this.bytes;
    const starts = this.positionStarts;
    let at = this.sumCounts(b, n, starts);
    const total = starts[n]!;
    if (total > this.positionValues.length)
      this.positionValues = new Uint32Array(Math.max(total, this.positionValues.length * 2));
    const values = this.positionValues;
    for (let r = 0; r < total; r += RUN) at = readRun(bytes, at, Math.min(RUN, total - r), values, r);
    for (let i = 0; i < n; i++) {
      let p = -1;
      for (let j = starts[i]!, end = starts[i + 1]!; j < end; j++) {
        p += values[j]! + 1;
        values[j] = p;
      }
    }
    return n;
  }
}
