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
import { damagedSections, type LeaseRefused, SnapshotError, type Snapshot, type SnapshotPage } from "../snapshot";
import { said } from "../errors";
import {
  checkChanges,
  checkPageId,
  checkSearch,
  collector,
  DEFAULTS,
  GUARDS,
  PRUNE_FROM,
  type ChangesResult,
  type LuckyResult,
  type SearchOptions,
  type SearchResult,
  type SearchWork,
} from "./options";
import { PROXIMITY_WINDOW } from "./ranking/rules";
import { QueryLists } from "./ranking/query-lists";
import { Executor } from "./ranking/executor";
import { ORDER_LENGTH, PageOrders } from "./ranking/page-orders";
import { buildPageOrders } from "./plans/orders";
import { RangeScorer } from "./ranking/range-scores";
import { parseQuery, type ParsedQuery } from "./text/query";
import type { Shard } from "./postings/shard";
import { DamagedPostings } from "./postings/block-cursor";
import { planOf } from "./plans/choose";
import { Catalog } from "./stages/catalog";
import type { SearchContext } from "./stages/context";
import { hitFormatter } from "./stages/format";
import { Meter } from "./stages/meter";
import { existingPhrases } from "./stages/phrases";
import { intro, type PageCandidate, type Ranking } from "./stages/candidate";
import { Scratch } from "./stages/scratch";
import { queryTerms } from "./stages/terms";

/** A hit as rankedHits() gives it: what search() formats. */
export interface RankedHit {
  pageId: number;
  chunk: number;
  score: number;
}

/** Engine's private window, unformatted (set by the class's static block: rankedHits reads it). */
let rankedWindow: (engine: Engine, q: string, options: SearchOptions) => { hits: RankedHit[]; work: SearchWork };

/**
 * The window engine.search(q, options) answers, each hit its page id, chunk and score only: ranked the same way,
 * neither cropped nor highlighted, and told to no watcher (it is no search: an app's /metrics do not count it). For a
 * test that checks one ranking against another: an oracle asked for every page of a query (test/windows.test.ts) spent
 * most of its time formatting thousands of hits it compares by these three. Not part of the package's API (not
 * exported by search/index.ts).
 * @internal
 */
export function rankedHits(
  engine: Engine,
  q: string,
  options: SearchOptions = {},
): { hits: RankedHit[]; work: SearchWork } {
  return rankedWindow(engine, q, options);
}

export class Engine {
  readonly lang: string;
  private readonly catalog: Catalog;
  /** What the stages share: the catalogue, the shards, the scratch buffers, the meter. */
  private readonly stages: SearchContext;
  /** Told the work of every search and lucky lookup (the server's /metrics). */
  private readonly watchers = new Set<(work: SearchWork) => void>();
  /** A young-generation collection after a search, at most every COLLECT_EVERY_MS. */
  private readonly collectYoung = collector(false);

  constructor(
    readonly snapshot: Snapshot,
    readonly text: Shard,
    readonly titleIndex: Shard,
    /** The stored page orders (D51); null: search as if the snapshot had none (tests, benchmarks). */
    orders: PageOrders | null | undefined = PageOrders.of(snapshot.container),
  ) {
    this.lang = snapshot.meta.wiki.lang;
    this.catalog = new Catalog(snapshot, text.documentCount);
    text.prepare();
    this.stages = {
      lang: this.lang,
      catalog: this.catalog,
      text,
      titleIndex,
      textCursor: text.newCursor(),
      scratch: new Scratch(this.catalog.pageCount),
      meter: new Meter(() => text.onceMakingMs + titleIndex.onceMakingMs),
      ranges: new RangeScorer(text),
      executor: new Executor(text, this.catalog),
      orders: orders ?? undefined,
    };
  }

  /** Set by close(): why nothing may be read any more. */
  private closed: string | undefined;

  /**
   * Lets the snapshot's file go now (its mapping, not held until the collector finds it): for a program done with
   * it. Every later call throws a SnapshotError saying so; before, an engine whose file was let go answered from
   * zeros (no hits, pages without titles), as if the snapshot were empty. What it returned before reads nothing after.
   */
  close(): void {
    this.closed ??= `${this.snapshot.path} is closed: open() it again to search it.`;
    this.snapshot.container.letGo(this.closed);
  }

  /**
   * Takes a read lease on the snapshot's file (D84, D151): another process opening it to write it waits until this
   * engine has let go of it; every later call then throws a SnapshotError saying why. Returns why no lease was taken.
   */
  guard(): LeaseRefused | undefined {
    const { path, container } = this.snapshot;
    // Answered at each call too (usable), not only at the lease signal: a program's loop of searches may never turn
    // the event loop.
    return container.leaseAnsweredAtRead(() => {
      this.closed ??= `${path} was opened for writing by another process (a copy over it?): this engine let go of it, as reading a file cut short would crash the process (D84). open() it again once it is whole; replace a snapshot by renaming a new file onto it.`;
      container.stopReading(this.closed);
    });
  }

