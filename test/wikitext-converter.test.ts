/** Text cleaning: one small inline case per rule, then the same rules on real pages of the shared dumps. */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { countLeaks, findLeaks } from "../src/ingest";
import { makeConverter } from "../src/ingest/wikitext";
import { stripMarkup } from "../src/ingest/wikitext/markup";
import * as texSymbols from "../src/ingest/wikitext/tex-symbols";
import { dump, EN_2016, engineFor, MARKUP_BREAKINGS, pagesOf } from "./helpers";

// Per file: the last tests convert real dumps.
setDefaultTimeout(120_000);

const convert = makeConverter({ lang: "en", namespaces: new Map() });
/** The text a page's wikitext becomes: blocks joined as chunks join them. */
const text = (wikitext: string) =>
  convert(wikitext)
    .flatMap((s) => s.blocks.map((b) => b.text))
    .join("\n\n");

describe("formulas stay in their sentence", () => {
  test("<math> variables", () => {
    expect(text("where <math>A</math> is the albedo, <math>D</math> the diameter.")).toBe(
      "where A is the albedo, D the diameter.",
    );
  });

  test("<math> fractions, scripts and symbols", () => {
    expect(text("<math>A =\\left ( \\frac{1329\\times10^{-H/5}}{D} \\right ) ^2</math>")).toBe(
      "A = ((1329 × 10^(−H/5))/D)²",
    );
    expect(text("<math>\\sum_{i=1}^n a_i \\leq \\sqrt{x+1}</math>")).toBe("∑ᵢ₌₁ⁿ aᵢ ≤ √(x + 1)");
    expect(text("<math>\\mathbb{R}\\sub \\mathbb{C}</math>, <math>\\sin^2\\alpha</math>")).toBe("ℝ ⊂ ℂ, sin² α");
  });

  test("a TeX command or a unit named as a member of every object (\\constructor, \\not\\valueOf, {{convert|5|constructor|10}}) is its name, not the JavaScript function's source", () => {
    // Read from the symbol tables with `in` and [name]: inherited members of Object.prototype were found too, and the
    // chunk said "function Object { [native code]}". The tables have no prototype now (next test).
    expect(
      text(
        "<math>\\constructor + \\toString</math>, <math>\\not\\valueOf</math>, {{convert|5|constructor|10}}, <math>\\hat{x}</math>.",
      ),
    ).toBe("constructor + toString, valueOf\u0338, 5 constructor, x̂.");
  });

  test("the TeX symbol tables have no prototype, so that a plain table[name] finds their own entries only", () => {
    const tables = Object.entries(texSymbols).filter(([, t]) => typeof t === "object" && !(t instanceof Set));
    expect(tables.length).toBeGreaterThan(5);
    for (const [name, table] of tables) expect([name, Object.getPrototypeOf(table)]).toEqual([name, null]);
  });

  test("{{math}}, {{mvar}} and {{tmath}}", () => {
    expect(text("the square {{math|''x''<sup>2</sup>}} of {{mvar|x}} is {{tmath|\\tfrac{1}{2} }}.")).toBe(
      "the square x² of x is 1/2.",
    );
  });

  test("{{frac}} and {{sfrac}}", () => {
    expect(text("cos<sup>−1</sup>(−{{frac|3}}), {{frac|3|4}}, {{frac|1|1|2}}, ({{sfrac|3''n'' + 1|2}})")).toBe(
      "cos⁻¹(−1/3), 3/4, 1 1/2, ((3n + 1)/2)",
    );
  });

  test("{{formatnum}} keeps the number as written", () => {
    expect(text("''c'' = {{formatnum:299 792 458}} м·с<sup>-1</sup>")).toBe("c = 299 792 458 м·с⁻¹");
  });

  test("{{val}} and {{e}}", () => {
    expect(text("{{val|6.62607015|e=-34|u=J s}}, {{val|2.792847356|(23)}}, {{val|1.2|0.3|u=m}}, 6.02{{e|23}}")).toBe(
      "6.62607015×10⁻³⁴ J s, 2.792847356(23), 1.2 ± 0.3 m, 6.02×10²³",
    );
  });

  test("{{convert}}, with or without its units", () => {
    expect(text("A {{convert|5|mi|km}} crater, {{convert|1|-|2|km}} wide, {{convert|7}} deep.")).toBe(
      "A 5 mi crater, 1–2 km wide, 7 deep.",
    );
  });

  test("{{chem}}, <sub> and <sup>", () => {
    expect(text("{{chem|C|''n''|H|2''n''+2}} and H<sub>2</sub>O over 10<sup>7</sup> K")).toBe(
      "CₙH₂ₙ₊₂ and H₂O over 10⁷ K",
    );
  });
});

