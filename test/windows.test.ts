/**
 * One order per query, whatever the window (issue 44): for random queries drawn from the
 * shared dumps' own text, the hits of every (limit, offset) window are that slice of the
 * oracle's order (the exhaustive search asked for every page), with no page twice across
 * the windows of a walk. Pages, chunks and scores (within 1e-9) must agree.
 */
import { describe, expect, test } from "bun:test";
import { querySampler } from "../bench/queries";
import type { Engine, Hit } from "../src/search";
import { type RankedHit, rankedHits } from "../src/search/engine";
import { EN_2006, EN_2016, engineFor, TRUNCATED_XZ, withOrders } from "./helpers";

const EVERY_PAGE = 100_000;
/** These snapshots' lists are below the default's threshold: every query is also ranked as deep as the window needs only. */
const PRUNED = { from: 0 };
const WINDOWS: [number, number][] = [
  [1, 0],
  [2, 0],
  [3, 0],
  [10, 0],
  [5, 5],
  [5, 10],
  [7, 3],
  [1, 19],
  [20, 0],
  [50, 0],
];

function queriesFrom(engine: Engine, count: number, seed: number): { q: string; pageId?: number }[] {
  const { random, pick, sampleWords: sample, common: mostFrequent, typo } = querySampler(engine.snapshot, seed);
  const common = mostFrequent(20, 500);
  const pageIds = engine.snapshot.pages.ids;
  const kinds: (() => { q: string; pageId?: number })[] = [
    () => ({ q: sample(1).join(" ") }),
    () => ({ q: `${pick(common)} ${pick(common)}` }),
    () => ({ q: sample(2 + Math.floor(random() * 4)).join(" ") }),
    () => ({ q: `who was the ${sample(1).join(" ")} of the ${sample(1).join(" ")}` }),
    () => ({ q: `what is ${pick(common)} ${sample(2).join(" ")} in the ${pick(common)}` }),
    () => ({ q: `"${sample(2).join(" ")}"` }),
    () => ({ q: `"${sample(2).join(" ")}" ${sample(1).join(" ")}` }),
    () => ({ q: sample(2).map(typo).join(" ") }),
    () => ({ q: sample(1).map(typo).join(" ") }),
    () => ({ q: [...(sample(1)[0] ?? "")].slice(0, 3 + Math.floor(random() * 3)).join("") }),
    () => ({ q: `${sample(2).join(" ")} ${[...(sample(1)[0] ?? "")].slice(0, 3).join("")}` }),
    () => ({
      q: `${pick(common)} ${pick(common)} ${pick(common)}`,
      pageId: pageIds[Math.floor(random() * pageIds.length)],
    }),
  ];
  return Array.from({ length: count }, (_x, i) => kinds[i % kinds.length]!()).filter((x) => x.q.trim());
}

const shown = (hits: Hit[]) => hits.map((h) => `${h.page.pageId}#${h.chunk}`);
const ranked = (hits: RankedHit[]) => hits.map((h) => `${h.pageId}#${h.chunk}`);

/** The window comparisons made, the plans the windows ran by, and how many pruned windows decoded fewer postings than the oracle. */
function walk(engine: Engine, queries: { q: string; pageId?: number }[]) {
  let compared = 0;
  let fewer = 0;
  const plans = new Set<string>();
  for (const { q, pageId } of queries) {
    const base = { budgetMs: Infinity, highlight: false, pageId };
    // The oracle's hits unformatted (rankedHits: the same ranking, page ids, chunks and scores, what is compared).
    const all = rankedHits(engine, q, { ...base, limit: EVERY_PAGE, pruning: false });
    const oracle = all.hits;
    // The default searches' windows by their offset when five deep: the walk below asks for the same ones again.
    const fives = new Map<number, Hit[]>();
    for (const [limit, offset] of WINDOWS)
      for (const pruning of [undefined, PRUNED]) {
        const { hits: window, work } = engine.search(q, { ...base, limit, offset, pruning });
        if (limit === 5 && pruning === undefined) fives.set(offset, window);
        plans.add(work.plan);
        if (pruning && work.postings < all.work.postings) fewer++;
        const expected = oracle.slice(offset, offset + limit);
        const pruned = pruning !== undefined;
        expect({ q, limit, offset, pruned, hits: shown(window) }).toEqual({
          q,
          limit,
          offset,
          pruned,
          hits: ranked(expected),
        });
        for (const [i, h] of expected.entries())
          expect(Math.abs(window[i]!.score - h.score)).toBeLessThanOrEqual(1e-9 * Math.max(1, h.score));
        compared++;
      }
    // Walking five at a time never shows a page twice (a page's hits are one per page, D7 aside).
    if (pageId === undefined) {
      const seen = new Set<string>();
      for (let offset = 0; offset < Math.min(oracle.length, 40); offset += 5)
        for (const h of fives.get(offset) ?? engine.search(q, { ...base, limit: 5, offset }).hits) {
          expect(seen.has(`${h.page.pageId}`)).toBe(false);
          seen.add(`${h.page.pageId}`);
        }
    }
  }
  return { compared, plans, fewer };
}

