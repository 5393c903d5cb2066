/**
 * The search engine: a snapshot in memory with two shards (shard.ts: MiniSearch's index
 * model in typed arrays), titles (one entry per page, redirect titles as aliases) and text
 * (one entry per chunk).
 *
 * Ranking, best first (decisions D6–D9):
 *   1. an exact title or redirect match (D8)
 *   2. pages whose title matches the query
 *   3. the rest
 * and within each group: chunks holding every query word, then every word allowing typos,
 * then fewer words (exactly, then with typos); then BM25, raised for words that stand close
 * together.
 */
import type { PageTable, Snapshot, SnapshotPage } from "../snapshot";
import { fold, indexKey, termOfKey, words } from "./analyze";
import { formatText, formatTitle } from "./highlight";
import { parseQuery, titleKey, type ParsedQuery } from "./query";
import { stemmerFor, variantRanges, type Stem } from "./stem";
import { TitleLookup } from "./titles";
import stopwordsIso from "stopwords-iso/stopwords-iso.json";
import { matchBuffer, MAX_WORDS, popcount, type Derived, type Matches, type ScoredList, type Shard, type ShardOptions, type WordSpec } from "./shard";
import { PAGE_EVIDENCE, PrunedRanking, TIERS, TITLE_BOOST } from "./pruned";
import { bestEntries } from "./topk";

export interface SearchOptions {
  limit?: number;
  offset?: number;
  /** Only this page's chunks, each a hit (D7). */
  pageId?: number;
  cropLength?: number;
  highlight?: boolean;
  /** Milliseconds of work after which the search returns the best it has found (default GUARDS.budgetMs). */
  budgetMs?: number;
  /**
   * The pruned search (pruned.ts), tried before the exhaustive one on queries of at most
   * `words` words (default 1, and a word the index holds: where it pays, D48) whose lists hold
   * at least `from` postings, giving up past `workShare` of them. `false` never tries it (the
   * oracle it is tested against).
   */
  pruning?: false | Pruning;
}

export interface Pruning {
  words?: number;
  from?: number;
  workShare?: number;
}

export interface Hit {
  page: SnapshotPage;
  /** Index of the chunk within its page. */
  chunk: number;
  score: number;
  formatted: { title: string; text: string };
}

/** What one search read: documents (chunks and titles) scored by its passes, and the postings read to find them. */
export interface SearchWork {
  candidates: number;
  postings: number;
}

export interface SearchResult {
  hits: Hit[];
  /** Matching pages (chunks of the page with pageId). */
  estimatedTotalHits: number;
  processingTimeMs: number;
  work: SearchWork;
}

export interface LuckyResult {
  page: SnapshotPage;
  /** The matched chunk in search-hit shape: chunk 0 for an exact title match. */
  hit: Hit;
  totalResults: number;
  processingTimeMs: number;
  work: SearchWork;
}

export interface ChangesResult {
  /** Pages with tsUnix >= since, ordered by tsUnix then page id (D12), within the window. */
  pages: SnapshotPage[];
  /** Every page with tsUnix >= since. */
  total: number;
}

export const DEFAULTS = { limit: 10, offset: 0, cropLength: 400, highlight: true } as const;

/** How many of the best pages get the word-proximity bonus, and how many of each one's chunks compete to be its passage. */
const PROXIMITY_WINDOW = 20;
const PASSAGES = 3;
/** How many candidates are checked for quoted phrases before the rest is estimated. */
const PHRASE_CHECKS = 1000;
const PHRASE_SAMPLE = 200;
/**
 * What one search may cost, whatever its query (the guards Meilisearch has): words past
 * maxWords are ignored; typos are looked for in at most typoWords words (the first the index
 * does not know), and each word expands to at most MAX_EXPANSIONS terms by prefix and by
 * typo (shard.ts); past budgetMs, the search skips its remaining passes and checks and answers
 * with the best it has.
 */
export const GUARDS = { maxWords: MAX_WORDS, typoWords: 4, budgetMs: 100 } as const;

/** Variants of a word are looked for when its stem's beginning has this many letters, and are at most VARIANT_SUFFIX longer. */
const MIN_STEM = 3;
const VARIANT_SUFFIX = 4;

/** The share of a query's information (its words' IDF) that a title made only of query words must hold to rank as a title match. */
const TITLE_COVERAGE = 0.5;

/**
 * A query whose lists hold fewer postings is scored exhaustively: pruning would cost more
 * than it saves, and the count of matching pages stays exact.
 */
export const PRUNE_FROM = 16_384;

export const TEXT_FIELDS = ["text", "section", "title"];
const TEXT_FIELD = 0;
const SECTION_FIELD = 1;
/** The page title in every chunk entry: questions name the topic more often than the passage does. */
export const TEXT_BOOSTS = [1, 0.5, 0.5];
export const TITLE_FIELDS = ["title", "aliases"];
export const TITLE_BOOSTS = [2, 1];

