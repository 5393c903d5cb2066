/**
 * The cleaning rules of ingest, one inline wikitext case each with the exact text it becomes (as
 * wtf_wikipedia's tests show each kind of markup). Every case is a page of one small export that
 * goes through ingest() whole (test/helpers.ts: articlesOf): what a test sees is what a snapshot would hold. A page's
 * text is its chunks joined by a blank line, each under its section's heading written as
 * "== heading ==". Formulas, numbers and definition lists have more cases in test/wikitext-converter.test.ts;
 * the real dumps stay the integration layer there and in test/ingest.test.ts.
 */
import { describe, expect, test } from "bun:test";
import type { Article } from "../../src/ingest";
import { articlesOf, type InlinePage } from "../helpers";

const pages: InlinePage[] = [];
let ingested: Promise<Map<string, Article>> | undefined;

/** Registers a case: the page holding `wikitext` holds exactly `expected`. */
function cleans(rule: string, wikitext: string, expected: string): void {
  const title = `Case ${pages.length + 1}`;
  pages.push({ title, text: wikitext });
  test(rule, async () => {
    // Every case is registered before the first test runs: one ingest for all of them.
    ingested ??= articlesOf(pages).then((articles) => new Map(articles.map((a) => [a.title, a])));
    expect(textOf((await ingested).get(title)!)).toBe(expected);
  });
}

function textOf(article: Article): string {
  return article.chunks
    .map((chunk) => {
      const { heading, level } = article.sections[chunk.section]!;
      const marks = "=".repeat(level + 1);
      return heading ? `${marks} ${heading} ${marks}\n${chunk.text}` : chunk.text;
    })
    .join("\n\n");
}

describe("references", () => {
  cleans(
    "a reference goes with its citation, named or not",
    'Paris is the capital of France.<ref>{{cite web |url=https://example.org |title=Paris}}</ref> It lies on the Seine.<ref name="insee" /> About two million people live there.<ref name="insee">INSEE, 2020.</ref>',
    "Paris is the capital of France. It lies on the Seine. About two million people live there.",
  );
  cleans(
    "a tag never closed swallows nothing: the tag alone goes",
    "The bridge opened in 1607. <ref>Cited in a book\n\nThe next paragraph.",
    "The bridge opened in 1607. Cited in a book\n\nThe next paragraph.",
  );
  cleans(
    "sections that only list sources or links go, with their subsections",
    "The Seine is a river.\n\n== History ==\nThe river was a trade route.\n\n== See also ==\n* [[Loire]]\n\n== References ==\n{{reflist}}\n\n=== Books ===\n* A book on rivers.\n\n== External links ==\n* [https://example.org Official site]",
    "The Seine is a river.\n\n== History ==\nThe river was a trade route.",
  );
  cleans(
    "a section after a dropped one stays",
    "Intro.\n\n== Notes ==\n{{notelist}}\n\n== Legacy ==\nThe city endures.",
    "Intro.\n\n== Legacy ==\nThe city endures.",
  );
});

describe("templates", () => {
  cleans(
    "maintenance and citation templates leave nothing",
    "The tower is 330 metres tall.{{citation needed|date=May 2020}} It was finished in 1889.{{sfn|Harriss|1975|p=12}}",
    "The tower is 330 metres tall. It was finished in 1889.",
  );
  cleans(
    "page-level templates leave nothing",
    "{{Short description|Capital of France}}{{Use dmy dates|date=May 2020}}\n'''Paris''' is the capital.",
    "Paris is the capital.",
  );
  cleans(
    "an infobox leaves nothing",
    "{{Infobox river\n| name = Seine\n| length = 777 km\n| mouth = [[English Channel]]\n}}\nThe '''Seine''' is a river in [[France]].",
    "The Seine is a river in France.",
  );
  cleans(
    "templates that show words keep them: lang, interlanguage links, circa, nowrap",
    "{{lang|fr|Liberté, égalité, fraternité}} is the motto of France, as in {{ill|Devise de la France|fr}}. It dates from {{circa|1790}}, under {{nowrap|the First Republic}}.",
    "Liberté, égalité, fraternité is the motto of France, as in Devise de la France. It dates from c. 1790, under the First Republic.",
  );
  cleans(
    "numbers and units keep their value",
    "The Seine is {{convert|777|km|mi}} long and {{val|1.2|u=m}} deep at Paris.",
    "The Seine is 777 km long and 1.2 m deep at Paris.",
  );
});

describe("what a removed template leaves behind", () => {
  cleans(
    "empty brackets go",
    "'''Paris''' ({{IPA-fr|paʁi|lang}}) is the capital of France.",
    "Paris is the capital of France.",
  );
  cleans(
    "empty quotes go, and doubled commas become one",
    "Its old name is “{{lang|xx}}” in Latin; the city, {{citation needed}}, grew.",
    "Its old name is in Latin; the city, grew.",
  );
  cleans(
    "a comma or space before a stop goes",
    "It lies in the north, {{citation needed}}. The river runs north , to the sea .",
    "It lies in the north. The river runs north, to the sea.",
  );
});

