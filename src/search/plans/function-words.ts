/**
 * The function-words plan (D99): a query of function words only ("what was the a of the",
 * "to be or not to be"), every word with a stored page order (D51). Their lists are the longest
 * of the index (millions of postings at 5M chunks), and no word among them points anywhere: the
 * pages ranked are the title matches and boosted pages, ranked apart, and the first
 * FUNCTION_WORD_PAGES of the order of the word held by the fewest pages, each scored over its
 * own chunks by every word. The same pages for every window, so that each is a slice of one
 * order (D61); no list is read whole.
 */
import type { PageOrder } from "../ranking/page-orders";
import { addIntros, topPages } from "../stages/pages";
import { enterApart, scorePages } from "./apart";
import type { Plan, PlanRun } from "./plan";

/** The pages of the order ranked: a page past them is not shown, whatever the window. */
export const FUNCTION_WORD_PAGES = 100;

export class FunctionWords implements Plan {
  readonly name = "function-words";
  constructor(private readonly order: PageOrder) {}

  rank(run: PlanRun) {
    const { ctx, query, terms, lists, from, need } = run;
    const { entries, entered } = ctx.scratch;
    const { apart, noChunk } = enterApart(ctx, query, terms, lists, undefined);
    const { pages } = this.order;
    const taken: number[] = [];
    for (let i = 0; i < pages.length && i < FUNCTION_WORD_PAGES; i++) {
      const p = pages[i]!;
      if (entered.has(p)) continue;
      entered.mark(p);
      taken.push(p);
    }
    scorePages(ctx, lists, taken);
    addIntros(ctx, entries, noChunk, () => false);
    return { pages: topPages(ctx, query, terms, lists, entries, from, need), total: apart + taken.length };
  }
}
