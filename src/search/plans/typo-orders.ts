/**
 * The typo-orders plan (D100, D53's rule over D90's engine): a query of one word the index does
 * not know, matched through its typo terms. A page that holds only typo terms scores at most
 * the sum, over them, of its score for the term searched alone (the term's stored order, D51),
 * times the typo's weight: a form's weight stands outside its saturation, a word adds its best
 * form, and a page's score is convex in its chunks'. So pages are taken from the orders depth by
 * depth, each scored over its own chunks by the query's lists, until the window's last page
 * scores above that sum at the depth reached (Fagin's threshold algorithm); the forms of few
 * postings (the word's other forms, a prefix's completions, rare typo terms) are read whole and
 * their pages scored. The same pages, chunks and scores as the words plan; where an order runs
 * out before the bound is met, the words plan ranks instead; out of time, the pages met answer.
 */
import { PageEntries } from "../ranking/page-entries";
import type { PageOrder } from "../ranking/page-orders";
import { type Form, QueryLists } from "../ranking/query-lists";
import { OTHER_GROUP, RULES, bm25fMost, pageFactor, rankClass, tierOf } from "../ranking/rules";
import type { SearchContext } from "../stages/context";
import { addIntros, enterPages, topPages } from "../stages/pages";
import { queryTerms } from "../stages/terms";
import { READ_WHOLE } from "../options";
import { BLOCK } from "../postings/postings-format";
import { termOfKey } from "../text/analyze";
import { parseQuery } from "../text/query";
import { enterApart, scorePages } from "./apart";
import type { Plan, PlanRun } from "./plan";
import { handOver } from "./words";

/** READ_WHOLE, or less where a test lowers PRUNE_FROM to rank small lists as large ones. */
const readWhole = (run: PlanRun) => Math.min(READ_WHOLE, run.pruneFrom - 1);

interface OrderedForm {
  order: PageOrder;
  /** The term searched alone, as its order was ranked (its other forms with it). */
  alone: QueryLists;
  /** The typo's weight in the query: what the term alone's score is multiplied by in the bound. */
  weight: number;
}

export class TypoOrders implements Plan {
  readonly name = "typo-orders";
  private readonly one = new PageEntries(4);

