/**
 * The exact scoring the pruned strategies share (pruned.ts, by-orders.ts): candidate pages,
 * each scored from the blocks of every list that hold its chunks, as the exhaustive search
 * scores it.
 */
import { WORK_SHARE } from "../options";
import type { PostingsCursor } from "../index/postings";
import { BM25, type FieldNorms, popcount, type ScoredList } from "../index/shard-types";
import type { Shard } from "../index/shard";
import { FEWER_TIER, INTRO_TIER, pageScore, placeBestThree, TIERS } from "./rules";

/** The class of a page with no title group whose chunks hold every required word. */
export const UNTITLED = 2 * TIERS;
/** Finding a page's block in a list and decoding it costs about as much as reading this many postings in order. */
const SEEK_COST = 160;

/** The chunk ranges of pages. */
export interface PageLayout {
  pageOfChunk: Int32Array;
  firstChunk: Int32Array;
  chunkCounts: ArrayLike<number>;
}

export interface PruneInput {
  /** The pass's lists, in match()'s order. */
  lists: ScoredList[];
  /** The word bits a chunk must hold to rank (tier 0). */
  required: number;
  need: number;
  /** Per page: its D8 group plus one (0: none), and its title boost share; `titled` lists the pages with either. */
  pageGroup: Uint8Array;
  titleBoost: Float64Array;
  titled: number[];
  /** The share of the exhaustive search's postings read after which it gives up (default WORK_SHARE). */
  workShare?: number;
  /**
   * Chunks holding only some of the words rank too, in FEWER_TIER below those holding every
   * required word; every page holding them all is then among `apart` (stages/prune.ts).
   */
  fewer?: boolean;
  /** Pages rankByOrders() scores first, whatever their depth, beside the title matches. */
  apart?: number[];
  /**
   * Lists of `lists` whose pages rankByOrders() ranks whatever their depth, each scored only
   * when it may rank: bounded by those lists' postings plus the most the others can add.
   */
  bounded?: ScoredList[];
}

/** A ranked page: its class and score as the exhaustive ranking computes them, and its best chunk (-1: its intro stands for it). */
export interface RankedPage {
  page: number;
  klass: number;
  score: number;
  best: number;
}

export interface PruneResult {
  pages: RankedPage[];
  postings: number;
  candidates: number;
}

export class PageScorer {
  protected readonly cursor: PostingsCursor;
  protected readonly norms: FieldNorms[];
  /** Per field, the smallest normalisation: what a block's postings are bounded with. */
  protected readonly shortest: number[];
  /** Per chunk: what the lists read so far gave it, and their word bits (the shard's match() accumulators, borrowed); the chunks reached, in a lent buffer's docs. */
  protected readonly partial: Float64Array;
  protected readonly partialMask: Uint32Array;
  protected readonly touched: Uint32Array;
  protected touchedCount = 0;
  /** Per chunk, while pages are scored exactly: the lent buffer's scores and masks (written only within the pages scored, each zeroed first). */
  protected readonly exact: Float64Array;
  protected readonly exactMask: Uint32Array;
  /** Per page: whether it is being scored exactly. */
  protected readonly inBatch: Uint8Array;
  /** Per page: its index among the candidates, -1 when not one. */
  protected readonly slot: Int32Array;
  /** Per candidate: its page, bound (class and score), and (while bounds are made) its best three chunk bounds (bestThrees[3e, 3e + 3)) and chunks seen. */
  protected candidatePage = new Int32Array(1024);
  protected boundClass = new Uint8Array(1024);
  protected boundScore = new Float64Array(1024);
  protected bestThrees = new Float64Array(3 * 1024);
  protected seen = new Uint32Array(1024);
  /** One page's best three chunk scores, while a list is read or a page's bound is made. */
  protected readonly pageBest = new Float64Array(3);
  /** Per candidate, while bounds are made: what its chunks may still gain. */
  protected unread = new Float64Array(1024);
  protected candidateCount = 0;
  protected postings = 0;
  /** Postings the pruned search may read before it gives up for the exhaustive one. */
  protected budget = 0;

