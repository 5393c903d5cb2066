/**
 * The one-word plan (D51, kept by D90 where it pays): a query of one word the index holds
 * (typed on or ended), with a page order stored for it when the snapshot was built
 * (ranking/page-orders.ts, plans/orders.ts). The order is its pages holding the word as the
 * rules rank them with no title in play, so the pages of the window are its first ones once
 * the title matches and boosted pages, ranked apart, are left out: each is scored over its own
 * chunks, and no list is read. Deeper than the order, the words plan ranks instead.
 */
import type { PageOrder } from "../ranking/page-orders";
import { OTHER_GROUP, rankClass } from "../ranking/rules";
import { addIntros, topPages } from "../stages/pages";
import { enterApart, scorePages } from "./apart";
import type { Plan, PlanRun } from "./plan";
import { handOver } from "./words";

export class OneWord implements Plan {
  readonly name = "one-word";
  constructor(private readonly order: PageOrder) {}

  rank(run: PlanRun) {
    const { ctx, query, terms, lists, from, need } = run;
    const { scratch } = ctx;
    const { entries, entered } = scratch;
    const { apart, noChunk } = enterApart(ctx, query, terms, lists, undefined);
    const klass = rankClass(OTHER_GROUP, 0);
    let better = 0;
    for (let e = 0; e < apart; e++) if (entries.klass[e]! < klass) better++;
    const { pages, holding } = this.order;
    // The window's pages of the order, those apart left out; scored in chunk order, so that the
    // lists' cursors move forward through blocks they decode once.
    const taken: number[] = [];
    let i = 0;
    for (; i < pages.length && taken.length < need - better; i++) {
      const p = pages[i]!;
      if (entered.has(p)) continue;
      entered.mark(p);
      taken.push(p);
    }
    const found = scorePages(ctx, lists, taken);
    // The order ran out before the window filled, and pages past it hold the word: they are the words plan's.
    // Its pages scored so far are exact: the words plan takes them as ranked apart (its bar from the start).
    if (found < need - better && i === pages.length && pages.length < holding) {
      return handOver(run, { apart: entries.count, noChunk });
    }
    addIntros(ctx, entries, noChunk, () => false);
    return {
      pages: topPages(ctx, query, terms, lists, entries, from, need),
      total: Math.max(holding, apart),
    };
  }
}
