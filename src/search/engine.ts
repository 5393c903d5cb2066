/**
 * The search engine: a snapshot in memory with two MiniSearch shards, titles (one entry
 * per page, redirect titles as aliases) and text (one entry per chunk).
 *
 * Ranking, best first (decisions D6–D9):
 *   1. an exact title or redirect match (D8)
 *   2. pages whose title matches the query
 *   3. the rest
 * and within each group: chunks holding every query word, then every word allowing typos,
 * then fewer words (exactly, then with typos); then BM25, raised for words that stand close
 * together.
 */
import MiniSearch, { type SearchResult as MiniResult } from "minisearch";
import type { Snapshot, SnapshotPage } from "../snapshot";
import { indexKey, termOfKey, terms } from "./analyze";
import { formatText, formatTitle } from "./highlight";
import { parseQuery, titleKey, type ParsedQuery } from "./query";

export interface SearchOptions {
  limit?: number;
  offset?: number;
  /** Only this page's chunks, each a hit (D7). */
  pageId?: number;
  cropLength?: number;
  highlight?: boolean;
}

export interface Hit {
  page: SnapshotPage;
  /** Index of the chunk within its page. */
  chunk: number;
  score: number;
  formatted: { title: string; text: string };
}

export interface SearchResult {
  hits: Hit[];
  /** Matching pages (chunks of the page with pageId). */
  estimatedTotalHits: number;
  processingTimeMs: number;
}

export interface LuckyResult {
  page: SnapshotPage;
  /** The matched chunk in search-hit shape: chunk 0 for an exact title match. */
  hit: Hit;
  totalResults: number;
  processingTimeMs: number;
}

export interface ChangesResult {
  /** Pages with tsUnix >= since, ordered by tsUnix then page id (D12), within the window. */
  pages: SnapshotPage[];
  /** Every page with tsUnix >= since. */
  total: number;
}

export const DEFAULTS = { limit: 10, offset: 0, cropLength: 400, highlight: true } as const;

/** How many of the best pages get the word-proximity bonus. */
const PROXIMITY_WINDOW = 20;
/** A page's score: its best chunk's, plus this share of its second, and its square of its third. */
const PAGE_EVIDENCE = 0.5;
/** How many candidates are checked for quoted phrases before the rest is estimated. */
const PHRASE_CHECKS = 1000;
const PHRASE_SAMPLE = 200;

export const TEXT_FIELDS = ["text", "section", "title"];
export const TITLE_FIELDS = ["title", "aliases"];

export function textIndexOptions(lang: string) {
  return {
    fields: TEXT_FIELDS,
    tokenize: (s: string) => terms(s, lang),
    processTerm: indexKey,
    // The page title in every chunk entry: questions name the topic more often than the passage does.
    searchOptions: { boost: { text: 1, section: 0.5, title: 0.5 } },
  };
}

export function titleIndexOptions(lang: string) {
  return {
    fields: TITLE_FIELDS,
    tokenize: (s: string) => terms(s, lang),
    processTerm: indexKey,
    searchOptions: { boost: { title: 2, aliases: 1 } },
  };
}

/** Query words arrive analysed already: split on the spaces they were joined with. */
const SEARCH_TOKENIZE = (s: string) => s.split(" ");

const typos = (term: string): number => {
  const n = [...term].length;
  return n >= 9 ? 2 : n >= 5 ? 1 : 0;
};

interface Candidate {
  chunk: number;
  score: number;
  tier: number;
  /** Document terms that matched, for highlighting. */
  terms: string[];
}

interface PageCandidate {
  page: number;
  best: Candidate;
  group: number;
}

export class Engine {
  readonly lang: string;
  private readonly pages: SnapshotPage[];
  private readonly pageIndexById = new Map<number, number>();
  /** Global chunk id → page index. */
  private readonly pageOfChunk: Int32Array;
  /** Page index → its first global chunk id. */
  private readonly firstChunk: Int32Array;
  /** titleKey → page index, redirects resolved. */
  private readonly titles = new Map<string, number>();
  /** Page indexes by (tsUnix, pageId), built on the first changes() call. */
  private byTime: Int32Array | undefined;

  constructor(
    readonly snapshot: Snapshot,
    readonly text: MiniSearch,
    readonly titleIndex: MiniSearch,
  ) {
    this.lang = snapshot.meta.wiki.lang;
    this.pages = snapshot.pages;
    const total = snapshot.meta.indexedChunks;
    this.pageOfChunk = new Int32Array(total);
    this.firstChunk = new Int32Array(this.pages.length + 1);
    let g = 0;
    this.pages.forEach((p, i) => {
      this.pageIndexById.set(p.pageId, i);
      this.firstChunk[i] = g;
      this.pageOfChunk.fill(i, g, g + p.chunks.length);
      g += p.chunks.length;
      // A page with no text (its whole content was tables or lists of sources) is no answer.
      if (p.chunks.length) this.titles.set(titleKey(p.title), i);
    });
    this.firstChunk[this.pages.length] = g;
    for (const [from, pageIdx] of resolveRedirects(snapshot, this.titles)) {
      if (!this.titles.has(from)) this.titles.set(from, pageIdx);
    }
  }

