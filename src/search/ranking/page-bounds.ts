/**
 * What the pages not yet scored exactly may still score: the lists read into per-chunk
 * accumulators (block-max skipping under a floor), and each page's bound from them.
 */
import { BM25, popcount, type ScoredList } from "../index/shard-types";
import { PageScorer, type PruneInput, type RankedPage, reaches } from "./page-scorer";
import { bestThreeScore, INTRO_TIER, PAGE_FACTOR, placeBestThree, TIERS } from "./rules";
import { TopScores } from "./topk";

/** A list read in part: per block, the most a posting of a skipped block adds (0: the block was read), and the largest of those. */
export interface Partial {
  list: ScoredList;
  skipped: Float64Array;
  max: number;
}

export class PageBounds extends PageScorer {
  /** Adds a list's postings to the accumulators of the pages' chunks (of the skipped blocks only, if given). */
  protected readFor(l: ScoredList, pages: number[], skipped?: Float64Array): void {
    this.readInto(l, pages, this.partial, this.partialMask, skipped);
  }

  /** Whether a page may still reach the ranked page `last`, with the lists left unread adding at most `unread` to each chunk. */
  protected mayReach(input: PruneInput, p: number, unread: number, unreadWords: number, last: RankedPage): boolean {
    const { required, pageGroup, titleBoost } = input;
    const { firstChunk, chunkCounts } = this.layout;
    const { partial, partialMask } = this;
    const best = this.pageBest.fill(-1);
    for (let d = firstChunk[p]!, to = d + chunkCounts[p]!; d < to; d++) {
      const m = (partialMask[d]! | unreadWords) >>> 0;
      if ((m & required) >>> 0 === required) placeBestThree(best, 0, (partial[d]! + unread) * popcount(m));
    }
    const group = pageGroup[p] ? pageGroup[p]! - 1 : 2;
    if (best[0]! < 0) return group < 2 && chunkCounts[p] ? reaches(group * TIERS + INTRO_TIER, 0, last) : false;
    return reaches(group * TIERS, bestThreeScore(best, 0, titleBoost[p]!), last);
  }

