/** The plan of a query (plan.ts), from its shape and the options, before any list is read. */
import type { SearchOptions } from "../options";
import type { QueryLists } from "../ranking/query-lists";
import type { SearchContext } from "../stages/context";
import { EXHAUSTIVE } from "./exhaustive";
import { NOTHING, type Plan } from "./plan";
import type { WordSpec } from "../postings/shard-types";
import { OneWord } from "./one-word";
import { WithinPage } from "./within-page";
import { WORDS } from "./words";

/** `spec`: the query's first word as the index looks it up (its key, and whether it is typed on). */
export function planOf(
  ctx: SearchContext,
  lists: QueryLists | undefined,
  options: SearchOptions,
  spec: WordSpec | undefined,
  phrases: boolean,
): Plan {
  // A query whose words no chunk holds may still name a title or a redirect (D8): the words plan finds it.
  if (!lists) return NOTHING;
  if (options.pageId !== undefined) {
    const page = ctx.catalog.pages.indexOf(options.pageId);
    return page < 0 ? NOTHING : new WithinPage(page, ctx.catalog.chunkRange(page));
  }
  if (options.pruning === false) return EXHAUSTIVE;
  const order = spec && lists.words === 1 && !lists.typoable && !phrases ? ctx.orders?.get(spec) : undefined;
  return order ? new OneWord(order) : WORDS;
}
