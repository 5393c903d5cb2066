/**
 * Formatting: a ranked page's passage as a search hit, its title and text cropped and
 * highlighted (highlight.ts) with the query's words and the index terms its chunk holds.
 *
 * One formatter per search. The terms derived from the query are the same for every
 * candidate of a ranking tier: their texts are read once per tier, and whether a hit's chunk
 * holds one is asked only for those its title or text has (a typo or prefix query derives
 * dozens of terms, and each question reads postings).
 */
import { termOfKey } from "../text/analyze";
import { formatText, formatTitle, type MatchedTerms, type Phrase } from "../text/highlight";
import { DEFAULTS, type Hit, type SearchOptions } from "../options";
import type { ParsedQuery } from "../text/query";
import { rankingScore } from "../ranking/ranking-score";
import type { Derived } from "../postings/shard-types";
import type { SearchContext } from "./context";
import type { Candidate } from "./candidate";
import { queryFunctionWords } from "./terms";

/** A tier's derived terms as text: every term a hit may be highlighted for, and the index terms behind each derived one. */
interface TierTerms {
  candidates: Set<string>;
  indexTerms: Map<string, number[]>;
}

/** `group`: the page's D8 group (0 exact title, 1 title match, 2 other). */
export type HitFormatter = (pageIdx: number, c: Candidate, group: number) => Hit;

/** `ideal`: the query's ideal chunk score, what a hit's ranking score is measured against (ranking-score.ts). */
export function hitFormatter(
  ctx: SearchContext,
  query: ParsedQuery,
  options: SearchOptions,
  ideal: number,
): HitFormatter {
  const highlight = options.highlight ?? DEFAULTS.highlight;
  const cropLength = options.cropLength ?? DEFAULTS.cropLength;
  const shown = highlighted(query, ctx.lang);
  const queryWords = new Set(query.words.filter((_w, i) => shown[i]));
  const phrases = phrasesOf(query);
  const tiers = new Map<Derived[], TierTerms>();
  const tierTerms = (derived: Derived[]): TierTerms => {
    let terms = tiers.get(derived);
    if (!terms) {
      terms = { candidates: new Set([...queryWords, ...phrases.flatMap((p) => p.words)]), indexTerms: new Map() };
      for (const d of derived) {
        if (!shown[d.word]) continue;
        const text = termOfKey(ctx.text.keyOf(d.term));
        terms.candidates.add(text);
        const known = terms.indexTerms.get(text);
        if (known) known.push(d.term);
        else terms.indexTerms.set(text, [d.term]);
      }
      tiers.set(derived, terms);
    }
    return terms;
  };
  return (pageIdx, c, group) => {
    const page = ctx.catalog.pages.shown(pageIdx);
    const chunk = c.chunk - ctx.catalog.firstChunk[pageIdx]!;
    const text = page.chunkText(chunk);
    const matched = new HitTerms(ctx, c.chunk, queryWords, tierTerms(c.derived), phrases);
    return {
      page,
      chunk,
      score: c.score,
      rankingScore: rankingScore(group, c.tier, c.score, ideal),
      text,
      section: ctx.catalog.pages.chunkHeading(pageIdx, chunk),
      formatted: {
        title: formatTitle(page.title, matched, highlight, ctx.lang),
        text: formatText(text, matched, cropLength, highlight, ctx.lang),
      },
    };
  };
}

/**
 * Which query words are highlighted wherever they stand (D62): a function word only when the
 * query holds nothing else; alone it marks every other sentence and says nothing. Within an
 * occurrence of a quoted phrase (or of a word the segmenter split) it is, as its phrase (D95).
 */
function highlighted(query: ParsedQuery, lang: string): boolean[] {
  const stop = queryFunctionWords(query, lang);
  const informative = stop.some((s) => !s);
  return stop.map((s) => !informative || !s);
}

/**
 * What is highlighted where its words stand together (D95): the quoted phrases, and each query
 * word in unspaced script the segmenter split, its last word a prefix when it ends the query
 * being typed ("にほん" is に and ほん, and stands in "にほんの").
 */
function phrasesOf(query: ParsedQuery): Phrase[] {
  const last = query.joined.length - 1;
  return [
    ...query.phrases.map((words) => ({ words, prefix: false })),
    ...query.joined.map((words, i) => ({
      words,
      prefix: query.prefixLast && i === last && words.at(-1) === query.words.at(-1),
    })),
  ];
}

/** The terms of one hit: the query's words, the derived terms its chunk holds (highlight.ts asks once each, when its title or text has one), and the phrases. */
class HitTerms implements MatchedTerms {
  readonly candidates: ReadonlySet<string>;

  constructor(
    private readonly ctx: SearchContext,
    private readonly chunk: number,
    private readonly queryWords: ReadonlySet<string>,
    private readonly tier: TierTerms,
    readonly phrases: readonly Phrase[],
  ) {
    this.candidates = tier.candidates;
  }

  has(term: string): boolean {
    if (this.queryWords.has(term)) return true;
    const indexTerms = this.tier.indexTerms.get(term);
    return indexTerms?.some((t) => this.ctx.text.holds(t, this.chunk)) ?? false;
  }
}
