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
import { popcount, type ScoredList } from "../index/shard-types";
import type { Partial } from "./page-bounds";
import { type PruneInput, type PruneResult, type RankedPage, reaches, UNTITLED } from "./page-scorer";
import { OrderedRanking } from "./by-orders";
import { PAGE_FACTOR } from "./rules";
import { bestEntries } from "./topk";

/** Whether to stop reading lists is asked before a list of at least this many postings: shorter ones cost less than the asking. */
const CHECK_DF = 2048;

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

export class PrunedRanking extends OrderedRanking {
  rank(input: PruneInput): PruneResult | undefined {
    this.budgetFor(input);
    try {
      return this.ranked({ ...input, lists: this.shard.withBounds(input.lists) });
    } finally {
      this.reset();
    }
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
}
