/**
 * The conjunction's pages that cannot rank, left before their other lists are read: MaxScore's
 * split (Lucene's MaxScoreBulkScorer) at the level of pages. The rare required words' lists,
 * read to narrow the chunks (conjunction.ts), give each chunk's score from them exactly; the
 * lists not read yet (common required words, function words) are bounded by their blocks'
 * bounds (index/block-bounds.ts). Then:
 *   1. a chunk's bound: its exact part plus the unread lists' block bounds, times the words;
 *      a page's bound: pageScore() of its best three chunk bounds (rules.ts);
 *   2. a bar: the best chunks by bound are scored as far as membership needs (each common
 *      required word's tf read at that chunk), each a lower bound of its score (the words it
 *      must hold; function words add, never take away); their pages' pageScore() of those are
 *      lower bounds of the pages' scores, and the `need`-th best is the bar;
 *   3. every page whose bound is below the bar is left; title matches and boosted titles,
 *      ranked by other rules (D8), are kept whatever their bound.
 * What is kept is then scored as matchAll() scores every chunk: the kept pages rank exactly.
 */
import type { PostingsCursor } from "../index/postings";
import type { Shard } from "../index/shard";
import { BM25, popcount, type ScoredList } from "../index/shard-types";
import type { ConjunctionPruning } from "./conjunction";
import type { PageLayout } from "./page-scorer";
import { pageScore, placeBestThree } from "./rules";

/** Rounding's margin: a bound is never below the score it bounds, a lower bound never above. */
const MARGIN = 1e-9;

export interface PruningInput {
  /** The pages ranked, at least. */
  need: number;
  /** The required words' bits, and how many words the query has (what a chunk's score is multiplied by, at most). */
  required: number;
  words: number;
  /** Pages ranked by other rules (title groups, title boosts): always kept. */
  apart: (page: number) => boolean;
}

export class ConjunctionPruner {
  private partial: Float64Array | undefined;
  private keep = new Uint8Array(1024);
  private bound = new Float64Array(1024);
  private readonly cursor: PostingsCursor;
  private readonly three = new Float64Array(3);

  constructor(
    private readonly shard: Shard,
    private readonly layout: PageLayout,
  ) {
    this.cursor = shard.newCursor();
  }

  /** The pruning matchAll() asks for this query. */
  pruning(input: PruningInput): ConjunctionPruning {
    this.partial ??= new Float64Array(this.shard.documentCount);
    const pruning: ConjunctionPruning = {
      partial: this.partial,
      postings: 0,
      pages: (docs, n, unread) => this.pages(input, pruning, docs, n, unread),
    };
    return pruning;
  }

  private pages(
    input: PruningInput,
    pruning: ConjunctionPruning,
    docs: Uint32Array,
    n: number,
    unread: ScoredList[],
  ): Uint8Array | undefined {
    const partial = this.partial!;
    const { pageOfChunk } = this.layout;
    if (this.bound.length < n) {
      this.bound = new Float64Array(2 * n);
      this.keep = new Uint8Array(2 * n);
    }
    const { bound, keep, cursor, three } = this;
    // 1. Each chunk's bound.
    const blocks = unread.map((l) => this.shard.blockBounds(l));
    for (let i = 0; i < n; i++) bound[i] = partial[docs[i]!]!;
    for (const [k, l] of unread.entries()) {
      cursor.open(l.address);
      const b = blocks[k]!;
      for (let i = 0, at = 0; i < n; i++) {
        while (at < cursor.blocks && cursor.lastDoc(at) < docs[i]!) at++;
        if (at < cursor.blocks) bound[i]! += l.weight * b[at]!;
      }
    }
    for (let i = 0; i < n; i++) bound[i] = bound[i]! * input.words * (1 + MARGIN);
    // 2. The bar, from the best chunks by bound.
    const bar = this.bar(input, pruning, docs, n, unread);
    if (bar === -Infinity) return undefined;
    // 3. The pages that may reach it.
    for (let i = 0; i < n; ) {
      const p = pageOfChunk[docs[i]!]!;
      let j = i;
      three.fill(-1);
      for (; j < n && pageOfChunk[docs[j]!] === p; j++) placeBestThree(three, 0, bound[j]!);
      const ranks = input.apart(p) || pageScore(three[0]!, three[1]!, three[2]!, 0) >= bar;
      keep.fill(ranks ? 1 : 0, i, j);
      i = j;
    }
    return keep;
  }

  /** The `need`-th best lower bound of a page's score among the pages of the best chunks by bound; -Infinity when too few are found. */
  private bar(
    input: PruningInput,
    pruning: ConjunctionPruning,
    docs: Uint32Array,
    n: number,
    unread: ScoredList[],
  ): number {
    const { need, required } = input;
    const seeds = bestIndexes(this.bound, n, 3 * need + 16).sort((a, b) => a - b);
    const partial = this.partial!;
    const { pageOfChunk } = this.layout;
    const requiredUnread = new Set(unread.filter((l) => required & (1 << l.word)).map((l) => l.word));
    const lower = new Map<number, Float64Array>();
    const k1 = BM25.k + 1;
    for (const i of seeds) {
      const d = docs[i]!;
      let s = partial[d]!;
      // The words read so far are all held; each unread list's tf is read here.
      let mask = required;
      for (const l of unread) mask &= ~(1 << l.word);
      for (const l of unread) {
        const cursor = this.cursor.open(l.address);
        const b = cursor.blockOf(d);
        if (b >= cursor.blocks) continue;
        pruning.postings += cursor.decode(b);
        const tf = cursor.tf(d);
        if (!tf) continue;
        const { lengths, table } = this.shard.norms(l.field);
        s += l.weight * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
        mask |= 1 << l.word;
      }
      // Not in the conjunction: a common required word it does not hold.
      let holdsRequired = true;
      for (const w of requiredUnread) if (!(mask & (1 << w))) holdsRequired = false;
      if (!holdsRequired) continue;
      const p = pageOfChunk[d]!;
      let best = lower.get(p);
      if (!best) lower.set(p, (best = new Float64Array(3).fill(-1)));
      placeBestThree(best, 0, s * popcount(mask >>> 0) * (1 - MARGIN));
    }
    if (lower.size < need) return -Infinity;
    const scores = [...lower.values()].map((t) => pageScore(t[0]!, t[1]!, t[2]!, 0)).sort((a, b) => b - a);
    return scores[need - 1]! * (1 - MARGIN);
  }
}

/** The indexes of the `count` highest values of values[0, n) (a min-heap of them), in no order. */
function bestIndexes(values: Float64Array, n: number, count: number): number[] {
  const heap: number[] = [];
  const less = (a: number, b: number) => values[a]! < values[b]!;
  for (let i = 0; i < n; i++) {
    if (heap.length < count) {
      heap.push(i);
      for (let c = heap.length - 1; c > 0; ) {
        const parent = (c - 1) >> 1;
        if (!less(heap[c]!, heap[parent]!)) break;
        [heap[c], heap[parent]] = [heap[parent]!, heap[c]!];
        c = parent;
      }
    } else if (less(heap[0]!, i)) {
      heap[0] = i;
      for (let c = 0; ; ) {
        const l = 2 * c + 1;
        const r = l + 1;
        let top = c;
        if (l < heap.length && less(heap[l]!, heap[top]!)) top = l;
        if (r < heap.length && less(heap[r]!, heap[top]!)) top = r;
        if (top === c) break;
        [heap[c], heap[top]] = [heap[top]!, heap[c]!];
        c = top;
      }
    }
  }
  return heap;
}
