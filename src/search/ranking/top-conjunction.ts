/**
 * The conjunction's best pages, exact, without scoring every chunk that holds the words: the
 * conjunction plan's executor (ranking/plan.ts). Lucene's BlockMaxConjunctionBulkScorer reads
 * a conjunction window by window, the windows set by its leading clause's blocks, and skips a
 * window whose clauses' block maxima (impacts) sum below the score it must beat; Tantivy's
 * block WAND does the same. Here a window's bound is its lists' block bounds (block-bounds.ts),
 * each times its weight, summed, times the words there are (MiniSearch multiplies a chunk's
 * score by the words it holds); what it must beat is a page's, the `need`-th best page found
 * so far, over PAGE_FACTOR (the most a page's evidence raises its best chunk, rules.ts).
 *
 * Exact for the best `need` pages, as the exhaustive ranking ranks them (D61):
 *  - a page none of whose chunks could reach the bar is out: its score is at most PAGE_FACTOR
 *    times its best chunk's, below the `need` pages already found;
 *  - a page kept has every chunk holding the words returned with its exact score: a page
 *    whose chunks straddle a skipped window is read again, whole, after the windows;
 *  - title matches and boosted titles (`apart`), ranked by other rules, are read whole apart.
 * Scores are the conjunction's own (conjunction.ts run()), list after list in match()'s order.
 */
import type { PostingsCursor } from "../index/postings";
import { ensureRoom, type Shard } from "../index/shard";
import type { Matches, ScoredList, WordSpec } from "../index/shard-types";
import { Conjunction } from "./conjunction";
import type { PageLayout } from "./page-scorer";
import { PAGE_FACTOR, pageScore, placeBestThree } from "./rules";

/** A window is this many of its driving list's blocks: fewer windows cost less to set up, smaller ones bound tighter. */
const WINDOW_BLOCKS = 4;
/** Rounding's margin on a bound: a bound is never below the exact score it bounds. */
const MARGIN = 1 + 1e-9;

export interface TopConjunctionInput {
  words: WordSpec[];
  required: number;
  need: number;
  /** Undefined when the rarest required word's lists hold more postings than this (matchAll's budget). */
  budget: number;
  /** Pages ranked by other rules (title groups, title boosts): their chunks are read apart, whole. */
  apart: number[];
  isApart: (page: number) => boolean;
}

/** What run() found: its chunks in `into`; how many windows it skipped of how many, and how many pages it read again whole (not counting `apart`). */
export interface TopConjunction {
  matches: Matches;
  windows: number;
  skipped: number;
  reread: number;
}

/** What prune() bounds a chunk with: the lists other than the lead's, their block bounds and where each list's block pointer stands. */
interface Bounded {
  others: number[];
  lists: ScoredList[];
  bounds: Float64Array[];
  docBlock: Int32Array;
  cursorOf: (l: ScoredList) => PostingsCursor;
  wordsHeld: number;
  isApart: (page: number) => boolean;
}

export class TopConjunctionRanker {
  private cursors: PostingsCursor[] = [];
  /** The `need` best lower bounds of pages found so far: a min-heap. */
  private heap = new Float64Array(64);
  private heapSize = 0;
  /** Candidate pages (their chunks at into[start, end)), and the seen best chunk of each. */
  private candidates: { page: number; start: number; end: number; best: number }[] = [];

  constructor(
    private readonly shard: Shard,
    private readonly layout: PageLayout,
    /** Windows of this many documents rather than of the driving list's blocks (tests: small shards have lists of one block). */
    private readonly windowDocs?: number,
  ) {}

