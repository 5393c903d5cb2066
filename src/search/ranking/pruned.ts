/**
 * The best pages of a one-word search without scoring every posting: MaxScore (Turtle and
 * Flood; Lucene's MaxScoreBulkScorer), lifted from documents to pages (issue 16). Several
 * words are pruned by their orders (below) or by their conjunction (conjunction.ts).
 *
 * Lists are read from the one whose postings can add the most, into per-chunk accumulators,
 * until what the unread lists could give a page none of whose chunks was seen falls below
 * the page the ranking would cut at. The pages that could still rank are then scored
 * exactly, from the blocks of every list that hold their chunks, in match()'s order of
 * lists: their scores are the very numbers the exhaustive search computes. Pages are taken
 * best bound first, until no bound left reaches the last page kept.
 *
 * It ranks what the exhaustive search ranks: the chunks holding the word (tier 0; past a
 * conjunction that falls short, the fewer-words tier too, rankByOrders). It returns
 * undefined when it gives up, and the engine falls back to the exhaustive search. The same
 * exact scoring ranks a one-word search from its stored page order (rankInOrder), and several
 * words that each have one from their orders (rankByOrders).
 */
import { WORK_SHARE } from "../options";
import type { PageOrder } from "./orders";
import type { PostingsCursor } from "../index/postings";
import { BM25, type FieldNorms, popcount, type ScoredList, type Shard } from "../index/shard";
import { bestThreeScore, FEWER_TIER, INTRO_TIER, PAGE_FACTOR, pageScore, placeBestThree, TIERS } from "./rules";
import { bestEntries, TopScores } from "./topk";

/** pageGroup's values (stages/title-groups.ts): an exact title, a title match. */
const EXACT_TITLE = 1;
const TITLE_MATCH = 2;
/** The class of a page with no title group whose chunks hold every required word. */
const UNTITLED = 2 * TIERS;
/** Whether to stop reading lists is asked before a list of at least this many postings: shorter ones cost less than the asking. */
const CHECK_DF = 2048;
/** Finding a page's block in a list and decoding it costs about as much as reading this many postings in order. */
const SEEK_COST = 160;

/** A list read in part: per block, the most a posting of a skipped block adds (0: the block was read), and the largest of those. */
interface Partial {
  list: ScoredList;
  skipped: Float64Array;
  max: number;
}

/** The order lists are read in, what the lists from each on can add to a chunk, and their words. */
interface ReadPlan {
  order: number[];
  rest: Float64Array;
  restWords: Uint32Array;
}

/** How far the reading went: the lists read (order[0, read)), and those read in part. */
interface Reading {
  read: number;
  partials: Partial[];
}

/** The chunk ranges of pages. */
export interface PageLayout {
  pageOfChunk: Int32Array;
  firstChunk: Int32Array;
  chunkCounts: ArrayLike<number>;
}

export interface PruneInput {
  /** The pass's lists, in match()'s order. */
  lists: ScoredList[];
  /** The word bits a chunk must hold to rank (tier 0). */
  required: number;
  need: number;
  /** Per page: its D8 group plus one (0: none), and its title boost share; `titled` lists the pages with either. */
  pageGroup: Uint8Array;
  titleBoost: Float64Array;
  titled: number[];
  /** The share of the exhaustive search's postings read after which it gives up (default WORK_SHARE). */
  workShare?: number;
  /**
   * Chunks holding only some of the words rank too, in FEWER_TIER below those holding every
   * required word; every page holding them all is then among `apart` (stages/prune.ts).
   */
  fewer?: boolean;
  /** Pages rankByOrders() scores first, whatever their depth, beside the title matches. */
  apart?: number[];
  /**
   * Lists of `lists` whose pages rankByOrders() ranks whatever their depth, each scored only
   * when it may rank: bounded by those lists' postings plus the most the others can add.
   */
  bounded?: ScoredList[];
}

/**
 * A query word's stored page order (D51). `lists`: what the order ranks pages by, weighed as
 * the query weighs them, when that is not the query's lists of the word (an order of one of
 * its typo terms, D53).
 */
export interface WordOrder {
  word: number;
  order: PageOrder;
  lists?: ScoredList[];
}