describe("a template rendered from a missing value leaves nothing", () => {
  test("an empty <sup> (its reference removed) is not 'undefined'", () => {
    expect(text('brought back to Najd<sup><ref name="b" /></sup>.')).toBe("brought back to Najd.");
  });

  test("a flag of a country wtf does not know shows the name it was given", () => {
    expect(text("Kishinev ({{flagcountry|Молдова}}), {{flag|Κύπρος}}.")).toBe("Kishinev (Молдова), Κύπρος.");
  });

  test("any other handler that renders undefined renders nothing", () => {
    // wtf reads {{MRT}} as a metro station with no name: "[[undefined MRT station|undefined]]".
    expect(text("Madeira\n\n{{MRT}} Mauritania")).toBe("Madeira\n\nMauritania");
  });
});

describe("definition lists keep the term with its text", () => {
  test("'; term : text' and ';term' + ':text' are one line", () => {
    expect(text("; Recursion : calls itself\n;Logical\n:deduction")).toBe(
      "Recursion: calls itself\nLogical: deduction",
    );
  });

  test("a term above prose opens that prose's paragraph, in order", () => {
    expect(text("Intro.\n\n;Fungi\nText about fungi.\n;Animals\n\nText about animals.")).toBe(
      "Intro.\n\nFungi\nText about fungi.\n\nAnimals\nText about animals.",
    );
  });

  test("a list inside a paragraph stays between the sentences around it", () => {
    expect(text("Before:\n* one\n* two\nAfter.")).toBe("Before:\n\none\ntwo\n\nAfter.");
  });
});

describe("malformed tables' cell attributes", () => {
  test("are removed, and a run of '=' that looks like them takes no time (it once split every way: seconds at 26)", () => {
    expect(text('Before style="x" width=5 | after.')).toBe("Before after.");
    const started = performance.now();
    expect(text(`Chain ${"a=".repeat(40)}b.`)).toBe(`Chain ${"a=".repeat(40)}b.`);
    expect(performance.now() - started).toBeLessThan(1000);
  }, 5_000);
});

describe("unclosed markup costs its length once: copies of a broken page, one after another, are each read as the page alone", () => {
  // Each unclosed tag or link was looked for to the end of the text again (1 MB of them: seconds, growing as the square);
  // bench/build/markup.ts times it. Alkali metal, the 2016 dump's page of the most references (454), broken as a cut or
  // hostile revision is.
  let page: string;
  beforeAll(async () => {
    page = (await pagesOf([EN_2016])).find((p) => p.title === "Alkali metal")!.text;
  });
  const copies = (text: string) => Array(8).fill(text).join("\n\n");
  // Joined by a blank line, which ends an unclosed file link: each copy is read alone.
  for (const { what, breakIt } of MARKUP_BREAKINGS)
    test(what, () => {
      const text = breakIt(page);
      expect(stripMarkup(copies(text))).toBe(copies(stripMarkup(text)));
    });

  test("a reference never closed is dropped alone, its text kept; a file link, to the end of its line", () => {
    expect(stripMarkup("Sodium.<ref>{{cite book |title=Chemistry}}\n\nNext.")).toBe(
      "Sodium.{{cite book |title=Chemistry}}\n\nNext.",
    );
    expect(stripMarkup("Lithium [[File:Li.jpg|thumb|[[Lithium]] metal\nburns.")).toBe("Lithium \nburns.");
  });
});