describe("every window is a slice of one order", () => {
  test("English", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { compared, plans, fewer } = walk(engine, queriesFrom(engine, 200, 11));
    expect(compared).toBeGreaterThan(3600);
    expect([...plans].sort()).toEqual(["within-page", "words"]);
    // The executor's bounds skip: most pruned windows decode fewer postings than scoring every one.
    expect(fewer).toBeGreaterThan(compared / 4);
  }, 600_000);

  test("the oracle (rankedHits) ranks as search does, unformatted, and is no search to the engine's watchers (/metrics)", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const told: string[] = [];
    const unwatch = engine.watch((work) => told.push(work.plan));
    try {
      const oracle = rankedHits(engine, "album", { limit: 10 });
      expect(told).toEqual([]);
      const searched = engine.search("album", { limit: 10 });
      expect(told).toHaveLength(1);
      expect(ranked(oracle.hits)).toEqual(shown(searched.hits));
      expect(oracle.hits.length).toBe(10);
    } finally {
      unwatch();
    }
  }, 120_000);

  test("English, one-word queries from stored page orders (D51) wherever they answer, the words plan past them", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    // Orders of every word, 12 pages deep: the deeper windows run past them.
    const ordered = withOrders(engine, 1, 12);
    const { compared, plans } = walk(ordered, queriesFrom(ordered, 60, 17));
    expect(compared).toBeGreaterThan(1000);
    expect(plans).toContain("one-word");
    expect(plans).toContain("typo-orders");
    expect(plans).toContain("words");
  }, 600_000);

  test("English, numbers and function words from stored page orders (D185): a number is required, orders or not", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    // stopwords-iso lists 10 and 39 as English function words: orders made while they were one ranked "39 10" at
    // offset 5 unlike the exhaustive plan (4 hits of 5). Orders of every word, 12 pages deep, as the D51 walk above.
    const ordered = withOrders(engine, 1, 12);
    const queries = ["39 10", "Apollo 10 crew", "what is 10", "10", "39", "the 10", "10 of the", "what is 39 10"].map(
      (q) => ({ q }),
    );
    const { compared, plans } = walk(ordered, queries);
    expect(compared).toBe(queries.length * WINDOWS.length * 2);
    expect(plans).toContain("one-word");
    expect(plans).toContain("words");
  }, 600_000);

  test("English, one word with typos from its typo terms' stored orders (D100), to their threshold", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { sampleWords, typo } = querySampler(engine.snapshot, 23);
    const queries = Array.from({ length: 60 }, () => ({ q: sampleWords(1).map(typo).join(" ") })).filter((x) =>
      x.q.trim(),
    );
    // Every word ordered; then only words of 20 postings or more: a typo term with no order sends the query to the words plan.
    for (const least of [1, 20]) {
      const { compared, plans } = walk(withOrders(engine, least, 1000), queries);
      expect(compared).toBeGreaterThan(1000);
      expect(plans).toContain("typo-orders");
    }
  }, 600_000);

  test("English, typo words whose pages hold several of their typo terms: each order's bound counts the others' (D124)", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    // Each of these ranked a page wrongly when an order's next page alone bounded a page not met: its
    // chunks' best terms differ, so it scores more than for any one of its terms.
    const queries = ["northaast", "varioes", "oreanizations", "stoee", "statas", "groued", "orgenizations"]
      .concat(["seeaking", "serviving", "serees", "leter", "staees", "oeder", "auseralian"])
      .map((q) => ({ q }));
    const { compared, plans } = walk(withOrders(engine, 1, 1000), queries);
    expect(compared).toBe(queries.length * WINDOWS.length * 2);
    expect(plans).toContain("typo-orders");
  }, 600_000);

  for (const lang of ["ja", "vi"]) {
    test(lang, async () => {
      const engine = await engineFor({
        dumps: TRUNCATED_XZ.filter((d) => d.includes(`/${lang}wiki`)),
        allowTruncated: true,
      });
      expect(walk(engine, queriesFrom(engine, 80, 13)).compared).toBeGreaterThan(1400);
    }, 600_000);
  }
});