  page(pageId: number): SnapshotPage | undefined {
    const i = this.pageIndexById.get(pageId);
    return i === undefined ? undefined : this.pages[i];
  }

  /** The page a title or redirect names (case- and accent-insensitive, `_` = space). */
  pageByTitle(title: string): SnapshotPage | undefined {
    const i = this.titles.get(titleKey(title));
    return i === undefined ? undefined : this.pages[i];
  }

  /** Pages changed at or after `since` (Unix seconds), oldest first, then by page id (D12). */
  changes(since: number, offset: number, limit: number): ChangesResult {
    const order = (this.byTime ??= this.timeOrder());
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.pages[order[mid]!]!.tsUnix < since) lo = mid + 1;
      else hi = mid;
    }
    const total = order.length - lo;
    const start = Math.min(order.length, lo + offset);
    const end = Math.min(order.length, start + limit);
    const pages: SnapshotPage[] = [];
    for (let i = start; i < end; i++) pages.push(this.pages[order[i]!]!);
    return { pages, total };
  }

  private timeOrder(): Int32Array {
    const order = Int32Array.from(this.pages.keys());
    const pages = this.pages;
    return order.sort((a, b) => pages[a]!.tsUnix - pages[b]!.tsUnix || pages[a]!.pageId - pages[b]!.pageId);
  }

  search(q: string, options: SearchOptions = {}): SearchResult {
    const started = performance.now();
    const limit = options.limit ?? DEFAULTS.limit;
    const offset = options.offset ?? DEFAULTS.offset;
    const query = parseQuery(q, this.lang);
    const ranked = this.rank(query, offset + limit, options.pageId);
    const window = ranked.pages.slice(offset, offset + limit);
    const hits = window.map((p) => this.toHit(p.page, p.best, query, options));
    return { hits, estimatedTotalHits: ranked.total, processingTimeMs: performance.now() - started };
  }

  /** D13: an exact title (redirects resolved) wins; otherwise the page of the best hit. */
  lucky(q: string): LuckyResult | undefined {
    const started = performance.now();
    const query = parseQuery(q, this.lang);
    const ranked = this.rank(query, 1, undefined);
    const exact = this.titles.get(query.asTitle);
    const top = exact !== undefined ? { page: exact, best: { chunk: this.firstChunk[exact]!, score: 0, tier: 0, terms: [] }, group: 0 } : ranked.pages[0];
    if (!top) return undefined;
    const hit = this.toHit(top.page, top.best, query, {});
    return { page: hit.page, hit, totalResults: ranked.total, processingTimeMs: performance.now() - started };
  }

  private toHit(pageIdx: number, c: Candidate, query: ParsedQuery, options: SearchOptions): Hit {
    const page = this.pages[pageIdx]!;
    const chunk = c.chunk - this.firstChunk[pageIdx]!;
    const matched = new Set([...c.terms, ...query.words]);
    const highlight = options.highlight ?? DEFAULTS.highlight;
    return {
      page,
      chunk,
      score: c.score,
      formatted: {
        title: formatTitle(page.title, matched, highlight, this.lang),
        text: formatText(page.chunks[chunk]!.text, matched, options.cropLength ?? DEFAULTS.cropLength, highlight, this.lang),
      },
    };
  }

  /** Whether a word occurs in the text shard. (MiniSearch keeps its term map private.) */
  private known(term: string): boolean {
    return (this.text as unknown as { _index: { has(t: string): boolean } })._index.has(indexKey(term));
  }

  private textSearch(query: ParsedQuery, combineWith: "AND" | "OR", fuzzy: boolean, filter?: (r: MiniResult) => boolean): MiniResult[] {
    const last = query.words.length - 1;
    return this.text.search(query.words.join(" "), {
      combineWith,
      tokenize: SEARCH_TOKENIZE,
      processTerm: indexKey,
      prefix: (_t, i) => query.prefixLast && i === last,
      fuzzy: fuzzy ? (t) => (this.known(t) ? 0 : typos(t)) : false,
      filter,
    });
  }

  private rank(query: ParsedQuery, need: number, pageId: number | undefined): { pages: PageCandidate[]; total: number } {
    if (!query.words.length) return { pages: [], total: 0 };
    let filter: ((r: MiniResult) => boolean) | undefined;
    let onlyPage = -1;
    if (pageId !== undefined) {
      onlyPage = this.pageIndexById.get(pageId) ?? -2;
      if (onlyPage < 0) return { pages: [], total: 0 };
      filter = (r) => this.pageOfChunk[r.id as number] === onlyPage;
    }
    const enough = (n: number) => n >= need;

    // Tiers: every word exactly; every word allowing typos; fewer words.
    const candidates = new Map<number, Candidate>();
    const pagesFound = new Set<number>();
    const addTier = (results: MiniResult[], tier: number) => {
      for (const r of results) {
        if (candidates.has(r.id)) continue;
        candidates.set(r.id, { chunk: r.id, score: r.score, tier, terms: r.terms.map(termOfKey) });
        pagesFound.add(this.pageOfChunk[r.id]!);
      }
    };
    const units = () => (onlyPage >= 0 ? candidates.size : pagesFound.size);
    // Typos are looked for only in words the index does not know.
    const typoable = query.words.some((w) => typos(w) > 0 && !this.known(w));
    addTier(this.textSearch(query, "AND", false, filter), 0);
    if (!enough(units()) && typoable) addTier(this.textSearch(query, "AND", true, filter), 1);
    // Fewer words: any of them; with quoted phrases, every phrase word and any of the others
    // (searched as the phrase words alone: the phrase check below does the rest).
    const fewer = query.words.length > 1;
    const phrases = query.phrases.length > 0;
    if (!enough(units()) && fewer) {
      addTier(phrases ? this.textSearch(phraseWords(query), "AND", false, filter) : this.textSearch(query, "OR", false, filter), 2);
    }
    if (!enough(units()) && fewer && typoable && !phrases) addTier(this.textSearch(query, "OR", true, filter), 3);

    let list = [...candidates.values()];
    let estimate = 1;
    if (query.phrases.length) ({ list, estimate } = this.keepPhrases(list, query, need));

    if (onlyPage >= 0) {
      list.sort(byTierScore);
      this.proximity(list.slice(0, PROXIMITY_WINDOW), query);
      list.sort(byTierScore);
      const pages = list.map((c) => ({ page: onlyPage, best: c, group: 2 }));
      return { pages, total: Math.round(list.length * estimate) };
    }

    // One hit per page: its best chunk, scored with the evidence of its next two.
    const best = new Map<number, Candidate>();
    const runnersUp = new Map<number, [number, number]>();
    for (const c of list) {
      const p = this.pageOfChunk[c.chunk]!;
      const b = best.get(p);
      if (!b || byTierScore(c, b) < 0) {
        best.set(p, c);
        if (b) pushRunnerUp(runnersUp, p, b.score);
      } else pushRunnerUp(runnersUp, p, c.score);
    }
    for (const [p, [second, third]] of runnersUp) {
      const c = best.get(p)!;
      best.set(p, { ...c, score: c.score + PAGE_EVIDENCE * second + PAGE_EVIDENCE * PAGE_EVIDENCE * third });
    }
    const groups = this.titleGroups(query);
    for (const p of groups.keys()) {
      if (best.has(p) || query.phrases.length || !this.pages[p]!.chunks.length) continue;
      // A title match with no chunk holding the words: its intro stands for it.
      best.set(p, { chunk: this.firstChunk[p]!, score: 0, tier: 4, terms: [] });
    }
    const pages: PageCandidate[] = [];
    for (const [p, c] of best) pages.push({ page: p, best: c, group: groups.get(p) ?? 2 });
    pages.sort(byRank);
    const top = pages.slice(0, PROXIMITY_WINDOW);
    this.proximity(
      top.map((p) => p.best),
      query,
    );
    top.sort(byRank);
    for (let i = 0; i < top.length; i++) pages[i] = top[i]!;
    return { pages, total: Math.round(pages.length * estimate) };
  }

  /** D8: 0 for the exact title (or redirect), 1 for titles holding every query word or made only of query words. */
  private titleGroups(query: ParsedQuery): Map<number, number> {
    const groups = new Map<number, number>();
    const last = query.words.length - 1;
    const opts = { tokenize: SEARCH_TOKENIZE, processTerm: indexKey };
    for (const r of this.titleIndex.search(query.words.join(" "), {
      ...opts,
      combineWith: "AND",
      prefix: (_t, i) => query.prefixLast && i === last,
    })) {
      groups.set(r.id as number, 1);
    }
    if (query.words.length > 1) {
      const words = new Set(query.words);
      for (const r of this.titleIndex.search(query.words.join(" "), { ...opts, combineWith: "OR" })) {
        const title = terms(this.pages[r.id as number]!.title, this.lang);
        if (title.length && title.every((t) => words.has(t))) groups.set(r.id as number, 1);
      }
    }
    const exact = this.titles.get(query.asTitle);
    if (exact !== undefined) groups.set(exact, 0);
    return groups;
  }

  /**
   * Keeps the chunks holding every quoted phrase. Checks candidates best first until enough
   * pages are found (and at least a sample), then estimates the rest from the share that held.
   */
  private keepPhrases(list: Candidate[], query: ParsedQuery, need: number): { list: Candidate[]; estimate: number } {
    list.sort(byTierScore);
    const kept: Candidate[] = [];
    const pages = new Set<number>();
    let checked = 0;
    for (let i = 0; i < list.length && i < PHRASE_CHECKS; i++) {
      if (pages.size >= need && i >= PHRASE_SAMPLE) break;
      checked = i + 1;
      const c = list[i]!;
      const page = this.pages[this.pageOfChunk[c.chunk]!]!;
      const chunk = page.chunks[c.chunk - this.firstChunk[this.pageOfChunk[c.chunk]!]!]!;
      const words = [...terms(chunk.text, this.lang), "\u0000", ...terms(page.sections[chunk.section]?.heading ?? "", this.lang)];
      if (query.phrases.every((ph) => containsSequence(words, ph))) {
        kept.push(c);
        pages.add(this.pageOfChunk[c.chunk]!);
      }
    }
    const estimate = checked < list.length && checked > 0 ? list.length / checked : 1;
    return { list: kept, estimate };
  }

  /** Raises chunks whose matched words stand close together. */
  private proximity(list: Candidate[], query: ParsedQuery): void {
    if (query.words.length < 2) return;
    for (const c of list) {
      const p = this.pageOfChunk[c.chunk]!;
      const text = this.pages[p]!.chunks[c.chunk - this.firstChunk[p]!]!.text;
      const span = smallestSpan(terms(text, this.lang), new Set([...c.terms, ...query.words]));
      if (span > 0) c.score *= 1 + 1 / (1 + Math.max(0, span - c.terms.length));
    }
  }
}