/** A word's order with the lists it ranks pages by: its own `lists`, or the query's lists of the word. */
type ListedOrder = Required<WordOrder>;

/** Whether an order holds every page holding its word (not only the first ORDER_LENGTH). */
const complete = (order: PageOrder): boolean => order.pages.length === order.holding;

/** A ranked page: its class and score as the exhaustive ranking computes them, and its best chunk (-1: its intro stands for it). */
export interface RankedPage {
  page: number;
  klass: number;
  score: number;
  best: number;
}

export interface PruneResult {
  pages: RankedPage[];
  postings: number;
  candidates: number;
}

export class PrunedRanking {
  private readonly cursor: PostingsCursor;
  private readonly norms: FieldNorms[];
  /** Per field, the smallest normalisation: what a block's postings are bounded with. */
  private readonly shortest: number[];
  /** Per chunk: what the lists read so far gave it, and their word bits (the shard's match() accumulators, borrowed); the chunks reached, in a lent buffer's docs. */
  private readonly partial: Float64Array;
  private readonly partialMask: Uint32Array;
  private readonly touched: Uint32Array;
  private touchedCount = 0;
  /** Per chunk, while pages are scored exactly: the lent buffer's scores and masks (written only within the pages scored, each zeroed first). */
  private readonly exact: Float64Array;
  private readonly exactMask: Uint32Array;
  /** Per page: whether it is being scored exactly. */
  private readonly inBatch: Uint8Array;
  /** Per page: its index among the candidates, -1 when not one. */
  private readonly slot: Int32Array;
  /** Per candidate: its page, bound (class and score), and (while bounds are made) its best three chunk bounds (bestThrees[3e, 3e + 3)) and chunks seen. */
  private candidatePage = new Int32Array(1024);
  private boundClass = new Uint8Array(1024);
  private boundScore = new Float64Array(1024);
  private bestThrees = new Float64Array(3 * 1024);
  private seen = new Uint32Array(1024);
  /** One page's best three chunk scores, while a list is read or a page's bound is made. */
  private readonly pageBest = new Float64Array(3);
  /** Per candidate, while bounds are made: what its chunks may still gain. */
  private unread = new Float64Array(1024);
  private candidateCount = 0;
  private postings = 0;
  /** Postings the pruned search may read before it gives up for the exhaustive one. */
  private budget = 0;

  constructor(
    private readonly shard: Shard,
    private readonly layout: PageLayout,
    lent: { docs: Uint32Array; scores: Float64Array; masks: Uint32Array },
  ) {
    this.cursor = shard.newCursor();
    this.norms = shard.fields.map((_f, f) => shard.norms(f));
    this.shortest = shard.fields.map((_f, f) => shard.shortestNorm(f));
    // Lent arrays are taken once: they must already hold every chunk (a buffer match() grows would leave them behind).
    if (lent.docs.length < shard.documentCount) throw new Error("pruned search: the lent buffer must hold every chunk");
    const { scores, masks } = shard.accumulators();
    this.partial = scores;
    this.partialMask = masks;
    this.touched = lent.docs;
    this.exact = lent.scores;
    this.exactMask = lent.masks;
    this.slot = new Int32Array(layout.firstChunk.length).fill(-1);
    this.inBatch = new Uint8Array(layout.firstChunk.length);
  }

  rank(input: PruneInput): PruneResult | undefined {
    this.budgetFor(input);
    try {
      return this.ranked({ ...input, lists: this.shard.withBounds(input.lists) });
    } finally {
      this.reset();
    }
  }

  /**
   * A one-word search ranked from the word's pages in their order by score, as a search
   * without title groups ranks them (`order`, complete or not). Title
   * groups come first, then the rest in that order: only the pages that can rank are scored.
   * Undefined when the order cannot tell (a title boost, or too few pages in it).
   */
  rankInOrder(input: PruneInput, order: PageOrder): PruneResult | undefined {
    this.postings = 0;
    try {
      return this.inOrder(input, order.pages, complete(order));
    } finally {
      this.reset();
    }
  }

