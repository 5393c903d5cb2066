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

describe("the question's words held close together (D145)", () => {
  test("“where was the treaty signed by the delegates” is the sentence saying it, not the section saying “treaty” most", async () => {
    const tome = await wikiOf([
      page(
        "Ghent",
        [
          `Ghent is a city in the Flemish Region of Belgium. ${filler("the city", 4)}`,
          `== Negotiations ==\nThe treaty talks opened in August 1814. ${filler("the talks", 2)} Each draft of the treaty was read aloud. ${filler("the drafts", 2)} Papers were signed by clerks every evening. ${filler("the papers", 2)} Copies of the treaty went to London. ${filler("the copies", 2)} The delegates dined together on Sundays.`,
          `== Later events ==\nThe treaty was signed on 24 December 1814 in the Carthusian monastery. ${filler("the ceremony", 8)} The delegates left the city in January.`,
        ].join("\n\n"),
      ),
      // Towns that make the question's words as rare in the wiki as in a real one.
      ...Array.from({ length: 12 }, (_x, i) =>
        page(`Town ${i + 1}`, `Town ${i + 1} is a town in Belgium. ${filler("the town", 3)}`),
      ),
    ]);
    const hit = search(tome, "where was the treaty signed by the delegates").hits[0]!;
    expect([hit.page.title, hit.section]).toEqual(["Ghent", "Later events"]);
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

// D93: a query naming the page's title shows its lead, unless another of its words points elsewhere in the page.
const einstein = page(
  "Albert Einstein",
  [
    `Albert Einstein was a German-born theoretical physicist who developed the theory of relativity. ${filler("his work", 4)}`,
    `== Early life and education ==\nAlbert Einstein was born in Ulm. Albert Einstein's father was Hermann Einstein; the young Albert Einstein went to school in Munich, and the Einstein family moved to Italy, where Albert Einstein, who was 15, joined them. ${filler("his youth", 20)}`,
    `== Einstein refrigerator ==\nIn 1926, Einstein and his former student Leó Szilárd co-invented the Einstein refrigerator, an absorption refrigerator with no moving parts. ${filler("the refrigerator", 20)}`,
  ].join("\n\n"),
);

describe("the lead: a query naming the page's title (D93)", () => {
  const wiki = wikiOf([
    einstein,
    { title: "Einstein", text: "Albert Einstein", redirect: true },
    page("Ulm", "Ulm is a city in Baden-Württemberg, where Albert Einstein was born in 1879."),
    page("Leó Szilárd", "Leó Szilárd was a physicist who patented a refrigerator with Albert Einstein."),
  ]);
  const top = async (q: string) => search(await wiki, q).hits[0]!;

  test("the title, a redirect's, the title with typos or a word of it shows the lead, not the section naming it most", async () => {
    for (const q of ["Albert Einstein", "albert einstein", "Einstein", "Albret Einstien", "Albert"]) {
      const hit = await top(q);
      expect([q, hit.page.title, hit.chunk, hit.section]).toEqual([q, "Albert Einstein", 0, ""]);
    }
  });

  test("a word of the query that some section holds points there, a function word too (“early”)", async () => {
    for (const [q, section] of [
      ["Einstein refrigerator", "Einstein refrigerator"],
      ["Albert Einstein school", "Early life and education"],
      ["Albert Einstein early", "Early life and education"],
    ]) {
      const hit = await top(q!);
      expect([q, hit.page.title, hit.section]).toEqual([q, "Albert Einstein", section]);
    }
  });
});

describe("the title's words weigh as function words in a query holding others (D93)", () => {
  test("“Einstein Princeton” is the section saying Princeton most, not the one saying Einstein most", async () => {
    const tome = await wikiOf([
      page(
        "Albert Einstein",
        [
          `Albert Einstein was a German-born theoretical physicist. ${filler("his work", 4)}`,
          `== Travels ==\nEinstein lectured in Princeton in 1921. Einstein sailed to New York; Einstein met the mayor, Einstein spoke at Columbia, Einstein visited Chicago and Boston, and Einstein went home; Einstein wrote of it, and Einstein's wife kept his letters. ${filler("his travels", 20)}`,
          `== Later years ==\nIn 1933 Einstein settled in Princeton, New Jersey, in a house on Mercer Street, from where he walked to the institute in Princeton every day. ${filler("his last years", 20)}`,
        ].join("\n\n"),
      ),
      page("Princeton University", "Princeton University is a university in Princeton, New Jersey."),
      // Towns that make "Einstein" as rare in the wiki as in a real one.
      ...Array.from({ length: 12 }, (_x, i) =>
        page(`Town ${i + 1}`, `Town ${i + 1} is a town in New Jersey. ${filler("the town", 3)}`),
      ),
    ]);
    const hit = search(tome, "Einstein Princeton").hits[0]!;
    expect([hit.page.title, hit.section]).toEqual(["Albert Einstein", "Later years"]);
  });
});

/** A country's page: its lead, then sections of a few sentences each. */
const country = (name: string, sections: [string, string][]) =>
  page(
    name,
    [
      `${name} is a country in the South Caucasus region of Eurasia. ${filler("the country", 3)}`,
      ...sections.map(([heading, text]) => `== ${heading} ==\n${text} ${filler(heading.toLowerCase(), 15)}`),
    ].join("\n\n"),
  );

describe("the section a heading names (D94)", () => {
  test("a heading naming a word of the question comes first: “What language do people speak in Azerbaijan?”", async () => {
    const tome = await wikiOf([
      country("Azerbaijan", [
        [
          "Feudal era",
          "In the feudal era the people of Azerbaijan spoke the Old Azari language, an Iranian language, which was replaced by a Turkic language, the precursor of the Azerbaijani language the people of Azerbaijan speak today.",
        ],
        ["Geography", "Azerbaijan lies between the Caspian Sea and the Caucasus Mountains."],
        ["Economy", "Oil and gas are the main exports of Azerbaijan."],
        ["Religion", "Most people in Azerbaijan are Shia Muslims."],
        ["Culture", "Azerbaijani carpets and mugham music are known across the region."],
        ["Language", "The official language is Azerbaijani, a Turkic tongue spoken by about 92% of the population."],
      ]),
      page("Caspian Sea", "The Caspian Sea borders Azerbaijan, where people speak Azerbaijani."),
    ]);
    expect(search(tome, "What language do people speak in Azerbaijan?").hits[0]!.section).toBe("Language");
  });

  test("a heading names a word by a form of another stem (“Discovery”, “discovered”), and the page's subject (“electron”) names no section", async () => {
    const atom = page(
      "Atom",
      [
        `An atom is the smallest unit of matter: a nucleus with one or more electrons bound to it. ${filler("atoms", 3)}`,
        `== Subatomic particles ==\nThe electron is the lightest particle of an atom; electrons carry a negative charge. ${filler("particles", 15)}`,
        `== Electron configuration ==\nElectrons fill shells: an electron occupies the lowest shell free, and electrons of the outer shell bond the atom to others; each electron has a spin. ${filler("shells", 15)}`,
        `== Nucleus ==\nThe nucleus was discovered by Ernest Rutherford in 1911; it holds the protons, which attract the electrons. ${filler("the nucleus", 15)}`,
        `== Discovery of subatomic particles ==\nIn 1897 J. J. Thomson found that cathode rays were made of particles a thousand times lighter than hydrogen: the electron. ${filler("the experiments", 15)}`,
        `== Isotopes ==\nAtoms of one element with different numbers of neutrons are isotopes. ${filler("isotopes", 15)}`,
      ].join("\n\n"),
    );
    const tome = await wikiOf([atom, page("Hydrogen", "Hydrogen is the lightest element: one proton, one electron.")]);
    expect(search(tome, "Who discovered the electron?").hits[0]!.section).toBe("Discovery of subatomic particles");
  });
});

describe("highlighting what matched (D95)", () => {
  test("a quoted phrase is highlighted where it stands, not its function words elsewhere", async () => {
    const tome = await wikiOf([
      page(
        "Theory of relativity",
        "The theory of relativity usually encompasses two theories by Albert Einstein: special relativity and general relativity. The theory of relativity transformed physics and astronomy, superseding a theory of mechanics of Isaac Newton.",
      ),
    ]);
    const text = search(tome, '"theory of relativity"').hits[0]!.formatted.text;
    expect(text.match(/<em>theory<\/em> <em>of<\/em> <em>relativity<\/em>/gi)?.length).toBe(2);
    expect(text.match(/<em>of<\/em>/g)?.length).toBe(2);
  });

  const ja = (title: string, text: string) => wikiOf([page(title, text)], "ja");

  test("in unspaced script, a query word the segmenter splits is highlighted whole: にほん in にほんご", async () => {
    const tome = await ja(
      "日本語",
      "日本語（にほんご、にっぽんご）は、日本国内や日本人同士の間で使用されている言語である。",
    );
    const text = search(tome, "にほん").hits[0]!.formatted.text;
    expect(text).toContain("<em>にほん</em>ご");
    expect(text).not.toContain("に<em>ほん</em>");
  });

  test("the crop holds the most distinct matched words: 日本の歴史 shows 日本 beside 歴史, not only the densest 歴史", async () => {
    const plain = "この地域では農業が盛んで、米や野菜が作られている。";
    const text = [
      "日本の古代には多くの出来事があった。",
      plain.repeat(4),
      "城の歴史は長く、町の歴史も古い。寺の歴史も語られる。",
      plain.repeat(12),
      "歴史を学ぶ人は歴史の本を読み、歴史の授業に出て、歴史の先生と歴史の話をして、歴史の旅に出る。",
    ].join("");
    const tome = await ja("地方", text);
    const snippet = search(tome, "日本の歴史").hits[0]!.formatted.text;
    expect(snippet).toContain("<em>日本</em>");
    expect(snippet).toContain("<em>歴史</em>");
  });
});