  constructor(
    protected readonly shard: Shard,
    protected readonly layout: PageLayout,
    lent: { docs: Uint32Array; scores: Float64Array; masks: Uint32Array },
  ) {
    this.cursor = shard.newCursor();
    this.norms = shard.fields.map((_f, f) => shard.norms(f));
    this.shortest = shard.fields.map((_f, f) => shard.shortestNorm(f));
    // Lent arrays are taken once: they must already hold every chunk (a buffer match() grows would leave them behind).
    if (lent.docs.length < shard.documentCount) throw new Error("pruned search: the lent buffer must hold every chunk");
    const { scores, masks } = shard.accumulators();
    this.partial = scores;
    this.partialMask = masks;
    this.touched = lent.docs;
    this.exact = lent.scores;
    this.exactMask = lent.masks;
    this.slot = new Int32Array(layout.firstChunk.length).fill(-1);
    this.inBatch = new Uint8Array(layout.firstChunk.length);
  }

  /** Starts a search that may give up: no postings read yet, and its share of what the exhaustive search would read. */
  protected budgetFor(input: PruneInput): void {
    this.postings = 0;
    let all = 0;
    for (const l of input.lists) all += l.df;
    this.budget = (input.workShare ?? WORK_SHARE) * all;
  }

  /** The best `need` of the ranked pages: class, then score, then page order. */
  protected best(ranked: RankedPage[], need: number): RankedPage[] {
    return [...ranked].sort((a, b) => a.klass - b.klass || b.score - a.score || a.page - b.page).slice(0, need);
  }
  /**
   * Adds a list's postings for the pages' chunks (`pages` in chunk order, or any order when
   * read whole) into `scores` and `masks`: the list read whole, or at each page's block,
   * whichever costs less. Chunks first reached in the partial accumulators are noted as touched.
   */
  protected readInto(
    l: ScoredList,
    pages: number[],
    scores: Float64Array,
    masks: Uint32Array,
    skipped?: Float64Array,
  ): void {
    const { firstChunk, chunkCounts, pageOfChunk } = this.layout;
    let chunks = 0;
    for (const p of pages) chunks += chunkCounts[p]!;
    const { touched, cursor, inBatch } = this;
    const tracked = scores === this.partial;
    const { lengths, table } = this.norms[l.field]!;
    const bit = (1 << l.word) >>> 0;
    const w = l.weight;
    const k1 = BM25.k + 1;
    const docs = cursor.docs;
    const tfs = cursor.tfs;
    let count = this.touchedCount;
    cursor.open(l.address);
    if (l.df <= SEEK_COST * pages.length || l.df <= chunks) {
      for (const p of pages) inBatch[p] = 1;
      for (let b = 0; b < cursor.blocks; b++) {
        if (skipped && !skipped[b]) continue;
        const n = cursor.decode(b);
        for (let i = 0; i < n; i++) {
          const d = docs[i]!;
          if (!inBatch[pageOfChunk[d]!]) continue;
          const tf = tfs[i]!;
          if (tracked && masks[d] === 0) touched[count++] = d;
          scores[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
          masks[d] = (masks[d]! | bit) >>> 0;
        }
        this.postings += n;
      }
      for (const p of pages) inBatch[p] = 0;
    } else {
      const sorted = [...pages].sort((a, b) => firstChunk[a]! - firstChunk[b]!);
      for (const p of sorted) {
        const from = firstChunk[p]!;
        const to = from + chunkCounts[p]!;
        if (to === from) continue;
        for (let b = cursor.blockOf(from); b < cursor.blocks; b++) {
          if (skipped && !skipped[b]) {
            if (cursor.lastDoc(b) >= to - 1) break;
            continue;
          }
          const n = cursor.decode(b);
          this.postings += n;
          for (let i = 0; i < n; i++) {
            const d = docs[i]!;
            if (d < from || d >= to) continue;
            const tf = tfs[i]!;
            if (tracked && masks[d] === 0) touched[count++] = d;
            scores[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
            masks[d] = (masks[d]! | bit) >>> 0;
          }
          if (docs[n - 1]! >= to - 1) break;
        }
      }
    }
    this.touchedCount = count;
  }

  /** Adds a chunk's score (or bound) to its page's best three, the page becoming a candidate. */
  protected offer(p: number, s: number): number {
    let e = this.slot[p]!;
    if (e < 0) {
      e = this.candidateCount++;
      if (e >= this.candidatePage.length) this.grow();
      this.slot[p] = e;
      this.candidatePage[e] = p;
      this.bestThrees.fill(-1, 3 * e, 3 * e + 3);
      this.seen[e] = 0;
      this.boundClass[e] = 0;
      this.boundScore[e] = 0;
    }
    this.place(e, s);
    return e;
  }
  protected place(e: number, s: number): void {
    placeBestThree(this.bestThrees, 3 * e, s);
  }

  /**
   * Scores the candidates' pages exactly: every list, in match()'s order, over the blocks that
   * hold their chunks; then each page as the exhaustive ranking does.
   */
  protected scoreExactly(input: PruneInput, entries: number[], out: RankedPage[]): void {
    this.scorePages(
      input,
      entries.map((e) => this.candidatePage[e]!),
      out,
    );
  }

  /** scoreExactly() of pages, candidates or not. */
  protected scorePages(input: PruneInput, pages: number[], out: RankedPage[]): void {
    if (!pages.length) return;
    const { firstChunk, chunkCounts } = this.layout;
    for (const p of pages) {
      this.exact.fill(0, firstChunk[p]!, firstChunk[p]! + chunkCounts[p]!);
      this.exactMask.fill(0, firstChunk[p]!, firstChunk[p]! + chunkCounts[p]!);
    }
    for (const l of input.lists) this.readInto(l, pages, this.exact, this.exactMask);
    for (const p of pages) {
      const r = this.rankedPage(input, p);
      if (r) out.push(r);
    }
  }

  /**
   * A page as the exhaustive ranking ranks it, from its chunks' exact scores (stages/pages.ts):
   * its best chunk, lowest tier first, then its next two scores of that tier (D61). Undefined
   * when it does not rank.
   */
  protected rankedPage(input: PruneInput, p: number): RankedPage | undefined {
    const { exact, exactMask } = this;
    const { required, pageGroup, titleBoost, fewer } = input;
    const from = this.layout.firstChunk[p]!;
    const count = this.layout.chunkCounts[p]!;
    const chunks: number[] = [];
    const scores: number[] = [];
    const tiers: number[] = [];
    // A title match ranks by its best chunk whatever its tier, as in the exhaustive ranking (D61).
    const anyTier = fewer || pageGroup[p]! > 0;
    for (let d = from; d < from + count; d++) {
      const m = exactMask[d]!;
      const holding = (m & required) >>> 0 === required;
      if (m && (holding || anyTier)) {
        chunks.push(d);
        scores.push(exact[d]! * popcount(m));
        tiers.push(holding ? 0 : FEWER_TIER);
      }
    }
    const group = pageGroup[p] ? pageGroup[p]! - 1 : 2;
    if (!chunks.length)
      return group < 2 && count ? { page: p, klass: group * TIERS + INTRO_TIER, score: 0, best: -1 } : undefined;
    const byRank = chunks
      .map((_c, i) => i)
      .sort((a, b) => tiers[a]! - tiers[b]! || scores[b]! - scores[a]! || chunks[a]! - chunks[b]!);
    const tier = tiers[byRank[0]!]!;
    const evidence = this.pageBest.fill(-1);
    for (const i of byRank.slice(1)) if (tiers[i] === tier) placeBestThree(evidence, 0, scores[i]!);
    const score = pageScore(scores[byRank[0]!]!, evidence[0]!, evidence[1]!, titleBoost[p]!);
    return { page: p, klass: group * TIERS + tier, score, best: chunks[byRank[0]!]! };
  }

  protected grow(): void {
    const n = this.candidatePage.length * 2;
    const grow = <T extends Int32Array | Uint8Array | Float64Array | Uint32Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.candidatePage = grow(this.candidatePage, (k) => new Int32Array(k));
    this.boundClass = grow(this.boundClass, (k) => new Uint8Array(k));
    this.boundScore = grow(this.boundScore, (k) => new Float64Array(k));
    this.bestThrees = grow(this.bestThrees, (k) => new Float64Array(3 * k));
    this.seen = grow(this.seen, (k) => new Uint32Array(k));
  }

  protected clearCandidates(): void {
    for (let e = 0; e < this.candidateCount; e++) this.slot[this.candidatePage[e]!] = -1;
    this.candidateCount = 0;
  }

  protected reset(): void {
    this.clearCandidates();
    for (let i = 0; i < this.touchedCount; i++) {
      const d = this.touched[i]!;
      this.partial[d] = 0;
      this.partialMask[d] = 0;
    }
    this.touchedCount = 0;
  }
}

/** Whether a bound (class, score) may reach a ranked page: rank above it, or tie with it. */
export function reaches(klass: number, score: number, page: RankedPage): boolean {
  return klass < page.klass || (klass === page.klass && score >= page.score);
}
