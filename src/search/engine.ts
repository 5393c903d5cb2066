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
 *
 * A search runs as named stages (stages/), like Meilisearch's execute_search:
 *   query → phrases that exist → the query's terms → the pruned top-k of one word, when it
 *   answers → else several words' conjunction, when it fills the page, or when it falls
 *   short, the pages past it from the words' orders (D52) → else candidates (the pool, in
 *   tiers) → kept phrases → pages ranked (title groups, evidence, top-k, passages) → hits
 *   formatted.
 * Every per-search buffer is in one Scratch, restored after each search by its reset().
 */
import type { Snapshot, SnapshotPage } from "../snapshot";
import { buildPageOrders } from "./ranking/orders";
import { ORDER_LENGTH, PageOrders } from "./ranking/page-orders";
import {
  COLLECT_EVERY_MS,
  DEFAULTS,
  GUARDS,
  PRUNE_FROM,
  type ChangesResult,
  type LuckyResult,
  type SearchOptions,
  type SearchResult,
  type SearchWork,
} from "./options";
import { PrunedRanking } from "./ranking/pruned";
import { PROXIMITY_WINDOW } from "./ranking/rules";
import { parseQuery, type ParsedQuery } from "./text/query";
import type { Shard } from "./index/shard";
import { plan, type Plan } from "./ranking/plan";
import { conjunctionPool, fillPool, phraseCandidates, type Scope } from "./stages/candidates";
import { Catalog } from "./stages/catalog";
import type { SearchContext } from "./stages/context";
import { hitFormatter } from "./stages/format";
import { Meter } from "./stages/meter";
import { rankChunksOfPage, rankPages } from "./stages/pages";
import { existingPhrases, keepPhrases, type KeptPhrases } from "./stages/phrases";
import { intro, type PageCandidate, type Ranking } from "./stages/pool";
import { fewerWordsFor, rankPruned } from "./stages/prune";
import { Scratch } from "./stages/scratch";
import { queryTerms, type QueryTerms } from "./stages/terms";

export {
  DEFAULTS,
  GUARDS,
  type ChangesResult,
  type Hit,
  type LuckyResult,
  type Pruning,
  type SearchOptions,
  type SearchResult,
  type SearchWork,
} from "./options";

const nothing = (): Ranking => ({ pages: [], total: 0 });

/** What every plan ranks: the query (its phrases that exist), its terms, and the window with the depth it needs. */
interface PlanRun {
  query: ParsedQuery;
  terms: QueryTerms;
  from: number;
  need: number;
}

export class Engine {
  readonly lang: string;
  private readonly catalog: Catalog;
  /** What the stages share: the catalogue, the shards, the scratch buffers, the meter. */
  private readonly stages: SearchContext;
  private readonly pruner: PrunedRanking;
  /** Told the work of every search and lucky lookup (the server's /metrics). */
  private readonly watchers = new Set<(work: SearchWork) => void>();
  private collectedAt = performance.now();

  constructor(
    readonly snapshot: Snapshot,
    readonly text: Shard,
    readonly titleIndex: Shard,
    /** The stored page orders (D51); null: search as if the snapshot had none (bench/search/search.ts --no-orders). */
    orders: PageOrders | null | undefined = PageOrders.of(snapshot.container),
  ) {
    this.lang = snapshot.meta.wiki.lang;
    this.catalog = new Catalog(snapshot, text.documentCount);
    const scratch = new Scratch(this.catalog.pageCount, text.documentCount, titleIndex.documentCount);
    this.stages = {
      lang: this.lang,
      catalog: this.catalog,
      text,
      titleIndex,
      textCursor: text.newCursor(),
      scratch,
      meter: new Meter(() => text.onceMakingMs + titleIndex.onceMakingMs),
      orders: orders ?? undefined,
    };
    // The exact pass's buffer is idle while the pruned search runs (filled only after it): it lends it its per-chunk scores.
    this.pruner = new PrunedRanking(text, this.catalog, scratch.textBuffer(0));
  }

  page(pageId: number): SnapshotPage | undefined {
    return this.catalog.page(pageId);
  }

  /** The page a title or redirect names (case- and accent-insensitive, `_` = space). */
  pageByTitle(title: string): SnapshotPage | undefined {
    return this.catalog.pageByTitle(title);
  }

  /** Pages changed at or after `since` (Unix seconds), oldest first, then by page id (D12). */
  changes(since: number, offset: number, limit: number): ChangesResult {
    return this.catalog.changes(since, offset, limit);
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
    this.stages.meter.start(started + (options.budgetMs ?? GUARDS.budgetMs));
    const { hits, total } = this.withScratch(() => {
      const ranked = this.rank(query, offset, offset + limit, options.pageId, options.pruning);
      const window = ranked.pages.slice(offset, offset + limit);
      const format = hitFormatter(this.stages, query, options);
      return { hits: window.map((p) => format(p.page, p.best, p.group)), total: ranked.total };
    });
    return { hits, estimatedTotalHits: total, processingTimeMs: performance.now() - started, work: this.workDone() };
  }

  /** The page orders (D51) of this snapshot's words whose lists hold `least` postings or more, `length` pages each: a section's bytes. */
  pageOrders(least = PRUNE_FROM, length = ORDER_LENGTH, progress?: (done: number, total: number) => void): Uint8Array {
    return this.withScratch(() => buildPageOrders(this.stages, least, length, progress));
  }

