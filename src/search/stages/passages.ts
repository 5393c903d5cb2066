/**
 * Ranking rules of the passage and proximity (D62, D93, D94). A page's passage is the chunk a
 * reader would quote for the query, chosen within the page alone:
 *   0. its lead, when the query names the page (its title, a redirect's, or only words of its
 *      title) and no other query word points elsewhere in it (D93);
 *   else from its chunks holding a query word in their text or section heading (a heading
 *   counts as its chunks'):
 *   1. those whose heading names more of the query's sectional words (D94);
 *   2. by their score over the query's words, where a word's other forms weigh
 *      RULES.passageVariant of the word (not MiniSearch's 0.3) and a function word, or a word
 *      of the page's title when the query has others, a fifth of its weight
 *      (RULES.passageFunction): "who" no longer outweighs "assassination";
 *   3. the best SPANS_MEASURED of them raised by how close the words stand (proximity);
 *   4. then the first chunk.
 * Proximity also ranks pages: the first PROXIMITY_WINDOW pages of the order are reordered by
 * how close the query's words (every word: "president of the United States" is a phrase a
 * function word holds together) stand in their best chunk, their score times that factor, and
 * times 1 + RULES.pageCoverage × c² (D152), c as coverage() measures it with the title's words held, and by their
 * page's own text (D202, page-text.ts). The
 * order never depends on the window asked for: those pages are always ranked (engine.ts), and
 * a page's passage depends on its own chunks only, chosen for the pages of the window. */
import { indexKey } from "../text/analyze";
import { SECTION_FIELD, TEXT_FIELD } from "../postings/fields";
import type { ParsedQuery } from "../text/query";
import { MAX_WORDS, popcount, type Derived } from "../postings/shard-types";
import { QueryLists } from "../ranking/query-lists";
import type { ChunkScores } from "../ranking/range-scores";
import type { SearchContext } from "./context";
import { idf, INTRO_TIER, PROXIMITY_WINDOW, proximityFactor, RULES } from "../ranking/rules";
import type { Candidate, PageCandidate } from "./candidate";
import { raiseByPageText } from "./page-text";
import { PassageWords } from "./passage-words";
import type { QueryTerms } from "./terms";

/** The D8 group of a page whose title (or a redirect's) is the query. */
const EXACT_TITLE_GROUP = 0;
/** How many of a page's chunks, best first by words held and score, are measured for proximity. */
const SPANS_MEASURED = 8;
export const byTierScore = (a: Candidate, b: Candidate) => a.tier - b.tier || b.score - a.score || a.chunk - b.chunk;
const byRank = (a: PageCandidate, b: PageCandidate) =>
  a.group - b.group || byTierScore(a.best, b.best) || a.page - b.page;