/** Words as written, folded once per distinct word: the one analysis of analyze.ts, in two steps. */
const analysis = (lang: string) => ({ tokenize: (s: string) => words(s, lang), processTerm: (w: string) => indexKey(fold(w)) });

export function textShardOptions(lang: string): ShardOptions {
  return { fields: TEXT_FIELDS, positionFields: ["text", "section"], ...analysis(lang) };
}

export function titleShardOptions(lang: string): ShardOptions {
  return { fields: TITLE_FIELDS, ...analysis(lang) };
}

const functionWordSets = new Map<string, Set<string>>();
/** A language's function words, folded (stopwords-iso). */
function functionWords(lang: string): Set<string> {
  let set = functionWordSets.get(lang);
  if (!set) {
    const list = (stopwordsIso as Record<string, string[]>)[lang] ?? [];
    set = new Set(list.map((w) => fold(w)));
    functionWordSets.set(lang, set);
  }
  return set;
}

const typos = (term: string): number => {
  const n = [...term].length;
  return n >= 9 ? 2 : n >= 5 ? 1 : 0;
};

interface Candidate {
  chunk: number;
  score: number;
  tier: number;
  /** Document terms that matched, for highlighting; found when first needed. */
  terms?: string[];
  /** The index terms the candidate's search derived from the query. */
  derived: Derived[];
  /** Its place in the pool, while the search runs. */
  position?: number;
}

interface PageCandidate {
  page: number;
  best: Candidate;
  group: number;
}

/**
 * Chunks found by the passes of one search, each once: the first pass (tier) that found
 * it keeps it. Buffers are the engine's, reused by every search (searches are synchronous).
 */
class Pool {
  size = 0;
  readonly docs: Uint32Array;
  readonly scores: Float64Array;
  readonly tiers: Uint8Array;
  readonly derived: Derived[][] = [];
  private readonly inPool: Uint8Array;
  constructor(documents: number) {
    this.docs = new Uint32Array(documents);
    this.scores = new Float64Array(documents);
    this.tiers = new Uint8Array(documents);
    this.inPool = new Uint8Array(documents);
  }
  /**
   * Adds the matches, unless already in, whose word mask is `mask` ("all"), is not it
   * ("partial"), or has its bits ("having").
   */
  add(m: Matches, tier: number, mask: number, keep: "all" | "partial" | "having" = "all"): void {
    this.derived[tier] = m.derived;
    const { docs, scores, tiers, inPool } = this;
    let size = this.size;
    for (let i = 0; i < m.count; i++) {
      const d = m.docs[i]!;
      const held = m.masks[i]!;
      if (inPool[d] || (keep === "all" ? held !== mask : keep === "partial" ? held === mask : (held & mask) >>> 0 !== mask)) continue;
      inPool[d] = 1;
      docs[size] = d;
      scores[size] = m.scores[i]!;
      tiers[size] = tier;
      size++;
    }
    this.size = size;
  }
  candidate(i: number): Candidate {
    const tier = this.tiers[i]!;
    return { chunk: this.docs[i]!, score: this.scores[i]!, tier, derived: this.derived[tier] ?? [] };
  }
  clear(): void {
    for (let i = 0; i < this.size; i++) this.inPool[this.docs[i]!] = 0;
    this.size = 0;
    this.derived.length = 0;
  }
}

export class Engine {
  readonly lang: string;
  /** The language's stemmer, when it has one: a query word also matches its other forms. */
  private readonly stem: Stem | undefined;
  private readonly pages: PageTable;
  /** Global chunk id → page index. */
  private readonly pageOfChunk: Int32Array;
  /** Page index → its first global chunk id. */
  private readonly firstChunk: Int32Array;
  /** titleKey → page index, redirects resolved. */
  private readonly titles: TitleLookup;
  /** Page indexes by (tsUnix, pageId), built on the first changes() call. */
  private byTime: Int32Array | undefined;
  private readonly pool: Pool;
  private readonly pruner: PrunedRanking;
  /** Per page, during a search: the pool index of its best chunk (-1: none yet) and its next two scores. */
  private readonly pageBest: Int32Array;
  private readonly pageSecond: Float64Array;
  private readonly pageThird: Float64Array;
  /** Per page, during a search: its D8 group plus one (0: no title match). */
  private readonly pageGroup: Uint8Array;
  /** Per page, during a search: the share of the query's information its title holds, when not enough for a title match. */
  private readonly titleBoost: Float64Array;
  /** Match buffers of the text shard, reused by every search: exact, with typos, phrase words. */
  private readonly buffers: Matches[] = [];
  private readonly titleBuffers: Matches[] = [];
  /**
   * A search's pages (touched) and its ranking entries, one per page: reused, because
   * large allocations at every query make the collector sweep the whole snapshot often.
   */
  private readonly touched: Int32Array;
  private readonly entryPage: Int32Array;
  private readonly entryPosition: Int32Array;
  private readonly entryClass: Uint8Array;
  private readonly entryScore: Float64Array;
  /** When the current search must stop adding work (performance.now() time). */
  private deadline = Infinity;
  /** The current search's work so far. */
  private candidates = 0;
  private postings = 0;
  /** Told the work of every search and lucky lookup (the server's /metrics). */
  private readonly watchers = new Set<(work: SearchWork) => void>();

