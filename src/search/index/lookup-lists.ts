/**
 * Lists looked up a document at a time. A conjunction reads a common word's list at the
 * documents still in (conjunction.ts); when they are spread, nearly every block of the list
 * holds one, and reading them decodes the list whole. A lookup list answers each document
 * in a few reads instead: a bit a document (whether the list holds it) and the term
 * frequencies in list order, a document's at the number of bits set before it.
 *
 * Lists in half the documents or more are made on first use and kept, as a frequency a
 * document: every read of them is whole. Other lists in at least LOOKUP_SHARE of the
 * documents are made, by bit, once searches that asked for them at documents spread enough
 * (Shard.lookup) have decoded as many of their postings by block: one asked once would cost
 * its making and a read, instead of a read. Past LOOKUP_BUDGET bytes of these, the least
 * recently used are dropped.
 * (Frequencies a byte each: postings.ts caps them at 255; not a nibble, as in real chunks
 * "the" is there 15 times or more in a third of those that hold it.)
 */
import type { PostingsCursor } from "./postings";
import { popcount } from "./shard-types";

/** A list in at least this share of the documents is made a lookup list on first use. */
export const DENSE_SHARE = 1 / 2;
/** Lists in fewer than this share of the documents are never made lookup lists. */
export const LOOKUP_SHARE = 1 / 64;
/**
 * A list is looked up at documents only when it holds at least LOOKUP_RATIO times as many,
 * and when they are at least 1 / LOOKUP_SPREAD as many as its blocks: fewer, spread, touch few
 * of its blocks, and reading those costs less than making the lookup list.
 */
export const LOOKUP_RATIO = 4;
export const LOOKUP_SPREAD = 2;
/** The most bytes the lookup lists by bit kept take; past it the least recently used are dropped. */
const LOOKUP_BUDGET = 256 * 1024 * 1024;
/** How many lists asked for and not made are remembered (all forgotten past it). */
const ASKED_KEPT = 65_536;

/**
 * A list as a bit a document and its term frequencies in list order (ranks: the bits set
 * before each 32-bit word); or, for a list in DENSE_SHARE of the documents or more, as a
 * frequency a document (`byDocument`, no bits): one read, for a byte a document where the
 * bits would take three quarters of one.
 */
export interface LookupList {
  byDocument: boolean;
  bits: Uint32Array;
  ranks: Uint32Array;
  tfs: Uint8Array;
}

/** A lookup list's term frequency of doc, 0 when the list does not hold it. */
export function lookupTf(list: LookupList, doc: number): number {
  if (list.byDocument) return list.tfs[doc]!;
  const w = doc >>> 5;
  const word = list.bits[w]!;
  const bit = 1 << (doc & 31);
  if ((word & bit) === 0) return 0;
  return list.tfs[list.ranks[w]! + popcount(word & (bit - 1))]!;
}

const bytesOf = (list: LookupList) => list.bits.byteLength + list.ranks.byteLength + list.tfs.byteLength;

export class LookupLists {
  private readonly made = new Map<number, LookupList>();
  private madeBytes = 0;
  /** The lists a search would have looked up, not made yet: the postings their blocks have cost since. */
  private readonly spentOn = new Map<number, number>();
  /** Milliseconds spent making lists: a search's time budget does not count them (stages/meter.ts). */
  makingMs = 0;

  constructor(
    private readonly documents: number,
    private readonly cursor: PostingsCursor,
  ) {}

  /**
   * The list at `address` (of `df` postings) as a lookup list: when `common`, a frequency a
   * document, made now and kept; else by bit, once reading its blocks has decoded as many
   * postings as it holds (noteRead), about what making it costs, and undefined until then: a
   * list asked for once is not made, one asked for again and again is, after at most twice
   * its cost (rent or buy). The caller checks that the list is common enough to pay.
   */
  of(address: number, common: boolean, df: number): LookupList | undefined {
    if (common) return this.ofEveryDocument(address);
    let list = this.made.get(address);
    if (list) {
      // A Map keeps its insertion order: re-inserted, the list is the most recently used.
      this.made.delete(address);
      this.made.set(address, list);
      return list;
    }
    const spent = this.spentOn.get(address);
    if (spent === undefined) {
      if (this.spentOn.size >= ASKED_KEPT) this.spentOn.clear();
      this.spentOn.set(address, 0);
    }
    if (spent === undefined || spent < df) return undefined;
    this.spentOn.delete(address);
    const started = performance.now();
    list = this.make(address, false);
    for (const [oldest, old] of this.made) {
      if (this.madeBytes + bytesOf(list) <= LOOKUP_BUDGET) break;
      this.made.delete(oldest);
      this.madeBytes -= bytesOf(old);
    }
    this.made.set(address, list);
    this.madeBytes += bytesOf(list);
    this.makingMs += performance.now() - started;
    return list;
  }

  /**
   * A list in DENSE_SHARE of the documents or more, a frequency a document, made on first use
   * and kept: they are few (18 at 1M English-like chunks), and each is asked for by nearly
   * every search of several words; dropped and made again, one would cost a whole list's read.
   */
  private ofEveryDocument(address: number): LookupList {
    let list = this.everyDocument.get(address);
    if (!list) {
      const started = performance.now();
      this.everyDocument.set(address, (list = this.make(address, true)));
      this.makingMs += performance.now() - started;
    }
    return list;
  }
  private readonly everyDocument = new Map<number, LookupList>();

  private make(address: number, byDocument: boolean): LookupList {
    const cursor = this.cursor.open(address);
    const { docs } = cursor;
    if (byDocument) {
      const tfs = new Uint8Array(this.documents);
      for (let b = 0; b < cursor.blocks; b++) {
        const n = cursor.decode(b);
        for (let i = 0; i < n; i++) tfs[docs[i]!] = cursor.tfs[i]!;
      }
      return { byDocument, bits: new Uint32Array(0), ranks: new Uint32Array(0), tfs };
    }
    const words = (this.documents + 31) >>> 5;
    const bits = new Uint32Array(words);
    const ranks = new Uint32Array(words);
    const tfs = new Uint8Array(cursor.df);
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
    return { byDocument, bits, ranks, tfs };
  }

  /** The postings a search decoded by block from a list it asked for as a lookup list (of()) and did not get. */
  noteRead(address: number, postings: number): void {
    const spent = this.spentOn.get(address);
    if (spent !== undefined) this.spentOn.set(address, spent + postings);
  }
}