  /**
   * Adds a list's postings to the chunks' accumulators. With `skip`, the blocks whose postings
   * cannot lift a page none of whose chunks was read to the floor (`after`: what the lists
   * after it add; `words`: query words a chunk may hold) are skipped (block-max), and returned.
   * The floor rises as the list is read: the pages its postings reach, in order, are scored
   * from their chunks read so far (a lower bound), and the `room`-th best is a floor too.
   */
  protected accumulate(
    l: ScoredList,
    skip?: { floor: number; after: number; words: number; input: PruneInput; room: number },
  ): Partial | undefined {
    const { partial, partialMask, touched, cursor } = this;
    const { lengths, table } = this.norms[l.field]!;
    const bit = (1 << l.word) >>> 0;
    const w = l.weight;
    const k1 = BM25.k + 1;
    const docs = cursor.docs;
    const tfs = cursor.tfs;
    const shortest = this.shortest[l.field]!;
    const { pageOfChunk } = this.layout;
    let count = this.touchedCount;
    let skipped: Float64Array | undefined;
    let skippedMax = 0;
    let floor = skip ? skip.floor : Infinity;
    const best = skip && skip.room > 0 && floor < Infinity ? new TopScores(skip.room) : undefined;
    const required = skip ? skip.input.required : 0;
    // The page the postings are in, and its best three chunks' scores so far.
    let page = -1;
    const chunksOfPage = this.pageBest.fill(-1);
    const close = () => {
      if (page < 0 || chunksOfPage[0]! < 0 || skip!.input.pageGroup[page]) return;
      if (
        best!.offer(bestThreeScore(chunksOfPage, 0, skip!.input.titleBoost[page]!)) &&
        best!.full() &&
        best!.least() > floor
      )
        floor = best!.least();
    };
    cursor.open(l.address);
    for (let b = 0; b < cursor.blocks; b++) {
      if (skip) {
        const maxTf = cursor.maxTf(b);
        const most = w * (BM25.d + (maxTf * k1) / (maxTf + shortest)) * (1 + 1e-9);
        if (PAGE_FACTOR * (most + skip.after) * skip.words < floor) {
          skipped ??= new Float64Array(cursor.blocks);
          skipped[b] = most;
          if (most > skippedMax) skippedMax = most;
          continue;
        }
      }
      const n = cursor.decode(b);
      for (let i = 0; i < n; i++) {
        const d = docs[i]!;
        const tf = tfs[i]!;
        if (partialMask[d] === 0) touched[count++] = d;
        partial[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
        const m = (partialMask[d] = (partialMask[d]! | bit) >>> 0);
        if (!best) continue;
        const p = pageOfChunk[d]!;
        if (p !== page) {
          close();
          page = p;
          chunksOfPage.fill(-1);
        }
        if ((m & required) >>> 0 === required) placeBestThree(chunksOfPage, 0, partial[d]! * popcount(m));
      }
      this.postings += n;
    }
    if (best) close();
    this.touchedCount = count;
    return skipped && { list: l, skipped, max: skippedMax };
  }

  /**
   * A score `need` pages are sure to rank above, whatever the lists not read add: title
   * matches (which rank above group 2 in any case: +∞ when there are `need` of them), then
   * group-2 pages scored from their chunks read so far that hold every required word (a lower
   * bound). -∞ when there are not `need` such pages.
   */
  protected sureFloor(input: PruneInput): number {
    const { required, need, pageGroup, titleBoost } = input;
    const { partial, partialMask, touched } = this;
    const { pageOfChunk, chunkCounts } = this.layout;
    let sure = 0;
    for (const p of input.titled) if (pageGroup[p] && chunkCounts[p]) sure++;
    if (sure >= need) return Infinity;
    this.candidateCount = 0;
    // Counted as work: a pass over the chunks seen costs about a posting each.
    this.postings += this.touchedCount;
    for (let i = 0; i < this.touchedCount; i++) {
      const d = touched[i]!;
      const m = partialMask[d]!;
      if ((m & required) >>> 0 !== required) continue;
      const p = pageOfChunk[d]!;
      if (pageGroup[p]) continue;
      this.offer(p, partial[d]! * popcount(m));
    }
    const scores = new Float64Array(this.candidateCount);
    for (let e = 0; e < this.candidateCount; e++) {
      const p = this.candidatePage[e]!;
      scores[e] = bestThreeScore(this.bestThrees, 3 * e, titleBoost[p]!);
    }
    this.clearCandidates();
    const k = need - sure;
    if (scores.length < k) return -Infinity;
    // The k-th highest: `need` pages score at least that much; a page bounded strictly below it cannot rank.
    return scores.sort().reverse()[k - 1]!;
  }

  /**
   * Each page that may rank, with the most it may score: its chunks read so far at what they
   * hold plus all the unread lists could add, its unread chunks at what those lists could
   * give alone; title matches and boosted titles whatever their chunks.
   */
  protected bound(input: PruneInput, unreadLists: number, unreadWords: number, partials: Partial[]): void {
    const { required, pageGroup, titleBoost } = input;
    const { partial, partialMask, touched } = this;
    const { pageOfChunk, chunkCounts } = this.layout;
    this.candidateCount = 0;
    for (let i = 0; i < this.touchedCount; i++) this.seen[this.offer(pageOfChunk[touched[i]!]!, -1)]!++;
    for (const p of input.titled) if (this.slot[p]! < 0) this.offer(p, -1);
    // What the unread lists and the skipped blocks that hold its chunks may add, per page.
    if (this.unread.length < this.candidateCount) this.unread = new Float64Array(this.candidatePage.length);
    const unread = this.unread;
    for (let e = 0; e < this.candidateCount; e++)
      unread[e] = unreadLists + this.skippedBound(this.candidatePage[e]!, partials, 0);
    const words = popcount(unreadWords);
    for (let i = 0; i < this.touchedCount; i++) {
      const d = touched[i]!;
      const m = (partialMask[d]! | unreadWords) >>> 0;
      if ((m & required) >>> 0 !== required) continue;
      const e = this.slot[pageOfChunk[d]!]!;
      this.place(e, (partial[d]! + unread[e]!) * popcount(m));
    }
    const unseenCan = (unreadWords & required) >>> 0 === required;
    for (let e = 0; e < this.candidateCount; e++) {
      const p = this.candidatePage[e]!;
      // Up to three unread chunks stand among the best three.
      const unreadChunks = Math.min(3, chunkCounts[p]! - this.seen[e]!);
      if (unseenCan) for (let k = 0; k < unreadChunks; k++) this.place(e, unread[e]! * words);
      const group = pageGroup[p] ? pageGroup[p]! - 1 : 2;
      if (this.bestThrees[3 * e]! < 0) {
        // No chunk can hold every required word: a title match still ranks, by its intro.
        this.boundClass[e] = group < 2 && chunkCounts[p] ? group * TIERS + INTRO_TIER : 255;
        this.boundScore[e] = 0;
        continue;
      }
      this.boundClass[e] = group * TIERS;
      this.boundScore[e] = bestThreeScore(this.bestThrees, 3 * e, titleBoost[p]!);
    }
  }

  /** The most the skipped blocks of partials[from…] that may hold a page's chunks add to one of them. */
  protected skippedBound(p: number, partials: Partial[], from: number): number {
    if (from >= partials.length) return 0;
    const { firstChunk, chunkCounts } = this.layout;
    const first = firstChunk[p]!;
    const last = first + Math.max(1, chunkCounts[p]!) - 1;
    const cursor = this.cursor;
    let sum = 0;
    for (let k = from; k < partials.length; k++) {
      const { list, skipped } = partials[k]!;
      cursor.open(list.address);
      let most = 0;
      for (let b = cursor.blockOf(first), end = Math.min(cursor.blockOf(last), cursor.blocks - 1); b <= end; b++)
        if (skipped[b]! > most) most = skipped[b]!;
      sum += most;
    }
    return sum;
  }
}
