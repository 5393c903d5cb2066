/**
 * Ranking rule D8, the title groups: a page whose title is the query (a redirect's title too)
 * ranks first, then pages whose title holds every query word or is made only of query words;
 * a title made of too few of them raises its page's score instead (a title boost).
 *
 * Contract: writes the search's Scratch.pageGroup (group plus one) and titleBoost, and lists
 * every page it writes in Scratch.titled, which it returns. They depend on the query alone: the
 * first stage of a search to ask marks them, and later ones (the exhaustive ranking after a
 * pruned search gave up, or after the conjunction) read the same marks.
 */
import type { ParsedQuery } from "../text/query";
import { popcount, type WordSpec } from "../postings/shard-types";
import type { SearchContext } from "./context";

/** The share of a query's information (its words' IDF) that a title made only of query words must hold to rank as a title match. */
const TITLE_COVERAGE = 0.5;

/** The group of an exact title (or redirect), and of a title match, plus one (pageGroup's values). */
const EXACT_TITLE = 1;
const TITLE_MATCH = 2;

/**
 * Marks the title groups. `specs` are the query's words as written: no typos, no other forms;
 * `informative` has a bit for each word that is not a function word.
 */
export function markTitleGroups(
  ctx: SearchContext,
  query: ParsedQuery,
  specs: WordSpec[],
  informative: number,
): number[] {
  const { meter, titleIndex, scratch } = ctx;
  if (scratch.titlesMarked) return scratch.titled;
  scratch.titlesMarked = true;
  const full = 2 ** specs.length - 1;
  const all = meter.counted(titleIndex.match(specs, { into: scratch.titleBuffer(0) }));
  for (let i = 0; i < all.count; i++) if (all.masks[i] === full) mark(ctx, all.docs[i]!, TITLE_MATCH);
  if (specs.length > 1) markTitlesOfQueryWords(ctx, specs, informative);
  const exact = ctx.catalog.titles.get(query.asTitle);
  if (exact !== undefined) mark(ctx, exact, EXACT_TITLE);
  return scratch.titled;
}

function mark(ctx: SearchContext, page: number, group: number): void {
  const { pageGroup, titled } = ctx.scratch;
  if (!pageGroup[page]) titled.push(page);
  pageGroup[page] = group;
}

/**
 * Titles made only of query words (as many of them as the title has distinct words), when
 * those words carry at least TITLE_COVERAGE of the query's information: "A" or "Africa" is
 * not what a long question holding "a" or "Africa" is about. Below that, a title boost.
 */
function markTitlesOfQueryWords(ctx: SearchContext, specs: WordSpec[], informative: number): void {
  const { meter, titleIndex, text, scratch } = ctx;
  const { pageGroup, titleBoost, titled } = scratch;
  // Function words hold no information here: common in questions, rare in encyclopedic text.
  const idf = specs.map((s, w) => (!informative || informative & (1 << w) ? text.idf(s.key, 0) : 0));
  const information = idf.reduce((a, b) => a + b, 0);
  const anyWord = specs.map((s) => ({ ...s, prefix: false }));
  const any = meter.counted(titleIndex.match(anyWord, { fields: [0], into: scratch.titleBuffer(1) }));
  for (let i = 0; i < any.count; i++) {
    const d = any.docs[i]!;
    const held = any.masks[i]!;
    if (popcount(held) !== titleIndex.fieldLength(0, d)) continue;
    let covered = 0;
    for (let w = 0; w < specs.length; w++) if (held & (1 << w)) covered += idf[w]!;
    if (covered >= TITLE_COVERAGE * information) mark(ctx, d, TITLE_MATCH);
    else if (information > 0) {
      if (!pageGroup[d] && !titleBoost[d]) titled.push(d);
      titleBoost[d] = Math.max(titleBoost[d]!, covered / information);
    }
  }
}
