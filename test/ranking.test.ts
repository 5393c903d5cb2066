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
