/**
 * The pages ranked apart before a plan reads the lists (D90): the title matches (D8) and the
 * pages whose title raises their score are few, each scored over its own chunks; they seed the
 * bar of the tier they stand in, and the plan leaves them out.
 */
import type { QueryLists } from "../ranking/query-lists";
import type { SearchContext } from "../stages/context";
import { enterPages } from "../stages/pages";
import { markTitleGroups } from "../stages/title-groups";
import type { ParsedQuery } from "../text/query";
import type { QueryTerms } from "../stages/terms";

/** How many entries were ranked apart (Scratch.entered marks their pages), and the title matches none of whose chunks holds the words (their intros). */
export interface Apart {
  apart: number;
  noChunk: number[];
}

/** The pages entered apart. */
export function enterApart(
  ctx: SearchContext,
  query: ParsedQuery,
  terms: QueryTerms,
  lists: QueryLists,
  keep: ((chunk: number) => boolean) | undefined,
): Apart {
  const { scratch, meter, catalog } = ctx;
  const { entries, entered } = scratch;
  entered.fresh();
  const noChunk: number[] = [];
  // In chunk order: the lists' cursors move forward through blocks they decode once (RangeScorer).
  const titled = [...new Set(markTitleGroups(ctx, query, terms.title, terms.informative))].sort(
    (a, b) => catalog.firstChunk[a]! - catalog.firstChunk[b]!,
  );
  for (const p of titled) {
    if (entered.has(p)) continue;
    entered.mark(p);
    const range = catalog.chunkRange(p);
    const scores = ctx.ranges.score(lists, range.from, range.to);
    meter.add(scores.count, ctx.ranges.postings);
    if (!enterPages(ctx, lists, scores, entries, keep)) noChunk.push(p);
  }
  return { apart: entries.count, noChunk };
}

/**
 * Scores each page over its own chunks and enters it, in chunk order so that the lists' cursors
 * move forward through blocks they decode once (RangeScorer); returns the pages entered. For
 * plans that take their pages from elsewhere than the lists (stored orders).
 */
export function scorePages(ctx: SearchContext, lists: QueryLists, pages: number[]): number {
  const { catalog, meter, scratch } = ctx;
  pages.sort((a, b) => catalog.firstChunk[a]! - catalog.firstChunk[b]!);
  let found = 0;
  for (const p of pages) {
    const range = catalog.chunkRange(p);
    const scores = ctx.ranges.score(lists, range.from, range.to);
    meter.add(scores.count, ctx.ranges.postings);
    found += enterPages(ctx, lists, scores, scratch.entries);
  }
  return found;
}
