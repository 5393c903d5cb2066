/**
 * How a query is run (D77, D90): one of a few named plans, chosen from the query's shape before
 * any list is read, each an object with what it needs and rank(run). Every plan gives the
 * same order (D61): `exhaustive` scores every chunk holding a query word (the oracle, asked for
 * with `pruning: false`), `words` ranks the same pages by the block-max executor.
 *
 *   none         no query word, or no page with the page_id asked for
 *   within-page  page_id: that page's chunks, each a hit (D7)
 *   one-word     one word the index holds, with a stored page order (D51): its first pages
 *   function-words  function words only, each with a stored order (D99): the first pages of the rarest's
 *   typo-orders  one word held only through its typo terms: their stored orders, to a threshold (D100)
 *   words        the tiers of words, best first, by the block-max executor
 *   exhaustive   every chunk holding a query word scored (the oracle)
 */
import type { ParsedQuery } from "../text/query";
import type { QueryLists } from "../ranking/query-lists";
import type { SearchContext } from "../stages/context";
import type { Ranking } from "../stages/candidate";
import type { QueryTerms } from "../stages/terms";

/** What a plan ranks: the query (its phrases that exist), its terms and lists, and the window with the depth it needs. */
export interface PlanRun {
  ctx: SearchContext;
  query: ParsedQuery;
  terms: QueryTerms;
  lists: QueryLists;
  /** The first page shown, and how many pages must be ranked (at least PROXIMITY_WINDOW). */
  from: number;
  need: number;
  /** Lists holding fewer postings than this are ranked to the end of every tier (PRUNE_FROM; tests lower it). */
  pruneFrom: number;
}

export const PLAN_NAMES = [
  "none",
  "within-page",
  "one-word",
  "function-words",
  "typo-orders",
  "words",
  "exhaustive",
] as const;
type PlanName = (typeof PLAN_NAMES)[number];

export interface Plan {
  readonly name: PlanName;
  rank(run: PlanRun): Ranking;
}

export const NOTHING: Plan = { name: "none", rank: () => ({ pages: [], total: 0 }) };
