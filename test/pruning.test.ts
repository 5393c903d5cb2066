/**
 * The pruned search (src/search/ranking/pruned.ts) against its oracle, the exhaustive search: for
 * thousands of random queries drawn from the shared dumps' own text, the same pages in the
 * same order, the same chunks, scores within 1e-9.
 */
import { describe, expect, test } from "bun:test";
import type { Engine, Pruning } from "../src/search";
import { querySampler } from "../bench/queries";
import { EN_2006, EN_2016, TRUNCATED_XZ, engineFor } from "./helpers";

/** Every query is pruned, however short its lists, and never gives up. */
const ALWAYS = { from: 0, workShare: Infinity, words: 31 };

function queriesFrom(engine: Engine, count: number, seed: number): string[] {
  const { random, pick, sampleWords: sample, common: mostFrequent, typo } = querySampler(engine.snapshot, seed);
  const common = mostFrequent(20, 500);
  const kinds: (() => string)[] = [
    () => sample(1).join(" "),
    () => pick(common),
    () => `${pick(common)} ${pick(common)}`,
    () => sample(2 + Math.floor(random() * 5)).join(" "),
    () => `what is the ${sample(1).join(" ")} of the ${sample(1).join(" ")}`,
    () => `"${sample(2).join(" ")}"`,
    () => sample(2).map(typo).join(" "),
    () => [...(sample(1)[0] ?? "")].slice(0, 3 + Math.floor(random() * 3)).join(""),
    () => `${sample(2).join(" ")} `,
    // One word, quoted twice: a phrase of a single query word.
    () => {
      const w = pick(common);
      return `"${w} ${w}"`;
    },
  ];
  return Array.from({ length: count }, (_x, i) => kinds[i % kinds.length]!()).filter((q) => q.trim());
}

function compare(engine: Engine, queries: string[]): { pruned: number } {
  let pruned = 0;
  for (const q of queries) {
    for (const [limit, offset] of [
      [10, 0],
      [3, 0],
      [5, 10],
    ] as const) {
      const options = { limit, offset, budgetMs: Infinity, highlight: false };
      const oracle = engine.search(q, { ...options, pruning: false });
      const fast = engine.search(q, { ...options, pruning: ALWAYS });
      if (fast.work.postings !== oracle.work.postings) pruned++;
      const shown = (r: typeof oracle) => r.hits.map((h) => `${h.page.pageId}#${h.chunk}`);
      expect({ q, limit, offset, hits: shown(fast) }).toEqual({ q, limit, offset, hits: shown(oracle) });
      for (const [i, h] of oracle.hits.entries())
        expect(Math.abs(fast.hits[i]!.score - h.score)).toBeLessThanOrEqual(1e-9 * Math.max(1, h.score));
    }
  }
  return { pruned };
}

describe("the pruned search ranks as the exhaustive search", () => {
  test("by default, one-word, several-word and phrase queries are pruned, typos are not without stored orders (D53)", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    // These small snapshots' lists are below the default's threshold: compared with the threshold at 0, never giving up.
    const lowest = { from: 0, workShare: Infinity };
    const work = (q: string, pruning?: false | Pruning) =>
      engine.search(q, { pruning, budgetMs: Infinity }).work.postings;
    expect(work("the", lowest)).not.toBe(work("the", false));
    expect(work("history of the city", lowest)).toBeLessThan(work("history of the city", false));
    expect(work("history of the city", { ...lowest, words: 3 })).toBe(work("history of the city", false));
    expect(work('"history of the city"', lowest)).toBeLessThan(work('"history of the city"', false));
    expect(work("histroy of the city", lowest)).toBe(work("histroy of the city", false));
    expect(work("the")).toBe(work("the", false));
  }, 120_000);

  test("English: 1,800 random queries of every kind", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { pruned } = compare(engine, queriesFrom(engine, 1800, 5));
    // The comparison must exercise the pruning, not only its fallback to the exhaustive search.
    expect(pruned).toBeGreaterThan(1800);
  }, 300_000);

  test("Japanese (no spaces, no stemmer) and Armenian", async () => {
    for (const dump of TRUNCATED_XZ.filter((d) => /\/(ja|hy)wiki/.test(d))) {
      const engine = await engineFor({ dumps: [dump], allowTruncated: true });
      const { pruned } = compare(engine, queriesFrom(engine, 200, 9));
      expect(pruned).toBeGreaterThan(60);
    }
  }, 300_000);
});
