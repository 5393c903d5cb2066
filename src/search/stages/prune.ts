/**
 * Pruning as stages (D48). One word: the pruned top-k (pruned.ts), tried first, answers when
 * the word's lists are long enough, or the exhaustive stages run; its pages carry the classes
 * and scores the exhaustive ranking computes. Several words: ranked from their page orders
 * when each has one (D51) and the orders tell, or else the conjunction fills the candidates'
 * tier 0 (stages/candidates.ts); when it falls short, the pages past it are ranked from the
 * orders of the words that have one (D52). One word with typos and no exact match: ranked
 * from its typo terms' orders (D53). Either way, the pages matching any word are then
 * estimated.
 */
import { indexKey, termOfKey } from "../text/analyze";
import { GUARDS, PRUNE_FROM, type Pruning } from "../options";
import { matchAll } from "../ranking/conjunction";
import { groupOf, tierOf, TYPO_TIER } from "../ranking/rules";
import type { WordOrder } from "../ranking/by-orders";
import type { PruneInput, PruneResult, RankedPage } from "../ranking/page-scorer";
import type { PrunedRanking } from "../ranking/pruned";
import type { PageOrder } from "../ranking/page-orders";
import type { ParsedQuery } from "../text/query";
import type { Derived, Matches, WordSpec } from "../index/shard-types";
import type { Shard } from "../index/shard";
import type { SearchContext } from "./context";
import { Passages } from "./passages";
import { intro, type Candidate, type PageCandidate, type Ranking } from "./pool";
import { wordSpecs, type QueryTerms } from "./terms";
import { markTitleGroups } from "./title-groups";

/**
 * The pruned search asked for, when the query is one it answers (ranking/plan.ts): no phrase
 * (a word quoted twice); one word with typos when its typo terms have orders (D53); several
 * words when each has an order (D51); one word without typos, by default only one the index
 * holds or one with a stored page order (D51: a prefix's expansions alone bound its pages too
 * loosely for the pruned search to pay, D48). Never when the lists hold fewer postings than
 * `pruning.from` (read from the list table, before any list).
 */
export function pruningFor(
  ctx: SearchContext,
  query: ParsedQuery,
  terms: QueryTerms,
  pruning: false | Pruning | undefined,
): PruneAsked | undefined {
  const prune = pruning ?? {};
  if (!prune || query.phrases.length) return undefined;
  const asked = prunedShape(ctx, terms, prune);
  const words = asked?.typos ? terms.fuzzy : terms.exact;
  return asked && ctx.text.postingsOf(ctx.text.derive(words)) >= (prune.from ?? PRUNE_FROM) ? asked : undefined;
}

/** The pruned search a query of this shape may take, whatever its lists' length. */
function prunedShape(ctx: SearchContext, terms: QueryTerms, prune: Pruning): PruneAsked | undefined {
  if (terms.typoable) {
    const typos = typoTerms(ctx, terms);
    return typos && { pruning: prune, order: undefined, alone: false, typos };
  }
  if (terms.words.length > 1) {
    const orders = wordOrders(ctx, terms, prune.words ?? GUARDS.maxWords);
    return orders && { pruning: prune, order: undefined, alone: false, orders };
  }
  const order = ctx.orders?.get(terms.exact[0]!);
  const alone = prunesAlone(ctx, prune, terms);
  return order || alone ? { pruning: prune, order, alone } : undefined;
}

/**
 * The pruned search asked for, the word's stored page order when there is one (D51), and
 * whether it may rank without it (prunesAlone); with several words, every word's order, or
 * `fewer`: the pages past those holding every word (fewerWordsFor).
 */
export interface PruneAsked {
  pruning: Pruning;
  order: PageOrder | undefined;
  alone: boolean;
  orders?: WordOrder[];
  fewer?: boolean;
  /** One word with typos: its typo terms, ranked from their orders (typoTerms). */
  typos?: ByOrder<Derived>;
}

/**
 * The pruned search of several words whose conjunction fell short of the pages asked for
 * (D52): the pages past it, holding only some of the words. Not with quoted phrases, whose
 * check keeps chunks rather than pages (stages/phrases.ts).
 */
export function fewerWordsFor(conjunction: Pruning): PruneAsked {
  return { pruning: conjunction, order: undefined, alone: false, fewer: true };
}

/** The most postings the words or typo terms with no stored order may hold, for their pages to be scored or bounded apart (D52, D53). */
const APART_POSTINGS = 4096;

