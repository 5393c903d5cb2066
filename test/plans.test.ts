/**
 * The plan a query runs by (src/search/plans/, D90), by its shape: a table of query shapes and
 * the plan each takes, on the English fixture dumps.
 */
import { describe, expect, test } from "bun:test";
import type { SearchOptions } from "../src/search";
import { PLAN_NAMES } from "../src/search/plans/plan";
import { EN_2006, EN_2016, engineFor, withOrders } from "./helpers";

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
  ["the of", {}, "words"],
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
