/** The plan of a query (plan.ts), from its shape and the options, before any list is read. */
import type { SearchOptions } from "../options";
import type { QueryLists } from "../ranking/query-lists";
import type { SearchContext } from "../stages/context";
import type { QueryTerms } from "../stages/terms";
import type { PageOrder } from "../ranking/page-orders";
import { EXHAUSTIVE } from "./exhaustive";
import { NOTHING, type Plan } from "./plan";
import type { WordSpec } from "../postings/shard-types";
import { FunctionWords } from "./function-words";
import { OneWord } from "./one-word";
import { TypoOrders } from "./typo-orders";
import { WithinPage } from "./within-page";
import { WORDS } from "./words";

/** `terms`: the query's words as the index looks them up (their keys, whether typed on, whether function words). */
export function planOf(
  ctx: SearchContext,
  lists: QueryLists | undefined,
  options: SearchOptions,
  terms: QueryTerms | undefined,
  phrases: boolean,
): Plan {
  // A query whose words no chunk holds may still name a title or a redirect (D8): the words plan finds it.
  if (!lists) return NOTHING;
  if (options.pageId !== undefined) {
    const page = ctx.catalog.pages.indexOf(options.pageId);
    return page < 0 ? NOTHING : new WithinPage(page, ctx.catalog.chunkRange(page));
  }
  // A ranking rule, not a shortcut (D99): the oracle ranks such a query the same way.
  const fewest = !phrases && terms && lists.words > 1 && !terms.informative ? leastHeld(ctx, terms.exact) : undefined;
  if (fewest) return new FunctionWords(fewest);
  if (options.pruning === false) return EXHAUSTIVE;
  const spec = terms?.exact[0];
  const order = spec && lists.words === 1 && !lists.typoable && !phrases ? ctx.orders?.get(spec) : undefined;
  if (order) return new OneWord(order);
  return lists.words === 1 && lists.typoable && !phrases && ctx.orders ? TYPO_ORDERS : WORDS;
}

const TYPO_ORDERS = new TypoOrders();

/** The stored order of the word the fewest pages hold, when every word has one. */
function leastHeld(ctx: SearchContext, specs: WordSpec[]): PageOrder | undefined {
  let fewest: PageOrder | undefined;
  for (const spec of specs) {
    const order = ctx.orders?.get(spec);
    if (!order) return undefined;
    if (!fewest || order.holding < fewest.holding) fewest = order;
  }
  return fewest;
}
