/**
 * The exhaustive search's candidates: chunks found by its passes, each once, with the tier
 * (pass) that found it first. The buffers live as long as the engine (in its Scratch) and are
 * reused by every search: searches are synchronous.
 */
import { INTRO_TIER } from "../ranking/rules";
import type { Derived, Matches } from "../index/shard-types";

export interface Candidate {
  chunk: number;
  score: number;
  tier: number;
  /** The index terms the candidate's search derived from the query. */
  derived: Derived[];
  /** Its place in the pool, while the search runs. */
  position?: number;
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

/** Which matches a pass adds: those holding exactly the mask's words, not all of them, or at least them. */
export type Keep = "all" | "partial" | "having";

export class Pool {
  size = 0;
  readonly docs: Uint32Array;
  readonly scores: Float64Array;
  readonly tiers: Uint8Array;
  readonly derived: Derived[][] = [];
  private readonly inPool: Uint8Array;

  constructor(documents: number) {
    this.docs = new Uint32Array(documents);
    this.scores = new Float64Array(documents);
    this.tiers = new Uint8Array(documents);
    this.inPool = new Uint8Array(documents);
  }

  /** Adds the matches, unless already in, whose word mask is `mask` ("all"), is not it ("partial"), or has its bits ("having"). */
  add(m: Matches, tier: number, mask: number, keep: Keep = "all"): void {
    this.derived[tier] = m.derived;
    const { docs, scores, tiers, inPool } = this;
    let size = this.size;
    for (let i = 0; i < m.count; i++) {
      const d = m.docs[i]!;
      const held = m.masks[i]!;
      if (
        inPool[d] ||
        (keep === "all" ? held !== mask : keep === "partial" ? held === mask : (held & mask) >>> 0 !== mask)
      )
        continue;
      inPool[d] = 1;
      docs[size] = d;
      scores[size] = m.scores[i]!;
      tiers[size] = tier;
      size++;
    }
    this.size = size;
  }

  candidate(i: number): Candidate {
    const tier = this.tiers[i]!;
    return { chunk: this.docs[i]!, score: this.scores[i]!, tier, derived: this.derived[tier] ?? [] };
  }

  /** Empties the pool, visiting only the chunks it holds (called by Scratch.reset). */
  clear(): void {
    for (let i = 0; i < this.size; i++) this.inPool[this.docs[i]!] = 0;
    this.size = 0;
    this.derived.length = 0;
  }
}
