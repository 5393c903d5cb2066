/** One ranking rule per test, on the real English dumps (enwik8-head + enwiki-2016-sample). */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { EN_2006, EN_2016, engineFor } from "./helpers";

setDefaultTimeout(120_000);

const en = () => engineFor({ dumps: [EN_2006, EN_2016] });
const titles = (tome: Awaited<ReturnType<typeof en>>, q: string) => tome.search(q).hits.map((h) => h.page.title);

describe("title rule: a title made only of query words counts by the information it holds", () => {
  test('the page "A" does not win a sentence because it holds the word "a"', async () => {
    const tome = await en();
    const q = "The Gettysburg Address was delivered by a President of the United States.";
    expect(titles(tome, q)[0]).toBe("Abraham Lincoln");
  });

  test("a one-word title that is one word of a long question does not jump ahead of its subject", async () => {
    const tome = await en();
    const q = "What philosophical system did the author of a novel about Howard Roark develop?";
    expect(titles(tome, q)[0]).toBe("Ayn Rand");
  });

  test("a title holding the query's informative word still ranks first", async () => {
    const tome = await en();
    expect(titles(tome, "How large is Angola?")[0]).toBe("Angola");
    expect(titles(tome, "Who coined the term asteroid?")[0]).toBe("Asteroid");
  });
});

describe("quotes: a quoted phrase is required only when some chunk holds it (D36)", () => {
  test("a claim quoting words no page holds together is searched by its words (straight and typographic quotes)", async () => {
    const tome = await en();
    const claim = "It “certainly puts the kibosh on everyone saying that Antarctica’s ice is just going up and up,” Meier said.";
    expect(titles(tome, claim)[0]).toBe("Antarctica");
    expect(titles(tome, 'Antarctica "certainly puts the kibosh"')[0]).toBe("Antarctica");
  });

  test("a phrase that exists is still required", async () => {
    const tome = await en();
    expect(titles(tome, '"sea ice" Antarctica')).toEqual(["Atlantic Ocean", "Arctic Ocean"]);
    expect(titles(tome, "“sea ice” Antarctica")).toEqual(["Atlantic Ocean", "Arctic Ocean"]);
  });
});

describe("typos: two adjacent letters swapped are one typo (Damerau-Levenshtein)", () => {
  test('"Einstien" and "Albret Einstien" find Albert Einstein first', async () => {
    const tome = await en();
    expect(titles(tome, "Einstien")[0]).toBe("Albert Einstein");
    expect(titles(tome, "Albret Einstien")[0]).toBe("Albert Einstein");
  });

  test("in a word of nine letters or more, a swap plus one more typo is two typos", async () => {
    const tome = await en();
    // Each is three edits apart by Levenshtein: the swap ("hc", "si") and a wrong last letter.
    expect(titles(tome, "anarhcisn")[0]).toBe("Anarchism");
    expect(titles(tome, "arsitotlr")[0]).toBe("Aristotle");
  });
});

describe("function words (stopwords-iso) are optional in the all-words tier", () => {
  test("the chunk about the landing beats one that also holds “where did the … on”", async () => {
    const tome = await en();
    const [top] = tome.search("where did the apollo 11 astronauts land on the moon").hits;
    expect(top!.page.title).toBe("Apollo 11");
    expect(top!.page.sections[top!.page.chunks[top!.chunk]!.section]?.heading).toBe("Lunar surface operations");
  });
});