  private inOrder(input: PruneInput, order: ArrayLike<number>, complete: boolean): PruneResult | undefined {
    const { need, pageGroup, titleBoost } = input;
    const { chunkCounts } = this.layout;
    const picks: number[] = [];
    let exactTitles = 0;
    let titleMatches = 0;
    for (const p of input.titled) {
      if (titleBoost[p]) return undefined;
      if (this.slot[p]! >= 0 || !chunkCounts[p]) continue;
      if (pageGroup[p] === EXACT_TITLE) {
        exactTitles++;
        picks.push(this.offer(p, -1));
      } else if (pageGroup[p]) titleMatches++;
    }
    const room = Math.max(0, need - exactTitles);
    const matchesWanted = Math.min(room, titleMatches);
    const othersWanted = room - matchesWanted;
    // Within a title group, pages rank by score as in the order; so do the untitled ones.
    let matchesInOrder = 0;
    let others = 0;
    for (let i = 0; i < order.length && (matchesInOrder < matchesWanted || others < othersWanted); i++) {
      const p = order[i]!;
      const group = pageGroup[p];
      if (group === EXACT_TITLE) continue;
      if (group) {
        if (matchesInOrder++ < matchesWanted) picks.push(this.offer(p, -1));
      } else if (others++ < othersWanted) picks.push(this.offer(p, -1));
    }
    if (others < othersWanted && !complete) return undefined;
    // Title matches past the order rank below those in it, and above every untitled page: scored when they may rank.
    if (matchesInOrder < matchesWanted)
      for (const p of input.titled)
        if (pageGroup[p] === TITLE_MATCH && chunkCounts[p] && this.slot[p]! < 0) picks.push(this.offer(p, -1));
    const ranked: RankedPage[] = [];
    this.scoreExactly(input, picks, ranked);
    return { pages: this.best(ranked, need), postings: this.postings, candidates: picks.length };
  }

  /**
   * A search of several words, each with its stored page order (D51), by Fagin's threshold
   * algorithm. A page's score is convex in its chunks' scores (the best three, weighed) and a
   * chunk's is at most the number of words times the sum of its one-word scores; so a page
   * at depth m or deeper in every order scores at most that many times the sum of each
   * order's page at depth m, scored for its word alone. Pages are taken from the orders'
   * heads, twice as deep each round, and scored exactly, until that bound falls below the
   * last page kept. Title matches, boosted titles and the pages `apart` are scored whatever
   * their depth. With `fewer`, the pages past the orders rank in FEWER_TIER: the orders then
   * need not be every word's, only those of the words the pages apart leave out.
   * Undefined when the orders end before the bound falls, when even their ends would not
   * bound the pages past them below the last page kept, or past the budget.
   */
  rankByOrders(input: PruneInput, orders: WordOrder[]): PruneResult | undefined {
    this.budgetFor(input);
    try {
      return this.byOrders(input, orders);
    } finally {
      this.reset();
    }
  }

  /** Starts a search that may give up: no postings read yet, and its share of what the exhaustive search would read. */
  private budgetFor(input: PruneInput): void {
    this.postings = 0;
    let all = 0;
    for (const l of input.lists) all += l.df;
    this.budget = (input.workShare ?? WORK_SHARE) * all;
  }

