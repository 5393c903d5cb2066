/**
 * Ranking rule, proximity and the passage: among the best pages, a chunk whose matched words
 * stand close together is raised, and each page's passage is its best chunk so raised. Runs
 * after the top pages are chosen; it reorders them, it adds or removes none.
 */
import { indexKey } from "../analyze";
import { TEXT_FIELD } from "../fields";
import type { ParsedQuery } from "../query";
import type { Derived } from "../shard";
import type { SearchContext } from "./context";
import type { Candidate, PageCandidate } from "./pool";

/** How many of the best pages get the word-proximity bonus, and how many of each one's chunks compete to be its passage. */
export const PROXIMITY_WINDOW = 20;
export const PASSAGES = 3;

export const byTierScore = (a: Candidate, b: Candidate) => a.tier - b.tier || b.score - a.score;
const byRank = (a: PageCandidate, b: PageCandidate) => a.group - b.group || byTierScore(a.best, b.best);

/** Each top page's candidate passages, best-scored first. */
export type PassageSource = (top: PageCandidate[]) => Candidate[][];

/**
 * The passage of each of the best pages (the first PROXIMITY_WINDOW): among the page's
 * PASSAGES best-scored chunks of its best chunk's tier (`candidatesOf`), the one whose score,
 * raised by how close its words stand (proximity), is highest; the page's score follows by
 * the same factor. With one word there is no proximity, and the best-scored chunk is the
 * passage; with no candidates (phrases chose them), proximity raises the best chunk.
 */
export function choosePassages(ctx: SearchContext, pages: PageCandidate[], query: ParsedQuery, candidatesOf: PassageSource | undefined): void {
  const top = pages.slice(0, PROXIMITY_WINDOW);
  if (!candidatesOf || query.words.length < 2)
    proximity(
      ctx,
      top.map((p) => p.best),
      query,
    );
  else {
    const lists = candidatesOf(top);
    top.forEach((p, k) => choosePassage(ctx, p, lists[k]!, query));
  }
  top.sort(byRank);
  for (let i = 0; i < top.length; i++) pages[i] = top[i]!;
}

function choosePassage(ctx: SearchContext, page: PageCandidate, candidates: Candidate[], query: ParsedQuery): void {
  if (!candidates.length) return proximity(ctx, [page.best], query);
  const raw = candidates[0]!.score;
  proximity(ctx, candidates, query);
  let chosen = candidates[0]!;
  for (const c of candidates) if (c.score > chosen.score) chosen = c;
  chosen.score = page.best.score * (chosen.score / raw);
  page.best = chosen;
}

/** Each top page's PASSAGES best-scored chunks in the pool, of its best chunk's tier, best first. */
export function poolPassages(ctx: SearchContext, top: PageCandidate[]): Candidate[][] {
  const { pool, marks } = ctx.scratch;
  const { pageOfChunk } = ctx.catalog;
  marks.fresh();
  top.forEach((p, k) => marks.mark(p.page, k));
  const lists: number[][] = top.map(() => []);
  for (let i = 0; i < pool.size; i++) {
    const k = marks.get(pageOfChunk[pool.docs[i]!]!);
    if (k >= 0 && pool.tiers[i] === top[k]!.best.tier) lists[k]!.push(i);
  }
  return lists.map((list) => {
    list.sort((a, b) => pool.scores[b]! - pool.scores[a]! || pool.docs[a]! - pool.docs[b]!);
    return list.slice(0, PASSAGES).map((i) => pool.candidate(i));
  });
}

/** Raises chunks whose matched words stand close together (measured on the text's word positions). */
export function proximity(ctx: SearchContext, list: Candidate[], query: ParsedQuery): void {
  if (query.words.length < 2) return;
  const { text } = ctx;
  // The groups depend on the pass that found the candidate: made once per pass.
  const groupsOf = new Map<Derived[], number[][]>();
  for (const c of list) {
    let groups = groupsOf.get(c.derived);
    if (!groups) groupsOf.set(c.derived, (groups = wordGroups(ctx, c.derived, query)));
    const span = text.smallestSpan(groups, TEXT_FIELD, c.chunk);
    if (span > 0) c.score *= 1 + 1 / (1 + Math.max(0, span - text.spanGroups));
  }
}

/** A word's forms (itself, its other forms, its typos) are one group: any of them stands for it. */
function wordGroups(ctx: SearchContext, derived: Derived[], query: ParsedQuery): number[][] {
  const byWord = new Map<string, number[]>();
  for (const w of query.words) {
    const term = ctx.text.termOf(indexKey(w));
    byWord.set(w, term === undefined ? [] : [term]);
  }
  for (const d of derived) if (d.weight < 1) byWord.get(query.words[d.word]!)!.push(d.term);
  return [...byWord.values()];
}
