/** The plan of a query (plan.ts), from its shape and the options, before any list is read. */
import type { SearchOptions } from "../options";
import type { QueryLists } from "../ranking/query-lists";
import type { SearchContext } from "../stages/context";
import { EXHAUSTIVE } from "./exhaustive";
import { NOTHING, type Plan } from "./plan";
import { WithinPage } from "./within-page";
import { WORDS } from "./words";

export function planOf(ctx: SearchContext, lists: QueryLists | undefined, options: SearchOptions): Plan {
  // A query whose words no chunk holds may still name a title or a redirect (D8): the words plan finds it.
  if (!lists) return NOTHING;
  if (options.pageId !== undefined) {
    const page = ctx.catalog.pages.indexOf(options.pageId);
    return page < 0 ? NOTHING : new WithinPage(page, ctx.catalog.chunkRange(page));
  }
  return options.pruning === false ? EXHAUSTIVE : WORDS;
}