  /** D13: an exact title (redirects resolved) wins; otherwise the page of the best hit. */
  lucky(q: string): LuckyResult | undefined {
    const started = performance.now();
    const query = parseQuery(q, this.lang);
    this.stages.meter.start(started + GUARDS.budgetMs);
    const found = this.withScratch(() => {
      // As deep as a default search, so that total_results is that search's estimatedTotalHits.
      const ranked = this.rank(query, 0, DEFAULTS.offset + DEFAULTS.limit, undefined, undefined);
      const top = this.exactTitle(query) ?? ranked.pages[0];
      return top && { hit: hitFormatter(this.stages, query, {})(top.page, top.best, top.group), total: ranked.total };
    });
    const work = this.workDone();
    if (!found) return undefined;
    return {
      page: found.hit.page,
      hit: found.hit,
      totalResults: found.total,
      processingTimeMs: performance.now() - started,
      work,
    };
  }

  /** The page whose title (or a redirect's) is the query, standing with its intro. */
  private exactTitle(query: ParsedQuery): PageCandidate | undefined {
    const exact = this.catalog.titles.get(query.asTitle);
    if (exact === undefined) return undefined;
    return { page: exact, best: intro(this.catalog.firstChunk[exact]!, 0), group: 0 };
  }

  /** Runs a search's stages, then restores the scratch buffers, whatever happened. */
  private withScratch<T>(run: () => T): T {
    try {
      return run();
    } finally {
      this.stages.scratch.reset();
      this.collectYoung();
    }
  }

  private collectYoung(): void {
    const now = performance.now();
    if (now - this.collectedAt < COLLECT_EVERY_MS) return;
    Bun.gc(false);
    this.collectedAt = performance.now();
  }

  /** The current search's work, told to the watchers. */
  private workDone(): SearchWork {
    const work = this.stages.meter.work();
    for (const watcher of this.watchers) watcher(work);
    return work;
  }

  /** The stages of a search, from the parsed query to the best `need` pages, by the query's plan (ranking/plan.ts). */
  private rank(
    parsed: ParsedQuery,
    from: number,
    asked: number,
    pageId: number | undefined,
    pruning: SearchOptions["pruning"],
  ): Ranking {
    // The pages proximity reorders are always ranked, however few were asked for: the order never depends on the window (D61).
    const need = Math.max(asked, PROXIMITY_WINDOW);
    const query = existingPhrases(this.stages, parsed);
    const terms = query.words.length ? queryTerms(query, this.stages) : undefined;
    const how = plan(this.stages, query, terms, pruning, this.scopeOf(pageId));
    this.stages.meter.plan = how.name;
    if (how.name === "none") return nothing();
    const run = { query, terms: terms!, from, need };
    // A plan that gives up hands over to the next, and the last to the exhaustive passes.
    for (let step: Plan | undefined = how; step; step = step.fallback) {
      if (step !== how) this.stages.meter.plan += `, then ${step.name}`;
      const ranked = this.byPlan(step, run);
      if (ranked) return ranked;
    }
    if (how.name !== "tiers") this.stages.meter.plan += ", then tiers";
    return this.tiers(run);
  }

  /** The ranking of a plan, or undefined when it gives up and the next (or the exhaustive passes, `tiers`) must rank. */
  private byPlan(how: Plan, run: PlanRun): Ranking | undefined {
    const { stages, pruner } = this;
    const { query, terms, from, need } = run;
    switch (how.name) {
      case "none":
        return nothing();
      case "within-page": {
        const { scope } = how;
        const alone = how.phrasesOnly ? phraseCandidates(stages, query, terms, scope) : undefined;
        if (!alone) fillPool(stages, query, terms, scope);
        return rankChunksOfPage(stages, query, scope.onlyPage, alone ?? this.keptPhrases(query));
      }
      case "one-word":
      case "typo-orders":
      case "word-orders":
        return rankPruned(stages, pruner, query, terms, from, need, how.asked);
      case "conjunction": {
        const joined = conjunctionPool(stages, query, terms, need, how.pruning);
        if (typeof joined === "object") return rankPages(stages, query, terms, from, need, undefined, joined.matching);
        return joined === "short"
          ? rankPruned(stages, pruner, query, terms, from, need, fewerWordsFor(how.pruning))
          : undefined;
      }
      case "phrases": {
        const kept = phraseCandidates(stages, query, terms, { onlyPage: -1 });
        return kept && rankPages(stages, query, terms, from, need, kept, 0);
      }
      case "tiers":
        return undefined;
    }
  }

  /** The exhaustive passes, every tier (stages/candidates.ts), and the pages ranked. */
  private tiers({ query, terms, from, need }: PlanRun): Ranking {
    const matching = fillPool(this.stages, query, terms, { onlyPage: -1 });
    return rankPages(this.stages, query, terms, from, need, this.keptPhrases(query), matching);
  }

  /** The candidates holding every quoted phrase, when the query has some (stages/phrases.ts). */
  private keptPhrases(query: ParsedQuery): KeptPhrases | undefined {
    return query.phrases.length ? keepPhrases(this.stages, query) : undefined;
  }

  /** Where a search looks: every chunk, or the chunks of the page with `pageId` (undefined: no such page). */
  private scopeOf(pageId: number | undefined): Scope | undefined {
    if (pageId === undefined) return { onlyPage: -1 };
    const onlyPage = this.catalog.pages.indexOf(pageId);
    return onlyPage < 0 ? undefined : { onlyPage, range: this.catalog.chunkRange(onlyPage) };
  }
}
