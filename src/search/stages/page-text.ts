/**
 * Ranking rule D202, the page's own text: the first PROXIMITY_WINDOW pages' scores raised by how well each page's
 * whole text, taken as one document, matches the query, its BM25 over the article: a chunk is scored alone, and an
 * article about the query's subject says its words in many chunks (Callan's passage and document evidence, 1994).
 * Each page's score × (1 + RULES.pageText × its page BM25 ÷ the most of the pages raised): the same pages, raised
 * by the same figures, whatever the window asked for (D61). Read from the postings of the pages' chunk ranges (no
 * figure of the snapshot's), a page's length is its chunks' text words, and a term's pages are estimated from its
 * chunks (below).
 */
import { SECTION_FIELD, TEXT_FIELD } from "../postings/fields";
import type { Shard } from "../postings/shard";
import type { Derived } from "../postings/shard-types";
import { QueryLists } from "../ranking/query-lists";
import { idf, RULES } from "../ranking/rules";
import type { PageCandidate } from "./candidate";
import type { SearchContext } from "./context";

/** BM25's saturation and length normalisation over whole pages (Lucene's defaults; the chunks' are BM25.k and b). */
const PAGE_K1 = 1.2;
const PAGE_B = 0.75;

/**
 * Raises `pages`' scores by their page text (D202), over the query's informative words (function words say nothing
 * of what a page is about); their order is the caller's to make again.
 */
export function raiseByPageText(ctx: SearchContext, pages: PageCandidate[], words: number, informative: number): void {
  if (!RULES.pageText || !informative) return;
  const listsOf = new Map<Derived[], QueryLists>();
  const scores = pages.map(({ page, best }) => {
    if (!best.derived.length) return 0;
    let lists = listsOf.get(best.derived);
    if (!lists) {
      lists = new QueryLists(ctx.text, {
        derived: best.derived.filter((d) => informative & (1 << d.word)),
        words,
        required: 0,
        phraseWords: 0,
        fields: [TEXT_FIELD, SECTION_FIELD],
      });
      listsOf.set(best.derived, lists);
    }
    return pageBm25(ctx, lists, page);
  });
  // Per query, by the most of the pages raised, as scores of two kinds are fused (Lee's max normalisation, 1997).
  const most = Math.max(...scores);
  if (!(most > 0)) return;
  pages.forEach((p, i) => {
    p.best.score *= 1 + (RULES.pageText * scores[i]!) / most;
  });
}

/**
 * The page's BM25 as one document: for each query word, its forms' frequencies over the page (each × the form's
 * weight: a typo or another form counts less) summed and saturated once, times the page IDF of its most frequent form.
 */
function pageBm25(ctx: SearchContext, lists: QueryLists, page: number): number {
  const { text, catalog, ranges, meter } = ctx;
  const { from, to } = catalog.chunkRange(page);
  const lengths = text.norms(TEXT_FIELD).lengths;
  let length = 0;
  for (let d = from; d < to; d++) length += lengths[d]!;
  const norm = PAGE_K1 * (1 - PAGE_B + (PAGE_B * length) / averagePageLength(text, catalog.pageCount));
  ranges.postings = 0;
  let score = 0;
  for (const forms of lists.byWord) {
    let tf = 0;
    let df = 0;
    for (const form of forms) {
      tf += form.weight * ranges.frequency(form, from, to);
      df = Math.max(df, form.df);
    }
    if (tf) score += pageIdf(text.documentCount, catalog.pageCount, df) * ((tf * (PAGE_K1 + 1)) / (tf + norm));
  }
  meter.add(0, ranges.postings);
  return score;
}

/**
 * BM25's IDF over pages of a term in `df` of the `chunks` chunks: the pages holding it estimated as if its chunks
 * fell at random, `chunks ÷ pages` to a page (the snapshot counts its chunks, not its pages). A word an article
 * repeats is in fewer pages than that, so its page IDF is low: a word in 50 chunks of one article of 1M chunks and
 * 200k pages is estimated in about 50 pages (IDF 8.3 against 11.8).
 */
function pageIdf(chunks: number, pages: number, df: number): number {
  const share = Math.min(1, df / chunks);
  const held = pages * -Math.expm1((chunks / pages) * Math.log1p(-share));
  return idf(pages, Math.min(pages, held));
}

/** The shard's text words per page, counted once a shard. */
function averagePageLength(text: Shard, pages: number): number {
  let sum = averages.get(text);
  if (sum === undefined) {
    // An indexed loop: for-of over a typed array was 25–55× slower in Bun 1.4.5 (188–434 ms at 5M chunks, 7.9 indexed).
    const { lengths } = text.norms(TEXT_FIELD);
    sum = 0;
    for (let d = 0; d < lengths.length; d++) sum += lengths[d]!;
    averages.set(text, sum);
  }
  return sum / Math.max(1, pages) || 1;
}
const averages = new WeakMap<Shard, number>();
