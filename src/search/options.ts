/**
 * What a search is asked and what it answers: the engine's public types, its defaults and
 * its guards. Every stage reads them here; engine.ts re-exports them.
 */
import { checkOption, checkOptions, integerFrom, type OptionRule, said } from "../errors";
import { codePoints, trimSpaces } from "../scripts";
import { SEARCH_BUDGET_MS } from "../request-time";
import type { SnapshotPage } from "../snapshot";
import { MAX_WORDS } from "./postings/shard-types";

export interface SearchOptions {
  limit?: number;
  offset?: number;
  /** Only this page's chunks, each a hit (D7). */
  pageId?: number;
  cropLength?: number;
  highlight?: boolean;
  /** Milliseconds of work after which the search answers with the best it has found, timedOut (default GUARDS.budgetMs, D91). */
  budgetMs?: number;
  /**
   * Pruning (D90): the block-max executor (plans/words.ts) ranks each tier only as deep as
   * the window needs, on queries whose lists hold at least `from` postings (default
   * PRUNE_FROM); below, every tier to its end. `false`: the exhaustive oracle, every chunk
   * holding a word scored (what the executor is tested against).
   */
  pruning?: false | Pruning;
}

export interface Pruning {
  from?: number;
}

export interface Hit {
  page: SnapshotPage;
  /** Index of the chunk within its page. */
  chunk: number;
  score: number;
  /**
   * In [0, 1], never rising down a result list, comparable across queries (as Meilisearch's
   * _rankingScore): ranking-score.ts.
   */
  rankingScore: number;
  /** The chunk's text, and the heading of its section ("" for none). */
  text: string;
  section: string;
  formatted: { title: string; text: string };
}

/** What one search read: documents (chunks and titles) scored by its passes, and the postings read to find them. */
export interface SearchWork {
  candidates: number;
  postings: number;
  /** How the search was run: its plan's name (plans/plan.ts); "" for a lookup that ran none. */
  plan: string;
  /** The search ran out of time (GUARDS.budgetMs) and answers with the best it had found (D91). */
  cutOff: boolean;
}

export interface SearchResult {
  hits: Hit[];
  /** Matching pages (chunks of the page with pageId). */
  estimatedTotalHits: number;
  processingTimeMs: number;
  /** The search reached its time limit (budgetMs) and answers with the best it had found then (D91). */
  timedOut: boolean;
  work: SearchWork;
}

export interface LuckyResult {
  page: SnapshotPage;
  /** The matched chunk in search-hit shape: chunk 0 for an exact title match. */
  hit: Hit;
  totalResults: number;
  processingTimeMs: number;
  /** The search behind it reached its time limit (D91). */
  timedOut: boolean;
  work: SearchWork;
}

export interface ChangesResult {
  /** Pages with tsUnix >= since, ordered by tsUnix then page id (D12), within the window. */
  pages: SnapshotPage[];
  /** Every page with tsUnix >= since. */
  total: number;
}

export const DEFAULTS = { limit: 10, offset: 0, cropLength: 400, highlight: true } as const;

/** Each option search() takes, with the rule its value must meet, as said to a caller who breaks it. */
const OPTION_RULES: Record<keyof SearchOptions, OptionRule> = {
  limit: [integerFrom(1), "an integer of 1 or more"],
  offset: [integerFrom(0), "an integer of 0 or more"],
  pageId: [integerFrom(0), "a page id, an integer of 0 or more"],
  cropLength: [integerFrom(1), "an integer of 1 or more (characters)"],
  highlight: [(v) => typeof v === "boolean", "true or false"],
  budgetMs: [(v) => typeof v === "number" && v >= 0, "a number of milliseconds, 0 or more"],
  pruning: [
    (v) => v === false || (typeof v === "object" && v !== null && !Array.isArray(v) && fromOf(v)),
    "false or { from: an integer of 0 or more }",
  ],
};

/** `{ from }` and nothing else: `{ form: 5 }` was searched with as if not given. */
const fromOf = (pruning: object) => {
  const from = (pruning as Pruning).from;
  return Object.keys(pruning).every((k) => k === "from") && (from === undefined || integerFrom(0)(from));
};

export { checkOption, type OptionRule };

/**
 * What a library caller (README: `open(path).search(q, options)`, a RAG pipeline) asked, checked before it is
 * searched with: a query that is not a string, or an option unknown or out of its range, is a TypeError or a
 * RangeError naming it. Unchecked, offset -5 crashed inside the ranking, offset "2" answered 20 hits (2 + "2"
 * is "22"), limit -1 all hits but the last, and crop_length (the HTTP name) was ignored. An option left
 * undefined is not given. The HTTP routes' own bounds (limit 1 to 50, …) are theirs (D3); a program may ask more (D151).
 */
