/**
 * Page orders (D51, kept by D90 for one-word searches), made when a snapshot is built: for each
 * one-word query whose lists hold PRUNE_FROM postings or more, its first ORDER_LENGTH pages as
 * the words plan ranks them with no title in play (the block-max executor, tier 0, no page
 * left out), and how many pages hold the word at all. Their section: ranking/page-orders.ts.
 */
import { collector } from "../options";
import type { PageHeap } from "../ranking/page-heap";
import { orderKey, packOrders, typoOrderKey } from "../ranking/page-orders";
import { QueryLists } from "../ranking/query-lists";
import type { SearchContext } from "../stages/context";
import { pagesHolding } from "../stages/pages";
import { functionWords, ONE_TYPO_FROM, queryTerms } from "../stages/terms";
import { indexKey, termOfKey } from "../text/analyze";
import { MIN_PREFIX, parseQuery } from "../text/query";

/**
 * Pages kept in a typo order (D124): a typo word's walk ends by 20 pages deep, or gives way to
 * the words plan by 160, on 200 typo words at 1M chunks; a deeper one would cost more than
 * reading the lists whole.
 */
const TYPO_ORDER_LENGTH = 256;

/** The longest beginnings given an order: longer ones may hold typos, which are not ordered. */
const PREFIX_LETTERS = ONE_TYPO_FROM - 1;

/** Queries between two times the orders' stage lets the mapped file's pages it read leave its resident set (D141). */
const DROP_EVERY = 1024;

/** `dropResident`: lets the pages of the mapped snapshot read so far leave the resident set (they read the same after). */
export function buildPageOrders(
  ctx: SearchContext,
  least: number,
  length: number,
  progress: (done: number, total: number) => void = () => {},
  typoLeast = least,
  dropResident: () => void = () => {},
): Uint8Array {
  const { text, scratch } = ctx;
  const { queries, typoWords } = orderedQueries(ctx, least, typoLeast);
  const keys: string[] = [];
  const orders: Uint32Array[] = [];
  const holding: number[] = [];
  const seen = new Set<string>();
  const heap: PageHeap = scratch.heap;
  const collect = collector(false);
  queries.forEach((q, i) => {
    if (i % 64 === 0) progress(i, queries.length);
    // Every common word's lists are read once: at 5M chunks their pages took 1.5 GB of resident set, and the
    // garbage 0.6 GB, by the end (D141).
    if (i % DROP_EVERY === DROP_EVERY - 1) {
      dropResident();
      collect(true);
    } else collect();
    const query = parseQuery(q, ctx.lang);
    if (query.words.length !== 1) return;
    const terms = queryTerms(query, ctx);
    const spec = terms.exact[0]!;
    const key = typoWords.has(q) ? typoOrderKey(spec.key) : orderKey(spec.key, spec.prefix);
    if (terms.typoable || seen.has(key)) return;
    const lists = new QueryLists(text, {
      derived: text.derive(terms.exact),
      words: 1,
      required: terms.required,
      phraseWords: 0,
    });
    if (lists.allPostings[0]! < (typoWords.has(q) ? typoLeast : least)) return;
    seen.add(key);
    heap.reset(typoWords.has(q) ? Math.min(length, TYPO_ORDER_LENGTH) : length);
    ctx.executor.run({
      lists,
      required: lists.buckets[0]!,
      typos: false,
      tier: 0,
      heap,
      excluded: () => false,
      late: () => false,
    });
    const ranked: { page: number; score: number }[] = [];
    heap.forEach((page, score) => {
      ranked.push({ page, score });
    });
    ranked.sort((a, b) => b.score - a.score || a.page - b.page);
    keys.push(key);
    orders.push(Uint32Array.from(ranked, (r) => r.page));
    holding.push(pagesHolding(ctx, lists));
  });
  progress(queries.length, queries.length);
  return packOrders(keys, orders, holding);
}

/**
 * The one-word queries given an order: each word ended (a full stop ends it) whose lists hold
 * `least` postings, typed on (a prefix) when it and the words it begins do; and each beginning
 * of MIN_PREFIX to PREFIX_LETTERS letters that is not a word, whose words' lists hold `least`
 * postings together (longer ones may hold typos). Meilisearch keeps the documents of frequent
 * prefixes for the same reason (word_prefix_docids). A function word is never typed on (D79).
 */
function orderedQueries(
  ctx: SearchContext,
  least: number,
  typoLeast: number,
): { queries: string[]; typoWords: Set<string> } {
  const words: string[] = [];
  const typoWords = new Set<string>();
  const prefixPostings = new Map<string, number>();
  const stop = functionWords(ctx.lang);
  // A string or two for every term of the vocabulary (millions): collected as they go (collector()).
  const collect = collector(true);
  ctx.text.eachTerm((key, postings, withLonger) => {
    collect();
    const word = termOfKey(key);
    if (postings >= least) words.push(`${word}.`);
    else if (postings >= typoLeast) typoWords.add(`${word}.`);
    if (withLonger >= least && !stop.has(word)) words.push(word);
    eachBeginning(word, MIN_PREFIX, PREFIX_LETTERS, (prefix) =>
      prefixPostings.set(prefix, (prefixPostings.get(prefix) ?? 0) + postings),
    );
  });
  const prefixes = [...prefixPostings]
    .filter(([prefix, postings]) => postings >= least && !ctx.text.has(indexKey(prefix)))
    .map(([prefix]) => prefix);
  return { queries: [...words, ...prefixes, ...typoWords], typoWords };
}

/** Calls `visit` with each beginning of `word` of `least` to `most` letters (code points) that is shorter than the word. */
export function eachBeginning(word: string, least: number, most: number, visit: (prefix: string) => void): void {
  let letters = 0;
  for (let end = 0; end < word.length && letters < most; ) {
    end += word.codePointAt(end)! > 0xffff ? 2 : 1;
    letters++;
    if (letters >= least && end < word.length) visit(word.slice(0, end));
  }
}
