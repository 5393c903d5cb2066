/**
 * Candidates: the exhaustive search's passes over the text shard, filling the pool in tiers,
 * best first, every tier whatever the window asked for (D61; only the time budget stops them):
 *   0. chunks holding every required word exactly (or as another form of it);
 *   1. every required word, allowing typos;
 *   2. fewer words, exactly (with quoted phrases: every phrase word and any of the others);
 *   3. fewer words, allowing typos.
 * A chunk stays in the first tier that found it. The matching pages are counted from the
 * exact and typo passes, whatever the depth asked for. Several words without typos are first
 * tried by their conjunction (conjunction.ts, conjunctionPool): tier 0 alone, when it holds
 * enough pages, the matching pages then estimated (D48); when it falls short, the engine tries
 * the pages past it from the words' orders (stages/prune.ts, D52) before these passes. Quoted
 * phrases alone take the conjunction of their words.
 */
import { matchAll } from "../ranking/conjunction";
import { WORK_SHARE, type Pruning } from "../options";
import { FEWER_TIER, TYPO_TIER } from "../ranking/rules";
import type { ParsedQuery } from "../text/query";
import type { Matches } from "../index/shard-types";
import type { SearchContext } from "./context";
import { estimatedPages } from "./prune";
import type { QueryTerms } from "./terms";
import { type KeptPhrases, phraseCheck } from "./phrases";
import type { Candidate } from "./pool";
import { markTitleGroups } from "./title-groups";

/** Where the passes look: the whole text shard, or one page's chunks (onlyPage ≥ 0). */
export interface Scope {
  onlyPage: number;
  range?: { from: number; to: number };
}

/**
 * Fills the pool by the exhaustive passes, every tier however few pages were asked for (a
 * page's rank must not depend on the window, D61); only the time budget stops them early.
 * Returns the pages holding any query word (0 within one page).
 */
export function fillPool(ctx: SearchContext, query: ParsedQuery, terms: QueryTerms, scope: Scope): number {
  const { text, meter, scratch } = ctx;
  const { pool } = scratch;
  const into = (i: number) => ({ ...scope.range, into: scratch.textBuffer(i) });
  const exact = meter.counted(text.match(terms.exact, into(0)));
  pool.add(exact, 0, terms.required, "having");
  // Run whenever a word may hold a typo, so that the matching pages counted below do not depend
  // on how many hits were asked for.
  const fuzzy = terms.typoable && !meter.late() ? meter.counted(text.match(terms.fuzzy, into(1))) : undefined;
  if (fuzzy && !meter.late()) pool.add(fuzzy, TYPO_TIER, terms.required, "having");
  const matching = scope.onlyPage >= 0 ? 0 : countPages(ctx, exact, fuzzy);
  const fewer = terms.words.length > 1;
  const phrases = query.phrases.length > 0;
  if (!meter.late() && fewer) addFewerWords(ctx, query, terms, exact);
  if (fuzzy && !meter.late() && fewer && !phrases) pool.add(fuzzy, 3, terms.full, "partial");
  return matching;
}

/**
 * A query of quoted phrases and nothing else (ranking/plan.ts): its candidates are the chunks
 * holding every phrase, found in the conjunction of their words (conjunction.ts) before any
 * is scored; the exhaustive passes would find the same after the phrase check, reading and
 * scoring every posting of every word. Returns them as the phrase check keeps them (every one
 * checked here); undefined, the pool left empty, when the conjunction does not pay (every
 * word common). Past the time budget the chunks not yet checked are left out: the count is
 * then of the pages found.
 */
export function phraseCandidates(
  ctx: SearchContext,
  query: ParsedQuery,
  terms: QueryTerms,
  scope: Scope,
): KeptPhrases | undefined {
  const { text, scratch, meter } = ctx;
  const holds = phraseCheck(ctx, query);
  if (!holds) return undefined;
  let asked = 0;
  let late = false;
  const keep = (doc: number) => !(late || (++asked % 64 === 0 && (late = meter.late()))) && holds(doc);
  const all = matchAll(text, ctx.textCursor, terms.exact, terms.full, {
    into: scratch.textBuffer(0),
    ...scope.range,
    keep,
  });
  if (!all) return undefined;
  const { pool } = scratch;
  pool.add(meter.counted(all), 0, terms.full, "having");
  const list: Candidate[] = [];
  for (let i = 0; i < pool.size; i++) {
    const c = pool.candidate(i);
    c.position = i;
    list.push(c);
  }
  return { list, estimate: 1 };
}