export function checkSearch(q: unknown, options: unknown, call = "search(q, options)"): void {
  if (typeof q !== "string") throw new TypeError(`${call}: q must be a string, not ${said(q)}.`);
  const chars = q.length > GUARDS.maxQueryChars ? codePoints(trimSpaces(q)) : q.length;
  if (chars > GUARDS.maxQueryChars)
    throw new RangeError(
      `${call}: q must be at most ${GUARDS.maxQueryChars} characters, spaces around it not counted, as the HTTP API's q (a longer one costs more to read than a search's time), not one of ${chars.toLocaleString("en-US")}: cut it first (only its first ${GUARDS.maxWords} words are searched anyway).`,
    );
  if (options !== undefined) checkOptions(call, options, OPTION_RULES);
}

/**
 * changes()'s arguments, checked as search()'s are: Unix seconds (an RFC 3339 text, read as HTTP reads it, was
 * compared as NaN, and every page answered), an offset and a limit. Unchecked, offset -1 threw "Invalid Date" from
 * inside, and limit 2.5 answered 3 pages.
 */
export function checkChanges(since: unknown, offset: unknown, limit: unknown): void {
  const call = "changes(since, offset, limit)";
  if (!integerFrom(0)(since))
    throw new RangeError(`${call}: since must be Unix seconds, an integer of 0 or more, not ${said(since)}.`);
  if (!integerFrom(0)(offset))
    throw new RangeError(`${call}: offset must be an integer of 0 or more, not ${said(offset)}.`);
  if (!integerFrom(1)(limit))
    throw new RangeError(`${call}: limit must be an integer of 1 or more, not ${said(limit)}.`);
}

/** page()'s argument, checked as search()'s pageId is: a page id given as text ("39", from a URL) was no page, silently. */
export function checkPageId(pageId: unknown): void {
  const [isPageId, rule] = OPTION_RULES.pageId;
  if (!isPageId(pageId)) throw new RangeError(`page(pageId): pageId must be ${rule}, not ${said(pageId)}.`);
}

/**
 * What one search may cost, whatever its query (the guards Meilisearch has): a query holds at most maxQueryChars
 * characters, refused past them (D6 over HTTP, D172 in the library: reading a query is not within budgetMs); words past
 * maxWords are ignored; typos are looked for in at most typoWords words (the first the index
 * does not know), and each word expands to at most MAX_EXPANSIONS terms by prefix and by
 * typo (shard.ts); past budgetMs, the search skips its remaining passes and checks and answers
 * with the best it has.
 */
export const GUARDS = { maxQueryChars: 500, maxWords: MAX_WORDS, typoWords: 4, budgetMs: SEARCH_BUDGET_MS } as const;

/**
 * A query whose lists hold fewer postings is ranked to the end of every tier: pruning would
 * save little, and the count of matching pages stays exact.
 */
export const PRUNE_FROM = 16_384;

/**
 * A typo term of this many postings or fewer is read whole by the typo-orders plan (D100); one
 * of more is bounded by its stored order: a snapshot stores one for every word of more (D124).
 */
export const READ_WHOLE = 1024;

/**
 * A young-generation collection at most this often, after a search (engine.ts). JavaScriptCore counts the mapped snapshot (gigabytes)
 * as heap, so left to itself it collects rarely, and each search's garbage stays resident: at
 * 5M chunks, RssAnon after 1,000 searches was 738 MB without, 430 MB with a collection every
 * 20 searches (0.7 ms each: 37 ms in all).
 */
const COLLECT_EVERY_MS = 100;

/**
 * Collects the garbage every COLLECT_EVERY_MS when called in a loop (`full`: all of it, synchronously; else what Bun's
 * collector takes at once), and all of it at once when told to (`now`). The mapped snapshot counts as the collector's
 * heap (its size, not what it holds): left alone, the collector lets garbage pile up in proportion, gigabytes at 5M
 * chunks (COLLECT_EVERY_MS, D141). A collection is never more than a tenth of the loop's time, however long one takes.
 */
export function collector(full: boolean): (now?: boolean) => void {
  let collectedAt = performance.now();
  let took = 0;
  return (now = false) => {
    const started = performance.now();
    if (!now && started - collectedAt < Math.max(COLLECT_EVERY_MS, 10 * took)) return;
    Bun.gc(full || now);
    collectedAt = performance.now();
    took = collectedAt - started;
  };
}
