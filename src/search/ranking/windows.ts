/**
 * The executor's windows (executor.ts): runs of whole pages read at once, from the first chunk a
 * word holds to the end of its biggest list's block there, and how far the words' bounds let a
 * pass skip from a window on.
 */
import type { ListReader } from "./list-reader";
import { pageFactor } from "./rules";
import type { WordReader } from "./word-reader";

/** Chunks a window spans at least and at most (then to its last page's end). */
const MIN_WINDOW = 128;
export const MAX_WINDOW = 4096;

export interface ChunkLayout {
  readonly pageOfChunk: Int32Array;
  /** Each page's first chunk; its chunks are consecutive, but pages need not be in chunk order (several dumps, an update). */
  readonly firstChunk: Int32Array;
  readonly chunkCounts: ArrayLike<number>;
}

export class Windows {
  constructor(private readonly layout: ChunkLayout) {}

  /**
   * Where the words' bounds from `from` stay below the bar: the end of the widest range tried
   * (the window [from, to], then four times as wide, and so on, each to a page's end, bounded by
   * the lists' coarse impacts over long spans), or -1 when the window itself may hold a page
   * that ranks. Past a skipped window the next is likely skipped too: one look skips many.
   */
  skipEnd(words: WordReader[], from: number, to: number, bar: number): number {
    if (bar === -Infinity) return -1;
    const { pageOfChunk } = this.layout;
    const last = pageOfChunk.length - 1;
    let end = -1;
    let span = to - from + 1;
    const factor = pageFactor();
    for (let upTo = to; ; ) {
      let bound = 0;
      for (const w of words) {
        bound += w.bound(from, upTo);
        if (factor * bound >= bar) return end;
      }
      end = upTo;
      if (upTo >= last) return end;
      span *= 4;
      upTo = this.pageEnd(Math.min(last, from + span - 1));
    }
  }

  /** The last chunk of the page holding chunk d. */
  pageEnd(d: number): number {
    const p = this.layout.pageOfChunk[d]!;
    return this.layout.firstChunk[p]! + this.layout.chunkCounts[p]! - 1;
  }

  /** Where a window from `from` ends: the end of the primary word's biggest list's block there, within bounds, then its page's end. */
  windowEnd(primary: WordReader, from: number): number {
    const { pageOfChunk } = this.layout;
    const last = pageOfChunk.length - 1;
    let biggest: ListReader | undefined;
    for (const form of primary.forms)
      for (const l of form.lists) if (!biggest || l.cursor.df > biggest.cursor.df) biggest = l;
    let to = from + MAX_WINDOW - 1;
    if (biggest) {
      const c = biggest.cursor;
      const b = c.blockOf(from);
      if (b < c.blocks) to = Math.min(to, Math.max(c.lastDoc(b), from + MIN_WINDOW - 1));
    }
    return this.pageEnd(Math.min(to, last));
  }
}