/** What passages are chosen with, made once per search: the query's informative terms per tier's terms. */
export class Passages {
  private readonly weighed = new Map<Derived[], Map<number, QueryLists>>();
  private readonly groups = new Map<Derived[], number[][]>();
  private readonly named = new Map<Derived[], PassageWords>();

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
    // Function words are optional (D79): with one informative word, the page's score is that word's. Quoted phrases
    // chose the candidates, and every one holds their words together.
    if (!this.phrases && popcount(this.terms.informative) > 1) {
      if (RULES.pageCoverage)
        for (const { best, page } of top) {
          const titled = this.words(best.derived).title(this.ctx.catalog.pages.title(page)).words;
          const c = this.held(best.derived, 0, best.chunk, titled);
          best.score *= 1 + RULES.pageCoverage * c * c;
        }
      raiseByPageText(this.ctx, top, this.terms.words.length, this.terms.informative);
    }
    top.sort(byRank);
    for (let i = 0; i < top.length; i++) pages[i] = top[i]!;
    for (let i = from; i < Math.min(to, pages.length); i++) this.choose(pages[i]!);
  }

  /** Makes the page's passage its best chunk, keeping the page's score. */
  private choose(page: PageCandidate): void {
    const { best } = page;
    if (this.phrases || best.tier >= INTRO_TIER) return;
    const chunk = this.passageOf(page, best);
    if (chunk !== undefined) page.best = { chunk, score: best.score, tier: best.tier, derived: best.derived };
  }

  /**
   * The page's passage among its chunks, by the rules above: its lead when the query names the
   * page and no other word points elsewhere in it (D93); undefined when no chunk holds an
   * informative word in its text or heading.
   */
  private passageOf({ page: pageIdx, group }: PageCandidate, best: Candidate): number | undefined {
    const { catalog, ranges, meter } = this.ctx;
    const { from, to } = catalog.chunkRange(pageIdx);
    const words = this.words(best.derived);
    const title = words.title(catalog.pages.title(pageIdx));
    // The query names the page (D93): its title or a redirect's, its title's every word, or only words of its title.
    const others = (this.terms.full & ~title.words) >>> 0;
    if (!others) return from;
    const { informative } = this.terms;
    // With no other informative word, the title's words weigh as they do for every page.
    const titled = informative & ~title.words ? title.words & informative : 0;
    const lists = this.informative(best.derived, titled);
    const m = lists.forms.length ? ranges.score(lists, from, to) : undefined;
    if (m) meter.add(m.count, ranges.postings);
    if (group === EXACT_TITLE_GROUP || title.whole) {
      // A word the title does not name points elsewhere when some chunk holds it, a function word too ("when", "state").
      let held = 0;
      for (let i = 0; i < (m?.count ?? 0); i++) held |= m!.allMask[i]!;
      if (!(held & others)) return from;
    }
    // The informative words the title does not name: those a section's heading may name.
    const pointing = (informative & ~title.words) >>> 0;
    if (!m?.count) return undefined;
    const score = Array.from({ length: m.count }, (_x, i) => m.all[i]! * popcount(m.allMask[i]!));
    const headed = pointing ? this.headed(m, pageIdx, from, to, words, pointing) : undefined;
    const order = Array.from({ length: m.count }, (_x, i) => i);
    const tier = (i: number) => headed?.[i] ?? 0;
    order.sort((a, b) => tier(b) - tier(a) || score[b]! - score[a]! || m.docs[a]! - m.docs[b]!);
    const first = order[0]!;
    let chosen = m.docs[first]!;
    let most = -1;
    for (const i of order.slice(0, SPANS_MEASURED)) {
      if (tier(i) < tier(first)) break;
      const key = score[i]! * this.factor(best.derived, m.docs[i]!) * this.coverage(best.derived, titled, m.docs[i]!);
      if (key > most || (key === most && m.docs[i]! < chosen)) {
        chosen = m.docs[i]!;
        most = key;
      }
    }
    return chosen;
  }

  /**
   * How many of the `pointing` words that are not the page's subject each chunk of `m` has its
   * section heading name (D94); undefined when no heading names one.
   */
  private headed(m: ChunkScores, pageIdx: number, from: number, to: number, words: PassageWords, pointing: number) {
    const { pages } = this.ctx.catalog;
    const heading = Array.from(
      { length: m.count },
      (_x, i) => words.heading(pages.chunkHeading(pageIdx, m.docs[i]! - from)) & pointing,
    );
    if (!heading.some((h) => h)) return undefined;
    const sectional = pointing & ~subject(m, heading, to - from);
    return heading.map((h) => popcount(h & sectional));
  }

  /** The query's words and their forms, as the page's title and headings name them, per tier's terms. */
  private words(derived: Derived[]): PassageWords {
    let out = this.named.get(derived);
    if (!out)
      this.named.set(
        derived,
        (out = new PassageWords(this.ctx.text, this.terms.words, derived, this.terms.informative, this.ctx.lang)),
      );
    return out;
  }

  /**
   * A tier's terms as lists of the text and its heading: a word's other forms weighing
   * RULES.passageVariant, a function word RULES.passageFunction of its weight, and so the
   * informative words of `titled` (those the page's title names) when the query has others.
   */
  private informative(derived: Derived[], titled: number): QueryLists {
    let byTitle = this.weighed.get(derived);
    if (!byTitle) this.weighed.set(derived, (byTitle = new Map()));
    let out = byTitle.get(titled);
    if (!out) {
      const { informative, words } = this.terms;
      // The title's words weigh as function words: every chunk of the page is about them.
      const strong = (informative & ~titled) >>> 0;
      const weighed = derived.map((d) => {
        const weight = d.variant ? RULES.passageVariant : d.weight;
        return {
          ...d,
          weight: strong && !(strong & (1 << d.word)) ? weight * RULES.passageFunction : weight,
        };
      });
      out = new QueryLists(this.ctx.text, {
        derived: weighed,
        words: words.length,
        required: 0,
        phraseWords: 0,
        fields: [TEXT_FIELD, SECTION_FIELD],
      });
      byTitle.set(titled, out);
    }
    return out;
  }

  /**
   * 1 + RULES.passageCoverage × c², c the share of the query's words its text's best run of RULES.passageWindow words
   * holds, each word weighed by the IDF of its first term's postings in every field, a function word's, or one the
   * page's title names (`titled`), by RULES.passageFunction of it (D145); 1 when fewer than two words weigh.
   */
  private coverage(derived: Derived[], titled: number, chunk: number): number {
    if (!RULES.passageCoverage) return 1;
    const held = this.held(derived, titled, chunk);
    return 1 + RULES.passageCoverage * held * held;
  }

  /** coverage()'s c, 0 when fewer than two words weigh; the words of `given` count as held in every run (D152). */
  private held(derived: Derived[], titled: number, chunk: number, given = 0): number {
    const groups = this.groupsOf(derived);
    let byTitle = this.coverageWeights.get(groups);
    if (!byTitle) this.coverageWeights.set(groups, (byTitle = new Map()));
    let weighed = byTitle.get(titled);
    if (!weighed) byTitle.set(titled, (weighed = this.weighGroups(groups, titled)));
    if (!weighed.total) return 0;
    const { weights, total } = weighed;
    if (!given) return this.ctx.text.windowWeight(groups, weights, TEXT_FIELD, chunk, RULES.passageWindow) / total;
    const rest = weights.map((w, i) => (given & (1 << i) ? 0 : w));
    const held = weights.reduce((sum, w, i) => sum + (given & (1 << i) ? w : 0), 0);
    return (held + this.ctx.text.windowWeight(groups, rest, TEXT_FIELD, chunk, RULES.passageWindow)) / total;
  }
  private readonly coverageWeights = new Map<number[][], Map<number, { weights: number[]; total: number }>>();

  /** coverage()'s weight of each group and their sum; the sum 0 when fewer than two weigh (one word the index holds: every chunk holding it in its text holds all of it). */
  private weighGroups(groups: number[][], titled: number): { weights: number[]; total: number } {
    const { text } = this.ctx;
    // Summed over the fields, a common word's postings can outnumber the chunks: its IDF would be negative.
    const N = text.documentCount;
    const strong = (this.terms.informative & ~titled) >>> 0;
    const weights = groups
      .slice(0, MAX_WORDS)
      .map((g, w) =>
        g.length ? idf(N, Math.min(N, text.frequency(g[0]!))) * (strong & (1 << w) ? 1 : RULES.passageFunction) : 0,
      );
    const weighing = weights.filter((w) => w > 0).length;
    return { weights, total: weighing < 2 ? 0 : weights.reduce((a, b) => a + b, 0) };
  }

  private groupsOf(derived: Derived[]): number[][] {
    let groups = this.groups.get(derived);
    if (!groups) this.groups.set(derived, (groups = wordGroups(this.ctx, derived, this.query)));
    return groups;
  }

  /**
   * The proximity factor of a chunk's words (every query word, as proximity ranks pages: a function
   * word holds a phrase together), in its text or, when they stand closer there, in its heading
   * (a heading counts as its chunks': "Gettysburg Address (1863)" for "Gettysburg Address delivered").
   */
  private factor(derived: Derived[], chunk: number): number {
    const groups = this.groupsOf(derived);
    if (groups.length < 2) return 1;
    const { text } = this.ctx;
    const inText = proximityFactor(text.smallestSpan(groups, TEXT_FIELD, chunk), text.spanGroups);
    return Math.max(inText, proximityFactor(text.smallestSpan(groups, SECTION_FIELD, chunk), text.spanGroups));
  }
}

/**
 * The bits of the words the page is about, as its title is: those that half of its `chunks` or
 * more hold, in their text or as their heading names them (`heading`, per chunk of `m`).
 */
function subject(m: ChunkScores, heading: number[], chunks: number): number {
  const held = new Map<number, number>();
  for (let i = 0; i < m.count; i++) {
    const bits = (m.allMask[i]! | heading[i]!) >>> 0;
    for (let b = bits; b; b &= b - 1) {
      const bit = b & -b;
      held.set(bit, (held.get(bit) ?? 0) + 1);
    }
  }
  let out = 0;
  for (const [bit, n] of held) if (2 * n >= chunks) out |= bit;
  return out >>> 0;
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
