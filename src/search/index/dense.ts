/**
 * The term frequencies of a shard's most common lists, a byte per document, made from the
 * list on first use. A list in half the documents or more is decoded whole whenever a few of
 * its documents are asked for (each of its blocks holds some of any set of documents): looked
 * up here, a document costs one read. (A byte, as postings.ts caps term frequencies at 255;
 * not a nibble: in real chunks "the" is there 15 times or more in a third of those that hold it.)
 */
import type { PostingsCursor } from "./postings";

/** A list is made dense when it holds at least this share of the documents. */
export const DENSE_SHARE = 1 / 2;
/** A list's frequency in each document (0: not in the list). */
export type DenseList = Uint8Array;

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