const byTierScore = (a: Candidate, b: Candidate) => a.tier - b.tier || b.score - a.score;
const byRank = (a: PageCandidate, b: PageCandidate) => a.group - b.group || byTierScore(a.best, b.best);

function phraseWords(query: ParsedQuery): ParsedQuery {
  return { ...query, words: [...new Set(query.phrases.flat())], prefixLast: false };
}

function pushRunnerUp(map: Map<number, [number, number]>, page: number, score: number): void {
  const r = map.get(page);
  if (!r) map.set(page, [score, 0]);
  else if (score > r[0]) map.set(page, [score, r[0]]);
  else if (score > r[1]) r[1] = score;
}

function containsSequence(words: string[], seq: string[]): boolean {
  outer: for (let i = 0; i + seq.length <= words.length; i++) {
    for (let j = 0; j < seq.length; j++) if (words[i + j] !== seq[j]) continue outer;
    return true;
  }
  return false;
}

/** The fewest consecutive words holding every distinct matched term (0 when fewer than two match). */
function smallestSpan(toks: string[], wanted: Set<string>): number {
  const present = new Set(toks.filter((t) => wanted.has(t)));
  if (present.size < 2) return 0;
  const counts = new Map<string, number>();
  let have = 0;
  let best = Infinity;
  for (let lo = 0, hi = 0; hi < toks.length; hi++) {
    const t = toks[hi]!;
    if (!present.has(t)) continue;
    counts.set(t, (counts.get(t) ?? 0) + 1);
    if (counts.get(t) === 1) have++;
    while (have === present.size) {
      best = Math.min(best, hi - lo + 1);
      const l = toks[lo]!;
      if (present.has(l)) {
        counts.set(l, counts.get(l)! - 1);
        if (counts.get(l) === 0) have--;
      }
      lo++;
    }
  }
  return best === Infinity ? 0 : best;
}

/** Redirect titles → page index, following chains of redirects (at most 5 hops). */
function resolveRedirects(snapshot: Snapshot, titles: Map<string, number>): Map<string, number> {
  const targets = new Map(snapshot.redirects.map((r) => [titleKey(r.title), titleKey(r.target)]));
  const out = new Map<string, number>();
  for (const from of targets.keys()) {
    let to = targets.get(from)!;
    for (let hops = 0; hops < 5 && !titles.has(to) && targets.has(to); hops++) to = targets.get(to)!;
    const page = titles.get(to);
    if (page !== undefined) out.set(from, page);
  }
  return out;
}

/** Titles of the redirects to each page, for the title shard's aliases. */
export function aliasesByPage(snapshot: Snapshot): Map<number, string[]> {
  const titles = new Map<string, number>();
  snapshot.pages.forEach((p, i) => titles.set(titleKey(p.title), i));
  const out = new Map<number, string[]>();
  const byKey = new Map(snapshot.redirects.map((r) => [titleKey(r.title), r.title]));
  for (const [from, page] of resolveRedirects(snapshot, titles)) {
    const list = out.get(page) ?? [];
    list.push(byKey.get(from)!);
    out.set(page, list);
  }
  return out;
}
