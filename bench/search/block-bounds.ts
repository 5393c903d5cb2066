/**
 * Each block's bound: the most one of its postings adds to a chunk's BM25 sum, before the
 * list's weight (BM25.d + tf·(k+1)/(tf + norm), the largest over the block's postings with
 * their own chunks' lengths), as Lucene's impacts and Tantivy's block WAND bound a block.
 * The skip data's largest tf over the field's shortest chunk bounds a block loosely; this one
 * is exact. Made from the list, decoded whole, once per list (bounds-ceiling.ts reads it; no
 * search does: session 30's executors that did are reverted, bench/search/RESULTS.md).
 */
import type { Shard } from "../../src/search/index/shard";
import { BM25, type ScoredList } from "../../src/search/index/shard-types";

export class BlockBounds {
  private readonly made = new Map<number, Float64Array>();
  private readonly cursor;

  constructor(private readonly shard: Shard) {
    this.cursor = shard.newCursor();
  }

  /** The bounds of a list, one a block. */
  of(l: ScoredList): Float64Array {
    let bounds = this.made.get(l.address);
    if (!bounds) this.made.set(l.address, (bounds = this.make(l)));
    return bounds;
  }

  private make(l: ScoredList): Float64Array {
    const cursor = this.cursor.open(l.address);
    const { lengths, table } = this.shard.norms(l.field);
    const { docs, tfs } = cursor;
    const k1 = BM25.k + 1;
    const bounds = new Float64Array(cursor.blocks);
    for (let b = 0; b < cursor.blocks; b++) {
      const n = cursor.decode(b);
      let max = 0;
      for (let i = 0; i < n; i++) {
        const tf = tfs[i]!;
        max = Math.max(max, BM25.d + (tf * k1) / (tf + table[lengths[docs[i]!]!]!));
      }
      bounds[b] = max;
    }
    return bounds;
  }
}
