/**
 * Every chunk of a range scored exactly, list after list (no bound, no skip): the oracle the
 * executor is tested against (the whole shard), and how the few pages scored one by one are
 * scored (title matches, title-boosted pages, a search within one page). For each chunk: the
 * query words it holds exactly and with typos allowed, and its score in an exact and in a typo
 * tier (rules.ts: the sum over its words of each word's best list).
 */
import type { PostingsCursor } from "../index/postings";
import type { Shard } from "../index/shard";
import type { QueryLists } from "./query-lists";
import { bm25Term, tierOf } from "./rules";

/** The chunks of a range holding some query word, ascending, with their words and scores. */
export interface ChunkScores {
  count: number;
  docs: Uint32Array;
  /** The words held exactly, and with typos allowed (a superset). */
  exactMask: Uint32Array;
  allMask: Uint32Array;
  /** The score over the exact lists, and over all (a word's best list, typo terms included). */
  exact: Float64Array;
  all: Float64Array;
}

export class RangeScorer {
  private readonly cursor: PostingsCursor;
  private size = 0;
  private wordExact = new Float64Array(0);
  private wordAll = new Float64Array(0);
  private sumExact = new Float64Array(0);
  private sumAll = new Float64Array(0);
  private maskExact = new Uint32Array(0);
  private maskAll = new Uint32Array(0);
  private touched = new Uint32Array(0);
  private readonly out: ChunkScores = {
    count: 0,
    docs: new Uint32Array(0),
    exactMask: new Uint32Array(0),
    allMask: new Uint32Array(0),
    exact: new Float64Array(0),
    all: new Float64Array(0),
  };

  constructor(private readonly text: Shard) {
    this.cursor = text.newCursor();
  }

  /** Postings read by the last score() call. */
  postings = 0;

  /** The chunks of [from, to) holding a query word: valid until the next call. */
  score(q: QueryLists, from: number, to: number): ChunkScores {
    this.room(to - from);
    const { cursor, text, wordExact, wordAll, sumExact, sumAll, maskExact, maskAll, touched } = this;
    let postings = 0;
    const variant = process.env.TOME_X_SCORE;
    for (let w = 0; w < q.words; w++) {
      if (variant) {
        postings += this.experiment(variant, q, w, from, to);
        continue;
      }
      const bit = (1 << w) >>> 0;
      let count = 0;
      for (const l of q.byWord[w]!) {
        const { lengths, table } = text.norms(l.field);
        const best = l.typo ? wordAll : wordExact;
        cursor.open(l.address);
        const { docs, tfs } = cursor;
        for (let b = from > 0 ? cursor.blockOf(from) : 0; b < cursor.blocks; b++) {
          const n = cursor.decode(b);
          if (docs[0]! >= to) break;
          for (let i = 0; i < n; i++) {
            const d = docs[i]!;
            if (d < from) continue;
            if (d >= to) break;
            postings++;
            const at = d - from;
            if (wordExact[at] === 0 && wordAll[at] === 0) touched[count++] = at;
            const s = bm25Term(l.weight, tfs[i]!, table[lengths[d]!]!);
            if (s > best[at]!) best[at] = s;
          }
        }
      }
      for (let i = 0; i < count; i++) {
        const at = touched[i]!;
        const e = wordExact[at]!;
        const a = Math.max(e, wordAll[at]!);
        if (e > 0) {
          sumExact[at]! += e;
          maskExact[at] = (maskExact[at]! | bit) >>> 0;
        }
        sumAll[at]! += a;
        maskAll[at] = (maskAll[at]! | bit) >>> 0;
        wordExact[at] = 0;
        wordAll[at] = 0;
      }
    }
    this.postings = postings;
    const out = this.out;
    let n = 0;
    for (let at = 0; at < to - from; at++) {
      if (!maskAll[at]) continue;
      out.docs[n] = from + at;
      out.exactMask[n] = maskExact[at]!;
      out.allMask[n] = maskAll[at]!;
      out.exact[n] = sumExact[at]!;
      out.all[n] = sumAll[at]!;
      n++;
      sumExact[at] = 0;
      sumAll[at] = 0;
      maskExact[at] = 0;
      maskAll[at] = 0;
    }
    out.count = n;
    return out;
  }