  /**
   * Hashes every section against the sha256 its table holds, as `snapshot:verify` does: resolves to the names of the
   * damaged ones, [] when the file is whole. open() checks only the header, the table and what keeps a read within its
   * sections (D38, D119): a program handed a file copied or downloaded calls this once, before trusting its answers.
   * Reads the whole file, turning the event loop every 10 ms.
   */
  async verify(): Promise<string[]> {
    this.usable();
    return this.snapshot.container.verify();
  }

  /**
   * Maps the whole snapshot file into this process's page tables, turning the event loop every 10 ms: the searches
   * after it take no page fault on their first reads. Measured at 5M chunks, it made first searches no faster and
   * repeated ones slower, so nothing calls it but a caller that asks (D204: `bench/search/latency.ts --populate`).
   * Resolves to false where the kernel cannot (before Linux 5.14) or the engine is closed meanwhile.
   */
  async populate(): Promise<boolean> {
    this.usable();
    return this.snapshot.container.populate();
  }

  /** Throws once the engine is closed. */
  private usable(): void {
    // A writer waiting on the lease (guard) is let in now: this sets closed.
    this.snapshot.container.answerWriter();
    if (this.closed !== undefined) throw new SnapshotError(this.closed);
  }

  page(pageId: number): SnapshotPage | undefined {
    this.usable();
    checkPageId(pageId);
    return this.catalog.page(pageId);
  }

  /** The page a title or redirect names (case- and accent-insensitive, `_` = space). */
  pageByTitle(title: string): SnapshotPage | undefined {
    this.usable();
    if (typeof title !== "string")
      throw new TypeError(`pageByTitle(title): title must be a string, not ${said(title)}.`);
    return this.catalog.pageByTitle(title);
  }

  /** Pages changed at or after `since` (Unix seconds), oldest first, then by page id (D12). */
  changes(since: number, offset: number, limit: number): ChangesResult {
    this.usable();
    checkChanges(since, offset, limit);
    return this.catalog.changes(since, offset, limit);
  }

