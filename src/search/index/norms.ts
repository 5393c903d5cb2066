/**
 * BM25's length normalisation of a field, k·(1 − b + b·length/average), by length (a length is
 * 16 bits: the table is 256 KB whatever the corpus). The shard computes it from its field
 * lengths when opened, and the merge with the same lengths when it writes the blocks' impacts
 * (postings-format.ts), so that an impact is the true best of its block under the norms read.
 */
import { BM25 } from "./shard-types";

export interface NormTable {
  table: Float32Array;
  /** The smallest norm of a document holding any word of the field (length ≥ 1). */
  shortest: number;
}

export function normTable(lengths: Uint16Array): NormTable {
  const n = lengths.length;
  let sum = 0;
  let shortest = Infinity;
  for (let d = 0; d < n; d++) {
    const length = lengths[d]!;
    sum += length;
    if (length > 0 && length < shortest) shortest = length;
  }
  const average = sum / n || 1;
  const normOf = (length: number) => BM25.k * (1 - BM25.b + (BM25.b * length) / average);
  const table = new Float32Array(1 << 16);
  for (let length = 0; length < table.length; length++) table[length] = normOf(length);
  return { table, shortest: Math.fround(normOf(Number.isFinite(shortest) ? shortest : 0)) };
}