/** Each word's stored order, when every word of several, at most `most`, has one. */
function wordOrders(ctx: SearchContext, terms: QueryTerms, most: number): WordOrder[] | undefined {
  if (terms.words.length > most) return undefined;
  const orders = terms.exact.map((spec, word) => {
    const order = ctx.orders?.get(spec);
    return order && { word, order };
  });
  return orders.every((o) => o !== undefined) ? orders : undefined;
}

/** Words or typo terms with a stored order, each with it, and those with none. */
interface ByOrder<T> {
  ordered: { item: T; order: PageOrder }[];
  unordered: T[];
}

/**
 * The items split by whether they have a stored order; undefined unless some have one and
 * those with none hold at most APART_POSTINGS postings in all.
 */
function splitByOrder<T>(
  items: T[],
  orderOf: (item: T) => PageOrder | undefined,
  postingsOf: (item: T) => number,
): ByOrder<T> | undefined {
  const split: ByOrder<T> = { ordered: [], unordered: [] };
  let unorderedPostings = 0;
  for (const item of items) {
    const order = orderOf(item);
    if (order) split.ordered.push({ item, order });
    else {
      split.unordered.push(item);
      unorderedPostings += postingsOf(item);
    }
  }
  return split.ordered.length && unorderedPostings <= APART_POSTINGS ? split : undefined;
}

/**
 * The typo terms of a query of one word ranked from its typo terms' stored orders (D53):
 * none of its chunks holds the word exactly, so every match is in the typo tier; some of its
 * typo terms have an order, and the others hold at most APART_POSTINGS postings (their pages
 * are bounded apart). Undefined for any other query.
 */
function typoTerms({ text, orders }: SearchContext, terms: QueryTerms): ByOrder<Derived> | undefined {
  if (!orders || terms.words.length > 1 || text.derive(terms.exact).length) return undefined;
  return splitByOrder(
    text.derive(terms.fuzzy),
    (term) => orders.get(typoTermSpec(text, term)),
    (term) => text.postingsOf([term]),
  );
}

/** A typo term as a query word of its own, with its other forms: the spec its stored order was ranked by (orders.ts). */
function typoTermSpec(text: Shard, d: Derived): WordSpec {
  return { key: text.keyOf(d.term), prefix: false, fuzzy: 0 };
}

/**
 * One word with typos (typoTerms), ranked from its typo terms' orders, each bounding its
 * pages by its term's lists and its other forms', weighed by the term's typo weight; the
 * pages holding the terms with no order are bounded apart (PruneInput.bounded).
 */
function rankTypos(
  ctx: SearchContext,
  pruner: PrunedRanking,
  input: PruneInput,
  { ordered, unordered }: ByOrder<Derived>,
): PruneResult | undefined {
  const { text } = ctx;
  const orders = ordered.map(({ item: term, order }): WordOrder => {
    const own = wordSpecs(ctx, [termOfKey(text.keyOf(term.term))], false, false, true);
    const lists = text.scoredLists(text.derive(own, false)).map((l) => ({ ...l, weight: l.weight * term.weight }));
    return { word: term.word, order, lists };
  });
  return pruner.rankByOrders({ ...input, bounded: text.scoredLists(unordered) }, orders);
}

/** Whether the pruned search may rank the word without a stored order: a word the index holds (D48). */
function prunesAlone(ctx: SearchContext, prune: Pruning, terms: QueryTerms): boolean {
  return (prune.words ?? 1) > 1 || ctx.text.has(indexKey(terms.words[0]!));
}

/**
 * The conjunction asked for (stages/candidates.ts), when the query is one it answers: several
 * words, at most `words`, no typo, no quoted phrase (the phrase check may leave fewer pages
 * than the conjunction found, and the pages past them hold only some words), whose lists hold
 * `pruning.from` postings or more.
 */
export function conjunctionFor(
  ctx: SearchContext,
  query: ParsedQuery,
  terms: QueryTerms,
  pruning: false | Pruning | undefined,
): Pruning | undefined {
  const prune = pruning ?? {};
  if (!prune || query.phrases.length || terms.typoable) return undefined;
  const words = terms.words.length;
  if (words < 2 || words > (prune.words ?? GUARDS.maxWords)) return undefined;
  return ctx.text.postingsOf(ctx.text.derive(terms.exact)) >= (prune.from ?? PRUNE_FROM) ? prune : undefined;
}

