/**
 * Ranking rules of the passage and proximity (D62). A page's passage is the chunk a reader
 * would quote for the query, chosen within the page alone, from its chunks holding a query
 * word in their text or section heading (a heading counts as its chunks'):
 *   1. by their score over the query's words, where a word's other forms weigh
 *      RULES.passageVariant of the word (not MiniSearch's 0.3) and a function word a fifth
 *      of its weight (RULES.passageFunction): "who" no longer outweighs "assassination";
 *   2. the best SPANS_MEASURED of them raised by how close the words stand (proximity);
 *   3. then the first chunk.
 * Proximity also ranks pages: the first PROXIMITY_WINDOW pages of the order are reordered by
 * how close the query's words (every word: "president of the United States" is a phrase a
 * function word holds together) stand in their best chunk, their score times that factor. The
 * order never depends on the window asked for: those pages are always ranked (engine.ts), and
 * a page's passage depends on its own chunks only, chosen for the pages of the window. */
import { indexKey } from "../text/analyze";
import { SECTION_FIELD, TEXT_FIELD } from "../postings/fields";
import type { ParsedQuery } from "../text/query";
import { popcount, type Derived } from "../postings/shard-types";
import { QueryLists } from "../ranking/query-lists";
import type { SearchContext } from "./context";
import { INTRO_TIER, PROXIMITY_WINDOW, proximityFactor, RULES } from "../ranking/rules";
import type { Candidate, PageCandidate } from "./candidate";
import type { QueryTerms } from "./terms";

/** How many of a page's chunks, best first by words held and score, are measured for proximity. */
const SPANS_MEASURED = 8;
export const byTierScore = (a: Candidate, b: Candidate) => a.tier - b.tier || b.score - a.score || a.chunk - b.chunk;
const byRank = (a: PageCandidate, b: PageCandidate) =>
  a.group - b.group || byTierScore(a.best, b.best) || a.page - b.page;

/** What passages are chosen with, made once per search: the query's informative terms per tier's terms. */
export class Passages {
  private readonly weighed = new Map<Derived[], QueryLists>();
  private readonly groups = new Map<Derived[], number[][]>();

  constructor(
    private readonly ctx: SearchContext,
    private readonly query: ParsedQuery,
    private readonly terms: QueryTerms,
    /** Quoted phrases chose the candidates: a page's passage is its best chunk holding them. */
    private readonly phrases: boolean,
  ) {}

  /** Reorders the first PROXIMITY_WINDOW pages by their best chunk's proximity; then chooses the passages of pages [from, to). */
  rerank(pages: PageCandidate[], from = 0, to = PROXIMITY_WINDOW): void {
    const top = pages.slice(0, PROXIMITY_WINDOW);
    proximity(
      this.ctx,
      top.map((p) => p.best),
      this.query,
    );
    top.sort(byRank);
    for (let i = 0; i < top.length; i++) pages[i] = top[i]!;
    for (let i = from; i < Math.min(to, pages.length); i++) this.choose(pages[i]!);
  }

  /** Makes the page's passage its best chunk, keeping the page's score. */
  private choose(page: PageCandidate): void {
    const { best } = page;
    if (this.phrases || best.tier >= INTRO_TIER) return;
    const chunk = this.passageOf(page.page, best);
    if (chunk !== undefined) page.best = { chunk, score: best.score, tier: best.tier, derived: best.derived };
  }

  /** The page's passage among its chunks, by the rules above; undefined when no chunk holds an informative word in its text or heading. */
  private passageOf(pageIdx: number, best: Candidate): number | undefined {
    const { catalog, ranges, meter } = this.ctx;
    const lists = this.informative(best.derived);
    if (!lists.forms.length) return undefined;
    const { from, to } = catalog.chunkRange(pageIdx);
    const m = ranges.score(lists, from, to);
    meter.add(m.count, ranges.postings);
    if (!m.count) return undefined;
    const score = Array.from({ length: m.count }, (_x, i) => m.all[i]! * popcount(m.allMask[i]!));
    const order = Array.from({ length: m.count }, (_x, i) => i);
    order.sort((a, b) => score[b]! - score[a]! || m.docs[a]! - m.docs[b]!);
    let chosen = m.docs[order[0]!]!;
    let most = -1;
    for (const i of order.slice(0, SPANS_MEASURED)) {
      const key = score[i]! * this.factor(best.derived, m.docs[i]!);
      if (key > most || (key === most && m.docs[i]! < chosen)) {
        chosen = m.docs[i]!;
        most = key;
      }
    }
    return chosen;
  }

  /**
   * A tier's terms as lists of the text and its heading: a word's other forms weighing
   * RULES.passageVariant, a function word RULES.passageFunction of its weight.
   */
  private informative(derived: Derived[]): QueryLists {
    let out = this.weighed.get(derived);
    if (!out) {
      const { informative, words } = this.terms;
      const weighed = derived.map((d) => {
        const weight = d.variant ? RULES.passageVariant : d.weight;
        return {
          ...d,
          weight: informative && !(informative & (1 << d.word)) ? weight * RULES.passageFunction : weight,
        };
      });
      out = new QueryLists(this.ctx.text, {
        derived: weighed,
        words: words.length,
        required: 0,
        phraseWords: 0,
        fields: [TEXT_FIELD, SECTION_FIELD],
      });
      this.weighed.set(derived, out);
    }
    return out;
  }

  /**
   * The proximity factor of a chunk's words (every query word, as proximity ranks pages: a function
   * word holds a phrase together), in its text or, when they stand closer there, in its heading
   * (a heading counts as its chunks': "Gettysburg Address (1863)" for "Gettysburg Address delivered").
   */
  private factor(derived: Derived[], chunk: number): number {
    let groups = this.groups.get(derived);
    if (!groups) this.groups.set(derived, (groups = wordGroups(this.ctx, derived, this.query)));
    if (groups.length < 2) return 1;
    const { text } = this.ctx;
    const inText = proximityFactor(text.smallestSpan(groups, TEXT_FIELD, chunk), text.spanGroups);
    return Math.max(inText, proximityFactor(text.smallestSpan(groups, SECTION_FIELD, chunk), text.spanGroups));
  }
}

/** Raises chunks whose matched words stand close together (one page's chunks, D7). */
export function proximity(ctx: SearchContext, list: Candidate[], query: ParsedQuery): void {
  if (query.words.length < 2) return;
  const groupsOf = new Map<Derived[], number[][]>();
  for (const c of list) {
    let groups = groupsOf.get(c.derived);
    if (!groups) groupsOf.set(c.derived, (groups = wordGroups(ctx, c.derived, query)));
    c.score *= proximityFactor(ctx.text.smallestSpan(groups, TEXT_FIELD, c.chunk), ctx.text.spanGroups);
  }
}

/** A word's forms (itself, its other forms, its typos) are one group: any of them stands for it. */
function wordGroups(ctx: SearchContext, derived: Derived[], query: ParsedQuery): number[][] {
  const byWord = new Map<string, number[]>();
  for (const w of query.words) {
    const term = ctx.text.termOf(indexKey(w));
    byWord.set(w, term === undefined ? [] : [term]);
  }
  for (const d of derived) if (d.weight < 1 || d.variant) byWord.get(query.words[d.word]!)!.push(d.term);
  return [...byWord.values()];
}
