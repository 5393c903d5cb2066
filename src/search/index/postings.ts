/** Postings lists read (the layout: postings-format.ts; writing them: postings-writer.ts). */
import { BlockCursor } from "./block-cursor";
import { readRun, skipRun } from "./packed-runs";
import { ALIGN, BLOCK, MAX_TF, RUN } from "./postings-format";

/**
 * Reads lists from their parts (typed-array views of a mapped file, or memory). Each part
 * must start at a multiple of 4 bytes in its buffer.
 */
export class PostingsReader {
  readonly parts: Uint8Array[];
  readonly words: Uint32Array[];

  constructor(parts: Uint8Array[]) {
    this.parts = parts;
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
  /** The position values of the runs positionsInto() reads, before they are summed. */
  private runScratch = new Uint32Array(2 * RUN);
  private positionScratch = new Uint32Array(64);

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
   * Only the runs holding doc's positions are unpacked; those before are skipped.
   */
  positionsInto(doc: number): number {
    if (!this.hasPositions) return -1;
    const b = this.blockOf(doc);
    if (b >= this.blocks) return -1;
    const index = this.indexIn(b, doc);
    if (index < 0) return -1;
    const n = this.decodedCount;
    const bytes = this.bytes;
    const tfs = this.tfs;
    let at = this.positionsOf(b);
    // doc's first value in the block's row, its count, and the row's length (which says how long the last run is).
    let first = 0;
    let count = 0;
    let total = 0;
    for (let i = 0; i < n; i++) {
      let c = tfs[i]!;
      if (c === MAX_TF) {
        c += this.varint(bytes, at);
        at = this.next;
      }
      if (i === index) {
        first = total;
        count = c;
      }
      total += c;
    }
    const from = first - (first % RUN);
    for (let r = 0; r < from; r += RUN) at = skipRun(bytes, at, RUN);
    const upTo = first + count;
    if (upTo - from > this.runScratch.length) this.runScratch = new Uint32Array(upTo - from + RUN);
    const raw = this.runScratch;
    for (let r = from; r < upTo; r += RUN) at = readRun(bytes, at, Math.min(RUN, total - r), raw, r - from);
    if (count > this.positionScratch.length)
      this.positionScratch = new Uint32Array(Math.max(count, this.positionScratch.length * 2));
    const out = this.positionScratch;
    let p = -1;
    for (let i = 0, j = first - from; i < count; i++, j++) {
      p += raw[j]! + 1;
      out[i] = p;
    }
    return count;
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
    let at = this.positionsOf(b);
    const starts = this.positionStarts;
    let total = 0;
    for (let i = 0; i < n; i++) {
      let c = this.tfs[i]!;
      if (c === MAX_TF) {
        c += this.varint(bytes, at);
        at = this.next;
      }
      starts[i] = total;
      total += c;
    }
    starts[n] = total;
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
