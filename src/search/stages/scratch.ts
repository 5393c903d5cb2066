/**
 * Every per-search buffer of one engine, in one place, with the one reset() that restores
 * them after a search. They are allocated once and reused, because large allocations at
 * every query make the collector sweep the whole snapshot often; a search writes only the
 * entries of the pages and chunks it touches, and reset() visits only those.
 */
import { matchBuffer } from "../index/shard";
import type { Matches } from "../index/shard-types";
import { Pool } from "./pool";

/** Marks on pages, each with a number; a new round unmarks every page without visiting any. */
export class PageMarks {
  private readonly round: Uint32Array;
  private readonly value: Int32Array;
  private current = 1;

  constructor(pages: number) {
    this.round = new Uint32Array(pages);
    this.value = new Int32Array(pages);
  }

  /** Starts a new round: no page is marked. */
  fresh(): void {
    if (++this.current === 0xffffffff) {
      this.round.fill(0);
      this.current = 1;
    }
  }

  has(page: number): boolean {
    return this.round[page] === this.current;
  }

  mark(page: number, value = 0): void {
    this.round[page] = this.current;
    this.value[page] = value;
  }

  /** The page's number, -1 when unmarked this round. */
  get(page: number): number {
    return this.round[page] === this.current ? this.value[page]! : -1;
  }
}

/** What a buffer that match() grows starts with. */
const SMALL_BUFFER = 1024;

export class Scratch {
  /** The exhaustive search's candidate chunks. */
  readonly pool: Pool;
  /** Per page: the pool index of its best chunk (-1: none) and its next two scores. */
  readonly pageBest: Int32Array;
  readonly pageSecond: Float64Array;
  readonly pageThird: Float64Array;
  /** The pages with a best chunk, in the order found: pageBest's first `touchedCount` entries set. */
  readonly touched: Int32Array;
  touchedCount = 0;
  /** Per page: its D8 group plus one (0: no title match), and the share of the query's information its title holds when not enough for a match. */
  readonly pageGroup: Uint8Array;
  readonly titleBoost: Float64Array;
  /** The pages given a group or a title boost (a page may be listed twice: once boosted, once grouped). */
  readonly titled: number[] = [];
  /** Whether this search's title groups are marked (stages/title-groups.ts): the pruned, conjunction and exhaustive stages each ask. */
  titlesMarked = false;
  /** The ranking's entries, one per page: page, pool position (-1: its intro), class, score. */
  readonly entryPage: Int32Array;
  readonly entryPosition: Int32Array;
  readonly entryClass: Uint8Array;
  readonly entryScore: Float64Array;
  /** Pages marked while counting or grouping; every use starts a new round. */
  readonly marks: PageMarks;
  private readonly textMatches: Matches[] = [];
  private readonly titleMatches: Matches[] = [];

  constructor(
    pages: number,
    chunks: number,
    private readonly titles: number,
  ) {
    this.pool = new Pool(chunks);
    this.pageBest = new Int32Array(pages).fill(-1);
    this.pageSecond = new Float64Array(pages);
    this.pageThird = new Float64Array(pages);
    this.touched = new Int32Array(pages);
    this.pageGroup = new Uint8Array(pages);
    this.titleBoost = new Float64Array(pages);
    this.entryPage = new Int32Array(pages);
    this.entryPosition = new Int32Array(pages);
    this.entryClass = new Uint8Array(pages);
    this.entryScore = new Float64Array(pages);
    this.marks = new PageMarks(pages);
  }

  /**
   * The text shard's match buffer `i`: 0 the exact pass (and, before it, the phrase check and
   * the pruned search: their matches are dead by then), room for every chunk; 1 the typo pass,
   * grown by match() as far as its passes reach (at 1M chunks, a sixth of them).
   */
  textBuffer(i: number): Matches {
    return (this.textMatches[i] ??= matchBuffer(i === 0 ? this.pool.docs.length : SMALL_BUFFER));
  }

  /** The title shard's match buffer `i` (0 every word, 1 any word), grown by match() as needed. */
  titleBuffer(i: number): Matches {
    return (this.titleMatches[i] ??= matchBuffer(Math.min(this.titles, SMALL_BUFFER)));
  }

  /** Restores every buffer a search wrote to its state before the search. */
  reset(): void {
    for (let e = 0; e < this.touchedCount; e++) {
      const p = this.touched[e]!;
      this.pageBest[p] = -1;
      this.pageSecond[p] = 0;
      this.pageThird[p] = 0;
    }
    this.touchedCount = 0;
    for (const p of this.titled) {
      this.pageGroup[p] = 0;
      this.titleBoost[p] = 0;
    }
    this.titled.length = 0;
    this.titlesMarked = false;
    this.pool.clear();
  }
}
