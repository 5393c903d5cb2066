/**
 * A search shard: MiniSearch's index model, laid out flat in typed arrays.
 *
 * What MiniSearch keeps as term → field → document → frequency Maps is here, for each
 * (term, field), a postings list (postings.ts: document numbers in increasing order with
 * their term frequencies and, for the fields that keep them, word positions, in compressed
 * blocks), plus each document's field lengths. The vocabulary (vocabulary.ts) is sorted
 * keys in typed arrays, for exact, prefix and typo lookups. Queries are scored as
 * MiniSearch scores them (BM25+ with its parameters, its prefix and fuzzy weights, times
 * the number of query words matched), summed into accumulators indexed by document rather
 * than into a Map of result objects per document. At a million chunks that is the
 * difference between about 1 GB and more than 21 GB of heap, and between milliseconds and
 * seconds for a common word.
 */
import type { PostingsCursor } from "./postings";
import { ShardPositions } from "./shard-positions";
import { BM25, type Derived, type Matches, type MatchOptions, popcount, type WordSpec } from "./shard-types";

export class Shard extends ShardPositions {
  /** The postings a pass over these terms reads, in every field (or in `fields`): from the list table, nothing decoded. */
  postingsOf(derived: Derived[], fields?: number[]): number {
    let postings = 0;
    for (const { term } of derived) {
      if (!fields) postings += this.lists.total(term);
      else {
        for (const f of fields) {
          const list = this.lists.index(term, f);
          if (list >= 0) postings += this.lists.count(list);
        }
      }
    }
    return postings;
  }

  /** Milliseconds spent so far making what every later search reuses (the runs' frequencies): not a search's work. */
  get onceMakingMs(): number {
    return this.runMakingMs;
  }

  /**
   * Scores every document holding any of the query words, in the given fields (all by
   * default) and documents [from, to) (all by default). The result goes `into` a buffer
   * from matchBuffer() when one is given (grown first if its lists could overflow it), else
   * into new arrays.
   */
  match(words: WordSpec[], options: MatchOptions = {}): Matches {
    return this.matchTerms(this.derive(words), options);
  }

  /** match() of terms already derived (weighed as the caller chooses). */
  matchTerms(derived: Derived[], options: MatchOptions = {}): Matches {
    const fields = options.fields ?? this.fields.map((_f, i) => i);
    const from = options.from ?? 0;
    const to = options.to ?? this.documentCount;
    // The documents reached go straight into the buffer, grown first if the lists could overflow it.
    const room = Math.min(to - from, this.postingsOf(derived, options.fields));
    const out = options.into ?? matchBuffer(room);
    ensureRoom(out, room);
    this.addLists(this.openLists(derived, fields, from), from, to, out);
    out.derived = derived;
    return out;
  }

  /** The (term, field) lists of a pass, in match()'s order, each on a cursor of its own at the block holding `from`. */
  private openLists(derived: Derived[], fields: number[], from: number): OpenList[] {
    const { lists } = this;
    const N = this.documentCount;
    const open: OpenList[] = [];
    for (const { word, term, weight } of derived) {
      for (const f of fields) {
        const list = lists.index(term, f);
        if (list < 0) continue;
        const df = lists.count(list);
        const cursor = (this.listCursors[open.length] ??= this.reader.cursor());
        cursor.open(lists.address(list));
        const { lengths, table } = this.norms(f);
        const w = weight * this.boosts[f]! * Math.log(1 + (N - df + 0.5) / (df + 0.5));
        open.push({
          cursor,
          bit: (1 << word) >>> 0,
          weight: w,
          lengths,
          table,
          block: from > 0 ? cursor.blockOf(from) : 0,
          at: 0,
          size: 0,
        });
      }
    }
    return open;
  }

  /**
   * Adds the lists' postings in documents [from, to) into out, window by window of documents
   * when there are several lists (Lucene's BooleanScorer): every list adds its postings in a
   * window before the next window starts. A document's sum is made in the same order as list
   * after list, so its score is the same number; but the accumulators written stay in a window
   * (a few hundred KB, in the core's cache) instead of scattered over all the shard's documents
   * (60 MB at 5M chunks: a miss a posting). Each window's sums are moved into out at its end.
   */
  private addLists(open: OpenList[], from: number, to: number, out: Matches): void {
    const { scores, masks } = this;
    const touched = out.docs;
    const k1 = BM25.k + 1;
    const window = open.length > 1 ? this.matchWindow : Infinity;
    let count = 0;
    let collected = 0;
    let postings = 0;
    for (let lo = from; lo < to; lo += window) {
      const hi = Math.min(to, lo + window);
      for (const l of open) {
        const { cursor, bit, weight: w, lengths, table } = l;
        const docs = cursor.docs;
        const freqs = cursor.tfs;
        let p = l.at;
        let n = l.size;
        for (;;) {
          if (p === n) {
            if (l.block === cursor.blocks) break;
            n = cursor.decode(l.block++);
            p = 0;
            while (p < n && docs[p]! < from) p++;
          }
          // Most blocks end inside the window; the one crossing its end stops at it.
          let end = n;
          if (docs[n - 1]! >= hi) for (end = p; end < n && docs[end]! < hi; ) end++;
          postings += end - p;
          for (; p < end; p++) {
            const d = docs[p]!;
            const tf = freqs[p]!;
            if (masks[d] === 0) touched[count++] = d;
            scores[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
            masks[d] = (masks[d]! | bit) >>> 0;
          }
          if (p < n) break;
        }
        l.at = p;
        l.size = n;
      }
      this.collect(out, collected, count);
      collected = count;
    }
    out.count = count;
    out.postings = postings;
  }

  /** Moves the sums of out.docs[from, to) from the accumulators (left zero) into out. */
  private collect(out: Matches, from: number, to: number): void {
    const { scores, masks } = this;
    const { docs, masks: outMasks, scores: outScores } = out;
    for (let i = from; i < to; i++) {
      const d = docs[i]!;
      const m = masks[d]!;
      outMasks[i] = m;
      // MiniSearch multiplies a document's score by the number of query words it holds.
      outScores[i] = scores[d]! * popcount(m);
      scores[d] = 0;
      masks[d] = 0;
    }
  }
}

/** One list match() reads: its own cursor, its weight, and how far it has been read. */
interface OpenList {
  cursor: PostingsCursor;
  bit: number;
  weight: number;
  lengths: Uint16Array;
  table: Float32Array;
  /** The next block to decode, and the position in the decoded one and its size. */
  block: number;
  at: number;
  size: number;
}

/** Room for the matches of up to n documents. */
export function matchBuffer(n: number): Matches {
  return {
    count: 0,
    postings: 0,
    docs: new Uint32Array(n),
    scores: new Float64Array(n),
    masks: new Uint32Array(n),
    derived: [],
  };
}

/**
 * Grows a buffer to hold n matches (its contents are not kept). A buffer sized for the
 * rare passes (typos) stays small, instead of 16 bytes a document held from the start.
 */
function ensureRoom(m: Matches, n: number): void {
  if (m.docs.length >= n) return;
  const size = Math.max(n, Math.floor(m.docs.length * 1.5));
  m.docs = new Uint32Array(size);
  m.scores = new Float64Array(size);
  m.masks = new Uint32Array(size);
}