  private byOrders(input: PruneInput, wordOrders: WordOrder[]): PruneResult | undefined {
    const { need } = input;
    // Each order's lists, found once: its bound scores a page by them every round.
    const orders = wordOrders.map(
      (o): ListedOrder => ({ ...o, lists: o.lists ?? input.lists.filter((l) => l.word === o.word) }),
    );
    const { chunkCounts } = this.layout;
    const ranked: RankedPage[] = [];
    const first: number[] = [];
    for (const p of [...input.titled, ...(input.apart ?? [])])
      if (this.slot[p]! < 0 && chunkCounts[p]) first.push(this.offer(p, -1));
    this.scoreExactly(input, first, ranked);
    // A page none of the orders reached ranks untitled, and (with `fewer`) holds some of the words only.
    const unseen = input.fewer ? UNTITLED + FEWER_TIER : UNTITLED;
    const bounded = input.bounded?.length ? this.boundedPages(input.bounded) : undefined;
    const deepest = Math.max(...orders.map((o) => o.order.pages.length));
    let endBound: number | undefined;
    for (let depth = 0, next = need; depth < deepest; next *= 2) {
      const picks: number[] = [];
      for (const { order } of orders) {
        const { pages } = order;
        for (let k = depth; k < Math.min(next, pages.length); k++)
          if (this.slot[pages[k]!]! < 0) picks.push(this.offer(pages[k]!, -1));
      }
      this.scoreExactly(input, picks, ranked);
      depth = Math.min(next, deepest);
      const kept = ranked.length >= need ? this.best(ranked, need) : undefined;
      const last = kept?.[need - 1];
      if (last && !reaches(unseen, this.unseenBound(input, orders, depth), last))
        return this.withBounded(input, bounded, ranked, last);
      if (this.postings > this.budget) return undefined;
      // The last page kept moves little after the first rounds (at 5M chunks, 0.3–12% more after
      // the second, in seven queries): when even the orders' ends do not bound the pages past
      // them below it, the search would most likely read on to those ends and give up there.
      if (
        depth >= 2 * need &&
        depth < deepest &&
        (!last || reaches(unseen, (endBound ??= this.unseenBound(input, orders, deepest)), last))
      )
        return undefined;
    }
    return undefined;
  }

  /**
   * The best `need` ranked pages, once the bounded pages that may reach the last page kept are
   * scored: they only raise it, so the bounds checked stay below it.
   */
  private withBounded(
    input: PruneInput,
    bounded: number[] | undefined,
    ranked: RankedPage[],
    last: RankedPage,
  ): PruneResult {
    const unscored = bounded?.filter((p) => this.slot[p]! < 0) ?? [];
    const { unread, words } = unscored.length ? this.unreadBound(input, input.bounded!) : { unread: 0, words: 0 };
    const rising = unscored.filter((p) => this.mayReach(input, p, unread, words, last));
    this.scoreExactly(
      input,
      rising.map((p) => this.offer(p, -1)),
      ranked,
    );
    return { pages: this.best(ranked, input.need), postings: this.postings, candidates: this.candidateCount };
  }

  /** The pages holding the postings of `bounded`, read whole into the partial accumulators (for mayReach()). */
  private boundedPages(bounded: ScoredList[]): number[] {
    for (const l of bounded) this.accumulate(l);
    const { pageOfChunk } = this.layout;
    const { inBatch, touched } = this;
    const pages: number[] = [];
    for (let i = 0; i < this.touchedCount; i++) {
      const p = pageOfChunk[touched[i]!]!;
      if (!inBatch[p]) {
        inBatch[p] = 1;
        pages.push(p);
      }
    }
    for (const p of pages) inBatch[p] = 0;
    return pages;
  }

  /** The most the lists other than `bounded` can add to a chunk (reading their bounds), and their words. */
  private unreadBound(input: PruneInput, bounded: ScoredList[]): { unread: number; words: number } {
    const apart = new Set(bounded.map((l) => l.address));
    let unread = 0;
    let words = 0;
    for (const l of this.shard.withBounds(input.lists.filter((l) => !apart.has(l.address)))) {
      unread += l.max;
      words |= 1 << l.word;
    }
    return { unread, words };
  }

  /**
   * The most a page at depth `depth` or deeper in every order may score (-Infinity: it cannot
   * hold every required word). Past its end, a complete order's term is in no such page. A
   * page's score is at most the sum of its scores for each order's lists alone (the best three
   * chunks, weighed, are a convex function of the chunks' scores), times its number of words.
   */
  private unseenBound(input: PruneInput, orders: ListedOrder[], depth: number): number {
    let sum = 0;
    let words = 0;
    let held = 0;
    for (const wordOrder of orders) {
      const { word, order } = wordOrder;
      words |= 1 << word;
      if (depth >= order.pages.length && complete(order)) continue;
      held |= 1 << word;
      sum += this.orderScore(input, wordOrder, order.pages[Math.min(depth, order.pages.length - 1)]!);
    }
    if (input.required & words & ~held && !input.fewer) return -Infinity;
    return sum * popcount(words) * (1 + 1e-9);
  }

