/**
 * The pruned top-k (pruned.ts) as a stage: tried first on queries where it pays (by default
 * one word the index holds, D48), it answers when the query's lists are long enough and the
 * answer is decided among chunks holding every required word; otherwise the exhaustive
 * stages run. Its pages carry the classes and scores the exhaustive ranking computes.
 */
import { indexKey } from "../analyze";
import { GUARDS, PRUNE_FROM, type Pruning } from "../options";
import type { PrunedRanking } from "../pruned";
import type { ParsedQuery } from "../query";
import type { ScoredList } from "../shard";
import type { SearchContext } from "./context";
import { choosePassages, PASSAGES } from "./passages";
import { groupOf, tierOf, type Candidate, type PageCandidate, type Ranking } from "./pool";
import type { QueryTerms } from "./terms";
import { markTitleGroups } from "./title-groups";

/**
 * The pruning asked for, when the query is one it may answer: few enough words, no phrase, no
 * typo, not within a page; one word only when the index holds it (a prefix's expansions alone
 * bound its pages too loosely to pay, D48).
 */
export function pruningFor(ctx: SearchContext, query: ParsedQuery, terms: QueryTerms, pruning: false | Pruning | undefined, onlyPage: number): Pruning | undefined {
  const prune = pruning ?? {};
  if (!prune) return undefined;
  const words = terms.words.length;
  const known = words > 1 || (prune.words ?? 1) > 1 || ctx.text.has(indexKey(terms.words[0]!));
  return words <= (prune.words ?? GUARDS.maxWords) && known && onlyPage < 0 && !query.phrases.length && !terms.typoable ? prune : undefined;
}

/** The pruned ranking, or undefined when the query's lists are too short or the pruned search gives up. */
export function rankPruned(ctx: SearchContext, pruner: PrunedRanking, query: ParsedQuery, terms: QueryTerms, need: number, pruning: Pruning): Ranking | undefined {
  const { text, scratch, meter } = ctx;
  const derived = text.derive(terms.exact);
  // Checked on the list table before the lists' bounds are read: most queries stop here.
  if (text.postingsOf(derived) < (pruning.from ?? PRUNE_FROM)) return undefined;
  const lists = text.scoredLists(derived);
  const titled = markTitleGroups(ctx, query, terms.title, terms.informative);
  const mustReach = terms.exact.length > 1;
  const { pageGroup, titleBoost } = scratch;
  const ranked = pruner.rank({ lists, required: terms.required, need, pageGroup, titleBoost, titled, mustReach, workShare: pruning.workShare });
  if (!ranked) return undefined;
  meter.add(ranked.candidates, ranked.postings);
  const pages = ranked.pages.map((r): PageCandidate => {
    const best: Candidate = { chunk: r.chunks[0] ?? ctx.catalog.firstChunk[r.page]!, score: r.score, tier: tierOf(r.klass), derived };
    return { page: r.page, best, group: groupOf(r.klass) };
  });
  const chunksOf = new Map(ranked.pages.map((r) => [r.page, r]));
  choosePassages(ctx, pages, query, (top) =>
    top.map((p) => {
      const r = chunksOf.get(p.page)!;
      return r.chunks.slice(0, PASSAGES).map((chunk, i) => ({ chunk, score: r.chunkScores[i]!, tier: 0, derived }));
    }),
  );
  return { pages, total: Math.max(pages.length, estimatedPages(ctx, lists, terms.exact.length)) };
}

/**
 * Pages holding any of the query's words, estimated (D48): each word's chunks (its lists'
 * postings, at most every chunk) spread over pages at random, and words independent.
 */
function estimatedPages(ctx: SearchContext, lists: ScoredList[], words: number): number {
  const pages = ctx.catalog.pageCount;
  const chunksOf = new Float64Array(words);
  for (const l of lists) chunksOf[l.word]! += l.df;
  let none = 1;
  for (const c of chunksOf) none *= Math.pow(1 - 1 / pages, Math.min(c, ctx.text.documentCount));
  return Math.round(pages * (1 - none));
}
