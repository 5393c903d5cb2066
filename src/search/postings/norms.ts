/**
 * BM25's length normalisation of a field, k·(1 − b + b·length/average), by length (a length is
 * 16 bits: the table is 256 KB whatever the corpus). The shard computes it from its field
 * lengths when opened, and the merge with the same lengths when it writes the blocks' impacts
 * (postings-format.ts), so that an impact is the true best of its block under the norms read.
 */
import { BM25 } from "./shard-types";

export function normTable(lengths: Uint16Array): { table: Float32Array } {
  const n = lengths.length;
  let sum = 0;
  for (let d = 0; d < n; d++) sum += lengths[d]!;
  const average = sum / n || 1;
  const table = new Float32Array(1 << 16);
  for (let length = 0; length < table.length; length++)
    table[length] = BM25.k * (1 - BM25.b + (BM25.b * length) / average);
  return { table };
}
