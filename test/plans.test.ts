/**
 * The plan a query runs by (src/search/ranking/plan.ts), by its shape: a table of query
 * shapes and the plan each takes, on the English fixture dumps, with and without stored page
 * orders (D51). These lists are far shorter than PRUNE_FROM, so `SHORT_LISTS` lowers the
 * threshold where a row asks for the pruned plans; the default rows show the threshold.
 */
import { describe, expect, test } from "bun:test";
import type { SearchOptions } from "../src/search";
import { PLAN_NAMES } from "../src/search/ranking/plan";
import { EN_2006, EN_2016, engineFor, withOrders } from "./helpers";

const SHORT_LISTS = { pruning: { from: 0, workShare: Infinity, words: 31 } } satisfies SearchOptions;

/** The plan chosen, without the plans it handed over to when it gave up (SearchWork.plan: "word-orders, then conjunction"). */
const chosen = (plan: string) => plan.split(", then ")[0];

type Row = [query: string, options: SearchOptions, without: string, withOrders: string];

const TABLE: Row[] = [
  ["?!", {}, "none", "none"],
  ["albedo", { pageId: 999_999_999 }, "none", "none"],
  ["albedo", {}, "tiers", "tiers"],
  ["albedo snow", {}, "tiers", "tiers"],
  ["albedo", { pruning: false }, "tiers", "tiers"],
  ["albedo snow", { pruning: false }, "tiers", "tiers"],
  ["albedo", SHORT_LISTS, "one-word", "one-word"],
  ["albe", SHORT_LISTS, "one-word", "one-word"],
  ["albedo snow", SHORT_LISTS, "conjunction", "word-orders"],
  ["the of", SHORT_LISTS, "conjunction", "word-orders"],
  ["albedo snw", SHORT_LISTS, "conjunction", "conjunction"],
  ["albdo", SHORT_LISTS, "tiers", "typo-orders"],
  ["zzqqxx", SHORT_LISTS, "tiers", "tiers"],
  ['"united states"', SHORT_LISTS, "phrases", "phrases"],
  ['"united states"', { pruning: false }, "phrases", "phrases"],
  ['"united states" army', SHORT_LISTS, "tiers", "tiers"],
];

describe("each query shape runs by its plan", async () => {
  const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
  const { ordered } = withOrders(engine, 1, 1000);
  const onePage = { pageId: engine.snapshot.pages.ids[3]! };
  const rows: Row[] = [
    ...TABLE,
    ["albedo", { ...SHORT_LISTS, ...onePage }, "within-page", "within-page"],
    ['"united states"', onePage, "within-page", "within-page"],
  ];

  for (const [q, options, without, withOrders] of rows)
    test(`${q} ${JSON.stringify(options)}`, () => {
      expect(chosen(engine.search(q, options).work.plan)).toBe(without);
      expect(chosen(ordered.search(q, options).work.plan)).toBe(withOrders);
    });

  test("every plan has a row", () => {
    const named = new Set(rows.flatMap(([, , a, b]) => [a, b]));
    expect([...named].sort()).toEqual([...PLAN_NAMES].sort());
  });
});