  constructor(
    readonly snapshot: Snapshot,
    readonly text: Shard,
    readonly titleIndex: Shard,
  ) {
    this.lang = snapshot.meta.wiki.lang;
    this.stem = stemmerFor(this.lang);
    this.pages = snapshot.pages;
    this.titles = new TitleLookup(snapshot.container);
    const total = text.documentCount;
    this.pageOfChunk = new Int32Array(total);
    this.firstChunk = new Int32Array(this.pages.length + 1);
    const { firstDoc, chunkCounts } = this.pages;
    for (let i = 0; i < this.pages.length; i++) {
      this.firstChunk[i] = firstDoc[i]!;
      this.pageOfChunk.fill(i, firstDoc[i]!, firstDoc[i]! + chunkCounts[i]!);
    }
    this.firstChunk[this.pages.length] = total;
    this.pool = new Pool(total);
    this.pruner = new PrunedRanking(text, { pageOfChunk: this.pageOfChunk, firstChunk: this.firstChunk, chunkCounts: this.pages.chunkCounts });
    const n = this.pages.length;
    this.pageBest = new Int32Array(n).fill(-1);
    this.pageSecond = new Float64Array(n);
    this.pageThird = new Float64Array(n);
    this.pageGroup = new Uint8Array(n);
    this.titleBoost = new Float64Array(n);
    this.touched = new Int32Array(n);
    this.entryPage = new Int32Array(n);
    this.entryPosition = new Int32Array(n);
    this.entryClass = new Uint8Array(n);
    this.entryScore = new Float64Array(n);
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

  /** Pages changed at or after `since` (Unix seconds), oldest first, then by page id (D12). */
  changes(since: number, offset: number, limit: number): ChangesResult {
    const order = (this.byTime ??= this.timeOrder());
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

  private timeOrder(): Int32Array {
    const order = Int32Array.from({ length: this.pages.length }, (_x, i) => i);
    const { ts, ids } = this.pages;
    return order.sort((a, b) => ts[a]! - ts[b]! || ids[a]! - ids[b]!);
  }

  /** Calls `watcher` with the work of every later search and lucky lookup, until the function returned is called. */
  watch(watcher: (work: SearchWork) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  search(q: string, options: SearchOptions = {}): SearchResult {
    const started = performance.now();
    const limit = options.limit ?? DEFAULTS.limit;
    const offset = options.offset ?? DEFAULTS.offset;
    const query = parseQuery(q, this.lang);
    this.deadline = started + (options.budgetMs ?? GUARDS.budgetMs);
    this.candidates = this.postings = 0;
    const ranked = this.rank(query, offset + limit, options.pageId, options.pruning);
    const window = ranked.pages.slice(offset, offset + limit);
    const hits = window.map((p) => this.toHit(p.page, p.best, query, options));
    return { hits, estimatedTotalHits: ranked.total, processingTimeMs: performance.now() - started, work: this.workDone() };
  }

  /** D13: an exact title (redirects resolved) wins; otherwise the page of the best hit. */
  lucky(q: string): LuckyResult | undefined {
    const started = performance.now();
    const query = parseQuery(q, this.lang);
    this.deadline = started + GUARDS.budgetMs;
    this.candidates = this.postings = 0;
    // As deep as a default search, so that total_results is that search's estimatedTotalHits.
    const ranked = this.rank(query, DEFAULTS.offset + DEFAULTS.limit, undefined, undefined);
    const work = this.workDone();
    const exact = this.titles.get(query.asTitle);
    const top = exact !== undefined ? { page: exact, best: { chunk: this.firstChunk[exact]!, score: 0, tier: 0, terms: [], derived: [] }, group: 0 } : ranked.pages[0];
    if (!top) return undefined;
    const hit = this.toHit(top.page, top.best, query, {});
    return { page: hit.page, hit, totalResults: ranked.total, processingTimeMs: performance.now() - started, work };
  }

  /** The current search's work, told to the watchers. */
  private workDone(): SearchWork {
    const work = { candidates: this.candidates, postings: this.postings };
    for (const watcher of this.watchers) watcher(work);
    return work;
  }

  /** Counts a pass's matches as the current search's work. */
  private counted(m: Matches): Matches {
    this.candidates += m.count;
    this.postings += m.postings;
    return m;
  }

  private toHit(pageIdx: number, c: Candidate, query: ParsedQuery, options: SearchOptions): Hit {
    const page = this.pages.shown(pageIdx);
    const chunk = c.chunk - this.firstChunk[pageIdx]!;
    const matched = new Set([...this.termsOf(c), ...query.words]);
    const highlight = options.highlight ?? DEFAULTS.highlight;
    return {
      page,
      chunk,
      score: c.score,
      formatted: {
        title: formatTitle(page.title, matched, highlight, this.lang),
        text: formatText(page.chunkText(chunk), matched, options.cropLength ?? DEFAULTS.cropLength, highlight, this.lang),
      },
    };
  }

  /** The index terms derived from the query that the candidate's chunk holds. */
  private termsOf(c: Candidate): string[] {
    if (!c.terms) {
      const found = new Set<string>();
      for (const d of c.derived) if (this.text.holds(d.term, c.chunk)) found.add(termOfKey(this.text.keyOf(d.term)));
      c.terms = [...found];
    }
    return c.terms;
  }

  /** Whether the current search has used its time budget. */
  private late(): boolean {
    return performance.now() > this.deadline;
  }

  private specs(words: string[], prefixLast: boolean, fuzzy: boolean, variants: boolean): WordSpec[] {
    const last = words.length - 1;
    let typoWords = 0;
    const stop = functionWords(this.lang);
    return words.map((w, i) => {
      const key = indexKey(w);
      // Typos are looked for only in words the index does not know, and in a few of them.
      const distance = fuzzy && typoWords < GUARDS.typoWords && !this.text.has(key) ? typos(w) : 0;
      if (distance) typoWords++;
      const spec: WordSpec = { key, prefix: prefixLast && i === last, fuzzy: distance };
      if (variants && this.stem && !stop.has(w)) spec.variants = this.variantsOf(w);
      return spec;
    });
  }

  /** The index keys of `word`'s other forms: same stem, sharing its beginning, at most a few letters longer. */
  private variantsOf(word: string): WordSpec["variants"] {
    const stem = this.stem!;
    const wanted = stem(word);
    const ranges = variantRanges(word, wanted, MIN_STEM, VARIANT_SUFFIX);
    if (!ranges.length) return undefined;
    // Index keys of non-Latin words begin with two bucket characters (analyze.ts).
    const extra = indexKey(word).length - word.length;
    return { ranges: ranges.map((r) => ({ prefix: indexKey(r.prefix), longest: r.longest + extra })), accept: (k) => stem(termOfKey(k)) === wanted };
  }

  /**
   * The pruned search (pruned.ts), when the query's lists are long enough to be worth it and
   * the answer is decided among chunks holding every required word; undefined otherwise.
   */
  private rankPruned(
    query: ParsedQuery,
    specs: WordSpec[],
    titleSpecs: WordSpec[],
    informative: number,
    required: number,
    need: number,
    pruning: Pruning,
  ): { pages: PageCandidate[]; total: number } | undefined {
    const derived = this.text.derive(specs);
    const lists = this.text.scoredLists(derived);
    let postings = 0;
    for (const l of lists) postings += l.df;
    if (postings < (pruning.from ?? PRUNE_FROM)) return undefined;
    const titled = this.markTitleGroups(query, titleSpecs, informative);
    try {
      const ranked = this.pruner.rank({ lists, required, need, pageGroup: this.pageGroup, titleBoost: this.titleBoost, titled, mustReach: specs.length > 1, workShare: pruning.workShare });
      if (!ranked) return undefined;
      this.candidates += ranked.candidates;
      this.postings += ranked.postings;
      const pages = ranked.pages.map((r): PageCandidate => {
        const best: Candidate = { chunk: r.chunks[0] ?? this.firstChunk[r.page]!, score: r.score, tier: r.klass % TIERS, derived };
        return { page: r.page, best, group: Math.floor(r.klass / TIERS) };
      });
      const chunksOf = new Map(ranked.pages.map((r) => [r.page, r]));
      this.passages(pages, query, (top) =>
        top.map((p) => {
          const r = chunksOf.get(p.page)!;
          return r.chunks.slice(0, PASSAGES).map((chunk, i) => ({ chunk, score: r.chunkScores[i]!, tier: 0, derived }));
        }),
      );
      return { pages, total: Math.max(pages.length, this.estimatedPages(lists, specs.length)) };
    } finally {
      for (const p of titled) {
        this.titleBoost[p] = 0;
        this.pageGroup[p] = 0;
      }
    }
  }

  /**
   * Pages holding any of the query's words, estimated (D48): each word's chunks (its lists'
   * postings, at most every chunk) spread over pages at random, and words independent.
   */
  private estimatedPages(lists: ScoredList[], words: number): number {
    const pages = this.pages.length;
    const chunksOf = new Float64Array(words);
    for (const l of lists) chunksOf[l.word]! += l.df;
    let none = 1;
    for (const c of chunksOf) none *= Math.pow(1 - 1 / pages, Math.min(c, this.text.documentCount));
    return Math.round(pages * (1 - none));
  }

  private rank(parsed: ParsedQuery, need: number, pageId: number | undefined, pruning?: SearchOptions["pruning"]): { pages: PageCandidate[]; total: number } {
    const query = this.existingPhrases(parsed);
    const words = query.words.slice(0, GUARDS.maxWords);
    if (!words.length) return { pages: [], total: 0 };
    let onlyPage = -1;
    let range: { from: number; to: number } | undefined;
    if (pageId !== undefined) {
      onlyPage = this.pages.indexOf(pageId);
      if (onlyPage < 0) return { pages: [], total: 0 };
      // A page's chunks end where its count says: chunks are numbered in arrival order, not by page id (an update, several dumps).
      range = { from: this.firstChunk[onlyPage]!, to: this.firstChunk[onlyPage]! + this.pages.chunkCounts[onlyPage]! };
    }
    const prefixLast = query.prefixLast && words.length === query.words.length;
    const full = 2 ** words.length - 1;
    // Function words are optional in the all-words tiers: a chunk holding every informative word holds "all".
    const stop = functionWords(this.lang);
    let informative = 0;
    words.forEach((w, i) => stop.has(w) || (informative |= 1 << i));
    const required = informative ? informative >>> 0 : full;
    const pool = this.pool;
    const enough = () => this.late() || (onlyPage >= 0 ? pool.size >= need : this.pagesReach(need));
    const into = (i: number) => ({ ...range, into: (this.buffers[i] ??= matchBuffer(this.text.documentCount)) });
    // Tiers: every word exactly; every word allowing typos; fewer words (exactly, then with typos).
    // The words once, with their typo distances and other forms (their stem's): the exact pass
    // leaves the typos out, the titles take the words as written.
    const fuzzySpecs = this.specs(words, prefixLast, true, true);
    const titleSpecs = fuzzySpecs.map(({ key, prefix }) => ({ key, prefix, fuzzy: 0 }));
    // Other forms of a word count as the word in every tier, weighed below it (shard.ts).
    const exactSpecs = fuzzySpecs.map((s) => (s.fuzzy ? { ...s, fuzzy: 0 } : s));
    const typoable = fuzzySpecs.some((s) => s.fuzzy > 0);
    // By default, one word the index holds: on several words and on prefixes its bounds are still too loose to pay (D48).
    const prune = pruning ?? {};
    const pruneWords = prune ? (prune.words ?? 1) : 0;
    const known = pruneWords > 1 || words.every((w) => this.text.has(indexKey(w)));
    if (prune && words.length <= pruneWords && known && onlyPage < 0 && !query.phrases.length && !typoable) {
      const pruned = this.rankPruned(query, exactSpecs, titleSpecs, informative, required, need, prune);
      if (pruned) return pruned;
    }
    const exact = this.counted(this.text.match(exactSpecs, into(0)));
    pool.add(exact, 0, required, "having");
    // Run whenever a word may hold a typo (not only when the exact pass found too little), so
    // that the matching pages counted below do not depend on how many hits were asked for.
    const fuzzy = typoable && !this.late() ? this.counted(this.text.match(fuzzySpecs, into(1))) : undefined;
    if (fuzzy && !enough()) pool.add(fuzzy, 1, required, "having");
    const matching = onlyPage >= 0 ? 0 : this.countPages(exact, fuzzy);
    // Fewer words: any of them; with quoted phrases, every phrase word and any of the others
    // (searched as the phrase words alone: the phrase check below does the rest).
    const fewer = words.length > 1;
    const phrases = query.phrases.length > 0;
    if (!enough() && fewer) {
      if (phrases) {
        // The exact pass saw every word: the chunks holding each phrase word are among its matches.
        const phraseWords = new Set(query.phrases.flat());
        let having = 0;
        words.forEach((w, i) => phraseWords.has(w) && (having |= 1 << i));
        pool.add(exact, 2, having >>> 0, "having");
      } else pool.add(exact, 2, full, "partial");
    }
    if (fuzzy && !enough() && fewer && !phrases) pool.add(fuzzy, 3, full, "partial");

    try {
      let chosen: Candidate[] | undefined;
      let estimate = 1;
      if (query.phrases.length) ({ list: chosen, estimate } = this.keepPhrases(query, need));

      if (onlyPage >= 0) {
        const list = chosen ?? Array.from({ length: pool.size }, (_x, i) => pool.candidate(i));
        list.sort(byTierScore);
        this.proximity(list.slice(0, PROXIMITY_WINDOW), query);
        list.sort(byTierScore);
        const pages = list.map((c) => ({ page: onlyPage, best: c, group: 2 }));
        return { pages, total: Math.round(list.length * estimate) };
      }
      return this.rankPages(query, titleSpecs, informative, need, chosen, estimate, matching);
    } finally {
      pool.clear();
    }
  }

  /** Pages holding any query word, exactly or (in the typo pass) with typos. */
  private countPages(exact: Matches, fuzzy: Matches | undefined): number {
    const marks = this.pageBest;
    const marked: number[] = [];
    for (const m of fuzzy ? [exact, fuzzy] : [exact]) {
      for (let i = 0; i < m.count; i++) {
        const p = this.pageOfChunk[m.docs[i]!]!;
        if (marks[p] === -1) {
          marks[p] = 0;
          marked.push(p);
        }
      }
    }
    for (const p of marked) marks[p] = -1;
    return marked.length;
  }

  /** Whether the pool's chunks come from `need` pages or more (counted until they do). */
  private pagesReach(need: number): boolean {
    const pool = this.pool;
    if (pool.size < need) return false;
    const marks = this.pageBest;
    const marked: number[] = [];
    for (let i = 0; i < pool.size && marked.length < need; i++) {
      const p = this.pageOfChunk[pool.docs[i]!]!;
      if (marks[p] === -1) {
        marks[p] = 0;
        marked.push(p);
      }
    }
    for (const p of marked) marks[p] = -1;
    return marked.length >= need;
  }

  /**
   * One hit per page: its best chunk, scored with the evidence of its next two; then D8's
   * title groups; the best `need` pages, in order.
   */
  private rankPages(
    query: ParsedQuery,
    specs: WordSpec[],
    informative: number,
    need: number,
    chosen: Candidate[] | undefined,
    estimate: number,
    matching: number,
  ): { pages: PageCandidate[]; total: number } {
    const pool = this.pool;
    const { pageBest, pageSecond, pageThird } = this;
    const { touched, entryPage: page, entryPosition: position, entryClass: klass, entryScore: score } = this;
    let count = 0;
    // Best chunk per page: with phrases, among the chunks kept (as pool positions); else the whole pool.
    const positions = chosen ? chosen.map((c) => c.position!) : undefined;
    const n = positions ? positions.length : pool.size;
    const { docs, tiers, scores } = pool;
    const pageOfChunk = this.pageOfChunk;
    for (let k = 0; k < n; k++) {
      const i = positions ? positions[k]! : k;
      const p = pageOfChunk[docs[i]!]!;
      const b = pageBest[p]!;
      if (b === -1) {
        pageBest[p] = i;
        touched[count++] = p;
        continue;
      }
      const better = tiers[i]! < tiers[b]! || (tiers[i] === tiers[b] && (scores[i]! > scores[b]! || (scores[i] === scores[b] && docs[i]! < docs[b]!)));
      const runnerUp = better ? scores[b]! : scores[i]!;
      if (better) pageBest[p] = i;
      if (runnerUp > pageSecond[p]!) {
        pageThird[p] = pageSecond[p]!;
        pageSecond[p] = runnerUp;
      } else if (runnerUp > pageThird[p]!) pageThird[p] = runnerUp;
    }
    const group = this.pageGroup;
    const titled = this.markTitleGroups(query, specs, informative);
    for (let e = 0; e < count; e++) {
      const p = touched[e]!;
      const i = pageBest[p]!;
      page[e] = p;
      position[e] = i;
      klass[e] = (group[p] ? group[p]! - 1 : 2) * TIERS + tiers[i]!;
      score[e] = (scores[i]! + PAGE_EVIDENCE * pageSecond[p]! + PAGE_EVIDENCE * PAGE_EVIDENCE * pageThird[p]!) * (1 + TITLE_BOOST * this.titleBoost[p]!);
    }
    let total = count;
    for (const p of titled) {
      this.titleBoost[p] = 0;
      if (!group[p]) continue;
      if (pageBest[p] === -1 && !query.phrases.length && this.pages.chunkCounts[p]!) {
        // A title match with no chunk holding the words: its intro stands for it.
        page[total] = p;
        position[total] = -1;
        klass[total] = (group[p]! - 1) * TIERS + 4;
        score[total] = 0;
        total++;
      }
      group[p] = 0;
    }
    for (let e = 0; e < count; e++) {
      const p = touched[e]!;
      pageBest[p] = -1;
      pageSecond[p] = 0;
      pageThird[p] = 0;
    }

    const order = bestEntries(klass, score, total, need, page);
    const pages = order.map((e): PageCandidate => {
      const i = position[e]!;
      const c = i >= 0 ? pool.candidate(i) : { chunk: this.firstChunk[page[e]!]!, score: 0, tier: 4, derived: [] };
      c.score = score[e]!;
      return { page: page[e]!, best: c, group: Math.floor(klass[e]! / TIERS) };
    });
    this.passages(pages, query, chosen ? undefined : (top) => this.poolPassages(top));
    // Every page holding a query word (and any title match whose chunks do not), unless
    // phrases filtered them: then the share of checked candidates that held them.
    return { pages, total: chosen ? Math.round(total * estimate) : Math.max(matching, total) };
  }

  /**
   * D8: marks pageGroup with 1 for the exact title (or redirect), 2 for titles holding every
   * query word or made only of query words; returns the pages marked. `specs` are the
   * query's words as written: no typos, no other forms; `informative` has a bit for each
   * word that is not a function word.
   */
  private markTitleGroups(query: ParsedQuery, specs: WordSpec[], informative: number): number[] {
    const marked: number[] = [];
    const group = this.pageGroup;
    const mark = (p: number, g: number) => {
      if (!group[p]) marked.push(p);
      group[p] = g;
    };
    const full = 2 ** specs.length - 1;
    const into = (i: number) => (this.titleBuffers[i] ??= matchBuffer(this.titleIndex.documentCount));
    const all = this.counted(this.titleIndex.match(specs, { into: into(0) }));
    for (let i = 0; i < all.count; i++) if (all.masks[i] === full) mark(all.docs[i]!, 2);
    if (specs.length > 1) {
      // Titles made only of query words (as many of them as the title has distinct words), when
      // those words carry at least TITLE_COVERAGE of the query's information: "A" or "Africa" is
      // not what a long question holding "a" or "Africa" is about.
      // Function words hold no information here: common in questions, rare in encyclopedic text.
      const idf = specs.map((s, w) => (!informative || informative & (1 << w) ? this.text.idf(s.key, 0) : 0));
      const information = idf.reduce((a, b) => a + b, 0);
      const any = this.counted(
        this.titleIndex.match(
          specs.map((s) => ({ ...s, prefix: false })),
          { fields: [0], into: into(1) },
        ),
      );
      for (let i = 0; i < any.count; i++) {
        const d = any.docs[i]!;
        const held = any.masks[i]!;
        if (popcount(held) !== this.titleIndex.fieldLength(0, d)) continue;
        let covered = 0;
        for (let w = 0; w < specs.length; w++) if (held & (1 << w)) covered += idf[w]!;
        if (covered >= TITLE_COVERAGE * information) mark(d, 2);
        else if (information > 0) {
          if (!group[d] && !this.titleBoost[d]) marked.push(d);
          this.titleBoost[d] = Math.max(this.titleBoost[d]!, covered / information);
        }
      }
    }
    const exact = this.titles.get(query.asTitle);
    if (exact !== undefined) mark(exact, 1);
    return marked;
  }

  /**
   * The query with only the quoted phrases some chunk holds (D36): a claim quoting a title
   * or a saying loosely is searched by its words rather than answered with nothing. Checks at
   * most PHRASE_CHECKS chunks holding a phrase's words; a phrase found in none of them counts
   * as absent.
   */
  private existingPhrases(query: ParsedQuery): ParsedQuery {
    if (!query.phrases.length) return query;
    const phrases = query.phrases.filter((phrase) => {
      if (this.late()) return true;
      const sequence = this.phraseTerms(phrase);
      if (!sequence) return false;
      const specs = phrase.map((w) => ({ key: indexKey(w), prefix: false, fuzzy: 0 }));
      const m = this.counted(this.text.match(specs, { into: (this.buffers[2] ??= matchBuffer(this.text.documentCount)) }));
      const full = 2 ** specs.length - 1;
      for (let i = 0, checked = 0; i < m.count && checked < PHRASE_CHECKS; i++) {
        if (m.masks[i] !== full) continue;
        checked++;
        if (this.chunkHolds(m.docs[i]!, sequence)) return true;
      }
      return false;
    });
    return phrases.length === query.phrases.length ? query : { ...query, phrases };
  }

  /** A phrase's words as text-shard term numbers; undefined when the index lacks one (no chunk holds it). */
  private phraseTerms(phrase: string[]): number[] | undefined {
    const sequence: number[] = [];
    for (const w of phrase) {
      const term = this.text.termOf(indexKey(w));
      if (term === undefined) return undefined;
      sequence.push(term);
    }
    return sequence;
  }

  /** Whether a chunk's text or its section heading holds a phrase's terms as consecutive words (from the positions). */
  private chunkHolds(doc: number, sequence: number[]): boolean {
    return this.text.holdsSequence(sequence, TEXT_FIELD, doc) || this.text.holdsSequence(sequence, SECTION_FIELD, doc);
  }

  /**
   * Keeps the chunks holding every quoted phrase. Checks candidates best first until enough
   * pages are found (and at least a sample), then estimates the rest from the share that held.
   */
  private keepPhrases(query: ParsedQuery, need: number): { list: Candidate[]; estimate: number } {
    const pool = this.pool;
    const order = bestEntries(pool.tiers, pool.scores, pool.size, PHRASE_CHECKS, pool.docs);
    const kept: Candidate[] = [];
    const pages = new Set<number>();
    const sequences: number[][] = [];
    for (const phrase of query.phrases) {
      const sequence = this.phraseTerms(phrase);
      if (!sequence) return { list: [], estimate: 1 };
      sequences.push(sequence);
    }
    let checked = 0;
    for (let k = 0; k < order.length; k++) {
      if ((pages.size >= need && k >= PHRASE_SAMPLE) || (k % 16 === 15 && this.late())) break;
      checked = k + 1;
      const i = order[k]!;
      const doc = pool.docs[i]!;
      const p = this.pageOfChunk[doc]!;
      let holdsAll = true;
      for (let s = 0; s < sequences.length && holdsAll; s++) holdsAll = this.chunkHolds(doc, sequences[s]!);
      if (holdsAll) {
        const c = pool.candidate(i);
        c.position = i;
        kept.push(c);
        pages.add(p);
      }
    }
    const estimate = checked < pool.size && checked > 0 ? pool.size / checked : 1;
    return { list: kept, estimate };
  }

  /**
   * The passage of each of the best pages (the first PROXIMITY_WINDOW): among the page's
   * PASSAGES best-scored chunks of its best chunk's tier (`candidatesOf`), the one whose score,
   * raised by how close its words stand (proximity), is highest; the page's score follows by
   * the same factor. With one word there is no proximity, and the best-scored chunk is the
   * passage; with no candidates (phrases chose them), proximity raises the best chunk.
   */
  private passages(pages: PageCandidate[], query: ParsedQuery, candidatesOf: ((top: PageCandidate[]) => Candidate[][]) | undefined): void {
    const top = pages.slice(0, PROXIMITY_WINDOW);
    if (!candidatesOf || query.words.length < 2) this.proximity(
      top.map((p) => p.best),
      query,
    );
    else {
      const lists = candidatesOf(top);
      top.forEach((p, k) => {
        const candidates = lists[k]!;
        if (!candidates.length) return this.proximity([p.best], query);
        const raw = candidates[0]!.score;
        this.proximity(candidates, query);
        let chosen = candidates[0]!;
        for (const c of candidates) if (c.score > chosen.score) chosen = c;
        chosen.score = p.best.score * (chosen.score / raw);
        p.best = chosen;
      });
    }
    top.sort(byRank);
    for (let i = 0; i < top.length; i++) pages[i] = top[i]!;
  }

  /** Each top page's PASSAGES best-scored chunks in the pool, of its best chunk's tier, best first. */
  private poolPassages(top: PageCandidate[]): Candidate[][] {
    const pool = this.pool;
    // pageBest is -1 for every page between rankings: borrowed to find the top pages' chunks.
    const slot = this.pageBest;
    top.forEach((p, k) => (slot[p.page] = k));
    const lists: number[][] = top.map(() => []);
    for (let i = 0; i < pool.size; i++) {
      const k = slot[this.pageOfChunk[pool.docs[i]!]!]!;
      if (k >= 0 && pool.tiers[i] === top[k]!.best.tier) lists[k]!.push(i);
    }
    for (const p of top) slot[p.page] = -1;
    return lists.map((list) => {
      list.sort((a, b) => pool.scores[b]! - pool.scores[a]! || pool.docs[a]! - pool.docs[b]!);
      return list.slice(0, PASSAGES).map((i) => pool.candidate(i));
    });
  }

  /** Raises chunks whose matched words stand close together (measured on the text's word positions). */
  private proximity(list: Candidate[], query: ParsedQuery): void {
    if (query.words.length < 2) return;
    // A word's forms (itself, its other forms, its typos) are one group: any of them stands for
    // it. The groups depend on the pass that found the candidate: made once per pass.
    const groupsOf = new Map<Derived[], number[][]>();
    for (const c of list) {
      let groups = groupsOf.get(c.derived);
      if (!groups) {
        const byWord = new Map<string, number[]>();
        for (const w of query.words) {
          const term = this.text.termOf(indexKey(w));
          byWord.set(w, term === undefined ? [] : [term]);
        }
        for (const d of c.derived) if (d.weight < 1) byWord.get(query.words[d.word]!)!.push(d.term);
        groups = [...byWord.values()];
        groupsOf.set(c.derived, groups);
      }
      const span = this.text.smallestSpan(groups, TEXT_FIELD, c.chunk);
      if (span > 0) c.score *= 1 + 1 / (1 + Math.max(0, span - this.text.spanGroups));
    }
  }
}

const byTierScore = (a: Candidate, b: Candidate) => a.tier - b.tier || b.score - a.score;
const byRank = (a: PageCandidate, b: PageCandidate) => a.group - b.group || byTierScore(a.best, b.best);

