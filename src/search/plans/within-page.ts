/** page_id (D7): that page's chunks, each a hit, scored exactly (its range alone is read). */
import { rankChunksOfPage } from "../stages/pages";
import { phraseCheck } from "../stages/phrases";
import type { Plan, PlanRun } from "./plan";

export class WithinPage implements Plan {
  readonly name = "within-page";
  constructor(
    /** The page's index, and its chunks [from, to). */
    private readonly page: number,
    private readonly range: { from: number; to: number },
  ) {}

  rank({ ctx, query, lists }: PlanRun) {
    const keep = query.phrases.length ? phraseCheck(ctx, query) : undefined;
    if (query.phrases.length && !keep) return { pages: [], total: 0 };
    const scores = ctx.ranges.score(lists, this.range.from, this.range.to);
    ctx.meter.add(scores.count, ctx.ranges.postings);
    return rankChunksOfPage(ctx, query, lists, this.page, scores, keep);
  }
}
