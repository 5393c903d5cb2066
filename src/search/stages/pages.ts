/**
 * Ranking rule, one hit per page: a page's entry is its best chunk (lowest tier, then highest
 * score, then lowest chunk id), its score raised by the evidence of its next two chunks
 * (PAGE_EVIDENCE, D43) and by its title boost; its class is its D8 group × TIERS + the tier.
 * A title match none of whose chunks holds the words enters with its intro. The best `need`
 * entries are selected (topk.ts), then their passages chosen (passages.ts).
 *
 * Contract: reads the pool (or the chunks phrases kept), writes the search's Scratch
 * (pageBest/Second/Third for the pages in `touched`, the entries), and returns at most
 * `need` pages, best first, and the count of matching pages.
 */
import { groupOf, INTRO_TIER, pageScore, PROXIMITY_WINDOW, rankClass } from "../ranking/rules";
import type { ParsedQuery } from "../text/query";
import { bestEntries } from "../ranking/topk";
import type { SearchContext } from "./context";
import { byTierScore, Passages, proximity } from "./passages";
import type { KeptPhrases } from "./phrases";
import { intro, type PageCandidate, type Ranking } from "./pool";
import type { QueryTerms } from "./terms";
import { markTitleGroups } from "./title-groups";

/** The D8 group of a page with no title match. */
const OTHER_GROUP = 2;

/** Ranks the pool's pages; `kept`: the chunks quoted phrases kept, and `matching`: the pages holding any query word. */
export function rankPages(
  ctx: SearchContext,
  query: ParsedQuery,
  terms: QueryTerms,
  from: number,
  need: number,
  kept: KeptPhrases | undefined,
  matching: number,
): Ranking {
  const positions = kept ? kept.list.map((c) => c.position!) : undefined;
  const count = bestChunkPerPage(ctx, positions);
  const titled = markTitleGroups(ctx, query, terms.title, terms.informative);
  pageEntries(ctx, count);
  const total = query.phrases.length ? count : introEntries(ctx, titled, count);
  const { entryClass, entryScore, entryPage, entryPosition } = ctx.scratch;
  const order = bestEntries(entryClass, entryScore, total, need, entryPage);
  const pages = order.map((e): PageCandidate => {
    const i = entryPosition[e]!;
    const c = i >= 0 ? ctx.scratch.pool.candidate(i) : intro(ctx.catalog.firstChunk[entryPage[e]!]!);
    c.score = entryScore[e]!;
    return { page: entryPage[e]!, best: c, group: groupOf(entryClass[e]!) };
  });
  new Passages(ctx, query, terms, kept !== undefined).rerank(pages, from, need);
  // Every page holding a query word (and any title match whose chunks do not), unless
  // phrases filtered them: then the share of checked candidates that held them, scaled to the
  // pool; a share of chunks scales pages only roughly, so never past the pages holding a word.
  const any = Math.max(matching, total);
  return { pages, total: kept ? Math.min(any, Math.round(total * kept.estimate)) : any };
}

/**
 * Each page's best chunk in the pool (or at `positions`: pool positions), and its next two
 * scores; returns how many pages have one (Scratch.touched).
 */
function bestChunkPerPage(ctx: SearchContext, positions: number[] | undefined): number {
  const { pool, pageBest, pageSecond, pageThird, touched } = ctx.scratch;
  const { docs, tiers, scores } = pool;
  const { pageOfChunk } = ctx.catalog;
  const n = positions ? positions.length : pool.size;
  let count = 0;
  for (let k = 0; k < n; k++) {
    const i = positions ? positions[k]! : k;
    const p = pageOfChunk[docs[i]!]!;
    const b = pageBest[p]!;
    if (b === -1) {
      pageBest[p] = i;
      touched[count++] = p;
      continue;
    }
    // A page's evidence is its other chunks of its best chunk's tier (D61): lower tiers, which
    // a pass may or may not have added, never change its score.
    if (tiers[i]! > tiers[b]!) continue;
    if (tiers[i]! < tiers[b]!) {
      pageBest[p] = i;
      pageSecond[p] = 0;
      pageThird[p] = 0;
      continue;
    }
    const better = scores[i]! > scores[b]! || (scores[i] === scores[b] && docs[i]! < docs[b]!);
    const runnerUp = better ? scores[b]! : scores[i]!;
    if (better) pageBest[p] = i;
    if (runnerUp > pageSecond[p]!) {
      pageThird[p] = pageSecond[p]!;
      pageSecond[p] = runnerUp;
    } else if (runnerUp > pageThird[p]!) pageThird[p] = runnerUp;
  }
  ctx.scratch.touchedCount = count;
  return count;
}

/** The entries of the first `count` touched pages: class and score. */
function pageEntries(ctx: SearchContext, count: number): void {
  const { touched, pageBest, pageSecond, pageThird, pageGroup, titleBoost, pool } = ctx.scratch;
  const { entryPage, entryPosition, entryClass, entryScore } = ctx.scratch;
  for (let e = 0; e < count; e++) {
    const p = touched[e]!;
    const i = pageBest[p]!;
    entryPage[e] = p;
    entryPosition[e] = i;
    entryClass[e] = rankClass(pageGroup[p] ? pageGroup[p]! - 1 : OTHER_GROUP, pool.tiers[i]!);
    entryScore[e] = pageScore(pool.scores[i]!, pageSecond[p]!, pageThird[p]!, titleBoost[p]!);
  }
}

/** Adds, after entry `total`, the title matches with no chunk in the pool (each once); returns the new total. */
function introEntries(ctx: SearchContext, titled: number[], total: number): number {
  const { pageGroup, pageBest, marks, entryPage, entryPosition, entryClass, entryScore } = ctx.scratch;
  const { chunkCounts } = ctx.catalog;
  marks.fresh();
  for (const p of titled) {
    if (!pageGroup[p] || pageBest[p] !== -1 || !chunkCounts[p] || marks.has(p)) continue;
    marks.mark(p);
    entryPage[total] = p;
    entryPosition[total] = -1;
    entryClass[total] = rankClass(pageGroup[p]! - 1, INTRO_TIER);
    entryScore[total] = 0;
    total++;
  }
  return total;
}

/** D7, one page's chunks (a search with pageId): each chunk a hit, by tier then score, the best raised by proximity. */
export function rankChunksOfPage(
  ctx: SearchContext,
  query: ParsedQuery,
  page: number,
  kept: KeptPhrases | undefined,
): Ranking {
  const { pool } = ctx.scratch;
  const list = kept?.list ?? Array.from({ length: pool.size }, (_x, i) => pool.candidate(i));
  list.sort(byTierScore);
  proximity(ctx, list.slice(0, PROXIMITY_WINDOW), query);
  list.sort(byTierScore);
  const pages = list.map((c) => ({ page, best: c, group: OTHER_GROUP }));
  return { pages, total: Math.round(list.length * (kept?.estimate ?? 1)) };
}
