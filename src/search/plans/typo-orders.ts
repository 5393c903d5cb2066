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
import { OTHER_GROUP, rankClass, tierOf } from "../ranking/rules";
import type { SearchContext } from "../stages/context";
import { addIntros, enterPages, topPages } from "../stages/pages";
import { queryTerms } from "../stages/terms";
import { termOfKey } from "../text/analyze";
import { parseQuery } from "../text/query";
import { PRUNE_FROM } from "../options";
import { enterApart, scorePages } from "./apart";
import { boundOrder } from "./bound-order";
import type { Plan, PlanRun } from "./plan";
import { WORDS } from "./words";

/** Forms of this many postings or fewer, all told, are read whole, their pages scored: no order is asked of them. */
const READ_WHOLE = 1024;

/** READ_WHOLE, or less where a test lowers PRUNE_FROM to rank small lists as large ones. */
const readWhole = (run: PlanRun) => Math.min(READ_WHOLE, run.pruneFrom - 1);

/** A typo form's pages, the most it can add first: its stored order (D51), or one made from its lists (D122). */
interface OrderedForm {
  pages: ArrayLike<number>;
  /** Pages holding the form: more than `pages` when a stored order stops short. */
  holding: number;
  /** The most the form adds to a page found past `depth` of its pages. */
  boundAt(depth: number): number;
}

export class TypoOrders implements Plan {
  readonly name = "typo-orders";
  private readonly one = new PageEntries(4);

  rank(run: PlanRun) {
    const { ctx, query, terms, lists, from, need } = run;
    const forms = splitForms(ctx, run, (alone, page) => this.scoreAlone(ctx, alone, page));
    if (!forms) return this.byWords(run);
    const { ordered, whole: read } = forms;
    const { scratch, meter, catalog } = ctx;
    const { entries, entered } = scratch;
    const { noChunk } = enterApart(ctx, query, terms, lists, undefined);
    // The pages of the forms read whole: every page holding them is scored.
    const whole: number[] = [];
    const cursor = ctx.textCursor;
    for (const form of read)
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
    for (let depth = 0, check = need; ; check *= 2) {
      // Out of time (D91): the pages met so far, each scored exactly, and the answer marked.
      if (depth && meter.late()) {
        meter.cutOff = true;
        break;
      }
      const taken: number[] = [];
      for (; depth < check; depth++)
        for (const { pages } of ordered) {
          const p = pages[depth];
          if (p === undefined || entered.has(p)) continue;
          entered.mark(p);
          taken.push(p);
        }
      scorePages(ctx, lists, taken);
      let bound = 0;
      for (const o of ordered) {
        if (depth < o.pages.length) bound += o.boundAt(depth);
        else if (o.pages.length < o.holding) return this.byWords(run);
      }
      if (bound === 0 || lastScore(entries, need, typoClass) > bound) break;
    }
    addIntros(ctx, entries, noChunk, () => false);
    return {
      pages: topPages(ctx, query, terms, lists, entries, from, need),
      total: Math.max(entries.count, ...ordered.map((o) => o.holding)),
    };
  }

  private byWords(run: PlanRun) {
    run.ctx.scratch.entries.clear();
    run.ctx.meter.plan = WORDS.name;
    return WORDS.rank(run);
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
 * order, or when it has none for being held by fewer than PRUNE_FROM postings, an order made
 * from its lists (D122); and the others, read whole. Undefined when no form is ordered, when a
 * larger one has no order, or when one that is not a typo (its pages rank in the exact tier,
 * above) is larger.
 */
function splitForms(
  ctx: SearchContext,
  run: PlanRun,
  scoreAlone: (alone: QueryLists, page: number) => number,
): { ordered: OrderedForm[]; whole: Form[] } | undefined {
  const ordered: OrderedForm[] = [];
  const whole: Form[] = [];
  // Short lists are ranked to their end by the words plan, their count exact (D48): no order is made for them.
  const made = run.lists.allPostings.reduce((a, b) => a + b, 0) >= run.pruneFrom;
  for (const form of run.lists.forms) {
    const key = ctx.text.keyOf(form.term);
    if (form.postings <= readWhole(run)) {
      whole.push(form);
      continue;
    }
    if (!form.typo) return undefined;
    const order = ctx.orders?.get({ key, prefix: false, fuzzy: 0 });
    if (!order) {
      // A larger list is ordered in the snapshot, or not at all (an older one): reading it whole would cost too much.
      if (!made || form.postings >= PRUNE_FROM) return undefined;
      const { pages, bounds } = boundOrder(ctx, form);
      ordered.push({ pages, holding: pages.length, boundAt: (depth) => bounds[depth]! });
      continue;
    }
    const stored = storedOrder(ctx, form, key, order, scoreAlone);
    if (!stored) return undefined;
    ordered.push(stored);
  }
  // Each page of theirs is scored apart, over every list of the query: a few hundred at most.
  if (whole.reduce((n, f) => n + f.postings, 0) > READ_WHOLE) return undefined;
  return ordered.length ? { ordered, whole } : undefined;
}

/** A typo form's stored order, bounded by the term searched alone (its other forms with it, as its order was ranked) times the typo's weight. */
function storedOrder(
  ctx: SearchContext,
  form: Form,
  key: string,
  order: PageOrder,
  scoreAlone: (alone: QueryLists, page: number) => number,
): OrderedForm | undefined {
  const terms = queryTerms(parseQuery(`${termOfKey(key)}.`, ctx.lang), ctx);
  if (terms.words.length !== 1 || terms.typoable) return undefined;
  const alone = new QueryLists(ctx.text, {
    derived: ctx.text.derive(terms.exact, false),
    words: 1,
    required: terms.required,
    phraseWords: 0,
  });
  // The form's weight × IDF over the term's own IDF (weight 1 alone).
  const own = alone.byWord[0]!.find((f) => f.term === form.term);
  if (!own) return undefined;
  const weight = form.idf / own.idf;
  return {
    pages: order.pages,
    holding: order.holding,
    boundAt: (depth) => weight * scoreAlone(alone, order.pages[depth]!),
  };
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
