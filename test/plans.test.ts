/**
 * The plan a query runs by (src/search/plans/, D90), by its shape: a table of query shapes and
 * the plan each takes, on the English fixture dumps.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { SearchOptions } from "../src/search";
import { FUNCTION_WORD_PAGES } from "../src/search/plans/function-words";
import { PLAN_NAMES } from "../src/search/plans/plan";
import { PageOrders } from "../src/search/ranking/page-orders";
import { indexKey } from "../src/search/text/analyze";
import { EN_2006, EN_2016, engineFor, pageOrdersOf, withOrders } from "./helpers";

// Snapshots with their orders are built in the tests: seconds, more on a loaded machine.
setDefaultTimeout(120_000);

type Row = [query: string, options: SearchOptions, plan: string, withOrders?: string];

const TABLE: Row[] = [
  ["?!", {}, "none"],
  ["zzqqxx", {}, "words"],
  ["albedo", { pageId: 999_999_999 }, "none"],
  ["albedo", {}, "words", "one-word"],
  ["albe", {}, "words", "one-word"],
  ["the", {}, "words", "one-word"],
  ["albedo snow", {}, "words"],
  ["albdo", {}, "words"],
  // "which" holds more than READ_WHOLE postings: even these small snapshots store its typo order (D124).
  ["whech", {}, "typo-orders"],
  ["the of", {}, "words", "function-words"],
  ["the of", { pruning: false }, "exhaustive", "function-words"],
  ['"of the"', {}, "words"],
  ['"united states"', {}, "words"],
  ["albedo", { pruning: false }, "exhaustive"],
  ['"united states" army', { pruning: false }, "exhaustive"],
];

describe("each query shape runs by its plan", async () => {
  const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
  // These lists are far shorter than PRUNE_FROM: orders of every word, as a large snapshot has of its common ones.
  const ordered = withOrders(engine, 1, 1000);
  const onePage = { pageId: engine.snapshot.pages.ids[3]! };
  const rows: Row[] = [...TABLE, ["albedo", onePage, "within-page"], ['"united states"', onePage, "within-page"]];

  for (const [q, options, plan, withStored] of rows)
    test(`${q} ${JSON.stringify(options)}`, () => {
      expect(engine.search(q, options).work.plan).toBe(plan);
      expect(ordered.search(q, options).work.plan).toBe(withStored ?? plan);
    });

  test("every plan has a row", () => {
    expect([...new Set(rows.flatMap(([, , plan, stored]) => [plan, stored ?? plan]))].sort()).toEqual(
      [...PLAN_NAMES].sort(),
    );
  });
});

describe("typo orders (D124)", async () => {
  const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
  // Lists of 200 postings and more ranked as large ones (a typo term of more needs an order); one-word orders from 400.
  const pruning = { from: 200 };
  const typoQueries = ["ameeica", "geeat", "seeond", "unien", "moeern", "importaet", "lenguage", "beeame"];

  test("a word between the two thresholds has an order for its typos only, not for a one-word search", () => {
    const orders = new PageOrders(pageOrdersOf(engine, 400, 1000, 200));
    const small = new PageOrders(pageOrdersOf(engine, 400, 1000));
    expect(orders.size).toBeGreaterThan(small.size);
    const spec = { key: indexKey("language"), prefix: false, fuzzy: 0 };
    expect(small.get(spec)).toBeUndefined();
    expect(orders.get(spec)).toBeUndefined();
    expect(orders.typoOrder(spec.key)!.holding).toBeGreaterThan(0);
    expect(small.typoOrder(spec.key)).toBeUndefined();
  });

  test("a typo word whose typo terms are between them runs from their orders, not by its words", () => {
    const plain = withOrders(engine, 400, 1000);
    const typo = withOrders(engine, 400, 1000, 200);
    for (const q of typoQueries) {
      expect(plain.search(q, { pruning }).work.plan).toBe("words");
      const ranked = typo.search(q, { pruning, limit: 20 });
      expect(ranked.work.plan).toBe("typo-orders");
      const oracle = engine.search(q, { pruning: false, limit: 20 });
      expect(ranked.hits.map((h) => [h.page.pageId, h.chunk])).toEqual(
        oracle.hits.map((h) => [h.page.pageId, h.chunk]),
      );
    }
  });

  test("typo words searched again, and on another snapshot, rank as the oracle (with a term's own lists kept from earlier searches)", async () => {
    // Another snapshot: its term numbers stand for other words.
    const other = await engineFor({ dumps: [EN_2016] });
    const engines = [withOrders(engine, 400, 1000, 200), withOrders(other, 400, 1000, 200)];
    const oracles = [engine, other];
    let ordered = 0;
    for (const round of [0, 1, 0, 1])
      for (const q of typoQueries) {
        const ranked = engines[round]!.search(q, { pruning, limit: 20 });
        if (ranked.work.plan === "typo-orders") ordered++;
        const oracle = oracles[round]!.search(q, { pruning: false, limit: 20 });
        expect({ q, round, hits: ranked.hits.map((h) => [h.page.pageId, h.chunk]) }).toEqual({
          q,
          round,
          hits: oracle.hits.map((h) => [h.page.pageId, h.chunk]),
        });
      }
    // Every round of the first snapshot's, and some of the other's, from their orders.
    expect(ordered).toBeGreaterThan(16);
  }, 120_000);
});

describe("a query of function words only (D99)", async () => {
  const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
  const ordered = withOrders(engine, 1, 1000);
  const orders = new PageOrders(pageOrdersOf(engine, 1, 1000));
  const q = "what was the of and";
  const words = q.split(" ").map((w) => orders.get({ key: indexKey(w), prefix: false, fuzzy: 0 })!);
  const rarest = words.reduce((a, b) => (b.holding < a.holding ? b : a));
  const candidates = new Set(
    [...rarest.pages.subarray(0, FUNCTION_WORD_PAGES)].map((p) => engine.snapshot.pages.ids[p]),
  );

  test("ranks the first pages of its rarest word's stored order, the same for every window", () => {
    expect(words.every((o) => o.holding > FUNCTION_WORD_PAGES)).toBe(true);
    const all = ordered.search(q, { limit: 200 });
    expect(all.work.plan).toBe("function-words");
    expect(all.estimatedTotalHits).toBe(FUNCTION_WORD_PAGES);
    const pages = [...new Set(all.hits.map((h) => h.page.pageId))];
    expect(pages.length).toBe(FUNCTION_WORD_PAGES);
    for (const id of pages) expect(candidates.has(id)).toBe(true);
    const window = ordered.search(q, { limit: 5, offset: 10 });
    expect(window.hits.map((h) => h.page.pageId)).toEqual(all.hits.slice(10, 15).map((h) => h.page.pageId));
  });
});
