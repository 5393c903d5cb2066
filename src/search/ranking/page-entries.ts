/**
 * Pages as the rules rank them (rules.ts), one entry each: its class, its score, its best
 * chunk and that chunk's tier. A page is made from its chunks in order (a page's chunks are
 * consecutive chunk numbers): its tier is its best chunk's, its score that chunk's plus the
 * evidence of its next two of the same tier, raised by its title boost.
 */
import { bestEntries } from "../postings/topk";
import { pageScore, rankClass } from "./rules";

export class PageEntries {
  count = 0;
  readonly page: Int32Array;
  readonly klass: Uint8Array;
  readonly score: Float64Array;
  readonly chunk: Int32Array;
  readonly tier: Uint8Array;

  constructor(capacity: number) {
    this.page = new Int32Array(capacity);
    this.klass = new Uint8Array(capacity);
    this.score = new Float64Array(capacity);
    this.chunk = new Int32Array(capacity);
    this.tier = new Uint8Array(capacity);
  }

  add(page: number, klass: number, score: number, chunk: number, tier: number): void {
    const e = this.count++;
    this.page[e] = page;
    this.klass[e] = klass;
    this.score[e] = score;
    this.chunk[e] = chunk;
    this.tier[e] = tier;
  }

  /** The best `need` entries, best first (class, then score, then page). */
  best(need: number): number[] {
    return bestEntries(this.klass, this.score, this.count, need, this.page);
  }

  clear(): void {
    this.count = 0;
  }
}

/**
 * One page's chunks, fed in chunk order with their tier and score: the page's tier, best
 * chunk and evidence (its three best scores of that tier).
 */
export class PageBuilder {
  page = -1;
  tier = 255;
  chunk = -1;
  first = 0;
  second = 0;
  third = 0;

  start(page: number): void {
    this.page = page;
    this.tier = 255;
    this.chunk = -1;
    this.first = this.second = this.third = 0;
  }

  /** A chunk of the page: kept when its tier is the page's best so far. */
  add(chunk: number, tier: number, score: number): void {
    if (tier > this.tier) return;
    if (tier < this.tier) {
      this.tier = tier;
      this.chunk = chunk;
      this.first = score;
      this.second = this.third = 0;
      return;
    }
    if (score > this.first || (score === this.first && chunk < this.chunk)) {
      this.third = this.second;
      this.second = this.first;
      this.first = score;
      this.chunk = chunk;
    } else if (score > this.second) {
      this.third = this.second;
      this.second = score;
    } else if (score > this.third) this.third = score;
  }

  get empty(): boolean {
    return this.chunk < 0;
  }

  /** The page's class and score, given its D8 group and title boost. */
  klass(group: number): number {
    return rankClass(group, this.tier);
  }

  score(titleBoost: number): number {
    return pageScore(this.first, this.second, this.third, titleBoost);
  }
}
