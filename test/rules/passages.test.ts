/**
 * The passage rules (D62), one small inline wiki each: a section heading counts as its chunks';
 * function words alone are not highlighted. And one order per query (D61): every window is a
 * slice of it. How much function words and a word's other forms weigh is tested on real text
 * (test/ranking.test.ts): in a wiki of a few chunks every word's IDF is far from a real one's.
 */
import { describe, expect, test } from "bun:test";
import type { Engine, SearchOptions } from "../../src/search";
import { type InlinePage, wikiOf } from "../helpers";

const search = (tome: Engine, q: string, options: SearchOptions = {}) =>
  tome.search(q, { budgetMs: 60_000, ...options });
const page = (title: string, text: string): InlinePage => ({ title, text });
/** Sentences of a section; like real text, they hold the function words a question holds (“who”, “was”, “the”), so these weigh little. */
const filler = (topic: string, n: number) =>
  Array.from(
    { length: n },
    (_x, i) => `Paragraph ${i + 1} on ${topic} says who was there, and what the people who saw it wrote of the period.`,
  ).join(" ");

const lincoln = page(
  "Abraham Lincoln",
  [
    `Abraham Lincoln was the 16th president of the United States, who led the nation through the Civil War. ${filler("his early life", 20)}`,
    `== Religious and philosophical beliefs ==\nLincoln, who rarely spoke of his faith, was a man who read the Bible closely. Those who knew him, and who wrote after he died, disagreed about who had shaped his beliefs and who had not. ${filler("his beliefs", 20)}`,
    `== Assassination and funeral ==\nJohn Wilkes Booth shot Lincoln at Ford's Theatre on April 14, 1865. The assassination was part of a plot; the assassination of the president shocked the nation, and the assassination conspirators were tried by a military commission. ${filler("the conspiracy", 20)}`,
    `== Burial ==\nHis body lay in state in the Capitol and was carried by train to Springfield, Illinois, where Lincoln was buried at Oak Ridge Cemetery. ${filler("the journey", 20)}`,
  ].join("\n\n"),
);

describe("the passage: the chunk a reader would quote", () => {
  const wiki = wikiOf([
    lincoln,
    page("Ford's Theatre", "Ford's Theatre is a theater in Washington, D.C., opened in 1863."),
  ]);

  test("a section heading counts: “Lincoln burial” is the Burial section, whose text says “buried”", async () => {
    expect(search(await wiki, "Lincoln burial").hits[0]!.section).toBe("Burial");
  });
});

describe("highlighting: function words are not highlighted alone", () => {
  const wiki = wikiOf([lincoln]);

  test("“who assassinated Lincoln” highlights Lincoln, and not “who”", async () => {
    const text = search(await wiki, "who assassinated Lincoln").hits[0]!.formatted.text;
    expect(text).toContain("<em>Lincoln</em>");
    expect(text).not.toMatch(/<em>who<\/em>/i);
  });

  test("inside a quoted phrase a function word is highlighted", async () => {
    const text = search(await wiki, '"president of the United States"').hits[0]!.formatted.text;
    expect(text).toContain("<em>of</em>");
  });

  test("a query of function words only highlights them", async () => {
    const text = search(await wiki, "who").hits[0]!.formatted.text;
    expect(text).toMatch(/<em>who<\/em>/i);
  });
});

describe("one order per query (D61)", () => {
  const wiki = wikiOf([
    lincoln,
    page("Ford's Theatre", "Ford's Theatre is a theater in Washington, D.C., where Lincoln was shot in 1865."),
    page("John Wilkes Booth", "John Wilkes Booth was an actor who shot Lincoln at Ford's Theatre."),
    page("Andrew Johnson", "Andrew Johnson became president after Lincoln was shot."),
    page(
      "Mary Todd Lincoln",
      "Mary Todd Lincoln was the wife of the president, with him at the theater when he was shot.",
    ),
  ]);

  test("every (limit, offset) window is that slice of the whole order, and walking it shows no page twice", async () => {
    const tome = await wiki;
    for (const q of ["Lincoln shot at the theater", "who shot Lincoln", "the president"]) {
      const all = search(tome, q, { limit: 50 }).hits.map((h) => `${h.page.title}#${h.chunk}`);
      expect(all.length).toBeGreaterThan(2);
      for (const limit of [1, 2, 3])
        for (let offset = 0; offset < all.length; offset += limit)
          expect(search(tome, q, { limit, offset }).hits.map((h) => `${h.page.title}#${h.chunk}`)).toEqual(
            all.slice(offset, offset + limit),
          );
    }
  });
});
