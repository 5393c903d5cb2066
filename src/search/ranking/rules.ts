/**
 * The ranking rules: the one place the order of a search's pages is defined (D61, D62), read
 * by the exhaustive ranking (stages/pages.ts, the oracle), the pruned ones (pruned.ts,
 * conjunction.ts) and the stored page orders (orders.ts). For a query, the order is over every
 * matching page, whatever the window asked for:
 *   1. the class: the page's D8 group (0 exact title, 1 title match, 2 other) × TIERS + the tier
 *      of its best chunk (0 every required word, 1 with typos, 2 fewer words, 3 fewer with
 *      typos, 4 a title match's intro), lower first;
 *   2. the score: its best chunk's BM25 (shard.ts, MiniSearch's), plus PAGE_EVIDENCE of its
 *      second and its square of its third of the same tier, raised by its title boost; the
 *      first PROXIMITY_WINDOW pages then times their passage's proximity factor (stages/passages.ts);
 *   3. the page (its index in the snapshot), lower first.
 * RULES_FINGERPRINT changes with any of them: stored page orders made under other rules are
 * refused (orders.ts).
 */
import { ANALYZER_VERSION } from "../text/analyze";
import { BM25, WEIGHTS } from "../index/shard-types";

/** A page's score: its best chunk's, plus this share of its second, and its square of its third (D43), of the best one's tier (D61). */
const PAGE_EVIDENCE = 0.5;
/** A boosted title raises its page's score by this many times the share of the query's information it holds. */
const TITLE_BOOST = 2;
/** Ranking classes: group (0 exact title, 1 title match, 2 other) × tier (0–4). */
export const TIERS = 5;
/** The tier of a title match's intro, standing for a page none of whose chunks holds the words: the last. */
export const INTRO_TIER = TIERS - 1;
/** The tier of chunks holding every required word, some with typos (stages/candidates.ts adds them). */
export const TYPO_TIER = 1;
/** The tier of chunks holding some of the words exactly, not every required one (stages/candidates.ts adds them). */
export const FEWER_TIER = 2;
/** The most a page's score can be over its best chunk's: 1 + 0.5 + 0.25. */
export const PAGE_FACTOR = 1 + PAGE_EVIDENCE + PAGE_EVIDENCE * PAGE_EVIDENCE;
/** How many of the best pages are reordered by their passage's proximity: always ranked, whatever the window (D61). */
export const PROXIMITY_WINDOW = 10;
/** What a word's other form weighs in choosing a passage, against the word itself (D62); MiniSearch's 0.3 ranks the pages. */
export const PASSAGE_VARIANT_WEIGHT = 0.45;
/**
 * What a function word weighs in choosing a passage, against its weight in ranking pages (D62):
 * a fifth, so that it separates chunks the informative words leave close, and no more (at 0,
 * SQuAD's answer was in the top chunk less often than before D62).
 */
export const PASSAGE_FUNCTION_WEIGHT = 0.2;

/** A ranking class, lower first: the D8 group, then the tier (0–4); what topk.ts sorts by before the score. */
export const rankClass = (group: number, tier: number): number => group * TIERS + tier;
export const groupOf = (klass: number): number => Math.floor(klass / TIERS);
export const tierOf = (klass: number): number => klass % TIERS;

/** How close a chunk's words stand, as a factor of its score: 2 when adjacent, towards 1 as they spread (0: fewer than two words). */
export const proximityFactor = (span: number, groups: number): number =>
  span > 0 ? 1 + 1 / (1 + Math.max(0, span - groups)) : 1;

/**
 * A page's score from its best three chunks' (best first; -1 or 0: none): the best, plus
 * PAGE_EVIDENCE of the second and its square of the third, raised by the title boost.
 */
export function pageScore(first: number, second: number, third: number, titleBoost: number): number {
  return (
    (first + PAGE_EVIDENCE * Math.max(0, second) + PAGE_EVIDENCE * PAGE_EVIDENCE * Math.max(0, third)) *
    (1 + TITLE_BOOST * titleBoost)
  );
}

/** Adds a score to the three highest kept at best[at, at + 3), highest first (-1: none yet). */
export function placeBestThree(best: Float64Array, at: number, s: number): void {
  if (s > best[at]!) {
    best[at + 2] = best[at + 1]!;
    best[at + 1] = best[at]!;
    best[at] = s;
  } else if (s > best[at + 1]!) {
    best[at + 2] = best[at + 1]!;
    best[at + 1] = s;
  } else if (s > best[at + 2]!) best[at + 2] = s;
}

/** pageScore() of the three highest kept at best[at, at + 3). */
export function bestThreeScore(best: Float64Array, at: number, titleBoost: number): number {
  return pageScore(best[at]!, best[at + 1]!, best[at + 2]!, titleBoost);
}

/** The rules' version: 2 since D61 (evidence of the best tier only). */
const RULES_VERSION = 2;

/** A number that changes with the rules and the analysis: FNV-1a of what the stored page orders depend on. */
export const RULES_FINGERPRINT = fnv1a(
  JSON.stringify([RULES_VERSION, ANALYZER_VERSION, BM25, WEIGHTS, PAGE_EVIDENCE, TITLE_BOOST, TIERS]),
);

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
