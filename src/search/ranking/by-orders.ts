import type { PageOrder } from "./page-orders";
import { popcount, type ScoredList } from "../index/shard-types";
import { PageBounds } from "./page-bounds";
import { type PruneInput, type PruneResult, type RankedPage, reaches, UNTITLED } from "./page-scorer";
import { FEWER_TIER } from "./rules";

/** pageGroup's values (stages/title-groups.ts): an exact title, a title match. */
const EXACT_TITLE = 1;
const TITLE_MATCH = 2;

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

/** A one-word search ranked from its stored page order, and several words from theirs. */
export class OrderedRanking extends PageBounds {
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

  protected inOrder(input: PruneInput, order: ArrayLike<number>, complete: boolean): PruneResult | undefined {
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

  protected byOrders(input: PruneInput, wordOrders: WordOrder[]): PruneResult | undefined {
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
  protected withBounded(
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
  protected boundedPages(bounded: ScoredList[]): number[] {
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
  protected unreadBound(input: PruneInput, bounded: ScoredList[]): { unread: number; words: number } {
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
  protected unseenBound(input: PruneInput, orders: ListedOrder[], depth: number): number {
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
  protected orderScore(input: PruneInput, { word, lists }: ListedOrder, page: number): number {
    const alone = { ...input, lists, required: (1 << word) >>> 0 };
    const scored: RankedPage[] = [];
    this.scorePages(alone, [page], scored);
    return scored[0]?.score ?? 0;
  }
}