  /** Calls `watcher` with the work of every later search and lucky lookup, until the function returned is called. */
  watch(watcher: (work: SearchWork) => void): () => void {
    // Taken as it came, anything but a function made every later search throw "watcher is not a function" from inside.
    if (typeof watcher !== "function")
      throw new TypeError(`watch(watcher): watcher must be a function, not ${said(watcher)}.`);
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  static {
    rankedWindow = (engine, q, options) => {
      const { hits } = engine.window(q, options, performance.now(), () => (p) => ({
        pageId: engine.catalog.pages.shown(p.page).pageId,
        chunk: p.best.chunk - engine.catalog.firstChunk[p.page]!,
        score: p.best.score,
      }));
      return { hits, work: engine.stages.meter.work() };
    };
  }

  /** Searches the chunks (D6–D9); a bad argument is a TypeError or RangeError naming it (checkSearch). */
  search(q: string, options: SearchOptions = {}): SearchResult {
    const started = performance.now();
    const { hits, total } = this.window(q, options, started, (query, ideal) => {
      const format = hitFormatter(this.stages, query, options, ideal);
      return (p) => format(p.page, p.best, p.group);
    });
    const work = this.workDone();
    return {
      hits,
      estimatedTotalHits: total,
      processingTimeMs: performance.now() - started,
      timedOut: work.cutOff,
      work,
    };
  }

  /**
   * The pages of a search's window [offset, offset + limit), each made a hit by `shape`, and its query's total; its
   * work is the meter's (search tells it to the watchers, workDone; rankedHits does not).
   */
  private window<T>(
    q: string,
    options: SearchOptions,
    started: number,
    shape: (query: ParsedQuery, ideal: number) => (p: PageCandidate) => T,
  ): { hits: T[]; total: number } {
    this.usable();
    checkSearch(q, options);
    const limit = options.limit ?? DEFAULTS.limit;
    const offset = options.offset ?? DEFAULTS.offset;
    const query = parseQuery(q, this.lang);
    this.stages.meter.start(started + (options.budgetMs ?? GUARDS.budgetMs));
    const { hits, total } = this.withScratch(() => {
      const ranked = this.rank(query, offset, offset + limit, options);
      const window = ranked.pages.slice(offset, offset + limit);
      return { hits: window.map(shape(query, ranked.ideal)), total: ranked.total };
    });
    return { hits, total };
  }

  /**
   * The page orders (D51) of this snapshot's one-word queries whose lists hold `least` postings
   * or more, and the typo orders (D124) of the words holding `typoLeast` up to `least`, `length`
   * pages each: a section's bytes.
   */
  pageOrders(
    least = PRUNE_FROM,
    length = ORDER_LENGTH,
    progress?: (done: number, total: number) => void,
    typoLeast = least,
  ): Uint8Array {
    this.usable();
    const { container } = this.snapshot;
    return this.withScratch(() =>
      buildPageOrders(this.stages, least, length, progress, typoLeast, () => container.dropResident()),
    );
  }

  /** D13: an exact title (redirects resolved) wins; otherwise the page of the best hit. */
  lucky(q: string, budgetMs: number | undefined = GUARDS.budgetMs): LuckyResult | undefined {
    this.usable();
    checkSearch(q, { budgetMs }, "lucky(q, budgetMs)");
    const started = performance.now();
    const query = parseQuery(q, this.lang);
    this.stages.meter.start(started + (budgetMs ?? GUARDS.budgetMs));
    const found = this.withScratch(() => {
      // As deep as a default search, so that total_results is that search's estimatedTotalHits.
      const ranked = this.rank(query, 0, DEFAULTS.offset + DEFAULTS.limit, {});
      const top = this.exactTitle(query) ?? ranked.pages[0];
      return (
        top && {
          hit: hitFormatter(this.stages, query, {}, ranked.ideal)(top.page, top.best, top.group),
          total: ranked.total,
        }
      );
    });
    const work = this.workDone();
    if (!found) return undefined;
    return {
      page: found.hit.page,
      hit: found.hit,
      totalResults: found.total,
      processingTimeMs: performance.now() - started,
      timedOut: work.cutOff,
      work,
    };
  }

  /** The page whose title (or a redirect's) is the query, standing with its intro. */
  private exactTitle(query: ParsedQuery): PageCandidate | undefined {
    const exact = this.catalog.titles.get(query.asTitle);
    if (exact === undefined) return undefined;
    return { page: exact, best: intro(this.catalog.firstChunk[exact]!, 0), group: 0 };
  }

  /**
   * Runs a search's stages, then restores the scratch buffers, whatever happened. A postings list found damaged
   * (open() does not read the postings: D119, D163) is a SnapshotError naming snapshot:verify.
   */
  private withScratch<T>(run: () => T): T {
    try {
      return run();
    } catch (err) {
      if (err instanceof DamagedPostings) throw damagedSections(this.snapshot.path, err.message, err);
      throw err;
    } finally {
      this.stages.scratch.reset();
      this.stages.ranges.release();
      this.stages.text.endSearch();
      this.collectYoung();
    }
  }

  /** The current search's work, told to the watchers. */
  private workDone(): SearchWork {
    const work = this.stages.meter.work();
    for (const watcher of this.watchers) watcher(work);
    return work;
  }

  /**
   * The stages of a search, from the parsed query to the best `need` pages, by the query's plan
   * (plans/). Its quoted phrases are first taken as written: only when no chunk holds them all
   * is each one looked for, and those no chunk holds dropped (D36, D121): the ranking has
   * already read the chunks a phrase's existence is checked in.
   */
  private rank(parsed: ParsedQuery, from: number, asked: number, options: SearchOptions): Ranking & { ideal: number } {
    const ranked = this.rankQuery(parsed, from, asked, options);
    const ctx = this.stages;
    if (!parsed.phrases.length || ranked.pages.length || ctx.meter.late()) return ranked;
    const query = existingPhrases(ctx, parsed);
    if (query === parsed) return ranked;
    ctx.scratch.reset();
    ctx.ranges.release();
    return this.rankQuery(query, from, asked, options);
  }

  private rankQuery(
    query: ParsedQuery,
    from: number,
    asked: number,
    options: SearchOptions,
  ): Ranking & { ideal: number } {
    const ctx = this.stages;
    // The pages proximity reorders are always ranked, however few were asked for: the order never depends on the window (D61).
    const need = Math.max(asked, PROXIMITY_WINDOW);
    const terms = query.words.length ? queryTerms(query, ctx) : undefined;
    const lists =
      terms &&
      new QueryLists(ctx.text, {
        derived: ctx.text.derive(terms.fuzzy),
        words: terms.words.length,
        required: terms.required,
        phraseWords: phraseWordsOf(query, terms.words),
      });
    const plan = planOf(ctx, lists, options, terms, query.phrases.length > 0);
    ctx.meter.plan = plan.name;
    const pruneFrom = (options.pruning || undefined)?.from ?? PRUNE_FROM;
    if (!terms || !lists) return { pages: [], total: 0, ideal: 0 };
    return { ...plan.rank({ ctx, query, terms, lists, from, need, pruneFrom }), ideal: lists.ideal };
  }
}

/** The bits of the words that stand in quoted phrases. */
function phraseWordsOf(query: ParsedQuery, words: string[]): number {
  const quoted = new Set(query.phrases.flat());
  let mask = 0;
  for (const [i, w] of words.entries()) if (quoted.has(w)) mask |= 1 << i;
  return mask >>> 0;
}