/** What the conjunction made of tier 0: the pool filled, with the pages holding any word (estimated); fewer pages than asked for, the pool left empty; or nothing, when it does not pay. */
type Conjoined = { matching: number } | "short" | undefined;

/**
 * Tier 0 alone, from the conjunction of the words (conjunction.ts), when it holds `need`
 * pages: the exhaustive passes would add nothing that ranks. The pages holding any word are
 * then estimated (D48).
 */
export function conjunctionPool(
  ctx: SearchContext,
  query: ParsedQuery,
  terms: QueryTerms,
  need: number,
  pruning: Pruning,
): Conjoined {
  const { text, scratch, meter } = ctx;
  const derived = text.derive(terms.exact);
  const budget = (pruning.workShare ?? WORK_SHARE) * text.postingsOf(derived);
  const all = matchAll(text, ctx.textCursor, terms.exact, terms.required, {
    into: scratch.textBuffer(0),
    budget,
    least: need,
  });
  if (!all) return undefined;
  scratch.pool.add(meter.counted(all), 0, terms.required, "having");
  if (!pagesReach(ctx, need)) {
    scratch.pool.clear();
    return "short";
  }
  addTitleMatches(ctx, query, terms);
  return { matching: estimatedPages(ctx, derived, terms.words.length) };
}

/**
 * The chunks of the title matches that hold only some of the words: a title match ranks above
 * the pages holding every word whatever its tier, by its best chunk (D61), as the exhaustive
 * passes find it. Title matches are few; each is matched within its own chunks.
 */
function addTitleMatches(ctx: SearchContext, query: ParsedQuery, terms: QueryTerms): void {
  const { text, scratch, meter, catalog } = ctx;
  for (const p of markTitleGroups(ctx, query, terms.title, terms.informative)) {
    if (!scratch.pageGroup[p]) continue;
    const { from, to } = catalog.chunkRange(p);
    scratch.pool.add(
      meter.counted(text.match(terms.exact, { from, to, into: scratch.textBuffer(1) })),
      FEWER_TIER,
      terms.full,
      "partial",
    );
  }
}

/**
 * Tier 2: any of the words; with quoted phrases, every phrase word and any of the others
 * (searched as the phrase words alone: the phrase check does the rest). The exact pass saw
 * every word: the chunks holding each phrase word are among its matches.
 */
function addFewerWords(ctx: SearchContext, query: ParsedQuery, terms: QueryTerms, exact: Matches): void {
  const { pool } = ctx.scratch;
  if (!query.phrases.length) {
    pool.add(exact, FEWER_TIER, terms.full, "partial");
    return;
  }
  const phraseWords = new Set(query.phrases.flat());
  let having = 0;
  for (const [i, w] of terms.words.entries()) if (phraseWords.has(w)) having |= 1 << i;
  pool.add(exact, FEWER_TIER, having >>> 0, "having");
}

/** Pages holding any query word, exactly or (in the typo pass) with typos. */
function countPages(ctx: SearchContext, exact: Matches, fuzzy: Matches | undefined): number {
  const { marks } = ctx.scratch;
  const { pageOfChunk } = ctx.catalog;
  marks.fresh();
  let count = 0;
  for (const m of fuzzy ? [exact, fuzzy] : [exact]) {
    // A list's chunks come in order, and a page's chunks are consecutive: most repeat the page before.
    for (let i = 0, last = -1; i < m.count; i++) {
      const p = pageOfChunk[m.docs[i]!]!;
      if (p === last) continue;
      last = p;
      if (!marks.has(p)) {
        marks.mark(p);
        count++;
      }
    }
  }
  return count;
}

/** Whether the pool's chunks come from `need` pages or more (counted until they do). */
function pagesReach(ctx: SearchContext, need: number): boolean {
  const { pool, marks } = ctx.scratch;
  if (pool.size < need) return false;
  const { pageOfChunk } = ctx.catalog;
  marks.fresh();
  let count = 0;
  for (let i = 0; i < pool.size && count < need; i++) {
    const p = pageOfChunk[pool.docs[i]!]!;
    if (!marks.has(p)) {
      marks.mark(p);
      count++;
    }
  }
  return count >= need;
}