describe("leak count", () => {
  test("undefined, NaN and [object count as tokens; words that contain them do not", () => {
    expect(findLeaks("cos(−1/undefined)")).toEqual(["undefined"]);
    expect(findLeaks("c = NaN м·с-1")).toEqual(["NaN"]);
    expect(findLeaks("[object Object]")).toEqual(["[object"]);
    expect(findLeaks("Nancy adds NaNO3 to the nano sample")).toEqual([]);
  });

  test("a page's own words are not leaks: only occurrences beyond its wikitext's count", () => {
    const texts = ["Dr. Potter holds some undefined position."];
    expect(countLeaks(texts).undefined).toBe(1);
    expect(countLeaks(texts, new Map([["undefined", 1]])).undefined).toBe(0);
    expect(countLeaks([...texts, "1/undefined"], new Map([["undefined", 1]])).undefined).toBe(1);
  });
});

describe("real pages", () => {
  // A page's chunks as the ingest made them, read from the snapshot of its dump that the test files share (snapshotFor)
  // rather than from a conversion of the dump of this file's own.
  const chunksOf = async (path: string, title: string) => {
    const engine = await engineFor(path === EN_2016 ? { dumps: [path] } : { dumps: [path], allowTruncated: true });
    return engine.pageByTitle(title)!.chunks.map((c) => c.text);
  };

  test("Alkane: fractions and formulas of the combustion equations", async () => {
    const all = (await chunksOf(EN_2016, "Alkane")).join("\n\n");
    expect(all).toContain(
      "arranged spatially in the form of a tetrahedron, the angle of cos⁻¹(−1/3) ≈ 109.47° between them.",
    );
    expect(all).toContain(
      "CₙH₂ₙ₊₂ + (3/2n + 1/2) O₂ → (n + 1) H₂O + n CO₂\nor CₙH₂ₙ₊₂ + ((3n + 1)/2) O₂ → (n + 1) H₂O + n CO₂",
    );
    expect(all).not.toContain("undefined");
  });

  test("Alkane: each definition term in the same chunk as its text, above it", async () => {
    const chunks = await chunksOf(EN_2016, "Alkane");
    for (const [term, start] of [
      ["Fungi and plants", "Alkanes also play a role"],
      ["Animals", "Alkanes are found in animal products"],
      ["Bacteria and archaea", "Certain types of bacteria"],
    ]) {
      expect(chunks.filter((c) => c.includes(`${term}\n${start}`))).toHaveLength(1);
    }
  });

  test("Albedo: the formula and its variables in the astronomical albedo section", async () => {
    const chunks = await chunksOf(EN_2016, "Albedo");
    expect(chunks[4]).toContain(
      "The correlation between astronomical (geometric) albedo, absolute magnitude and diameter is: A = ((1329 × 10^(−H/5))/D)²,",
    );
    expect(chunks[4]).toContain(
      "where A is the astronomical albedo, D is the diameter in kilometers, and H is the absolute magnitude.",
    );
  });

  test("Метр (ukwiki): the speed of light keeps its value and unit", async () => {
    const all = (await chunksOf(dump("ukwiki-head-truncated.xml.xz"), "Метр")).join("\n\n");
    expect(all).toContain("точне значення для швидкості світла у вакуумі c = 299 792 458 м·с⁻¹.");
    expect(all).not.toMatch(/\bNaN\b/);
  });

  test("2 жовтня (ukwiki): flag templates show their country, not 'undefined'", async () => {
    const all = (await chunksOf(dump("ukwiki-head-truncated.xml.xz"), "2 жовтня")).join("\n");
    expect(all).toContain("Італія: Національний день бабусь і дідусів.");
    expect(all).not.toContain("undefined");
  });

  test("List of Atlas Shrugged characters: a page's own 'undefined' stays, and is no leak", async () => {
    const all = (await chunksOf(EN_2016, "List of Atlas Shrugged characters")).join("\n");
    expect(all).toContain("Dr. Potter holds some undefined position with the State Science Institute.");
    const { dumpLeaks } = await import("../src/ingest/leaks");
    expect((await dumpLeaks(EN_2016, false)).counts.undefined).toBe(0);
  });
});
