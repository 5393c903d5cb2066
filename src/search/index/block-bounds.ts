/**
 * Each block's bound: the most one of its postings adds to a document's BM25 sum, before the
 * list's weight (BM25.d + tf·(k+1)/(tf + norm), the largest over the block's postings with
 * their own documents' lengths), as Lucene's impacts and Tantivy's block WAND bound a block.
 * The skip data's largest tf over the field's shortest document bounds a block loosely (a
 * chunk of one word makes every block's bound near the largest possible); this one is exact.
 * Made from the list, decoded whole once, on its first use, and kept (8 bytes a block: under
 * 0.07 bytes a posting).
 */
import { BM25, type FieldNorms } from "./shard-types";
import type { PostingsCursor } from "./postings";

export class BlockBounds {
  private readonly made = new Map<number, Float64Array>();
  /** Milliseconds spent making bounds: a search's time budget does not count them (stages/meter.ts). */
  makingMs = 0;

  constructor(
    private readonly cursor: PostingsCursor,
    private readonly normsOf: (field: number) => FieldNorms,
  ) {}

  /** The bounds of the list at `address` (of `field`), one a block. */
  of(address: number, field: number): Float64Array {
    let bounds = this.made.get(address);
    if (!bounds) {
      const started = performance.now();
      this.made.set(address, (bounds = this.make(address, field)));
      this.makingMs += performance.now() - started;
    }
    return bounds;
  }

  private make(address: number, field: number): Float64Array {
    const cursor = this.cursor.open(address);
    const { lengths, table } = this.normsOf(field);
    const { docs, tfs } = cursor;
    const k1 = BM25.k + 1;
    const bounds = new Float64Array(cursor.blocks);
    for (let b = 0; b < cursor.blocks; b++) {
      const n = cursor.decode(b);
      let max = 0;
      for (let i = 0; i < n; i++) {
        const tf = tfs[i]!;
        const s = BM25.d + (tf * k1) / (tf + table[lengths[docs[i]!]!]!);
        if (s > max) max = s;
      }
      bounds[b] = max;
    }
    return bounds;
  }
}
