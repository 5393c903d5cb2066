/** A search's candidates and ranked pages as the later stages (passages, hits) take them. */
import { INTRO_TIER } from "../ranking/rules";
import type { Derived } from "../postings/shard-types";

export interface Candidate {
  chunk: number;
  score: number;
  tier: number;
  /** The index terms the candidate's search derived from the query. */
  derived: Derived[];
}

/** A ranked page: its passage (best chunk) and its D8 group (0 exact title, 1 title match, 2 other). */
export interface PageCandidate {
  page: number;
  best: Candidate;
  group: number;
}

/** A page's intro as its passage (from `firstChunk`), highlighted for the query's words alone: it holds no term derived from them. */
export const intro = (firstChunk: number, tier = INTRO_TIER): Candidate => ({
  chunk: firstChunk,
  score: 0,
  tier,
  derived: [],
});

/** Ranked pages, best first, and how many pages match in all. */
export interface Ranking {
  pages: PageCandidate[];
  total: number;
}
