/**
 * The flat postings layout shards had before block compression (a Uint32 document and a
 * Uint8 frequency per posting, runs located by offsets) and its match(), kept for
 * bench/search/postings.ts to compare against. The arrays are decoded from a shard's block postings.
 */
import { PostingsReader } from "../../src/search/postings/postings";
import { TermLists } from "../../src/search/postings/term-lists";
import { matchBuffer, type Shard } from "../../src/search/postings/shard";
import { BM25, popcount, type Matches, type ShardData, type WordSpec } from "../../src/search/postings/shard-types";

export class FlatShard {
  readonly offsets: Uint32Array;
  readonly docs: Uint32Array;
  readonly freqs: Uint8Array;
  private readonly norms: Float32Array[];
  private readonly scores: Float64Array;
  private readonly masks: Uint32Array;
  private readonly touched: Uint32Array;
  private readonly documentCount: number;
  private readonly fields: string[];

  constructor(
    private readonly shard: Shard,
    data: ShardData,
    private readonly boosts: number[],
  ) {
    const F = data.fields.length;
    const table = new TermLists(data.lists);
    const lists = (data.vocabulary.starts.length - 1) * F;
    const dfOf = (k: number) => table.df(Math.floor(k / F), k % F);
    this.offsets = new Uint32Array(lists + 1);
    for (let k = 0; k < lists; k++) this.offsets[k + 1] = this.offsets[k]! + dfOf(k);
    this.docs = new Uint32Array(this.offsets[lists]!);
    this.freqs = new Uint8Array(this.offsets[lists]!);
    const cursor = new PostingsReader(data.postings).cursor();
    for (let k = 0; k < lists; k++) {
      if (!dfOf(k)) continue;
      cursor.open(table.address(table.index(Math.floor(k / F), k % F)));
      let at = this.offsets[k]!;
      for (let b = 0; b < cursor.blocks; b++) {
        const n = cursor.decode(b);
        this.docs.set(cursor.docs.subarray(0, n), at);
        this.freqs.set(cursor.tfs.subarray(0, n), at);
        at += n;
      }
    }
    const N = (this.documentCount = data.documentCount);
    this.fields = data.fields;
    this.norms = data.fields.map((_f, f) => {
      const lengths = data.fieldLengths.subarray(f * N, (f + 1) * N);
      let sum = 0;
      for (let d = 0; d < N; d++) sum += lengths[d]!;
      const average = sum / N || 1;
      const norm = new Float32Array(N);
      for (let d = 0; d < N; d++) norm[d] = BM25.k * (1 - BM25.b + (BM25.b * lengths[d]!) / average);
      return norm;
    });
    this.scores = new Float64Array(N);
    this.masks = new Uint32Array(N);
    this.touched = new Uint32Array(N);
  }

  /** The old Shard.match(), verbatim. */
  match(words: WordSpec[], options: { fields?: number[]; from?: number; to?: number; into?: Matches } = {}): Matches {
    const derived = this.shard.derive(words);
    const F = this.fields.length;
    const fields = options.fields ?? this.fields.map((_f, i) => i);
    const from = options.from ?? 0;
    const to = options.to ?? this.documentCount;
    const whole = from === 0 && to === this.documentCount;
    const { docs, freqs, scores, masks, touched, offsets } = this;
    const N = this.documentCount;
    const k1 = BM25.k + 1;
    let count = 0;
    let postings = 0;
    for (const { word, term, weight } of derived) {
      const bit = (1 << word) >>> 0;
      for (const f of fields) {
        let lo = offsets[term * F + f]!;
        let hi = offsets[term * F + f + 1]!;
        if (lo === hi) continue;
        const df = hi - lo;
        const w = weight * this.boosts[f]! * Math.log(1 + (N - df + 0.5) / (df + 0.5));
        if (!whole) {
          lo = lowerBound(docs, lo, hi, from);
          hi = lowerBound(docs, lo, hi, to);
        }
        const norm = this.norms[f]!;
        postings += hi - lo;
        for (let p = lo; p < hi; p++) {
          const d = docs[p]!;
          const tf = freqs[p]!;
          if (masks[d] === 0) touched[count++] = d;
          scores[d]! += w * (BM25.d + (tf * k1) / (tf + norm[d]!));
          masks[d] = (masks[d]! | bit) >>> 0;
        }
      }
    }
    const out = options.into && options.into.docs.length >= count ? options.into : matchBuffer(count);
    out.count = count;
    out.postings = postings;
    out.derived = derived;
    for (let i = 0; i < count; i++) {
      const d = touched[i]!;
      const m = masks[d]!;
      out.docs[i] = d;
      out.masks[i] = m;
      out.scores[i] = scores[d]! * popcount(m);
      scores[d] = 0;
      masks[d] = 0;
    }
    return out;
  }
}

function lowerBound(a: Uint32Array, lo: number, hi: number, value: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
