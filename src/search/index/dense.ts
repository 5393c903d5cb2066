/**
 * The term frequencies of a shard's most common lists, a byte per document, made from the
 * list on first use. A list in half the documents or more is decoded whole whenever a few of
 * its documents are asked for (each of its blocks holds some of any set of documents): looked
 * up here, a document costs one read. (A byte, as postings.ts caps term frequencies at 255;
 * not a nibble: in real chunks "the" is there 15 times or more in a third of those that hold it.)
 */
import type { PostingsCursor } from "./postings";
import { popcount } from "./shard-types";

/** A list is made dense when it holds at least this share of the documents. */
export const DENSE_SHARE = 1 / 2;
/** A list's frequency in each document (0: not in the list). */
export type DenseList = Uint8Array;

/**
 * A list read at a few documents' blocks decodes nearly all of them when the documents are
 * spread (a conjunction's chunks against a common word's list): a list in at least this share
 * of the documents is then looked up instead, a document at a time (lookupTf).
 */
export const LOOKUP_SHARE = 1 / 64;
/**
 * A list is looked up at documents only when it holds at least this many times as many, and
 * when they are at least half as many as its blocks: fewer, spread, touch few of its blocks,
 * and reading those costs less than making the lookup list.
 */
export const LOOKUP_RATIO = 4;
export const LOOKUP_SPREAD = 2;
/** The most bytes the lookup lists kept take; past it the least recently used are dropped. */
const LOOKUP_BUDGET = 256 * 1024 * 1024;
/** How many lists asked for once are remembered (all forgotten past it). */
const ASKED_ONCE_KEPT = 65_536;

/**
 * A list as a bit a document (the documents it holds) and their term frequencies in list
 * order: a document's frequency is at the number of bits set before it (ranks: the count
 * before each 32-bit word). A quarter of a byte a document, plus a byte a posting.
 */
export interface LookupList {
  bits: Uint32Array;
  ranks: Uint32Array;
  tfs: Uint8Array;
}

/** A lookup list's term frequency of doc, 0 when the list does not hold it. */
export function lookupTf(list: LookupList, doc: number): number {
  const w = doc >>> 5;
  const word = list.bits[w]!;
  const bit = 1 << (doc & 31);
  if ((word & bit) === 0) return 0;
  return list.tfs[list.ranks[w]! + popcount(word & (bit - 1))]!;
}

export class DenseLists {
  private readonly made = new Map<number, DenseList>();
  /** Milliseconds spent making lists: a search's time budget does not count them (stages/meter.ts). */
  makingMs = 0;

  constructor(
    private readonly documents: number,
    private readonly cursor: PostingsCursor,
  ) {}

  /** The list at `address` as a byte a document (the caller checks that it is common enough to pay). */
  of(address: number): DenseList {
    let list = this.made.get(address);
    if (!list) {
      const started = performance.now();
      this.made.set(address, (list = this.make(address)));
      this.makingMs += performance.now() - started;
    }
    return list;
  }

  private readonly lookups = new Map<number, LookupList>();
  /** The lists asked for as lookup lists once, not made yet. */
  private readonly askedOnce = new Set<number>();
  private lookupBytes = 0;

  /**
   * The list at `address` as a lookup list, made when it is asked for the second time (a list
   * asked once would cost its making and a read, not a read); undefined the first time. The
   * least recently used are dropped past LOOKUP_BUDGET bytes.
   */
  lookup(address: number): LookupList | undefined {
    let list = this.lookups.get(address);
    if (list) {
      // A Map keeps its insertion order: re-inserted, the list is the most recently used.
      this.lookups.delete(address);
      this.lookups.set(address, list);
      return list;
    }
    if (!this.askedOnce.has(address)) {
      if (this.askedOnce.size >= ASKED_ONCE_KEPT) this.askedOnce.clear();
      this.askedOnce.add(address);
      return undefined;
    }
    this.askedOnce.delete(address);
    const started = performance.now();
    list = this.makeLookup(address);
    const bytes = list.bits.byteLength + list.ranks.byteLength + list.tfs.byteLength;
    for (const [oldest, old] of this.lookups) {
      if (this.lookupBytes + bytes <= LOOKUP_BUDGET) break;
      this.lookups.delete(oldest);
      this.lookupBytes -= old.bits.byteLength + old.ranks.byteLength + old.tfs.byteLength;
    }
    this.lookups.set(address, list);
    this.lookupBytes += bytes;
    this.makingMs += performance.now() - started;
    return list;
  }

  private makeLookup(address: number): LookupList {
    const cursor = this.cursor.open(address);
    const words = (this.documents + 31) >>> 5;
    const bits = new Uint32Array(words);
    const ranks = new Uint32Array(words);
    const tfs = new Uint8Array(cursor.df);
    const { docs } = cursor;
    for (let b = 0, at = 0; b < cursor.blocks; b++) {
      const n = cursor.decode(b);
      tfs.set(cursor.tfs.subarray(0, n), at);
      at += n;
      for (let i = 0; i < n; i++) {
        const d = docs[i]!;
        bits[d >>> 5] = bits[d >>> 5]! | (1 << (d & 31));
      }
    }
    for (let w = 0, before = 0; w < words; w++) {
      ranks[w] = before;
      before += popcount(bits[w]!);
    }
    return { bits, ranks, tfs };
  }

  private make(address: number): DenseList {
    const list = new Uint8Array(this.documents);
    const cursor = this.cursor.open(address);
    const { docs, tfs } = cursor;
    for (let b = 0; b < cursor.blocks; b++) {
      const n = cursor.decode(b);
      for (let i = 0; i < n; i++) list[docs[i]!] = tfs[i]!;
    }
    return list;
  }
}