  /** A candidate page's score for an order's lists alone (raised by its title boost, if any: a bound all the same). */
  private orderScore(input: PruneInput, { word, lists }: ListedOrder, page: number): number {
    const alone = { ...input, lists, required: (1 << word) >>> 0 };
    const scored: RankedPage[] = [];
    this.scorePages(alone, [page], scored);
    return scored[0]?.score ?? 0;
  }

  private ranked(input: PruneInput): PruneResult | undefined {
    const plan = this.readOrder(input);
    const reading = this.readLists(input, plan);
    if (!reading) return undefined;
    const unseenBound = this.boundCandidates(input, plan, reading);
    const candidates = this.candidateCount;
    const ranked: RankedPage[] = [];
    if (!this.scoreBestBounds(input, ranked)) return undefined;
    const last = this.best(ranked, input.need)[input.need - 1];
    const alive = this.refine(input, plan, reading, this.mayStillRank(last), last);
    if (!alive) return undefined;
    this.scoreExactly(
      input,
      alive.map((p) => this.slot[p]!),
      ranked,
    );
    const kept = this.best(ranked, input.need);
    const cut = kept[input.need - 1];
    // Pages never seen must fall below the last page kept; by the check that stopped the reading, they do.
    if (unseenBound >= 0 && (!cut || reaches(UNTITLED, unseenBound, cut))) return undefined;
    return { pages: kept, postings: this.postings, candidates };
  }

  /**
   * The order lists are read in: the short lists first (cheap, and they give the floor the
   * long ones' blocks are skipped under), then the rest; each group the list that can add the
   * most first. With what the lists from each on can add (rest), and their words.
   */
  private readOrder(input: PruneInput): ReadPlan {
    const { lists } = input;
    const first = (l: ScoredList) => (l.df < CHECK_DF ? 0 : 1);
    const order = lists
      .map((_l, i) => i)
      .sort((a, b) => first(lists[a]!) - first(lists[b]!) || lists[b]!.max - lists[a]!.max || a - b);
    const rest = new Float64Array(order.length + 1);
    const restWords = new Uint32Array(order.length + 1);
    for (let i = order.length - 1; i >= 0; i--) {
      const l = lists[order[i]!]!;
      rest[i] = rest[i + 1]! + l.max;
      restWords[i] = (restWords[i + 1]! | (1 << l.word)) >>> 0;
    }
    return { order, rest, restWords };
  }

  /**
   * Reads the lists in order into the accumulators, skipping the blocks that cannot lift a page
   * none of whose chunks was read to the floor, until no such page can rank at all (or the
   * lists left cannot give a chunk every required word). Undefined past the budget.
   */
  private readLists(input: PruneInput, { order, rest, restWords }: ReadPlan): Reading | undefined {
    const { lists } = input;
    const partials: Partial[] = [];
    let sureTitled = 0;
    for (const p of input.titled) if (input.pageGroup[p] && this.layout.chunkCounts[p]) sureTitled++;
    let read = 0;
    for (; read < order.length; read++) {
      const l = lists[order[read]!]!;
      if (read > 0 && (restWords[read]! & input.required) >>> 0 !== input.required) break;
      let floor = -Infinity;
      // What the skipped blocks of lists read in part may add to a chunk none of whose postings was read.
      const skippedMost = partials.reduce((sum, p) => sum + p.max, 0);
      const words = popcount(partials.reduce((m, p) => (m | (1 << p.list.word)) >>> 0, restWords[read]!));
      const long = l.df >= CHECK_DF;
      if (long) {
        // What `need` pages are sure to score above: a page none of whose chunks was read scores at most this much.
        floor =
          read > 0 && l.df >= this.touchedCount
            ? this.sureFloor(input)
            : sureTitled >= input.need
              ? Infinity
              : -Infinity;
        if (PAGE_FACTOR * (rest[read]! + skippedMost) * words < floor) break;
      }
      const skipped = this.accumulate(
        l,
        long ? { floor, after: rest[read + 1]! + skippedMost, words, input, room: input.need - sureTitled } : undefined,
      );
      if (skipped) partials.push(skipped);
      if (this.postings > this.budget) return undefined;
    }
    return { read, partials };
  }

