/**
 * Every chunk of a range scored exactly, list after list (no bound, no skip): the oracle the
 * executor is tested against (the whole shard), and how the few pages scored one by one are
 * scored (title matches, title-boosted pages, a search within one page). For each chunk: the
 * query words it holds exactly and with typos allowed, and its score in an exact and in a typo
 * tier (rules.ts: the sum over its words of each word's best form, by BM25F).
 */
import type { PostingsCursor } from "../postings/postings";
import type { Shard } from "../postings/shard";
import type { Form, QueryLists } from "./query-lists";
import { bm25f, tierOf } from "./rules";

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
  private size = 0;
  /** Per chunk of the range: the current form's combined frequency, the current word's best form (exact, all), the sums and masks. */
  private combined = new Float64Array(0);
  private wordExact = new Float64Array(0);
  private wordAll = new Float64Array(0);
  private sumExact = new Float64Array(0);
  private sumAll = new Float64Array(0);
  private maskExact = new Uint32Array(0);
  private maskAll = new Uint32Array(0);
  private formTouched = new Uint32Array(0);
  private wordTouched = new Uint32Array(0);
  private readonly out: ChunkScores = {
    count: 0,
    docs: new Uint32Array(0),
    exactMask: new Uint32Array(0),
    allMask: new Uint32Array(0),
    exact: new Float64Array(0),
    all: new Float64Array(0),
  };

  constructor(private readonly text: Shard) {}

  /**
   * A list's cursor for the current search, kept open across ranges: pages scored one after
   * another (title matches, an order's pages) mostly fall in blocks it has decoded already.
   */
  private cursorOf(address: number): PostingsCursor {
    let cursor = this.open.get(address);
    if (!cursor) {
      cursor = (this.pool[this.open.size] ??= this.text.newCursor()).open(address);
      this.open.set(address, cursor);
    }
    return cursor;
  }
  private readonly open = new Map<number, PostingsCursor>();
  private readonly pool: PostingsCursor[] = [];

  /** Ends a search: its lists' cursors are let go. */
  release(): void {
    this.open.clear();
  }

  /** Postings decoded by the last score() call (whole blocks, as the executor counts them). */
  postings = 0;

  /** The chunks of [from, to) holding a query word: valid until the next call. */
  score(q: QueryLists, from: number, to: number): ChunkScores {
    this.room(to - from);
    const { wordExact, wordAll, sumExact, sumAll, maskExact, maskAll, wordTouched } = this;
    this.postings = 0;
    for (let w = 0; w < q.words; w++) {
      const bit = (1 << w) >>> 0;
      let count = 0;
      for (const form of q.byWord[w]!) count = this.addForm(form, from, to, count);
      for (let i = 0; i < count; i++) {
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
    }
    return this.collect(from, to);
  }

  /** One form's lists in [from, to): its combined frequency per chunk, then its score kept where it is the word's best. */
  private addForm(form: Form, from: number, to: number, wordCount: number): number {
    const { text, combined, formTouched, wordExact, wordAll, wordTouched } = this;
    let n = 0;
    for (const l of form.lists) {
      const { lengths, table } = text.norms(l.field);
      const cursor = this.cursorOf(l.address);
      const { docs, tfs } = cursor;
      this.eachBlockIn(cursor, from, to, (start, end) => {
        for (let i = start; i < end; i++) {
          const d = docs[i]!;
          const at = d - from;
          if (combined[at] === 0) formTouched[n++] = at;
          combined[at]! += (l.unit * tfs[i]!) / table[lengths[d]!]!;
        }
      });
    }
    const best = form.typo ? wordAll : wordExact;
    for (let i = 0; i < n; i++) {
      const at = formTouched[i]!;
      const s = bm25f(form.idf, combined[at]!);
      combined[at] = 0;
      if (wordExact[at] === 0 && wordAll[at] === 0) wordTouched[wordCount++] = at;
      if (s > best[at]!) best[at] = s;
    }
    return wordCount;
  }

  /**
   * A form's term frequency over the chunks of [from, to) taken as one document (D202): in each of its lists, the tfs
   * summed, times the field's boost.
   */
  frequency(form: Form, from: number, to: number): number {
    let sum = 0;
    for (const l of form.lists) {
      const cursor = this.cursorOf(l.address);
      let tf = 0;
      this.eachBlockIn(cursor, from, to, (start, end) => {
        for (let i = start; i < end; i++) tf += cursor.tfs[i]!;
      });
      sum += this.text.boost(l.field) * tf;
    }
    return sum;
  }

  /**
   * A list's postings of [from, to), block by block: `visit(start, end)` for each block holding some, the indices of
   * them in the cursor's decoded arrays; the blocks decoded are counted in `postings`. The blocks from the one holding
   * `from` to the first whose last document reaches the range's end: the next block is not decoded to learn that it
   * starts past the range (which would also evict from the cursor the block the next page scored reads again).
   */
  private eachBlockIn(
    cursor: PostingsCursor,
    from: number,
    to: number,
    visit: (start: number, end: number) => void,
  ): void {
    const { docs } = cursor;
    const decoded = cursor.decodedPostings;
    for (let b = from > 0 ? cursor.blockOf(from) : 0; b < cursor.blocks; b++) {
      const c = cursor.decode(b);
      if (docs[0]! >= to) break;
      let start = 0;
      while (start < c && docs[start]! < from) start++;
      let end = start;
      while (end < c && docs[end]! < to) end++;
      visit(start, end);
      if (docs[c - 1]! >= to - 1) break;
    }
    this.postings += cursor.decodedPostings - decoded;
  }

  /** The chunks of the range holding a word, into `out`, the per-chunk buffers left zero. */
  private collect(from: number, to: number): ChunkScores {
    const { sumExact, sumAll, maskExact, maskAll, out } = this;
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

  private room(n: number): void {
    if (this.size >= n) return;
    const size = Math.max(n, Math.floor(this.size * 1.5), 64);
    this.size = size;
    this.combined = new Float64Array(size);
    this.wordExact = new Float64Array(size);
    this.wordAll = new Float64Array(size);
    this.sumExact = new Float64Array(size);
    this.sumAll = new Float64Array(size);
    this.maskExact = new Uint32Array(size);
    this.maskAll = new Uint32Array(size);
    this.formTouched = new Uint32Array(size);
    this.wordTouched = new Uint32Array(size);
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