  private acc = new Float64Array(0);
  private accTouched = new Uint32Array(0);
  private wordTouched = new Uint32Array(0);
  /** TEMPORARY (issue 58's relevance trials): BM25F across fields, or a word's forms merged as one term. */
  private experiment(variant: string, q: QueryLists, w: number, from: number, to: number): number {
    const { cursor, text, wordExact, wordAll, sumExact, sumAll, maskExact, maskAll } = this;
    if (this.acc.length < this.size) {
      this.acc = new Float64Array(this.size);
      this.accTouched = new Uint32Array(this.size);
      this.wordTouched = new Uint32Array(this.size);
    }
    const { acc, accTouched, wordTouched } = this;
    const N = text.documentCount;
    const k = 1.2;
    const bit = (1 << w) >>> 0;
    let postings = 0;
    let wordCount = 0;
    const lists = q.byWord[w]!;
    // groups: bm25f → by term (fields combined); synonym → by field (forms combined)
    const groups = new Map<string, typeof lists>();
    for (const typoPass of [false, true]) {
      groups.clear();
      for (const l of lists) {
        if (!typoPass && l.typo) continue;
        const key = variant === "bm25f" ? `t${l.term}` : `f${l.field}`;
        let g = groups.get(key);
        if (!g) groups.set(key, (g = []));
        g.push(l);
      }
      const best = typoPass ? wordAll : wordExact;
      for (const g of groups.values()) {
        let n = 0;
        let dfMax = 0;
        for (const l of g) dfMax = Math.max(dfMax, l.df);
        const idfv = Math.log(1 + (N - dfMax + 0.5) / (dfMax + 0.5));
        for (const l of g) {
          const { lengths, table } = text.norms(l.field);
          // l.weight = formWeight × boost × idf(l.df): undo the list's own idf.
          const unit = l.weight / Math.log(1 + (N - l.df + 0.5) / (l.df + 0.5));
          cursor.open(l.address);
          const { docs, tfs } = cursor;
          for (let b = from > 0 ? cursor.blockOf(from) : 0; b < cursor.blocks; b++) {
            const c = cursor.decode(b);
            if (docs[0]! >= to) break;
            for (let i = 0; i < c; i++) {
              const d = docs[i]!;
              if (d < from) continue;
              if (d >= to) break;
              postings++;
              const at = d - from;
              if (acc[at] === 0) accTouched[n++] = at;
              acc[at]! += variant === "bm25f" ? (unit * tfs[i]!) / (table[lengths[d]!]! / k) : unit * tfs[i]!;
            }
          }
        }
        const norms = text.norms(g[0]!.field);
        for (let i = 0; i < n; i++) {
          const at = accTouched[i]!;
          const t = acc[at]!;
          const s =
            variant === "bm25f"
              ? idfv * (0.5 + (t * (k + 1)) / (k + t))
              : idfv * (0.5 + (t * (k + 1)) / (t + norms.table[norms.lengths[from + at]!]!));
          acc[at] = 0;
          if (wordExact[at] === 0 && wordAll[at] === 0) wordTouched[wordCount++] = at;
          if (s > best[at]!) best[at] = s;
        }
      }
    }
    for (let i = 0; i < wordCount; i++) {
      const at = wordTouched[i]!;
      const e = wordExact[at]!;
      const a = Math.max(e, wordAll[at]!);
      if (e > 0) {
        sumExact[at]! += e;
        maskExact[at] = (maskExact[at]! | bit) >>> 0;
      }
      sumAll[at]! += a;
      maskAll[at] = (maskAll[at]! | bit) >>> 0;
      wordExact[at] = 0;
      wordAll[at] = 0;
    }
    return postings;
  }

  private room(n: number): void {
    if (this.size >= n) return;
    const size = Math.max(n, Math.floor(this.size * 1.5), 64);
    this.size = size;
    this.wordExact = new Float64Array(size);
    this.wordAll = new Float64Array(size);
    this.sumExact = new Float64Array(size);
    this.sumAll = new Float64Array(size);
    this.maskExact = new Uint32Array(size);
    this.maskAll = new Uint32Array(size);
    this.touched = new Uint32Array(size);
    const out = this.out;
    out.docs = new Uint32Array(size);
    out.exactMask = new Uint32Array(size);
    out.allMask = new Uint32Array(size);
    out.exact = new Float64Array(size);
    out.all = new Float64Array(size);
  }
}

/**
 * A chunk's tier (rules.ts) from the words it holds exactly and with typos: the first bucket
 * whose words it holds, exactly before with typos; the last bucket ("any word") needs one word
 * held. -1 when it holds none of the query's words.
 */
export function chunkTier(buckets: number[], exact: number, all: number): number {
  const last = buckets.length - 1;
  for (let j = 0; j <= last; j++) {
    const req = buckets[j]!;
    if ((exact & req) === req && (j < last || exact !== 0)) return tierOf(j, false);
    if ((all & req) === req && (j < last || all !== 0)) return tierOf(j, true);
  }
  return -1;
}
