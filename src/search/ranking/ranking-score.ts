/**
 * A hit's ranking score in [0, 1] (`show_ranking_score`), as Meilisearch's _rankingScore:
 * higher is better, never rising down a result list. The hit's ranking class (rules.ts: its
 * D8 group, then its tier: how many of the query's words its chunk holds, and how) sets the
 * band, one of CLASSES equal slices of [0, 1], best class highest; within the band, the
 * engine's score saturated, s / (s + SATURATION), places it. The order is by class, then score
 * (D61; the proximity rerank only raises scores within the first pages), so the value follows it.
 */
import { TIERS } from "./rules";

/** Ranking classes: three D8 groups of TIERS tiers each. */
const CLASSES = 3 * TIERS;
/** The score at which a hit stands halfway through its band. */
const SATURATION = 100;

export function rankingScore(group: number, tier: number, score: number): number {
  const klass = Math.min(CLASSES - 1, Math.max(0, group * TIERS + tier));
  const within = score > 0 ? score / (score + SATURATION) : 0;
  return (CLASSES - 1 - klass + within) / CLASSES;
}