/** The pruned ranking, or undefined when the query's lists are too short or the pruned search gives up. */
export function rankPruned(
  ctx: SearchContext,
  pruner: PrunedRanking,
  query: ParsedQuery,
  terms: QueryTerms,
  from: number,
  need: number,
  { pruning, order, alone, orders, fewer, typos }: PruneAsked,
): Ranking | undefined {
  const { text, scratch, meter } = ctx;
  const derived = text.derive(typos ? terms.fuzzy : terms.exact);
  const lists = text.scoredLists(derived);
  const titled = markTitleGroups(ctx, query, terms.title, terms.informative);
  const { pageGroup, titleBoost } = scratch;
  const input = { lists, required: terms.required, need, pageGroup, titleBoost, titled, workShare: pruning.workShare };
  const ranked = typos
    ? rankTypos(ctx, pruner, input, typos)
    : fewer
      ? rankPastConjunction(ctx, pruner, terms, input)
      : orders
        ? pruner.rankByOrders(input, orders)
        : (order && pruner.rankInOrder(input, order)) || (alone ? pruner.rank(input) : undefined);
  if (!ranked) return undefined;
  meter.add(ranked.candidates, ranked.postings);
  // The pruned search ranks the typo pass's chunks as holding the word: the exhaustive one ranks them in the typo tier.
  const tier = (r: RankedPage) => tierOf(r.klass) + (typos ? TYPO_TIER : 0);
  const pages = ranked.pages.map((r): PageCandidate => {
    // A title match none of whose chunks holds the words stands with its intro, as in the exhaustive ranking.
    const best: Candidate =
      r.best >= 0 ? { chunk: r.best, score: r.score, tier: tier(r), derived } : intro(ctx.catalog.firstChunk[r.page]!);
    return { page: r.page, best, group: groupOf(r.klass) };
  });
  new Passages(ctx, query, terms, false).rerank(pages, from, need);
  return {
    pages,
    total: Math.max(pages.length, order ? order.holding : estimatedPages(ctx, derived, terms.words.length)),
  };
}

/**
 * Several words whose conjunction fell short (D52), ranked from the orders of the words that
 * have one: the pages holding every required word, and those holding a word with no order,
 * are scored apart, and every other page holds some of the ordered words only. Undefined when
 * no word has an order, or when the words with none hold too many postings.
 */
function rankPastConjunction(
  ctx: SearchContext,
  pruner: PrunedRanking,
  terms: QueryTerms,
  input: PruneInput,
): PruneResult | undefined {
  const { text, textCursor, scratch, meter } = ctx;
  const postingsOf = (word: number) => input.lists.reduce((n, l) => (l.word === word ? n + l.df : n), 0);
  const split = splitByOrder(
    terms.exact.map((_s, word) => word),
    (word) => ctx.orders?.get(terms.exact[word]!),
    postingsOf,
  );
  if (!split) return undefined;
  const all = matchAll(text, textCursor, terms.exact, terms.required, { into: scratch.textBuffer(1), scored: false });
  if (!all) return undefined;
  scratch.marks.fresh();
  const apart: number[] = [];
  addPages(ctx, meter.counted(all), apart);
  const unordered = split.unordered.map((word) => terms.exact[word]!);
  if (unordered.length) addPages(ctx, meter.counted(text.match(unordered, { into: scratch.textBuffer(1) })), apart);
  return pruner.rankByOrders(
    { ...input, fewer: true, apart },
    split.ordered.map(({ item: word, order }) => ({ word, order })),
  );
}

/** Adds to `pages` the pages of the matches' chunks not marked yet (Scratch.marks), marking them. */
function addPages(ctx: SearchContext, m: Matches, pages: number[]): void {
  const { pageOfChunk } = ctx.catalog;
  const { marks } = ctx.scratch;
  for (let i = 0; i < m.count; i++) {
    const p = pageOfChunk[m.docs[i]!]!;
    if (!marks.has(p)) {
      marks.mark(p);
      pages.push(p);
    }
  }
}

/**
 * Pages holding any of the query's words, estimated (D48): each word's chunks (its terms'
 * postings, at most every chunk) spread over pages at random, and words independent.
 */
export function estimatedPages(ctx: SearchContext, derived: Derived[], words: number): number {
  const pages = ctx.catalog.pageCount;
  const chunksOf = new Float64Array(words);
  for (const d of derived) chunksOf[d.word]! += ctx.text.frequency(d.term);
  let none = 1;
  for (const c of chunksOf) none *= (1 - 1 / pages) ** Math.min(c, ctx.text.documentCount);
  return Math.round(pages * (1 - none));
}
