/**
 * The oracle (`pruning: false`): every chunk holding a query word scored from every posting of
 * its lists (ranking/range-scores.ts), each page entered by the rules, the title matches whose
 * chunks hold nothing by their intros, and the best `need` ranked. Exact, and as slow as the
 * lists are long: the executor (plans/words.ts) is tested against it.
 */
import { addIntros, enterPages, topPages } from "../stages/pages";
import { phraseCheck } from "../stages/phrases";
import { markTitleGroups } from "../stages/title-groups";
import type { Plan, PlanRun } from "./plan";

export const EXHAUSTIVE: Plan = {
  name: "exhaustive",
  rank({ ctx, query, terms, lists, from, need }: PlanRun) {
    const { scratch, meter, text } = ctx;
    const titled = markTitleGroups(ctx, query, terms.title, terms.informative);
    const phrases = query.phrases.length > 0;
    const keep = phrases ? phraseCheck(ctx, query) : undefined;
    const entries = scratch.entries;
    if (!phrases || keep) {
      const scores = ctx.ranges.score(lists, 0, text.documentCount);
      meter.add(scores.count, ctx.ranges.postings);
      enterPages(ctx, lists, scores, entries, keep);
    }
    const { entered } = scratch;
    entered.fresh();
    for (let e = 0; e < entries.count; e++) entered.mark(entries.page[e]!);
    if (!phrases) addIntros(ctx, entries, titled, (p) => entered.has(p));
    return { pages: topPages(ctx, query, terms, lists, entries, from, need), total: entries.count };
  },
};
