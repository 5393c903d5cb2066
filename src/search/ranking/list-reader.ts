/**
 * One postings list of a query word's form, as the block-max executor reads it (executor.ts):
 * its impacts bound what it adds in a window of chunks without decoding a block; it is scanned
 * in order (a lead word's lists) or asked for one chunk at a time (the others'), always moving
 * forward, on a cursor of its own.
 */
import type { PostingsCursor } from "../postings/postings";
import { BLOCK, COARSE } from "../postings/postings-format";
import type { FieldNorms } from "../postings/shard-types";
import type { FieldList } from "./query-lists";

/** A block spanning this many times a window's chunks is sparse there: bound() reads its postings in the window. */
const SPARSE = 8;

export class ListReader {
  cursor!: PostingsCursor;
  /** The list's address in the postings. */
  address = 0;
  /** What a posting adds to its form's combined frequency, over its length's norm (query-lists.ts). */
  unit = 0;
  lengths!: Uint16Array;
  table!: Float32Array;
  /** The list's tfs a chunk, when it is one of the most common (index/dense-lists.ts): at1() reads a byte. */
  dense: Uint8Array | undefined;
  /** Whether bound() reads a sparse block's postings in the window rather than its impact (a typo word ranked alone): set by open(). */
  private sparse = false;
  /** The scan's place: the block decoded and the next posting in it (blocks when the list is read through). */
  block = 0;
  at = 0;
  size = 0;

  open(
    cursor: PostingsCursor,
    list: FieldList,
    norms: FieldNorms,
    dense: Uint8Array | undefined,
    sparse = false,
  ): this {
    this.dense = dense;
    this.sparse = sparse;
    this.cursor = cursor.open(list.address);
    this.address = list.address;
    this.unit = list.unit;
    this.lengths = norms.lengths;
    this.table = norms.table;
    this.block = 0;
    this.size = cursor.decode(0);
    this.at = 0;
    return this;
  }

  /**
   * The first document at or after doc the list may hold (Infinity: none): exact when its block is decoded (a short
   * list's always is: blockOf() reads it), else where the block begins as its predecessor's last document tells. A
   * window begun there holds no posting before the true one, and the bounds may skip it unread: finding the next
   * window decoded a block of every list, those the window then skipped or read none of too.
   */
  firstFrom(doc: number): number {
    const cursor = this.cursor;
    const b = cursor.blockOf(doc);
    if (b >= cursor.blocks) return Infinity;
    if (!cursor.isDecoded(b)) return b > 0 ? Math.max(doc, cursor.lastDoc(b - 1) + 1) : doc;
    const i = cursor.firstIndexIn(b, doc);
    return i < cursor.decode(b) ? cursor.docs[i]! : Infinity;
  }

  /** Moves the scan to the first document at or after doc. */
  skipTo(doc: number): void {
    const cursor = this.cursor;
    if (this.block >= cursor.blocks) return;
    // The scan's block, unless doc lies past it (its last document says so without decoding it): lookups (at1) may
    // have decoded another block of the list since, and it is decoded again.
    if (cursor.lastDoc(this.block) >= doc && (this.size = cursor.decode(this.block)) > this.at) {
      if (cursor.docs[this.at]! >= doc) return;
    } else {
      const b = cursor.blockOf(doc);
      if (b >= cursor.blocks) {
        this.block = cursor.blocks;
        this.at = this.size = 0;
        return;
      }
      this.block = b;
      this.size = cursor.decode(b);
      this.at = 0;
    }
    const docs = cursor.docs;
    while (this.at < this.size && docs[this.at]! < doc) this.at++;
  }

  /**
   * Adds what each posting in [from, to] adds to its form's combined frequency into
   * combined[doc − from], listing the chunks first touched in touched[n…]; returns the new n.
   */
  scan(from: number, to: number, combined: Float64Array, touched: Uint32Array, n: number): number {
    const { cursor, unit, lengths, table } = this;
    this.skipTo(from);
    for (;;) {
      const docs = cursor.docs;
      const tfs = cursor.tfs;
      let i = this.at;
      const size = this.size;
      for (; i < size; i++) {
        const d = docs[i]!;
        if (d > to) {
          this.at = i;
          return n;
        }
        const at = d - from;
        if (combined[at] === 0) touched[n++] = at;
        combined[at]! += (unit * tfs[i]!) / table[lengths[d]!]!;
      }
      if (this.block + 1 >= cursor.blocks) {
        this.at = this.size = 0;
        this.block = cursor.blocks;
        return n;
      }
      this.size = cursor.decode(++this.block);
      this.at = 0;
    }
  }

  /**
   * When block b, the first that may hold chunks of [from, to], holds all the list's postings
   * there and spans far more chunks than the window (a short list, a rare typo form's, a
   * title's, whose impact bounded every window it overlapped, holding none or few of their
   * chunks): the most its postings in the window add, the block decoded once for the many
   * windows it spans (its cursor keeps it). Else -1: bound() reads the impacts.
   */
  private readSparse(b: number, from: number, to: number): number {
    const cursor = this.cursor;
    if (cursor.df >= BLOCK) {
      const start = b > 0 ? cursor.lastDoc(b - 1) + 1 : 0;
      const end = cursor.lastDoc(b);
      if (end < to || end - start < SPARSE * (to - from + 1)) return -1;
    }
    const n = cursor.decode(b);
    const lo = cursor.firstIndexIn(b, from);
    const { docs, tfs } = cursor;
    const { lengths, table } = this;
    let most = 0;
    for (let i = lo; i < n && docs[i]! <= to; i++) {
      const x = tfs[i]! / table[lengths[docs[i]!]!]!;
      if (x > most) most = x;
    }
    return most * this.unit;
  }

  /** What doc's posting adds to its form's combined frequency (0: the list does not hold doc). */
  at1(doc: number): number {
    const tf = this.dense ? this.dense[doc]! : this.cursor.tf(doc);
    return tf ? (this.unit * tf) / this.table[this.lengths[doc]!]! : 0;
  }

  /**
   * The most a posting of a block that may hold chunks of [from, to] adds (its impact: tf over
   * its length's norm, × unit); 0 when the list holds nothing from `from` on. A block counts
   * unless the one before it ends at or past `to`; runs of COARSE blocks wholly before `to` are
   * bounded by their coarse impact.
   */
  bound(from: number, to: number): number {
    const cursor = this.cursor;
    const blocks = cursor.blocks;
    let b = cursor.blockOf(from);
    if (b >= blocks) return 0;
    if (this.sparse) {
      const read = this.readSparse(b, from, to);
      if (read >= 0) return read;
    }
    const table = this.table;
    let most = cursor.impactTf(b) / table[cursor.impactLength(b)]!;
    while (b + 1 < blocks && cursor.lastDoc(b) < to) {
      b++;
      if (b % COARSE === 0 && b + COARSE <= blocks && cursor.lastDoc(b + COARSE - 1) < to) {
        const c = b / COARSE;
        const r = cursor.coarseTf(c) / table[cursor.coarseLength(c)]!;
        if (r > most) most = r;
        b += COARSE - 1;
        continue;
      }
      const r = cursor.impactTf(b) / table[cursor.impactLength(b)]!;
      if (r > most) most = r;
    }
    return most * this.unit;
  }
}