describe("links", () => {
  cleans(
    "a wiki link shows its text, its trail included",
    "The [[Seine|river Seine]] flows through [[Paris]] to the [[English Channel]], and [[boat]]s sail on it.",
    "The river Seine flows through Paris to the English Channel, and boats sail on it.",
  );
  cleans(
    "links to other namespaces and wikis show their text",
    "A [[Wikipedia:Manual of Style|style guide]], a [[wikt:city|city]] and [[:Category:Paris|the Paris category]].",
    "A style guide, a city and the Paris category.",
  );
  cleans(
    "an external link shows its text; a bare address stays",
    "See the [https://www.paris.fr official site] or https://www.paris.fr for more.",
    "See the official site or https://www.paris.fr for more.",
  );
  cleans(
    "a file or image goes with its caption, however nested",
    "[[File:Paris Night.jpg|thumb|The [[Eiffel Tower]] at night, {{circa|2010}}]]\nThe Eiffel Tower is in Paris.[[Image:Tower.png|left|A tower]]",
    "The Eiffel Tower is in Paris.",
  );
  cleans(
    "categories go",
    "The Louvre is a museum in Paris.\n\n[[Category:Museums in Paris]]\n[[Category:Art museums|Louvre]]",
    "The Louvre is a museum in Paris.",
  );
});

describe("tables, galleries and other blocks", () => {
  cleans(
    "a table goes, the prose around it stays",
    'Population by year:\n\n{| class="wikitable"\n|-\n! Year !! Population\n|-\n| 2020 || 2,145,906\n|}\n\nThe city has grown since 1800.',
    "Population by year:\n\nThe city has grown since 1800.",
  );
  cleans(
    "a gallery goes",
    "Photos of the city:\n<gallery>\nFile:Paris.jpg|The Seine\nFile:Louvre.jpg|The Louvre\n</gallery>\nThe city has many museums.",
    "Photos of the city:\n\nThe city has many museums.",
  );
  cleans(
    "a block quotation stays, in quotes",
    "<blockquote>Paris is well worth a mass.</blockquote> said Henry IV.",
    '"Paris is well worth a mass." said Henry IV.',
  );
  cleans(
    "a formula becomes text in its sentence",
    "Its density is <math>\\rho = m/V</math> and water is <chem>H2O</chem>.",
    "Its density is ρ = m/V and water is H₂O.",
  );
});

describe("formatting", () => {
  cleans(
    "bold and italic marks go",
    "'''Paris''' is known as ''la Ville Lumière'', the City of Light.",
    "Paris is known as la Ville Lumière, the City of Light.",
  );
  cleans("comments and magic words go", "Paris<!-- do not change the name --> is a city.__NOTOC__", "Paris is a city.");
  cleans(
    "HTML tags go, their text stays",
    '<templatestyles src="Plainlist/styles.css" />The square is <span style="color:red">red</span>, <small>and small</small>.',
    "The square is red, and small.",
  );
  cleans(
    "entities are decoded; sub- and superscripts become characters",
    "Paris had 2.1&nbsp;million people in 2020 &ndash; down from 1921.<br />The city covers 105&nbsp;km<sup>2</sup>.",
    "Paris had 2.1 million people in 2020 – down from 1921. The city covers 105 km².",
  );
  cleans(
    "soft hyphens go, written as entities or as characters: the word they sit in stays whole (D153)",
    "The book «Зо&shy;ло&shy;тий бу\u00adме\u00adранг» appeared in 1946.",
    "The book «Золотий бумеранг» appeared in 1946.",
  );
  cleans(
    "nowiki text is literal text",
    "The pipe <nowiki>|</nowiki> separates a link from its text.",
    "The pipe | separates a link from its text.",
  );
});

describe("lists and headings", () => {
  cleans(
    "a list is one item a line, its own block; numbered items are numbered",
    "Paris has these arrondissements:\n* Louvre\n* Bourse\n** Vivienne\n# First\n# Second",
    "Paris has these arrondissements:\n\nLouvre\nBourse\nVivienne\n1) First\n2) Second",
  );
  cleans(
    "an indented line loses its marks",
    "Line one\n:: indented reply\nLine two.",
    "Line one\n\nindented reply\n\nLine two.",
  );
  cleans(
    "a definition term keeps its text on its line",
    "; Seine : a river of France\n;Loire\n:a river too",
    "Seine: a river of France\nLoire: a river too",
  );
  cleans(
    "headings keep their words, without markup, at their level",
    "Intro.\n\n== ''Belle Époque'' ==\nA time of peace.\n\n=== The [[Exposition Universelle (1889)|1889 Exposition]] ===\nThe tower was built.",
    "Intro.\n\n== Belle Époque ==\nA time of peace.\n\n=== The 1889 Exposition ===\nThe tower was built.",
  );
});