  rank(run: PlanRun) {
    const { ctx, query, terms, lists, from, need } = run;
    const forms = splitForms(ctx, run);
    if (!forms) return this.seededWords(run);
    const { ordered, whole: small } = forms;
    const { scratch, meter, catalog } = ctx;
    const { entries, entered } = scratch;
    const { noChunk } = enterApart(ctx, query, terms, lists, undefined);
    // The pages of the forms read whole: every page holding them is scored.
    const whole: number[] = [];
    const cursor = ctx.textCursor;
    for (const form of small)
      for (const l of form.lists) {
        cursor.open(l.address);
        for (let b = 0; b < cursor.blocks; b++) {
          const n = cursor.decode(b);
          meter.add(0, n);
          for (let i = 0; i < n; i++) {
            const p = catalog.pageOfChunk[cursor.docs[i]!]!;
            if (!entered.has(p)) {
              entered.mark(p);
              whole.push(p);
            }
          }
        }
      }
    scorePages(ctx, lists, whole);
    const typoClass = rankClass(OTHER_GROUP, tierOf(0, true));
    // Each order is walked to its own depth (D124): the one whose next page bounds the most, twice as deep.
    const depths = ordered.map(() => 0);
    const bounds = ordered.map(() => 0);
    // Scoring pages reads each list's block holding each page: past what the words plan would read with the bar
    // reached (the lists of the forms that could lift a page past it alone, wordsRead()), the walk gives way to it (D124).
    const blocks = lists.forms.flatMap((form) => form.lists.map((l) => Math.ceil(l.df / BLOCK)));
    let read = 0;
    // `bar`: the window's last score so far (lastScore()), asked when the order was taken before.
    const take = (f: number, to: number, bar: number): boolean => {
      const { order, alone, weight } = ordered[f]!;
      const pages = Math.min(to, order.pages.length) - depths[f]!;
      read += blocks.reduce((n, b) => n + Math.min(b, pages), 0);
      if (depths[f] && read > wordsRead(lists, bar)) return false;
      const taken: number[] = [];
      const end = Math.min(to, order.pages.length);
      for (let d = depths[f]!; d < end; d++) {
        const p = order.pages[d]!;
        if (entered.has(p)) continue;
        entered.mark(p);
        taken.push(p);
      }
      scorePages(ctx, lists, taken);
      depths[f] = end;
      const next = order.pages[end];
      if (next === undefined && order.pages.length < order.holding) return false;
      bounds[f] = next === undefined ? 0 : weight * this.scoreAlone(ctx, alone, next);
      return true;
    };
    // Giving way, the pages scored so far are exact: the words plan takes them as ranked apart (its bar from the start).
    const byWords = () => handOver(run, { apart: entries.count, noChunk });
    for (let f = 0; f < ordered.length; f++) if (!take(f, need, -1)) return byWords();
    for (;;) {
      let most = 0;
      let next = 0;
      let third = 0;
      let greatest = 0;
      for (let f = 0; f < ordered.length; f++) {
        const b = bounds[f]!;
        if (b > most) [most, next, third, greatest] = [b, most, next, f];
        else if (b > next) [next, third] = [b, next];
        else if (b > third) third = b;
      }
      // A page no order has given holds each form at most its order's next page's score (unseenBound).
      const last = lastScore(entries, need, typoClass);
      if (most === 0 || last > unseenBound(most, next, third)) break;
      // Out of time (D91): the pages met so far, each scored exactly, and the answer marked.
      if (meter.late()) {
        meter.cutOff = true;
        break;
      }
      if (!take(greatest, 2 * depths[greatest]!, last)) return byWords();
    }
    addIntros(ctx, entries, noChunk, () => false);
    return {
      pages: topPages(ctx, query, terms, lists, entries, from, need),
      total: Math.max(entries.count, ...ordered.map((o) => o.order.holding)),
    };
  }

  /**
   * The words plan, where the orders cannot rank the word: its bar seeded from the first window
   * by the first pages of the orders its typo forms have, scored over their own chunks (real
   * pages, exact: the bar a pass reaches is at least theirs).
   */
  private seededWords(run: PlanRun) {
    const { ctx, query, terms, lists, need } = run;
    const { entered, entries } = ctx.scratch;
    const { noChunk } = enterApart(ctx, query, terms, lists, undefined);
    const pages: number[] = [];
    for (const form of lists.forms) {
      const order = form.typo ? ctx.orders?.typoOrder(ctx.text.keyOf(form.term)) : undefined;
      for (let d = 0; order && d < Math.min(need, order.pages.length); d++) {
        const p = order.pages[d]!;
        if (entered.has(p)) continue;
        entered.mark(p);
        pages.push(p);
      }
    }
    scorePages(ctx, lists, pages);
    return handOver(run, { apart: entries.count, noChunk });
  }

  /** A page's score for a term searched alone, as its order ranked it (no title in play). */
  private scoreAlone(ctx: SearchContext, alone: QueryLists, page: number): number {
    const range = ctx.catalog.chunkRange(page);
    const scores = ctx.ranges.score(alone, range.from, range.to);
    ctx.meter.add(scores.count, ctx.ranges.postings);
    const saved = ctx.scratch.titleBoost[page]!;
    ctx.scratch.titleBoost[page] = 0;
    this.one.clear();
    enterPages(ctx, alone, scores, this.one);
    ctx.scratch.titleBoost[page] = saved;
    return this.one.count ? this.one.score[0]! : 0;
  }
}

/**
 * The query's forms: the typo forms of more than READ_WHOLE postings, each with its stored
 * order, and the others, read whole; undefined when no form is ordered, when a larger one has
 * no order, or when one that is not a typo (its pages rank in the exact tier, above) is larger.
 */
