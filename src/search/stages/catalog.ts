/**
 * The catalogue: the snapshot's pages, which chunks belong to which page, and the lookups
 * that need no ranking (a page by id, by title or redirect, by time of change).
 */
import type { PageTable, Snapshot, SnapshotPage } from "../../snapshot";
import type { ChunkLayout } from "../ranking/windows";
import { titleKey } from "../text/query";
import { TitleLookup } from "../postings/titles";
import type { ChangesResult } from "../options";

export class Catalog implements ChunkLayout {
  readonly pages: PageTable;
  /** Global chunk id → page index. */
  readonly pageOfChunk: Int32Array;
  /** Page index → its first global chunk id (one more entry: the chunk count). */
  readonly firstChunk: Int32Array;
  readonly chunkCounts: PageTable["chunkCounts"];
  /** titleKey → page index, redirects resolved. */
  readonly titles: TitleLookup;

  constructor(snapshot: Snapshot, chunks: number) {
    this.pages = snapshot.pages;
    this.chunkCounts = this.pages.chunkCounts;
    this.titles = new TitleLookup(snapshot.container, this.pages.length);
    this.pageOfChunk = new Int32Array(chunks);
    this.firstChunk = new Int32Array(this.pages.length + 1);
    const { firstDoc, chunkCounts } = this.pages;
    for (let i = 0; i < this.pages.length; i++) {
      this.firstChunk[i] = firstDoc[i]!;
      this.pageOfChunk.fill(i, firstDoc[i]!, firstDoc[i]! + chunkCounts[i]!);
    }
    this.firstChunk[this.pages.length] = chunks;
  }

  get pageCount(): number {
    return this.pages.length;
  }

  page(pageId: number): SnapshotPage | undefined {
    const i = this.pages.indexOf(pageId);
    return i < 0 ? undefined : this.pages.at(i);
  }

  /** The page a title or redirect names (case- and accent-insensitive, `_` = space). */
  pageByTitle(title: string): SnapshotPage | undefined {
    const i = this.titles.get(titleKey(title));
    return i === undefined ? undefined : this.pages.at(i);
  }

  /**
   * A page's chunks, as global chunk ids [from, to): they end where its count says, since chunks
   * are numbered in arrival order, not by page id (an update, several dumps).
   */
  chunkRange(page: number): { from: number; to: number } {
    return { from: this.firstChunk[page]!, to: this.firstChunk[page]! + this.chunkCounts[page]! };
  }

  /** Pages changed at or after `since` (Unix seconds), oldest first, then by page id (D12). */
  changes(since: number, offset: number, limit: number): ChangesResult {
    const order = this.pages.byTime();
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.pages.ts[order[mid]!]! < since) lo = mid + 1;
      else hi = mid;
    }
    const total = order.length - lo;
    const start = Math.min(order.length, lo + offset);
    const end = Math.min(order.length, start + limit);
    const pages: SnapshotPage[] = [];
    for (let i = start; i < end; i++) pages.push(this.pages.at(order[i]!));
    return { pages, total };
  }
}