  /**
   * The chunks holding every required word of the best `need` pages (with every other page
   * that might rank among them), into `into`; `window` is a buffer for one window's matches.
   * Undefined, having read nothing, when the conjunction does not pay (Conjunction.of).
   */
  run(input: TopConjunctionInput, into: Matches, window: Matches): TopConjunction | undefined {
    const { shard, layout } = this;
    const conjunction = Conjunction.of(shard, input.words, input.required, true, input.budget);
    if (!conjunction) return undefined;
    const { lists } = conjunction;
    const room = Math.min(shard.documentCount, conjunction.rarest);
    ensureRoom(into, room);
    ensureRoom(window, room);
    const cursorOf = this.openCursors(lists);
    const bounds = lists.map((l) => shard.blockBounds(l));
    const wordsHeld = new Set(lists.map((l) => l.word)).size;
    const nextBlock = new Int32Array(lists.length);
    const docBlock = new Int32Array(lists.length);
    this.heapSize = 0;
    this.candidates.length = 0;
    const need = Math.max(1, input.need);
    if (this.heap.length < need) this.heap = new Float64Array(need);

    into.count = into.postings = 0;
    into.derived = conjunction.derived;
    const lead = conjunction.leadLists();
    // A required word no chunk holds: no chunk holds them all.
    if (!lead.length) return { matches: into, windows: 0, skipped: 0, reread: 0 };
    const driverCursor = cursorOf(lead.reduce((a, b) => (b.df > a.df ? b : a)));
    const bounded: Bounded = {
      others: lists.flatMap((l, i) => (lead.includes(l) ? [] : [i])),
      lists,
      bounds,
      docBlock,
      cursorOf,
      wordsHeld,
      isApart: input.isApart,
    };
    const N = shard.documentCount;
    let postings = 0;
    let windows = 0;
    let skipped = 0;
    /** Evaluated ranges of chunks, merged: [from, to) pairs. */
    const evaluated: number[] = [];
    // The page being read: its chunks' best three, its best, and where its chunks start in `into`.
    const best3 = new Float64Array(3).fill(-1);
    let page = -1;
    let pageStart = 0;

    const finishPage = () => {
      if (page < 0) return;
      if (input.isApart(page)) into.count = pageStart;
      else {
        const lower = pageScore(best3[0]!, best3[1]!, best3[2]!, 0);
        this.offer(lower, need);
        if (best3[0]! * PAGE_FACTOR * MARGIN >= this.bar(need))
          this.candidates.push({ page, start: pageStart, end: into.count, best: best3[0]! });
        else into.count = pageStart;
      }
      page = -1;
    };

    for (let b = 0, from = 0; from < N; b += WINDOW_BLOCKS) {
      const last = Math.min(b + WINDOW_BLOCKS, driverCursor.blocks) - 1;
      const to = this.windowDocs
        ? Math.min(N, from + this.windowDocs)
        : last >= driverCursor.blocks - 1
          ? N
          : driverCursor.lastDoc(last) + 1;
      windows++;
      let bound = 0;
      for (let i = 0; i < lists.length; i++)
        bound += lists[i]!.weight * this.windowMax(i, cursorOf(lists[i]!), bounds[i]!, nextBlock, from, to);
      if (bound * wordsHeld * PAGE_FACTOR * MARGIN < this.bar(need)) {
        skipped++;
        from = to;
        continue;
      }
      docBlock.set(nextBlock);
      const bar = this.bar(need);
      const m = conjunction.run(
        cursorOf,
        window,
        from,
        to,
        bar > -Infinity
          ? {
              leadScores: this.leadScores(),
              prune: (docs, n, lead) => this.prune({ docs, n, lead, from, to, bar }, bounded),
            }
          : {},
      );
      postings += m.postings;
      if (evaluated.length && evaluated[evaluated.length - 1] === from) evaluated[evaluated.length - 1] = to;
      else evaluated.push(from, to);
      for (let i = 0; i < m.count; i++) {
        const d = m.docs[i]!;
        const p = layout.pageOfChunk[d]!;
        if (p !== page) {
          finishPage();
          page = p;
          pageStart = into.count;
          best3.fill(-1);
        }
        placeBestThree(best3, 0, m.scores[i]!);
        into.docs[into.count] = d;
        into.masks[into.count] = m.masks[i]!;
        into.scores[into.count++] = m.scores[i]!;
      }
      from = to;
    }
    finishPage();

    // The candidates that may still rank; those straddling a skipped window, and the pages apart, read whole.
    const bar = this.bar(need);
    const whole = new Set(input.apart);
    let reread = 0;
    let count = 0;
    for (const c of this.candidates) {
      if (c.best * PAGE_FACTOR * MARGIN < bar) continue;
      if (!covered(evaluated, layout.firstChunk[c.page]!, layout.firstChunk[c.page]! + layout.chunkCounts[c.page]!)) {
        if (!whole.has(c.page)) reread++;
        whole.add(c.page);
        continue;
      }
      into.docs.copyWithin(count, c.start, c.end);
      into.masks.copyWithin(count, c.start, c.end);
      into.scores.copyWithin(count, c.start, c.end);
      count += c.end - c.start;
    }
    for (const p of whole) {
      const from = layout.firstChunk[p]!;
      const m = conjunction.run(cursorOf, window, from, from + layout.chunkCounts[p]!);
      postings += m.postings;
      for (let i = 0; i < m.count; i++) {
        into.docs[count] = m.docs[i]!;
        into.masks[count] = m.masks[i]!;
        into.scores[count++] = m.scores[i]!;
      }
    }
    into.count = count;
    into.postings = postings;
    return { matches: into, windows, skipped, reread };
  }

