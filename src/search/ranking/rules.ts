/**
 * The ranking rules: the one place the order of a search's pages is defined (D61, D62, D90),
 * read by the exhaustive ranking (the oracle), the block-max executor and the page evaluator.
 * For a query, the order is over every matching page, whatever the window asked for:
 *   1. the class: the page's D8 group (0 exact title, 1 title match, 2 other) × TIERS + the tier
 *      of its best chunk: 2 × its bucket (0 every required word, 1 any word: query-lists.ts) + 1
 *      when it needs typos to hold the bucket's words; INTRO_TIER for a title match's intro; lower
 *      first;
 *   2. the score: its best chunk's (the sum, over the query words the chunk holds, of the word's
 *      best form, scored by BM25F over the fields: bm25f()), plus RULES.pageEvidence of its second and its square of
 *      its third of the same tier, raised by its title boost; the first PROXIMITY_WINDOW pages
 *      then times their best chunk's proximity factor, its coverage factor (D152, stages/passages.ts) and
 *      their page's own text's factor (D202, stages/page-text.ts);
 *   3. the page (its index in the snapshot), lower first.
 * rulesFingerprint() changes with any of them: stored page orders made under other rules are
 * refused (page-orders.ts).
 */
import { TEXT_BOOSTS } from "../postings/fields";
import { BM25, WEIGHTS } from "../postings/shard-types";
import { ANALYZER_VERSION } from "../text/analyze";

/**
 * The rules' own parameters, as a search reads them: these values, unless a tuning trial set
 * others before opening its engine (parameters.ts, bench/relevance/tune.ts; D96).
 */
export const RULES = {
  /** A page's score: its best chunk's, plus this share of its second, and its square of its third (D43), of the best one's tier (D61). */
  pageEvidence: 0.5,
  /** A boosted title raises its page's score by this many times the share of the query's information it holds. */
  titleBoost: 2,
  /** What adjacent words add to a chunk's score, as a share of it: proximityFactor(). */
  proximity: 1,
  /** What a word's other form weighs in choosing a passage, against the word itself (D62); MiniSearch's 0.3 ranks the pages. */
  passageVariant: 0.45,
  /**
   * What a function word weighs in choosing a passage, against its weight in ranking pages (D62):
   * a fifth, so that it separates chunks the informative words leave close, and no more (at 0,
   * SQuAD's answer was in the top chunk less often than before D62).
   */
  passageFunction: 0.2,
  /**
   * What the query's words held close together add in choosing a passage (D145): a chunk's key × (1 + this × c²),
   * c the share of the query's words (each by its IDF, a function word's by passageFunction) that its best run of
   * passageWindow consecutive words holds. The sentence a question paraphrases holds most of its words.
   */
  passageCoverage: 4,
  passageWindow: 20,
  /**
   * What the same run adds to the first PROXIMITY_WINDOW pages' scores (D152): × (1 + this × c²), a word the page's
   * title names counted as held.
   */
  pageCoverage: 1,
  /** What the page's own text adds to the first PROXIMITY_WINDOW pages' scores (D202): × (1 + this × its page BM25 ÷ their most). */
  pageText: 1,
};
/** Buckets of words (D90): every required word, then any word. */
const BUCKETS = 2;
/** The tier of a title match's intro, standing for a page none of whose chunks holds the words: the last. */
export const INTRO_TIER = 2 * BUCKETS;
/** Ranking classes: group (0 exact title, 1 title match, 2 other) × tier (0 … INTRO_TIER); three groups fit a byte. */
const TIERS = INTRO_TIER + 1;
/** A chunk's tier: its bucket, exactly or with typos. */
export const tierOf = (bucket: number, typos: boolean): number => 2 * bucket + (typos ? 1 : 0);
/** The group of pages that are not title matches. */
export const OTHER_GROUP = 2;

/** BM25's inverse document frequency of a list of df documents among N (MiniSearch's). */
export const idf = (N: number, df: number): number => Math.log(1 + (N - df + 0.5) / (df + 0.5));

/**
 * BM25F (D90): what a form of a word adds, from its combined frequency `combined` (the sum over
 * its fields of form weight × field boost × k × tf / the field length's norm, query-lists.ts),
 * saturated once and multiplied by its IDF, plus BM25+'s floor. Every scorer, bound and the
 * oracle compute it here.
 */
export const bm25f = (idf: number, combined: number): number =>
  idf * (BM25.d + (combined * (BM25.k + 1)) / (BM25.k + combined));
/** The most a form of IDF `idf` can add, its frequency saturated: bm25f()'s limit. */
export const bm25fMost = (idf: number): number => idf * (BM25.d + BM25.k + 1);
/** The most a page's score can be over its best chunk's: 1 + 0.5 + 0.25 (its evidence at most its best chunk's). */
export const pageFactor = (): number => 1 + RULES.pageEvidence + RULES.pageEvidence * RULES.pageEvidence;
/** How many of the best pages are reordered by their passage's proximity: always ranked, whatever the window (D61). */
export const PROXIMITY_WINDOW = 10;

/** A ranking class, lower first: the D8 group, then the tier (0–4); what topk.ts sorts by before the score. */
export const rankClass = (group: number, tier: number): number => group * TIERS + tier;
export const groupOf = (klass: number): number => Math.floor(klass / TIERS);

/** How close a chunk's words stand, as a factor of its score: 1 + RULES.proximity when adjacent, towards 1 as they spread (0: fewer than two words). */
export const proximityFactor = (span: number, groups: number): number =>
  span > 0 ? 1 + RULES.proximity / (1 + Math.max(0, span - groups)) : 1;

/**
 * A page's score from its best three chunks' (best first; -1 or 0: none): the best, plus
 * RULES.pageEvidence of the second and its square of the third, raised by the title boost.
 */
export function pageScore(first: number, second: number, third: number, titleBoost: number): number {
  const evidence = RULES.pageEvidence;
  return (
    (first + evidence * Math.max(0, second) + evidence * evidence * Math.max(0, third)) *
    (1 + RULES.titleBoost * titleBoost)
  );
}

/**
 * The rules' version: 2 since D61 (evidence of the best tier only), 4 since D90 (BM25F, a word's best form, its weight
 * outside the saturation), 5 since D185 (a number is no function word: the function-word list decides which orders a
 * build stores and which plan a query takes), 6 since D120's ß, æ, œ and ı (the lists are folded: 90 entries of the
 * Danish, German, Lithuanian, Norwegian and Turkish lists, daß now dass).
 */
const RULES_VERSION = 6;

/** A number that changes with the rules, their parameters and the analysis: FNV-1a of what the stored page orders depend on. */
export const rulesFingerprint = (): number =>
  fnv1a(
    JSON.stringify([
      RULES_VERSION,
      ANALYZER_VERSION,
      BM25,
      WEIGHTS,
      TEXT_BOOSTS,
      RULES.pageEvidence,
      RULES.titleBoost,
      TIERS,
    ]),
  );

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
