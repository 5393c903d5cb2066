/**
 * How a query is run: one of a few named plans, chosen from the query's shape and the index's
 * list table before any list is read (issue 44). Each plan gives the same order (D61): the
 * pruned and conjunction plans are exact for the window they rank, and a plan that gives up
 * (its time guard, or a conjunction that does not pay) falls back to its `fallback` plan (the
 * pruned plans of several words: the conjunction) or else to `tiers`, the exhaustive passes,
 * which the others are tested against (test/windows.test.ts).
 *
 *   none           no query word any chunk holds, or no page with the page_id asked for
 *   within-page    page_id: that page's chunks, by the passes of `tiers` within its range
 *   one-word       one word whose lists are long: the pruned top-k, from its stored page order when it has one (D48, D51)
 *   typo-orders    one word no chunk holds exactly: ranked from its typo terms' orders (D53)
 *   word-orders    several words, each with a stored page order (D51)
 *   conjunction    several words without typos: the chunks holding every word; when they fall
 *                  short of the window, the pages past them from the words' orders (D52), else `tiers`
 *   phrases        quoted phrases and nothing else: the conjunction of their words, then the phrase check
 *   tiers          the exhaustive passes, tier by tier (stages/candidates.ts)
 */
import type { Pruning } from "../options";
import type { ParsedQuery } from "../text/query";
import type { Scope } from "../stages/candidates";
import type { SearchContext } from "../stages/context";
import { conjunctionFor, pruningFor, type PruneAsked } from "../stages/prune";
import type { QueryTerms } from "../stages/terms";

export type Plan = (
  | { name: "none" }
  | { name: "within-page"; scope: Required<Scope>; phrasesOnly: boolean }
  | { name: "one-word" | "typo-orders" | "word-orders"; asked: PruneAsked }
  | { name: "conjunction"; pruning: Pruning }
  | { name: "phrases" }
  | { name: "tiers" }
) & {
  /** The plan run when this one gives up; `tiers` after the last. */
  fallback?: Plan;
};

export type PlanName = Plan["name"];

/** Every plan's name, for tests and reports. */
export const PLAN_NAMES = [
  "none",
  "within-page",
  "one-word",
  "typo-orders",
  "word-orders",
  "conjunction",
  "phrases",
  "tiers",
] as const satisfies readonly PlanName[];
// Every plan is named above: a name missing from the list fails to compile here.
const _everyPlanNamed: Exclude<PlanName, (typeof PLAN_NAMES)[number]> extends never ? true : never = true;

/** The plan of a query whose phrases some chunk holds (stages/phrases.ts existingPhrases); `scope` undefined: no such page. */
export function plan(
  ctx: SearchContext,
  query: ParsedQuery,
  terms: QueryTerms | undefined,
  pruning: false | Pruning | undefined,
  scope: Scope | undefined,
): Plan {
  if (!terms || !scope) return { name: "none" };
  const phrasesOnly = onlyPhrases(query, terms);
  if (scope.range) return { name: "within-page", scope: scope as Required<Scope>, phrasesOnly };
  const conjunction = conjunctionFor(ctx, query, terms, pruning);
  const joined: Plan | undefined = conjunction && { name: "conjunction", pruning: conjunction };
  const asked = pruningFor(ctx, query, terms, pruning);
  if (asked) {
    const name = asked.typos ? "typo-orders" : asked.orders ? "word-orders" : "one-word";
    return { name, asked, ...(joined && { fallback: joined }) };
  }
  return joined ?? (phrasesOnly ? { name: "phrases" } : { name: "tiers" });
}

/** Whether every query word stands in a quoted phrase, none allowing typos. */
function onlyPhrases(query: ParsedQuery, terms: QueryTerms): boolean {
  if (!query.phrases.length || terms.typoable) return false;
  const quoted = new Set(query.phrases.flat());
  return terms.words.every((w) => quoted.has(w));
}