  /** Per chunk, what the lead lists add (Conjunction.run fills it for prune(), and zeroes it after). */
  private lead: Float64Array | undefined;
  private keep = new Uint8Array(1024);
  private readonly pageBound = new Float64Array(3);

  private leadScores(): Float64Array {
    this.lead ??= new Float64Array(this.shard.documentCount);
    return this.lead;
  }

  /**
   * Which of a window's chunks holding the rarest word to read further (1): those of a page
   * that may rank. A page wholly inside the window is bounded as pageScore() adds its chunks,
   * each chunk by what the lead lists add to it, exactly, plus every other list's block bound,
   * times the words; a page running past the window is kept; a page apart is left (it is read whole).
   */
  private prune(
    window: { docs: Uint32Array; n: number; lead: Float64Array; from: number; to: number; bar: number },
    b: Bounded,
  ): Uint8Array {
    const { docs, n, lead, from, to, bar } = window;
    const { pageOfChunk, firstChunk, chunkCounts } = this.layout;
    if (this.keep.length < n) this.keep = new Uint8Array(2 * n);
    const keep = this.keep;
    const three = this.pageBound;
    for (let i = 0; i < n; ) {
      const p = pageOfChunk[docs[i]!]!;
      let j = i;
      three.fill(-1);
      for (; j < n && pageOfChunk[docs[j]!] === p; j++) {
        const d = docs[j]!;
        let sum = lead[d]!;
        for (const k of b.others) {
          const cursor = b.cursorOf(b.lists[k]!);
          let block = b.docBlock[k]!;
          while (block < cursor.blocks && cursor.lastDoc(block) < d) block++;
          b.docBlock[k] = block;
          if (block < cursor.blocks) sum += b.lists[k]!.weight * b.bounds[k]![block]!;
        }
        placeBestThree(three, 0, sum * b.wordsHeld);
      }
      const inside = firstChunk[p]! >= from && firstChunk[p]! + chunkCounts[p]! <= to;
      const ranks = !b.isApart(p) && (!inside || pageScore(three[0]!, three[1]!, three[2]!, 0) * MARGIN >= bar);
      keep.fill(ranks ? 1 : 0, i, j);
      i = j;
    }
    return keep;
  }

  /** A cursor for each list, each opened once: a block decoded for one window is there for the next. */
  private openCursors(lists: ScoredList[]): (l: ScoredList) => PostingsCursor {
    while (this.cursors.length < lists.length) this.cursors.push(this.shard.newCursor());
    const byList = new Map<ScoredList, PostingsCursor>();
    for (const [i, l] of lists.entries()) byList.set(l, this.cursors[i]!.open(l.address));
    return (l) => byList.get(l)!;
  }

  /** The largest block bound of list i over the blocks that may hold documents of [from, to); nextBlock[i] moves on. */
  private windowMax(
    i: number,
    cursor: PostingsCursor,
    bounds: Float64Array,
    nextBlock: Int32Array,
    from: number,
    to: number,
  ): number {
    let b = nextBlock[i]!;
    while (b < cursor.blocks && cursor.lastDoc(b) < from) b++;
    nextBlock[i] = b;
    let max = 0;
    for (; b < cursor.blocks; b++) {
      if (bounds[b]! > max) max = bounds[b]!;
      if (cursor.lastDoc(b) >= to - 1) break;
    }
    return max;
  }

  /** What a page must reach to rank among the `need` best found so far (-Infinity until `need` are). */
  private bar(need: number): number {
    return this.heapSize < need ? -Infinity : this.heap[0]!;
  }

  /** Keeps a page's lower bound among the `need` best. */
  private offer(score: number, need: number): void {
    const heap = this.heap;
    if (this.heapSize < need) {
      let i = this.heapSize++;
      heap[i] = score;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= heap[i]!) break;
        [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
        i = parent;
      }
      return;
    }
    if (score <= heap[0]!) return;
    heap[0] = score;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < need && heap[l]! < heap[least]!) least = l;
      if (r < need && heap[r]! < heap[least]!) least = r;
      if (least === i) break;
      [heap[least], heap[i]] = [heap[i]!, heap[least]!];
      i = least;
    }
  }
}

/** Whether [from, to) lies within one of the merged ranges. */
function covered(ranges: number[], from: number, to: number): boolean {
  for (let i = 0; i < ranges.length; i += 2) if (ranges[i]! <= from && to <= ranges[i + 1]!) return true;
  return false;
}