  /** Bounds every page that may rank (bound()); returns the bound of a page none of whose chunks was read (-1: it cannot rank). */
  private boundCandidates(input: PruneInput, { rest, restWords }: ReadPlan, { read, partials }: Reading): number {
    // The unread lists, and the skipped blocks of those read in part, bound what the chunks can still gain.
    let unread = rest[read]!;
    let unreadWords = restWords[read]!;
    for (const p of partials) {
      unread += p.max;
      unreadWords = (unreadWords | (1 << p.list.word)) >>> 0;
    }
    this.bound(input, rest[read]!, unreadWords, partials);
    return unread > 0 && (unreadWords & input.required) >>> 0 === input.required
      ? PAGE_FACTOR * unread * popcount(unreadWords)
      : -1;
  }

  /** Scores exactly the best bounds first, in rounds that double, until `need` pages rank (or none is left); false past the budget. */
  private scoreBestBounds(input: PruneInput, ranked: RankedPage[]): boolean {
    const candidates = this.candidateCount;
    for (let scored = 0, round = input.need; ranked.length < input.need && scored < candidates; round *= 2) {
      const entries = bestEntries(this.boundClass, this.boundScore, candidates, round, this.candidatePage).filter(
        (e) => this.boundClass[e] !== 255,
      );
      this.scoreExactly(input, entries, ranked);
      scored += entries.length;
      // Scored already: marked with an impossible bound.
      for (const e of entries) this.boundClass[e] = 255;
      if (this.postings > this.budget || !entries.length) break;
    }
    return this.postings <= this.budget;
  }

  /** The candidates not scored yet whose bound reaches the last page kept (all of them when fewer than `need` rank). */
  private mayStillRank(last: RankedPage | undefined): number[] {
    const alive: number[] = [];
    for (let e = 0; e < this.candidateCount; e++) {
      if (this.boundClass[e] === 255) continue;
      if (!last || reaches(this.boundClass[e]!, this.boundScore[e]!, last)) alive.push(this.candidatePage[e]!);
    }
    return alive;
  }

  /**
   * The skipped blocks, then the unread lists, best first, read for the pages that may still
   * rank: each tightens their bounds, and the pages that can no longer reach the last page
   * kept drop out. The pages left; undefined past the budget.
   */
  private refine(
    input: PruneInput,
    { order, rest }: ReadPlan,
    { read, partials }: Reading,
    alive: number[],
    last: RankedPage | undefined,
  ): number[] | undefined {
    if (!last) return alive;
    const steps: { list: ScoredList; skipped?: Float64Array; max: number }[] = [
      ...partials,
      ...order.slice(read).map((i) => ({ list: input.lists[i]!, max: input.lists[i]!.max })),
    ];
    const stepRest = new Float64Array(steps.length + 1);
    const stepWords = new Uint32Array(steps.length + 1);
    for (let i = steps.length - 1; i >= 0; i--) {
      stepRest[i] = stepRest[i + 1]! + steps[i]!.max;
      stepWords[i] = (stepWords[i + 1]! | (1 << steps[i]!.list.word)) >>> 0;
    }
    for (let i = 0; i < steps.length && alive.length; i++) {
      const { list, skipped } = steps[i]!;
      this.readFor(list, alive, skipped);
      // Bounds are tightened after the lists that cost more than the tightening.
      if (list.df >= alive.length || i === steps.length - 1) {
        for (const p of alive) this.postings += this.layout.chunkCounts[p]!;
        const partialsFrom = Math.min(i + 1, partials.length);
        const listsLeft = i < partials.length ? rest[read]! : stepRest[i + 1]!;
        alive = alive.filter((p) =>
          this.mayReach(input, p, listsLeft + this.skippedBound(p, partials, partialsFrom), stepWords[i + 1]!, last),
        );
      }
      if (this.postings > this.budget) return undefined;
    }
    return alive;
  }

  /** The best `need` of the ranked pages: class, then score, then page order. */
  private best(ranked: RankedPage[], need: number): RankedPage[] {
    return [...ranked].sort((a, b) => a.klass - b.klass || b.score - a.score || a.page - b.page).slice(0, need);
  }

  /** Adds a list's postings to the accumulators of the pages' chunks (of the skipped blocks only, if given). */
  private readFor(l: ScoredList, pages: number[], skipped?: Float64Array): void {
    this.readInto(l, pages, this.partial, this.partialMask, skipped);
  }

