/**
 * Every per-search buffer of one engine, in one place, with the one reset() that restores
 * them after a search. They are allocated once and reused, because large allocations at
 * every query make the collector sweep the whole snapshot often; a search writes only the
 * entries of the pages and chunks it touches, and reset() visits only those.
 */
import { matchBuffer } from "../postings/shard";
import type { Matches } from "../postings/shard-types";
import { PageEntries } from "../ranking/page-entries";
import { PageHeap } from "../ranking/page-heap";

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

export class Scratch {
  /** The ranking's entries, one per page. */
  readonly entries: PageEntries;
  /** A pass's best pages (plans/words.ts). */
  readonly heap = new PageHeap();
  /** The pages entered, for the intros of title matches (stages/pages.ts addIntros). */
  readonly entered: PageMarks;
  /** Per page: its D8 group plus one (0: no title match), and the share of the query's information its title holds when not enough for a match. */
  readonly pageGroup: Uint8Array;
  readonly titleBoost: Float64Array;
  /** The pages given a group or a title boost (a page may be listed twice: once boosted, once grouped). */
  readonly titled: number[] = [];
  /** Whether this search's title groups are marked (stages/title-groups.ts). */
  titlesMarked = false;
  /** Pages marked while counting or grouping; every use starts a new round. */
  readonly marks: PageMarks;
  private readonly titleMatches: Matches[] = [];

  constructor(pages: number) {
    this.entries = new PageEntries(pages);
    this.entered = new PageMarks(pages);
    this.pageGroup = new Uint8Array(pages);
    this.titleBoost = new Float64Array(pages);
    this.marks = new PageMarks(pages);
  }

  /** The title shard's match buffer `i` (0 every word, 1 any word), grown by match() as needed. */
  titleBuffer(i: number): Matches {
    return (this.titleMatches[i] ??= matchBuffer(SMALL_BUFFER));
  }

  /** Restores every buffer a search wrote to its state before the search. */
  reset(): void {
    this.entries.clear();
    for (const p of this.titled) {
      this.pageGroup[p] = 0;
      this.titleBoost[p] = 0;
    }
    this.titled.length = 0;
    this.titlesMarked = false;
  }
}

/** What a title match buffer starts with (match() grows it). */
const SMALL_BUFFER = 1024;
