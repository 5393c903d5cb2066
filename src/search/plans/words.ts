/**
 * The words plan (D90): the pages a query's words find, ranked by the block-max executor
 * (ranking/executor.ts) tier by tier, best first, each tier keeping only as many pages as the
 * window still needs and never read once the window is filled (as Meilisearch's bucket sort
 * stops). The title matches and the pages whose title raises their score are few: they are
 * scored apart over their own chunks first, and seed the bar of the tier they stand in.
 *
 * A query whose lists hold fewer than PRUNE_FROM postings (run.pruneFrom) is ranked to the end of every tier:
 * its count of matching pages is then exact; past it, estimated (D48).
 */
import type { Pass } from "../ranking/executor";
import { OTHER_GROUP, rankClass, tierOf } from "../ranking/rules";
import type { SearchContext } from "../stages/context";
import { addIntros, pagesHolding, topPages } from "../stages/pages";
import { phrasesOf } from "../stages/phrases";
import { functionWords } from "../stages/terms";
import { type Apart, enterApart } from "./apart";
import type { Plan, PlanRun } from "./plan";

export const WORDS: Plan = {
  name: "words",
  rank: (run) => rankWords(run),
};

/**
 * The words plan taking over from another plan that scored some pages exactly and can rank no further (D124's typo
 * orders, the one-word plan's order run out): the search's work names it, and those pages are ranked apart.
 */
export function handOver(run: PlanRun, scored: Apart) {
  run.ctx.meter.plan = WORDS.name;
  return rankWords(run, scored);
}

/**
 * The words plan's ranking. `seeded`: the pages another plan already scored over their own chunks
 * (entered, exact), taken as ranked apart: they seed the bar of their tier from the first window.
 */
function rankWords({ ctx, query, terms, lists, from, need, pruneFrom }: PlanRun, seeded?: Apart) {
  const { scratch, meter } = ctx;
  const { entries, entered, heap } = scratch;
  const phrases = query.phrases.length > 0;
  const quoted = phrases ? phrasesOf(ctx, query) : undefined;
  if (phrases && !quoted) return { pages: [], total: 0 };
  const keep = quoted?.holds;
  // A phrase with a word other than function words is in few chunks: checked first, on the chunks of the phrases'
  // rarest term (D138) or the lead's. One of function words alone is in most: checked last, on the pages that may rank.
  const stop = functionWords(ctx.lang);
  const keepFirst = query.phrases.some((phrase) => phrase.some((w) => !stop.has(w))) ? quoted?.terms : undefined;
  const { apart, noChunk } = seeded ?? enterApart(ctx, query, terms, lists, keep);
  // Short lists: the matching pages are counted exactly, by a pass over the lists (with quoted
  // phrases, by ranking every page: a page counts when a chunk holds the phrase).
  const short = lists.allPostings.reduce((a, b) => a + b, 0) < pruneFrom;
  const exhaustive = short && phrases;
  let cutOff = false;
  let pagesSeen = 0;
  let pagesAsked = 0;
  let pagesKept = 0;
  for (const pass of passes(lists.buckets, lists.typoable)) {
    const klass = rankClass(OTHER_GROUP, pass.tier);
    let better = 0;
    for (let e = 0; e < entries.count; e++) if (entries.klass[e]! < klass) better++;
    const room = exhaustive ? Infinity : need - better;
    if (room <= 0) break;
    heap.reset(room);
    for (let e = 0; e < apart; e++)
      if (entries.klass[e] === klass) heap.offer(entries.page[e]!, entries.score[e]!, entries.chunk[e]!, pass.tier);
    const run: Pass = {
      lists,
      ...pass,
      heap,
      excluded: (p) => entered.has(p),
      keep,
      keepFirst,
      keepAll: quoted?.filter,
      late: () => meter.late(),
    };
    ctx.executor.run(run);
    meter.add(ctx.executor.candidates, ctx.executor.postings);
    const counts = ctx.executor.pageCounts;
    pagesSeen += counts.seen;
    pagesAsked += counts.asked;
    pagesKept += counts.kept;
    heap.forEach((page, score, chunk, tier) => {
      if (entered.has(page)) return;
      entered.mark(page);
      entries.add(page, klass, score, chunk, tier);
    });
    if (ctx.executor.cutOff) {
      cutOff = true;
      break;
    }
  }
  meter.cutOff = cutOff;
  const intros = phrases ? 0 : addIntros(ctx, entries, noChunk, () => false);
  // Counted when every tier was read to its end, or as found when out of time; else estimated (D48): with
  // quoted phrases, the pages holding their words that the passes met, scaled by the share of those checked
  // that held the phrases (D123).
  const total =
    exhaustive || cutOff
      ? entries.count
      : short
        ? pagesHolding(ctx, lists) + intros
        : phrases
          ? Math.round(pagesAsked ? (pagesSeen * pagesKept) / pagesAsked : 0) + apart
          : Math.max(estimatedPages(ctx, lists.allPostings), apart);
  return { pages: topPages(ctx, query, terms, lists, entries, from, need), total };
}

/** The passes of a query, best tier first: every required word, exactly then with typos; then any word, the same. */
function passes(
  buckets: number[],
  typoable: boolean,
): Omit<Pass, "lists" | "heap" | "excluded" | "keep" | "keepFirst" | "keepAll" | "late">[] {
  const out: Omit<Pass, "lists" | "heap" | "excluded" | "keep" | "keepFirst" | "keepAll" | "late">[] = [];
  for (const [bucket, required] of buckets.entries()) {
    out.push({ required, typos: false, tier: tierOf(bucket, false) });
    if (typoable) out.push({ required, typos: true, tier: tierOf(bucket, true) });
  }
  return out;
}

/**
 * D48's estimate of the pages holding any query word, from the lists' sizes alone (so that it
 * never depends on the window): each word's chunks spread over the pages independently.
 */
function estimatedPages(ctx: SearchContext, postings: number[]): number {
  const pages = ctx.catalog.pageCount;
  let none = 1;
  for (const c of postings) none *= (1 - 1 / pages) ** Math.min(c, ctx.text.documentCount);
  return Math.round(pages * (1 - none));
}
