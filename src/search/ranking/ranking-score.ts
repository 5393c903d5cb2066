/**
 * A hit's ranking score in [0, 1] (`show_ranking_score`, D67 amended by D92), as Meilisearch's
 * _rankingScore: higher is better, never rising down a result list, and comparable across
 * queries, so that a RAG pipeline can keep the hits above a threshold. The hit's class (its D8
 * group and tier, rules.ts) sets a band; within it, the page's score against the query's ideal
 * chunk score (every word held with its best form saturated, QueryLists.ideal), s / (s + ideal),
 * places it. The order is by class, then score (D61; proximity only raises scores within the
 * first pages), so the value follows it.
 */
import { INTRO_TIER } from "./rules";

/** Each class's band [low, high), by group (0 exact title, 1 title match, 2 other) then tier. */
const BANDS: readonly (readonly [number, number])[][] = [
  [
    [0.98, 1],
    [0.96, 0.98],
    [0.94, 0.96],
    [0.92, 0.94],
    [0.9, 0.92],
  ],
  [
    [0.8, 0.9],
    [0.76, 0.8],
    [0.73, 0.76],
    [0.71, 0.73],
    [0.7, 0.71],
  ],
  [
    [0.4, 0.7],
    [0.3, 0.4],
    [0.05, 0.3],
    [0.01, 0.05],
    [0, 0.01],
  ],
];

export function rankingScore(group: number, tier: number, score: number, ideal: number): number {
  const [low, high] = BANDS[Math.min(2, Math.max(0, group))]![Math.min(INTRO_TIER, Math.max(0, tier))]!;
  const within = score > 0 && ideal > 0 ? score / (score + ideal) : 0;
  return low + (high - low) * within;
}