  /**
   * Adds a list's postings for the pages' chunks (`pages` in chunk order, or any order when
   * read whole) into `scores` and `masks`: the list read whole, or at each page's block,
   * whichever costs less. Chunks first reached in the partial accumulators are noted as touched.
   */
  private readInto(
    l: ScoredList,
    pages: number[],
    scores: Float64Array,
    masks: Uint32Array,
    skipped?: Float64Array,
  ): void {
    const { firstChunk, chunkCounts, pageOfChunk } = this.layout;
    let chunks = 0;
    for (const p of pages) chunks += chunkCounts[p]!;
    const { touched, cursor, inBatch } = this;
    const tracked = scores === this.partial;
    const { lengths, table } = this.norms[l.field]!;
    const bit = (1 << l.word) >>> 0;
    const w = l.weight;
    const k1 = BM25.k + 1;
    const docs = cursor.docs;
    const tfs = cursor.tfs;
    let count = this.touchedCount;
    cursor.open(l.address);
    if (l.df <= SEEK_COST * pages.length || l.df <= chunks) {
      for (const p of pages) inBatch[p] = 1;
      for (let b = 0; b < cursor.blocks; b++) {
        if (skipped && !skipped[b]) continue;
        const n = cursor.decode(b);
        for (let i = 0; i < n; i++) {
          const d = docs[i]!;
          if (!inBatch[pageOfChunk[d]!]) continue;
          const tf = tfs[i]!;
          if (tracked && masks[d] === 0) touched[count++] = d;
          scores[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
          masks[d] = (masks[d]! | bit) >>> 0;
        }
        this.postings += n;
      }
      for (const p of pages) inBatch[p] = 0;
    } else {
      const sorted = [...pages].sort((a, b) => firstChunk[a]! - firstChunk[b]!);
      for (const p of sorted) {
        const from = firstChunk[p]!;
        const to = from + chunkCounts[p]!;
        if (to === from) continue;
        for (let b = cursor.blockOf(from); b < cursor.blocks; b++) {
          if (skipped && !skipped[b]) {
            if (cursor.lastDoc(b) >= to - 1) break;
            continue;
          }
          const n = cursor.decode(b);
          this.postings += n;
          for (let i = 0; i < n; i++) {
            const d = docs[i]!;
            if (d < from || d >= to) continue;
            const tf = tfs[i]!;
            if (tracked && masks[d] === 0) touched[count++] = d;
            scores[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
            masks[d] = (masks[d]! | bit) >>> 0;
          }
          if (docs[n - 1]! >= to - 1) break;
        }
      }
    }
    this.touchedCount = count;
  }

  /** Whether a page may still reach the ranked page `last`, with the lists left unread adding at most `unread` to each chunk. */
  private mayReach(input: PruneInput, p: number, unread: number, unreadWords: number, last: RankedPage): boolean {
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
  private accumulate(
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
  private sureFloor(input: PruneInput): number {
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

  /** Adds a chunk's score (or bound) to its page's best three, the page becoming a candidate. */
  private offer(p: number, s: number): number {
    let e = this.slot[p]!;
    if (e < 0) {
      e = this.candidateCount++;
      if (e >= this.candidatePage.length) this.grow();
      this.slot[p] = e;
      this.candidatePage[e] = p;
      this.bestThrees.fill(-1, 3 * e, 3 * e + 3);
      this.seen[e] = 0;
      this.boundClass[e] = 0;
      this.boundScore[e] = 0;
    }
    this.place(e, s);
    return e;
  }

  /**
   * Each page that may rank, with the most it may score: its chunks read so far at what they
   * hold plus all the unread lists could add, its unread chunks at what those lists could
   * give alone; title matches and boosted titles whatever their chunks.
   */
  private bound(input: PruneInput, unreadLists: number, unreadWords: number, partials: Partial[]): void {
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
  private skippedBound(p: number, partials: Partial[], from: number): number {
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

  private place(e: number, s: number): void {
    placeBestThree(this.bestThrees, 3 * e, s);
  }

  /**
   * Scores the candidates' pages exactly: every list, in match()'s order, over the blocks that
   * hold their chunks; then each page as the exhaustive ranking does.
   */
  private scoreExactly(input: PruneInput, entries: number[], out: RankedPage[]): void {
    this.scorePages(
      input,
      entries.map((e) => this.candidatePage[e]!),
      out,
    );
  }

  /** scoreExactly() of pages, candidates or not. */
  private scorePages(input: PruneInput, pages: number[], out: RankedPage[]): void {
    if (!pages.length) return;
    const { firstChunk, chunkCounts } = this.layout;
    for (const p of pages) {
      this.exact.fill(0, firstChunk[p]!, firstChunk[p]! + chunkCounts[p]!);
      this.exactMask.fill(0, firstChunk[p]!, firstChunk[p]! + chunkCounts[p]!);
    }
    for (const l of input.lists) this.readInto(l, pages, this.exact, this.exactMask);
    for (const p of pages) {
      const r = this.rankedPage(input, p);
      if (r) out.push(r);
    }
  }

  /**
   * A page as the exhaustive ranking ranks it, from its chunks' exact scores (stages/pages.ts):
   * its best chunk, lowest tier first, then its next two scores of that tier (D61). Undefined
   * when it does not rank.
   */
  private rankedPage(input: PruneInput, p: number): RankedPage | undefined {
    const { exact, exactMask } = this;
    const { required, pageGroup, titleBoost, fewer } = input;
    const from = this.layout.firstChunk[p]!;
    const count = this.layout.chunkCounts[p]!;
    const chunks: number[] = [];
    const scores: number[] = [];
    const tiers: number[] = [];
    // A title match ranks by its best chunk whatever its tier, as in the exhaustive ranking (D61).
    const anyTier = fewer || pageGroup[p]! > 0;
    for (let d = from; d < from + count; d++) {
      const m = exactMask[d]!;
      const holding = (m & required) >>> 0 === required;
      if (m && (holding || anyTier)) {
        chunks.push(d);
        scores.push(exact[d]! * popcount(m));
        tiers.push(holding ? 0 : FEWER_TIER);
      }
    }
    const group = pageGroup[p] ? pageGroup[p]! - 1 : 2;
    if (!chunks.length)
      return group < 2 && count ? { page: p, klass: group * TIERS + INTRO_TIER, score: 0, best: -1 } : undefined;
    const byRank = chunks
      .map((_c, i) => i)
      .sort((a, b) => tiers[a]! - tiers[b]! || scores[b]! - scores[a]! || chunks[a]! - chunks[b]!);
    const tier = tiers[byRank[0]!]!;
    const evidence = this.pageBest.fill(-1);
    for (const i of byRank.slice(1)) if (tiers[i] === tier) placeBestThree(evidence, 0, scores[i]!);
    const score = pageScore(scores[byRank[0]!]!, evidence[0]!, evidence[1]!, titleBoost[p]!);
    return { page: p, klass: group * TIERS + tier, score, best: chunks[byRank[0]!]! };
  }

  private grow(): void {
    const n = this.candidatePage.length * 2;
    const grow = <T extends Int32Array | Uint8Array | Float64Array | Uint32Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.candidatePage = grow(this.candidatePage, (k) => new Int32Array(k));
    this.boundClass = grow(this.boundClass, (k) => new Uint8Array(k));
    this.boundScore = grow(this.boundScore, (k) => new Float64Array(k));
    this.bestThrees = grow(this.bestThrees, (k) => new Float64Array(3 * k));
    this.seen = grow(this.seen, (k) => new Uint32Array(k));
  }

  private clearCandidates(): void {
    for (let e = 0; e < this.candidateCount; e++) this.slot[this.candidatePage[e]!] = -1;
    this.candidateCount = 0;
  }

  private reset(): void {
    this.clearCandidates();
    for (let i = 0; i < this.touchedCount; i++) {
      const d = this.touched[i]!;
      this.partial[d] = 0;
      this.partialMask[d] = 0;
    }
    this.touchedCount = 0;
  }
}

/** Whether a bound (class, score) may reach a ranked page: rank above it, or tie with it. */
function reaches(klass: number, score: number, page: RankedPage): boolean {
  return klass < page.klass || (klass === page.klass && score >= page.score);
}