function splitForms(ctx: SearchContext, run: PlanRun): { ordered: OrderedForm[]; whole: Form[] } | undefined {
  const ordered: OrderedForm[] = [];
  const whole: Form[] = [];
  for (const form of run.lists.forms) {
    const key = ctx.text.keyOf(form.term);
    if (form.postings <= readWhole(run)) {
      whole.push(form);
      continue;
    }
    const order = form.typo ? ctx.orders?.typoOrder(key) : undefined;
    if (!order) return undefined;
    const alone = termAlone(ctx, form.term);
    if (!alone) return undefined;
    // The form's weight × IDF over the term's own IDF (weight 1 alone).
    ordered.push({ order, alone: alone.lists, weight: form.idf / alone.idf });
  }
  // Each page of theirs is scored apart, over every list of the query: a few hundred at most.
  if (whole.reduce((n, f) => n + f.postings, 0) > READ_WHOLE) return undefined;
  return ordered.length ? { ordered, whole } : undefined;
}

/** A term searched alone, as its order was ranked: its lists (its other forms with it) and its own IDF. */
interface TermAlone {
  lists: QueryLists;
  idf: number;
}

/**
 * Terms searched alone, by text shard and term (null: not one word of its own), kept from search to search:
 * deriving a term's other forms stems candidates, a few milliseconds a typo word. At most ALONE_KEPT a shard.
 */
const alones = new WeakMap<SearchContext["text"], Map<number, TermAlone | null>>();
const ALONE_KEPT = 4096;

function termAlone(ctx: SearchContext, term: number): TermAlone | undefined {
  let kept = alones.get(ctx.text);
  if (!kept) alones.set(ctx.text, (kept = new Map()));
  let alone = kept.get(term);
  if (alone === undefined) {
    alone = null;
    const terms = queryTerms(parseQuery(`${termOfKey(ctx.text.keyOf(term))}.`, ctx.lang), ctx);
    if (terms.words.length === 1 && !terms.typoable) {
      const lists = new QueryLists(ctx.text, {
        derived: ctx.text.derive(terms.exact, false),
        words: 1,
        required: terms.required,
        phraseWords: 0,
      });
      const own = lists.byWord[0]!.find((f) => f.term === term);
      if (own) alone = { lists, idf: own.idf };
    }
    if (kept.size >= ALONE_KEPT) kept.clear();
    kept.set(term, alone);
  }
  return alone ?? undefined;
}

/**
 * The blocks the words plan reads for one word under `bar` (D146): those of its forms whose best chunk, as a page's
 * every chunk, could beat it; the others it only asks for the chunks of pages those find (WordReader.split()).
 */
function wordsRead(lists: QueryLists, bar: number): number {
  let blocks = 0;
  for (const form of lists.forms)
    if (pageFactor() * bm25fMost(form.idf) >= bar) for (const l of form.lists) blocks += Math.ceil(l.df / BLOCK);
  return blocks;
}

/** The score of the `need`th best entry, counting those of a better class first; -1 when fewer stand in `klass` or better. */
function lastScore(entries: PageEntries, need: number, klass: number): number {
  let better = 0;
  const scores: number[] = [];
  for (let e = 0; e < entries.count; e++) {
    if (entries.klass[e]! < klass) better++;
    else if (entries.klass[e] === klass) scores.push(entries.score[e]!);
  }
  if (better >= need) return Number.POSITIVE_INFINITY;
  if (scores.length < need - better) return -1;
  scores.sort((a, b) => b - a);
  return scores[need - better - 1]!;
}

/**
 * The most a page no order has given can score (D140), from the three greatest of its forms' bounds, each the most a
 * page's chunks holding that form score together (page evidence included). The page's best three chunks come from
 * one form (at most its bound), two (one form's two chunks at most its bound, the other's one chunk at most its own,
 * weighed 1 or RULES.pageEvidence by its place) or three (weighed 1, RULES.pageEvidence and its square, the greater
 * bound first at most): the greatest, RULES.pageEvidence of the second and its square of the third bound all.
 */
export function unseenBound(most: number, next: number, third: number): number {
  const e = RULES.pageEvidence;
  // Past 1, a later chunk weighs more than an earlier one: each of the three chunks may then score `most`.
  if (e > 1) return (1 + e + e * e) * most;
  return most + e * next + e * e * third;
}
