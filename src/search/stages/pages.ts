/**
 * Ranking rule, one hit per page: the best `need` page entries (ranking/page-entries.ts: class,
 * score, best chunk) become ranked pages, the first PROXIMITY_WINDOW reordered by proximity and
 * the window's passages chosen (passages.ts). A title match none of whose chunks holds the
 * words enters with its intro. With page_id, the page's chunks are the hits (D7).
 *
 * Contract: reads the entries and the search's title marks (Scratch.pageGroup), returns at most
 * `need` pages, best first.
 */
import type { Derived } from "../postings/shard-types";
import { PageBuilder, type PageEntries } from "../ranking/page-entries";
import type { QueryLists } from "../ranking/query-lists";
import type { ChunkScores } from "../ranking/range-scores";
import { chunkTier } from "../ranking/range-scores";
import { groupOf, INTRO_TIER, OTHER_GROUP, PROXIMITY_WINDOW, rankClass } from "../ranking/rules";
import type { ParsedQuery } from "../text/query";
import type { SearchContext } from "./context";
import { byTierScore, Passages, proximity } from "./passages";
import { intro, type Candidate, type PageCandidate, type Ranking } from "./candidate";
import type { QueryTerms } from "./terms";

/** The derived terms a chunk of this tier was scored with: a typo tier's include the typo terms. */
function derivedOf(lists: QueryLists, tier: number): Derived[] {
  if (tier >= INTRO_TIER) return [];
  return tier % 2 ? lists.derivedAll : lists.derivedExact;
}

/** How many pages hold a form of a query word (a pass over every list: for short ones). */
export function pagesHolding(ctx: SearchContext, lists: QueryLists): number {
  const { marks } = ctx.scratch;
  const { pageOfChunk } = ctx.catalog;
  const cursor = ctx.textCursor;
  marks.fresh();
  let count = 0;
  for (const form of lists.forms)
    for (const l of form.lists) {
      cursor.open(l.address);
      for (let b = 0; b < cursor.blocks; b++) {
        const n = cursor.decode(b);
        for (let i = 0; i < n; i++) {
          const p = pageOfChunk[cursor.docs[i]!]!;
          if (!marks.has(p)) {
            marks.mark(p);
            count++;
          }
        }
      }
    }
  return count;
}

/** The D8 group of a page: 0 exact title, 1 title match, 2 the others (Scratch.pageGroup holds it plus one). */
function groupOfPage(ctx: SearchContext, page: number): number {
  const g = ctx.scratch.pageGroup[page]!;
  return g ? g - 1 : OTHER_GROUP;
}

/**
 * Enters the pages of scored chunks (ascending; a page's chunks are consecutive), each chunk in
 * its tier, those `keep` refuses (quoted phrases) left out. Returns the pages entered.
 */
export function enterPages(
  ctx: SearchContext,
  lists: QueryLists,
  scores: ChunkScores,
  entries: PageEntries,
  keep?: (chunk: number) => boolean,
): number {
  const { pageOfChunk } = ctx.catalog;
  const { titleBoost } = ctx.scratch;
  const builder = new PageBuilder();
  const before = entries.count;
  const flush = () => {
    const p = builder.page;
    if (p >= 0 && !builder.empty)
      entries.add(p, builder.klass(groupOfPage(ctx, p)), builder.score(titleBoost[p]!), builder.chunk, builder.tier);
  };
  for (let i = 0; i < scores.count; i++) {
    const chunk = scores.docs[i]!;
    const tier = chunkTier(lists.buckets, scores.exactMask[i]!, scores.allMask[i]!);
    if (tier < 0 || (keep && !keep(chunk))) continue;
    const page = pageOfChunk[chunk]!;
    if (page !== builder.page) {
      flush();
      builder.start(page);
    }
    builder.add(chunk, tier, tier % 2 ? scores.all[i]! : scores.exact[i]!);
  }
  flush();
  return entries.count - before;
}

/**
 * Adds an intro entry for every title match (`titled`) that has no entry (`entered` says which
 * do): it ranks below its group's pages holding the words. Returns how many were added.
 */
export function addIntros(
  ctx: SearchContext,
  entries: PageEntries,
  titled: number[],
  entered: (page: number) => boolean,
): number {
  const { pageGroup, marks } = ctx.scratch;
  const { chunkCounts, firstChunk } = ctx.catalog;
  marks.fresh();
  let added = 0;
  for (const p of titled) {
    if (!pageGroup[p] || !chunkCounts[p] || marks.has(p) || entered(p)) continue;
    marks.mark(p);
    entries.add(p, rankClass(pageGroup[p]! - 1, INTRO_TIER), 0, firstChunk[p]!, INTRO_TIER);
    added++;
  }
  return added;
}

/** The best `need` entries as ranked pages, the first reordered by proximity and the passages of [from, need) chosen. */
export function topPages(
  ctx: SearchContext,
  query: ParsedQuery,
  terms: QueryTerms,
  lists: QueryLists,
  entries: PageEntries,
  from: number,
  need: number,
): PageCandidate[] {
  const pages = entries.best(need).map((e): PageCandidate => {
    const tier = entries.tier[e]!;
    const page = entries.page[e]!;
    const best: Candidate =
      tier >= INTRO_TIER
        ? intro(ctx.catalog.firstChunk[page]!)
        : { chunk: entries.chunk[e]!, score: entries.score[e]!, tier, derived: derivedOf(lists, tier) };
    best.score = entries.score[e]!;
    return { page, best, group: groupOf(entries.klass[e]!) };
  });
  new Passages(ctx, query, terms, query.phrases.length > 0).rerank(pages, from, need);
  return pages;
}

/** D7, one page's chunks (a search with pageId): each chunk a hit, by tier then score, the best raised by proximity. */
export function rankChunksOfPage(
  ctx: SearchContext,
  query: ParsedQuery,
  lists: QueryLists,
  page: number,
  scores: ChunkScores,
  keep: ((chunk: number) => boolean) | undefined,
): Ranking {
  const list: Candidate[] = [];
  for (let i = 0; i < scores.count; i++) {
    const chunk = scores.docs[i]!;
    const tier = chunkTier(lists.buckets, scores.exactMask[i]!, scores.allMask[i]!);
    if (tier < 0 || (keep && !keep(chunk))) continue;
    const score = tier % 2 ? scores.all[i]! : scores.exact[i]!;
    list.push({ chunk, score, tier, derived: derivedOf(lists, tier) });
  }
  list.sort(byTierScore);
  proximity(ctx, list.slice(0, PROXIMITY_WINDOW), query);
  list.sort(byTierScore);
  return { pages: list.map((c) => ({ page, best: c, group: OTHER_GROUP })), total: list.length };
}
