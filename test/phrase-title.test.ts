/**
 * Quoted phrases alone (the `words` plan, src/search/plans/words.ts) rank as the exhaustive
 * search does, title groups included (D8): a page a phrase's redirect leads to ranks first
 * however little its text scores. (Written for session 30's reverted plan that checked the
 * phrases best bound first and stopped early: it fails when title matches are not checked first.)
 */
import { expect, test } from "bun:test";
import { type InlinePage, wikiOf } from "./helpers";

const page = (title: string, text: string): InlinePage => ({ title, text });

test("the page a phrase redirects to ranks first, though a dozen pages' text scores higher", async () => {
  const dense = Array.from({ length: 12 }, (_x, i) =>
    page(`Harvest festival ${i + 1}`, `The blue moon fair.${" A blue moon rose.".repeat(2 + i)} Songs and cakes.`),
  );
  const others = Array.from({ length: 60 }, (_x, i) =>
    page(
      `Village ${i + 1}`,
      `Village ${i + 1} lies in a river valley with farms, a mill and a small church, and a market on Saturdays.`,
    ),
  );
  const tome = await wikiOf([
    { title: "Blue moon", text: "Lunar calendar", redirect: true },
    page(
      "Lunar calendar",
      "In calendars, an extra full moon in a season or month is sometimes named after a colour. Astronomers, farmers and almanac writers have used the term in different ways since the sixteenth century, and the meaning changed more than once. Today the phrase blue moon usually means the second full moon in one calendar month, which happens about every two and a half years.",
    ),
    ...dense,
    ...others,
  ]);
  const base = { budgetMs: 60_000, highlight: false };
  const found = tome.search('"blue moon"', { ...base, limit: 3, pruning: { from: 0 } });
  expect(found.work.plan).toBe("words");
  expect(found.hits[0]?.page.title).toBe("Lunar calendar");
  const exhaustive = tome.search('"blue moon"', { ...base, limit: 3, pruning: false });
  expect(found.hits.map((h) => [h.page.title, h.score])).toEqual(exhaustive.hits.map((h) => [h.page.title, h.score]));
});
