import { describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import { CROP_MARKER, type Engine, fold, GUARDS, open, phraseTest, terms } from "../src/search";
import SearchableMap from "minisearch/SearchableMap";
import { indexKey, termOfKey } from "../src/search/text/analyze";
import { parseQuery } from "../src/search/text/query";
import { queryFunctionWords } from "../src/search/stages/terms";
import { buildShard } from "../src/search/indexer/invert";
import { Shard } from "../src/search/postings/shard";
import { Vocabulary, vocabularyOf } from "../src/search/postings/vocabulary";
import { TEXT_BOOSTS, TEXT_FIELDS, textShardOptions } from "../src/search/postings/fields";
import MiniSearch from "minisearch";
import { closeSync, copyFileSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { openContainer } from "../src/snapshot";
import { join } from "node:path";
import { SearchQuery } from "../src/http/schemas";
import {
  chunkTextsOf,
  EN_2006,
  EN_2016,
  engineFor,
  ingested,
  refused,
  ROOT,
  snapshotFor,
  SQUAD,
  tempDir,
  TRUNCATED_XZ,
} from "./helpers";

// Per file (bun applies it to the current file only): these tests build snapshots from the real dumps.
setDefaultTimeout(120_000);

const en = () => engineFor({ dumps: [EN_2006, EN_2016] });
const squad = () => engineFor({ dumps: [SQUAD] });
const ja = () => engineFor({ dumps: [TRUNCATED_XZ[3]!], allowTruncated: true });
const el = () => engineFor({ dumps: [TRUNCATED_XZ[1]!], allowTruncated: true });
const mr = () => engineFor({ dumps: [TRUNCATED_XZ[4]!], allowTruncated: true });
const uk = () => engineFor({ dumps: [TRUNCATED_XZ[5]!], allowTruncated: true });
const vi = () => engineFor({ dumps: [TRUNCATED_XZ[6]!], allowTruncated: true });

const plain = (formatted: string) => formatted.replaceAll("<em>", "").replaceAll("</em>", "");
const unescapeHtml = (s: string) => s.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
const chunkText = (h: { page: { chunks: { text: string }[] }; chunk: number }) => h.page.chunks[h.chunk]!.text;

describe("analysis", () => {
  test("case, accents, numbers, and scripts without spaces", () => {
    expect(terms("Café ÉCOLE naïve 1760 Ά")).toEqual(["cafe", "ecole", "naive", "1760", "α"]);
    // đ is no accented d to Unicode (no decomposition), but is to a reader typing without accents (D120).
    expect(fold("Đà Nẵng")).toBe("da nang");
    // A final sigma is a sigma (D120), in capitals as in lowercase.
    expect(terms("ΠΟΛΕΜΟΣ πόλεμος πολεμοσ")).toEqual(["πολεμοσ", "πολεμοσ", "πολεμοσ"]);
    // ß, ẞ, the ligatures æ and œ and the dotless ı are the letters a reader types for them (D120).
    expect(terms("Straße STRAẞE Encyclopædia ŒUVRE Kıbrıs İsmet")).toEqual([
      "strasse",
      "strasse",
      "encyclopaedia",
      "oeuvre",
      "kibris",
      "ismet",
    ]);
    expect(terms("東京都に住む", "ja").length).toBeGreaterThan(2);
    expect(terms("मराठी भाषा")).toEqual(["मराठी", "भाषा"]); // Indic vowel signs are not accents
  });

  test("a joiner inside a word and a Cyrillic word's apostrophe keep it one word, in any of its forms (D120)", () => {
    expect(terms("रत्\u200dनागिरी কল\u200d্যাণী")).toEqual(terms("रत्नागिरी কল্যাণী"));
    expect(terms("रत्\u200dनागिरी")).toEqual(["रत्नागिरी"]);
    expect(terms("об'єкт об’єкт обʼєкт Об'Єкт")).toEqual(["обʼєкт", "обʼєкт", "обʼєкт", "обʼєкт"]);
    // Latin words stay split at an apostrophe (the possessive), and joiners between emoji join no word.
    expect(terms("Einstein's don’t")).toEqual(["einstein", "s", "don", "t"]);
    expect(terms("a \u{1f468}\u200d\u{1f469} b\u200d")).toEqual(["a", "b"]);
  });
});

describe("one word in every form a reader types it (D120)", () => {
  test("Marathi written with a zero-width joiner inside a word: found as typed without it, highlighted whole", async () => {
    const tome = await mr();
    // The dump writes Ratnagiri रत्‍नागिरी, a joiner after the virama; a reader types रत्नागिरी (before: no hit at all).
    const plainly = tome.search("रत्नागिरी");
    expect(plainly.hits[0]!.page.title).toBe("रत्\u200dनागिरी");
    expect(plainly.hits[0]!.formatted.text).toContain("<em>रत्\u200dनागिरी</em>");
    const asWritten = tome.search("रत्\u200dनागिरी");
    expect(asWritten.hits.map((h) => h.page.title)).toEqual(plainly.hits.map((h) => h.page.title));
    // The word being typed, up to a joiner, is a prefix as any other last word (before: रत्‍ found nothing).
    expect(tome.search("रत्\u200d").hits.map((h) => h.page.title)).toEqual(
      tome.search("रत्").hits.map((h) => h.page.title),
    );
    expect(tome.search("रत्\u200d").hits[0]!.page.title).toBe("रत्\u200dनागिरी");
    // No <em> closes inside the word, between the virama and the joiner (before: <em>भारतरत्</em>‍न).
    for (const h of tome.search("भारतरत्न", { limit: 20 }).hits) expect(h.formatted.text).not.toMatch(/<\/em>\u200d/);
  });

  test("a Ukrainian word with an apostrophe, typed ' ’ or ʼ: the same hits, the whole word highlighted", async () => {
    const tome = await uk();
    const [straight, typographic, letter] = ["об'єкт", "об’єкт", "обʼєкт"].map((q) => tome.search(q, { limit: 20 }));
    expect(straight!.hits.length).toBeGreaterThan(10);
    // Before: ʼ (U+02BC, a letter) found nothing; ' and ’ split the word into об and єкт.
    for (const other of [typographic!, letter!])
      expect(other.hits.map((h) => h.page.title)).toEqual(straight!.hits.map((h) => h.page.title));
    for (const h of straight!.hits)
      for (const [, word] of h.formatted.text.matchAll(/<em>(.*?)<\/em>/g)) expect(fold(word!)).toStartWith("обʼєкт");
  });

  test("Vietnamese typed without accents finds the words with đ: Dien Bien Phu is Điện Biên Phủ", async () => {
    const tome = await vi();
    const accented = tome.search("Điện Biên Phủ", { limit: 5 });
    expect(accented.hits.length).toBe(5);
    // Before: the first five were pages saying phủ, biến, diện, none holding the name.
    const typed = tome.search("Dien Bien Phu", { limit: 5 });
    expect(typed.hits.map((h) => h.page.title)).toEqual(accented.hits.map((h) => h.page.title));
    expect(typed.hits[0]!.formatted.text).toContain("<em>Điện</em> <em>Biên</em> <em>Phủ</em>");
  });

  test("ß typed ss, æ typed ae, œ typed oe: the same word (Anschluß is the page Anschluss), highlighted as written", async () => {
    const titles = (tome: Engine, q: string) => tome.search(q, { limit: 20 }).hits.map((h) => h.page.title);
    const english = await en();
    // The English sample writes Anschluss and Dollfuss, and Austria's page Anschluß and Dollfuß once each. Before:
    // Anschluß did not find the page Anschluss, and Dollfuß found Austria alone.
    expect(titles(english, "Anschluß")[0]).toBe("Anschluss");
    expect(titles(english, "Dollfuß")).toEqual(titles(english, "Dollfuss"));
    const austria = english.search("Dollfuss Engelbert chancellor", { pageId: 576, limit: 50 }).hits;
    expect(austria.some((h) => h.formatted.text.includes("<em>Dollfuß</em>"))).toBe(true);
    // The Vietnamese dump writes Encyclopædia 12 times and Encyclopaedia 11; SQuAD's articles, Contrecœur.
    const vietnamese = await vi();
    expect(titles(vietnamese, "Encyclopaedia")).toEqual(titles(vietnamese, "Encyclopædia"));
    expect(titles(vietnamese, "Encyclopaedia").length).toBeGreaterThan(3);
    const contrecoeur = (await squad()).search("Contrecoeur").hits;
    expect(contrecoeur[0]!.formatted.text).toContain("<em>Contrecœur</em>");
  });

  test("a Vietnamese word is a function word as the list writes it: Nội is not nói, Nam not năm (D197)", async () => {
    const tome = await vi();
    // Folded, Nội (of Hà Nội) is nói (to say) and Nam is năm (year), function words of the list: beside Hà and Việt they
    // were optional and never highlighted (before: <em>Hà</em> Nội, <em>Việt</em> Nam).
    const hanoi = tome.search("Hà Nội", { limit: 5 }).hits;
    expect(hanoi[0]!.formatted.title).toBe("<em>Hà</em> <em>Nội</em>");
    for (const h of hanoi) expect(h.formatted.text).toContain("<em>Hà</em> <em>Nội</em>");
    for (const h of tome.search("Việt Nam", { limit: 5 }).hits)
      expect(h.formatted.text).toContain("<em>Việt</em> <em>Nam</em>");
    // A word written twice, once as a function word (năm, year) and once not (Nam): not a function word. Before, the
    // first written form stood for both: Nam was optional and never highlighted.
    const year = tome.search("năm 1945 Việt Nam", { limit: 5 }).hits;
    expect(year.length).toBeGreaterThan(0);
    for (const h of year) expect(h.formatted.text).toContain("<em>Nam</em>");
    // The list's own words, as written, are still function words: của is highlighted only alone.
    const history = tome.search("lịch sử của Hà Nội", { limit: 5 }).hits;
    expect(history[0]!.formatted.text).toContain("<em>Hà</em> <em>Nội</em>");
    for (const h of history) expect(h.formatted.text).not.toMatch(/<em>của<\/em>/i);
  });

  test("a Vietnamese query typed without marks reads the folded list; toà and tòa are one word (D197)", async () => {
    const tome = await vi();
    // Typed with no marks at all, the reader could not tell của from cua: cua, as the folded list holds it, is a
    // function word, not required, not highlighted beside other words (before: <em>của</em> in every hit).
    const plain = tome.search("lich su cua viet nam", { limit: 5 }).hits;
    expect(plain.length).toBeGreaterThan(0);
    for (const h of plain) expect(h.formatted.text).not.toMatch(/<em>của<\/em>/i);
    // The list writes toà with the tone on its a (the newer placement); tòa, with the older, is the same word.
    for (const q of ["tòa", "toà", "TÒA"]) expect(queryFunctionWords(parseQuery(q, "vi"), "vi")).toEqual([true]);
    expect(queryFunctionWords(parseQuery("tòa Hà Nội", "vi"), "vi")).toEqual([true, false, false]);
  });

  test("Greek typed in capitals: the last word's final Σ begins the words it is a prefix of (ΠΑΣ finds Πάσχα)", async () => {
    const tome = await el();
    const lower = tome.search("πασ", { limit: 50 });
    expect(lower.hits.some((h) => h.formatted.text.includes("<em>Πάσχα</em>"))).toBe(true);
    // Before: ΠΑΣ lowercased to πας, a word of 5 pages, the prefix of none.
    const capitals = tome.search("ΠΑΣ", { limit: 50 });
    expect(capitals.estimatedTotalHits).toBe(lower.estimatedTotalHits);
    expect(capitals.hits.map((h) => h.page.title)).toEqual(lower.hits.map((h) => h.page.title));
  });
});

describe("a result as console.log shows it (the README's RAG example)", () => {
  test("each hit's page shows who it is, not its table's columns", async () => {
    const tome = await squad();
    const shown = Bun.inspect(tome.search("Super Bowl", { limit: 5 }).hits);
    // The table it reads from is private (D151: what a hit's page serialises to), so not shown at all.
    expect(shown).not.toContain("PageTable");
    expect(shown).toContain('title: "Super Bowl 50"');
    expect(shown).toContain("pageId: 5000001");
    expect(shown).not.toContain("Uint32Array");
  });
});

describe("dedup and page_id (D7)", () => {
  test("one hit per page, and estimatedTotalHits counts pages", async () => {
    const tome = await en();
    const r = tome.search("albedo", { limit: 50 });
    const pages = r.hits.map((h) => h.page.pageId);
    expect(new Set(pages).size).toBe(pages.length);
    // Counted independently: pages with a chunk holding the word (or titled with it).
    const expected = tome.snapshot.pages
      .list()
      .filter(
        (p) => p.chunks.some((c) => terms(c.text).includes("albedo")) || terms(p.title).includes("albedo"),
      ).length;
    expect(r.estimatedTotalHits).toBe(expected);
    expect(r.hits.length).toBe(Math.min(50, expected));
  });

  test("with page_id, the matching chunks of that page, best first", async () => {
    const tome = await en();
    const albedo = tome.pageByTitle("Albedo")!;
    const r = tome.search("snow", { pageId: albedo.pageId, limit: 50 });
    const expected = albedo.chunks.filter(
      (c) => terms(c.text).includes("snow") || terms(albedo.sections[c.section]!.heading).includes("snow"),
    );
    expect(r.estimatedTotalHits).toBe(expected.length);
    expect(r.hits.every((h) => h.page.pageId === albedo.pageId)).toBe(true);
    expect(new Set(r.hits.map((h) => h.chunk)).size).toBe(r.hits.length);
    const scores = r.hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(tome.search("snow", { pageId: 999_999_999 }).hits).toEqual([]);
  });
});

describe("title priority and redirects (D8, D13)", () => {
  test("an exact title ranks first, whatever the case, accents or underscores", async () => {
    const tome = await en();
    for (const q of ["albedo", "ALBEDO", "Albédo"]) expect(tome.search(q).hits[0]!.page.title).toBe("Albedo");
    expect(tome.search("abraham_lincoln").hits[0]!.page.title).toBe("Abraham Lincoln");
  });

  test("pages whose title matches rank above pages that only mention the words", async () => {
    const tome = await en();
    const r = tome.search("academy award", { limit: 50 });
    // The last word is a prefix: "Academy Awards" matches "academy award".
    const titled = r.hits.map(
      (h) => terms(h.page.title).includes("academy") && terms(h.page.title).some((t) => t.startsWith("award")),
    );
    expect(titled[0]).toBe(true);
    const firstOther = titled.indexOf(false);
    expect(firstOther).toBeGreaterThan(0);
    expect(titled.slice(firstOther).includes(true)).toBe(false);
  });

  test("a redirect title finds its target first", async () => {
    const tome = await en();
    const redirects = tome.snapshot.redirects.filter(
      (r) => tome.pageByTitle(r.target) && !tome.pageByTitle(r.title)?.title.startsWith(r.title),
    );
    expect(redirects.length).toBeGreaterThan(20);
    for (const r of redirects.slice(0, 20)) {
      expect(tome.lucky(r.title)!.page.title).toBe(tome.pageByTitle(r.target)!.title);
      expect(tome.search(r.title).hits[0]!.page.title).toBe(tome.pageByTitle(r.target)!.title);
    }
  });

  test("a title copied with direction marks is still the title, as MediaWiki reads it (D179)", async () => {
    const tome = await en();
    const redirect = tome.snapshot.redirects.find((r) => r.title === "AtlasShrugged")!;
    expect(tome.pageByTitle(redirect.target)!.title).toBe("Atlas Shrugged");
    const typedTitles: [string, string][] = [
      ["AtlasShrugged", "Atlas Shrugged"],
      ["Albedo", "Albedo"],
    ];
    for (const [typed, title] of typedTitles) {
      // A left-to-right or right-to-left mark, an embedding or override and its end, an isolate and its end: an RTL
      // page's link or label copied brings them. The redirect was missed: lucky answered "List of Atlas Shrugged
      // characters", its best hit.
      for (const marked of [`${typed}\u200e`, `\u200f${typed}`, `\u202b${typed}\u202c`, `\u2068${typed}\u2069`]) {
        expect([marked, tome.lucky(marked)!.page.title, tome.lucky(marked)!.hit.chunk]).toEqual([marked, title, 0]);
        expect([marked, tome.pageByTitle(marked)?.title]).toEqual([marked, title]);
        expect([marked, tome.search(marked).hits[0]!.page.title]).toEqual([marked, title]);
      }
    }
  });

  test("lucky: exact title wins with chunk 0; else the best hit; nothing → undefined", async () => {
    const tome = await en();
    const exact = tome.lucky("Albedo")!;
    expect(exact.page.title).toBe("Albedo");
    expect(exact.hit.chunk).toBe(0);
    expect(exact.totalResults).toBe(tome.search("Albedo").estimatedTotalHits);
    const best = tome.lucky("reflectivity of snow and clouds")!;
    expect(best.page.pageId).toBe(tome.search("reflectivity of snow and clouds").hits[0]!.page.pageId);
    expect(tome.lucky("zzqxv qqqzzx")).toBeUndefined();
  });
});

describe("query semantics (D6)", () => {
  test("pages with every word come first; with none, fewer words still match", async () => {
    const tome = await en();
    const r = tome.search("albedo snow", { limit: 20 });
    const all = r.hits.map((h) => {
      const words = terms(`${chunkText(h)} ${h.page.title}`);
      return words.includes("albedo") && words.includes("snow");
    });
    expect(all[0]).toBe(true);
    expect(all.slice(all.indexOf(false)).includes(true)).toBe(false);
    const fewer = tome.search("albedo zzqxvnotaword");
    expect(fewer.hits[0]!.page.title).toBe("Albedo");
  });

  test("quoted phrases match as phrases", async () => {
    const tome = await squad();
    const r = tome.search('"alternating current"', { limit: 50 });
    expect(r.hits.length).toBeGreaterThan(0);
    for (const h of r.hits) expect(chunkText(h).toLowerCase()).toContain("alternating current");
    // A phrase no chunk holds is not required (D36): its words are searched as plain words.
    const reversed = tome.search('"current alternating"', { limit: 50 });
    expect(reversed.hits.some((h) => chunkText(h).toLowerCase().includes("current alternating"))).toBe(false);
    const plain = tome.search("current alternating", { limit: 50 });
    expect(reversed.hits.map((h) => [h.page.title, h.chunk])).toEqual(plain.hits.map((h) => [h.page.title, h.chunk]));
    expect(reversed.hits.length).toBeGreaterThan(r.hits.length);
    // Other words are optional as usual: a phrase with a word found nowhere still matches.
    const withMissing = tome.search('"alternating current" zzqxvnotaword', { limit: 50 });
    expect(withMissing.hits.length).toBe(r.hits.length);
    for (const h of withMissing.hits) expect(chunkText(h).toLowerCase()).toContain("alternating current");
  });

  test("a phrase the ranking finds is not looked for again; one it does not find is, then dropped (D121)", async () => {
    const tome = await squad();
    const checks = spyOn(tome.text, "sequenceCheck");
    try {
      // Its text and heading checks once each, for the ranking: no second reading to learn that it exists.
      expect(tome.search('"alternating current"').hits.length).toBeGreaterThan(0);
      expect(checks).toHaveBeenCalledTimes(2);
      checks.mockClear();
      // Found nowhere by the ranking: then looked for (D36) and, absent, dropped: its words searched plainly.
      const reversed = tome.search('"current alternating"');
      expect(checks).toHaveBeenCalledTimes(4);
      expect(reversed.hits.map((h) => h.page.title)).toEqual(
        tome.search("current alternating").hits.map((h) => h.page.title),
      );
    } finally {
      checks.mockRestore();
    }
  });

  test("a phrase written several times is one phrase: checked once, with the answer of writing it once", async () => {
    const tome = await squad();
    const checks = spyOn(tome.text, "sequenceCheck");
    try {
      // Copies of a phrase no chunk holds, in any case and quotes: each was checked for the ranking, then looked for
      // (4 checks each), so that 55 ran out of the search's time (100 ms) with no hit, where once it has many. Here 21,
      // as many as q's 500 characters hold (D172).
      const once = tome.search('"current alternating"', { budgetMs: 60_000 });
      checks.mockClear();
      const q = ['"current alternating"', "“Current ALTERNATING”", "«current alternating»"].join(" ").repeat(7);
      const repeated = tome.search(q, { budgetMs: 60_000 });
      expect(checks).toHaveBeenCalledTimes(4);
      expect(repeated.hits.map((h) => [h.page.title, h.chunk])).toEqual(once.hits.map((h) => [h.page.title, h.chunk]));
      expect(repeated.hits.length).toBeGreaterThan(0);
      checks.mockClear();
      tome.search('"alternating current" "Alternating  current"', { budgetMs: 60_000 });
      expect(checks).toHaveBeenCalledTimes(2);
    } finally {
      checks.mockRestore();
    }
  });

  test("the phrase test agrees with consecutive words, on real text of five scripts", async () => {
    const holds = (ws: string[], seq: string[]) => ws.some((_w, i) => seq.every((x, j) => ws[i + j] === x));
    let random = 42;
    const next = (n: number) => (random = (Math.imul(random, 1664525) + 1013904223) >>> 0) % n;
    let found = 0;
    let absent = 0;
    // English, Greek (final sigma), Japanese, Marathi, Vietnamese (stacked accents).
    const sources = [await engineFor({ dumps: [EN_2016] }), ...(await Promise.all([el(), ja(), mr(), vi()]))];
    for (const engine of sources) {
      const lang = engine.lang;
      const chunks = chunkTextsOf(engine)
        .map((text) => ({ text }))
        .filter((c) => terms(c.text, lang).length > 5);
      for (let k = 0; k < 60; k++) {
        const source = chunks[next(chunks.length)]!;
        const ws = terms(source.text, lang);
        const at = next(ws.length - 3);
        const phrase = ws.slice(at, at + 2 + next(2));
        // Its own text holds it; so may others, and a reversed phrase is mostly absent.
        for (const text of [chunks[next(chunks.length)]!.text, chunks[next(chunks.length)]!.text]) {
          for (const ph of [phrase, [...phrase].reverse()]) {
            const expected = holds(terms(text, lang), ph);
            expect(phraseTest(ph, lang)(text)).toBe(expected);
            if (expected) found++;
            else absent++;
          }
        }
        expect(phraseTest(phrase, lang)(source.text)).toBe(true);
      }
    }
    expect(absent).toBeGreaterThan(100);
    expect(phraseTest(["cafe", "ecole"])("Un CAFÉ — École!")).toBe(true);
    expect(phraseTest(["cafe", "ecole"])("cafeteria ecole")).toBe(false);
    expect(phraseTest(["cafe", "ecole"])("cafe decole")).toBe(false);
    // Unspaced script beside the words is split off as words of its own.
    for (const text of [
      "東京cafe école",
      "cafe école東京",
      "東京abc cafe école",
      "abc東京cafe école",
      "cafe東京école",
      "cafe école2",
    ]) {
      expect(phraseTest(["cafe", "ecole"], "ja")(text)).toBe(holds(terms(text, "ja"), ["cafe", "ecole"]));
    }
    expect(found + absent).toBeGreaterThan(0);
  });

  test("typos are tolerated in longer words", async () => {
    const tome = await en();
    expect(tome.search("albedp").hits[0]!.page.title).toBe("Albedo"); // 1 typo in 6 letters
    expect(tome.search("photovoltaik").hits.length).toBeGreaterThan(0); // 1 typo in 12 letters
    expect(tome.search("snov").hits.some((h) => h.page.title === "Albedo" && /\bsnow\b/i.test(chunkText(h)))).toBe(
      false,
    ); // 4 letters: no typo
  });

  test("the last word matches as a prefix, a trailing space or not (docs/search.md)", async () => {
    const tome = await en();
    const prefixed = tome.search("solar photovolt");
    expect(prefixed.hits.length).toBeGreaterThan(0);
    expect(prefixed.hits.some((h) => /photovoltaic/i.test(chunkText(h)))).toBe(true);
    // This said "unless followed by a space" and checked only that no text holds photovolt as a word, which none does.
    const found = (q: string) => tome.search(q, { limit: 50 }).hits.map((h) => [h.page.title, h.chunk]);
    expect(found("photovolt ")).toEqual(found("photovolt"));
    expect(found("photovolt").length).toBeGreaterThan(0);
  });

  test("an invisible mark typed after the last word keeps it a prefix, as a space does (UAX #29 WB4, D120)", async () => {
    const tome = await en();
    const found = (q: string) => tome.search(q).hits.map((h) => [h.page.title, h.chunk]);
    const prefixed = found("albe");
    expect(prefixed.length).toBe(10);
    // A mark such as "." ends the word being typed (docs/search.md): albe is then looked for whole, found nowhere.
    expect(found("albe.")).toEqual([]);
    // Left-to-right and right-to-left marks (an RTL keyboard or a copied label adds them), a word joiner, a zero-width
    // space, the end of a directional isolate: each ended the word as "." does: albe found nothing, where albedo, Alberta and 33 more pages begin with it.
    for (const mark of ["\u200e", "\u200f", "\u2060", "\u200b", "\u2069", "\u200f \u200e"])
      expect([mark, found(`albe${mark}`)]).toEqual([mark, prefixed]);
  });

  test("spaces before the words, which the library's 500 characters do not count, are read as none: a mark after the last word too", async () => {
    const tome = await en();
    const found = (q: string) => tome.search(q).hits.map((h) => [h.page.title, h.chunk]);
    // Their speed (a run of them was read quadratically: 40,000 took 1.8 s) is bench/search/query-parse.ts's.
    expect(found(`${" ".repeat(1_000)}albe\u200e`)).toEqual(found("albe"));
    expect(found("albe").length).toBeGreaterThan(0);
  });

  test("paging: offset/limit slice one ranking; past the end is empty", async () => {
    const tome = await en();
    const all = tome.search("the", { limit: 50 });
    const page2 = tome.search("the", { limit: 10, offset: 10 });
    expect(page2.hits.map((h) => h.page.pageId)).toEqual(all.hits.slice(10, 20).map((h) => h.page.pageId));
    expect(page2.estimatedTotalHits).toBe(all.estimatedTotalHits);
    const far = tome.search("the", { offset: 1_000_000 });
    expect(far.hits).toEqual([]);
    expect(far.estimatedTotalHits).toBe(all.estimatedTotalHits);
  });
});

describe("_formatted (D9)", () => {
  test("crop length in code points, word boundaries, and the marker", async () => {
    const tome = await en();
    for (const crop of [50, 120, 400, 2000]) {
      for (const h of tome.search("albedo of snow", { cropLength: crop, limit: 20 }).hits) {
        const text = chunkText(h);
        const shown = unescapeHtml(plain(h.formatted.text));
        const body = shown.replace(new RegExp(`^${CROP_MARKER}|${CROP_MARKER}$`, "g"), "");
        expect([...body].length).toBeLessThanOrEqual(crop);
        expect(text).toContain(body);
        expect(shown.startsWith(CROP_MARKER)).toBe(!text.startsWith(body));
        expect(shown.endsWith(CROP_MARKER)).toBe(!text.endsWith(body));
        if ([...text].length <= crop) expect(shown).toBe(text);
        // Cut at word boundaries: the text around the window is not a letter of the same word.
        const at = text.indexOf(body);
        if (at > 0) expect(/[\p{L}\p{N}]/u.test(text[at - 1]!) && /[\p{L}\p{N}]/u.test(body[0]!)).toBe(false);
      }
    }
  });

  test("the crop window sits on the matched words", async () => {
    const tome = await en();
    const h = tome.search("photovoltaic", { cropLength: 80 }).hits[0]!;
    expect(h.formatted.text).toContain("<em>");
  });

  test("highlight on wraps every matched word; off leaves no tags", async () => {
    const tome = await en();
    const on = tome.search("albedo snow", { limit: 5 });
    for (const h of on.hits) {
      // "snow", the last word, is also a prefix ("snowmelt").
      for (const m of h.formatted.text.matchAll(/<em>(.*?)<\/em>/g))
        expect(fold(m[1]!) === "albedo" || fold(m[1]!).startsWith("snow")).toBe(true);
      expect(h.formatted.title.includes("<em>")).toBe(terms(h.page.title).some((t) => t === "albedo" || t === "snow"));
    }
    const off = tome.search("albedo snow", { limit: 5, highlight: false });
    for (const h of off.hits) {
      expect(h.formatted.text).not.toContain("<em>");
      expect(h.formatted.title).toBe(h.page.title);
    }
  });

  test("everything else is HTML-escaped", async () => {
    const tome = await squad();
    const h = tome
      .search("Tesla Electric Light Manufacturing", { cropLength: 2000 })
      .hits.find((x) => chunkText(x).includes("&"))!;
    expect(h).toBeDefined();
    const stripped = plain(h.formatted.text);
    expect(stripped).not.toMatch(/[<>]/);
    expect(stripped).not.toMatch(/&(?!amp;|lt;|gt;)/);
    expect(stripped).toContain("&amp;");
  });
});

describe("Japanese", () => {
  test("words are found inside unspaced text and highlighted", async () => {
    const tome = await ja();
    const r = tome.search("東京");
    expect(r.hits.length).toBeGreaterThan(3);
    expect(r.hits[0]!.formatted.text).toContain("<em>東京</em>");
    // An exact Japanese title ranks first (the dump's own titles, e.g. 北海道).
    const titled = tome.snapshot.pages
      .list()
      .filter((p) => p.chunks.length && /^[\p{Script=Han}]+$/u.test(p.title))
      .slice(0, 10);
    expect(titled.length).toBeGreaterThan(3);
    for (const p of titled) expect(tome.search(p.title).hits[0]!.page.title).toBe(p.title);
  });
});

describe("the library API, as the README shows it (open(path).search(q, options))", () => {
  test("q longer than the HTTP API's 500 characters (spaces around it not counted, a surrogate pair one) is a RangeError naming the bound, before it is read (D172)", async () => {
    const tome = open(await snapshotFor({ dumps: [SQUAD] }));
    try {
      const phrase = `"${Array.from({ length: 200_000 }, (_, i) => `w${i}`).join(" ")}"`;
      const bound = (call: string, n: string) =>
        `RangeError: ${call}: q must be at most ${GUARDS.maxQueryChars} characters, spaces around it not counted, as the HTTP API's q (a longer one costs more to read than a search's time), not one of ${n}: cut it first (only its first ${GUARDS.maxWords} words are searched anyway).`;
      // The 200,000-word phrase was read (about 650 ms) and searched, past the 100 ms a search is given.
      expect({
        phrase: refused(() => tome.search(phrase)),
        lucky: refused(() => tome.lucky(phrase)),
        emoji: refused(() => tome.search("😀".repeat(501))),
        spaced: refused(() => tome.search(` ${"a".repeat(500)}\n`)),
        emoji500: refused(() => tome.search("😀".repeat(500))),
      }).toEqual({
        phrase: bound("search(q, options)", phrase.length.toLocaleString("en-US")),
        lucky: bound("lucky(q, budgetMs)", phrase.length.toLocaleString("en-US")),
        emoji: bound("search(q, options)", "501"),
        spaced: "answered",
        emoji500: "answered",
      });
      // The bound is the HTTP API's: one number (GUARDS.maxQueryChars, its schema's maxLength).
      expect(SearchQuery.properties.q.maxLength).toBe(GUARDS.maxQueryChars);
    } finally {
      tome.close();
    }
  });

  test("a hit serialises (JSON.stringify, structuredClone) to its fields and its page's identity, not the page's every chunk (D151)", async () => {
    const tome = open(await snapshotFor({ dumps: [SQUAD] }));
    try {
      const { hits } = tome.search("normans", { limit: 3 });
      const hit = hits[0]!;
      const { pageId, revId, title, timestamp, tsUnix } = hit.page;
      const { chunk, score, rankingScore, text, section, formatted } = hit;
      const fields = {
        page: { pageId, revId, title, timestamp, tsUnix },
        chunk,
        score,
        rankingScore,
        text,
        section,
        formatted,
      };
      // The page's chunks are many (a RAG program logging its hits wrote the whole page with each).
      expect(hit.page.chunks.length).toBeGreaterThan(3);
      expect(JSON.parse(JSON.stringify(hit))).toEqual(fields);
      // It threw (DataCloneError): the page held its table, whose functions cannot be cloned.
      expect(structuredClone(hit) as unknown).toEqual(fields);
      expect(JSON.parse(JSON.stringify(tome.lucky("Normans")!.page))).toEqual(fields.page);
      // Read on the hit, its page is whole: its sections and chunks are read when asked for.
      expect(hit.page.chunks[chunk]!.text).toBe(text);
    } finally {
      tome.close();
    }
  });

  test.if(process.platform === "linux")(
    "engines opened and never closed, past what the process may map, are a SnapshotError saying to close() them, where it was a plain Error ('(errno 12)') or taken for damage (D151)",
    async () => {
      const path = await snapshotFor({ dumps: [SQUAD] });
      // In a process of its own, whose address space (prlimit --as, on itself once started) has room for about 40
      // engines' mappings besides 256 MB for its heap: the mapping refused as at vm.max_map_count's limit (about 1,400
      // engines, each mapping its sections), without using up the machine's. It says, then exits at once.
      const script = `import { open } from ${JSON.stringify(join(ROOT, "src/search/index.ts"))};
        import { readFileSync, statSync, writeSync } from "node:fs";
        const path = ${JSON.stringify(path)};
        const vm = Number(/VmSize:\\s+(\\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))[1]) * 1024;
        const limit = vm + 256 * 2 ** 20 + 40 * statSync(path).size;
        if (Bun.spawnSync(["prlimit", "--pid=" + process.pid, "--as=" + limit]).exitCode !== 0) process.exit(3);
        const kept = [];
        try {
          for (let i = 0; i < 1000; i++) kept.push(open(path));
          writeSync(1, "opened 1000");
        } catch (e) {
          writeSync(1, (kept.length >= 10) + " " + e.name + ": " + e.message.replace(path, "<path>"));
        }
        process.exit(0);`;
      const opening = Bun.spawnSync(["bun", "-e", script], { timeout: 60_000, stderr: "pipe" });
      expect({ said: opening.stdout.toString(), exitCode: opening.exitCode }).toEqual({
        said: "true SnapshotError: <path> cannot be mapped: this process has no room for another mapping (errno 12, ENOMEM: it holds as many as /proc/sys/vm/max_map_count allows, or its address space, ulimit -v, is full). An engine holds its file's mappings until it is closed: close() each engine once done with it, or open() a snapshot once and reuse its engine.",
        exitCode: 0,
      });
    },
  );

  test("a bad argument is a TypeError or RangeError naming it, never a crash inside or a silently wrong answer", async () => {
    const tome = open(await snapshotFor({ dumps: [SQUAD] }));
    const all = tome.search("the", { limit: 50 });
    expect(all.hits.length).toBeGreaterThan(3);
    const cases: [unknown, unknown, string][] = [
      [undefined, undefined, "TypeError: search(q, options): q must be a string, not undefined."],
      [42, {}, "TypeError: search(q, options): q must be a string, not 42."],
      ["the", null, "TypeError: search(q, options): options must be an object, not null."],
      ["the", "limit=5", 'TypeError: search(q, options): options must be an object, not "limit=5".'],
      // Crashed inside the ranking ("Cannot destructure property 'best' from null or undefined value").
      ["the", { offset: -5 }, "RangeError: search(q, options): offset must be an integer of 0 or more, not -5."],
      // 2 + "2" is "22": 20 hits.
      [
        "the",
        { offset: "2", limit: 2 },
        'RangeError: search(q, options): offset must be an integer of 0 or more, not "2".',
      ],
      // All hits but the last; none; every one.
      ["the", { limit: -1 }, "RangeError: search(q, options): limit must be an integer of 1 or more, not -1."],
      ["the", { limit: Number.NaN }, "RangeError: search(q, options): limit must be an integer of 1 or more, not NaN."],
      ["the", { limit: 2.5 }, "RangeError: search(q, options): limit must be an integer of 1 or more, not 2.5."],
      [
        "the",
        { pageId: "5000001" },
        'RangeError: search(q, options): pageId must be a page id, an integer of 0 or more, not "5000001".',
      ],
      [
        "the",
        { cropLength: -1 },
        "RangeError: search(q, options): cropLength must be an integer of 1 or more (characters), not -1.",
      ],
      ["the", { highlight: "false" }, 'RangeError: search(q, options): highlight must be true or false, not "false".'],
      [
        "the",
        { budgetMs: Number.NaN },
        "RangeError: search(q, options): budgetMs must be a number of milliseconds, 0 or more, not NaN.",
      ],
      // The HTTP API's names were ignored.
      [
        "the",
        { crop_length: 50 },
        "TypeError: search(q, options): crop_length is no option (did you mean cropLength?); the options are limit, offset, pageId, cropLength, highlight, budgetMs, pruning.",
      ],
      [
        "the",
        { page_id: 1 },
        "TypeError: search(q, options): page_id is no option (did you mean pageId?); the options are limit, offset, pageId, cropLength, highlight, budgetMs, pruning.",
      ],
      [
        "the",
        JSON.parse('{"__proto__": {"limit": 1}}'),
        "TypeError: search(q, options): __proto__ is no option; the options are limit, offset, pageId, cropLength, highlight, budgetMs, pruning.",
      ],
      // Said "not ." and "not [object Object]", or searched as if not given.
      ["the", [], "TypeError: search(q, options): options must be an object, not []."],
      [
        "the",
        { pruning: { form: 5 } },
        "RangeError: search(q, options): pruning must be false or { from: an integer of 0 or more }, not { form: 5 }.",
      ],
      [
        "the",
        { pruning: { from: Number.POSITIVE_INFINITY } },
        "RangeError: search(q, options): pruning must be false or { from: an integer of 0 or more }, not { from: Infinity }.",
      ],
      [new String("the"), {}, 'TypeError: search(q, options): q must be a string, not a String object ("the").'],
      // Inherited options are used as own ones are: checked alike.
      [
        "the",
        Object.create({ limit: -1 }),
        "RangeError: search(q, options): limit must be an integer of 1 or more, not -1.",
      ],
      [
        "the",
        Object.create({ offset: "2" }),
        'RangeError: search(q, options): offset must be an integer of 0 or more, not "2".',
      ],
    ];
    for (const [q, options, said] of cases)
      expect({ q, options, said: refused(() => tome.search(q as string, options as object)) }).toEqual({
        q,
        options,
        said,
      });
    expect(refused(() => tome.lucky(undefined as unknown as string))).toBe(
      "TypeError: lucky(q, budgetMs): q must be a string, not undefined.",
    );
    // What is right is answered as before: options left undefined are not given, and a program may ask past the HTTP bounds.
    expect(tome.search("the", { limit: 2, offset: 1, pageId: undefined }).hits.map((h) => h.page.pageId)).toEqual(
      all.hits.slice(1, 3).map((h) => h.page.pageId),
    );
    expect(tome.search("the", { limit: 1000 }).hits.length).toBeGreaterThanOrEqual(all.hits.length);
    expect(tome.search("the", Object.create({ limit: 1 })).hits.length).toBe(1);
    expect(tome.search("the").hits.length).toBe(10);
  });

  test("changes(), page(), pageByTitle() and watch() too: a page id as text, a date's text, a negative offset, a fractional limit or a watcher that is no function is refused, naming it", async () => {
    const tome = open(await snapshotFor({ dumps: [SQUAD] }));
    const every = tome.changes(0, 0, 1000);
    // Compared as NaN: every page, whatever the date.
    expect(refused(() => tome.changes("2099-01-01T00:00:00Z" as unknown as number, 0, 10))).toBe(
      'RangeError: changes(since, offset, limit): since must be Unix seconds, an integer of 0 or more, not "2099-01-01T00:00:00Z".',
    );
    // Threw "Invalid Date" from inside.
    expect(refused(() => tome.changes(0, -1, 3))).toBe(
      "RangeError: changes(since, offset, limit): offset must be an integer of 0 or more, not -1.",
    );
    // Said "not 0".
    expect(refused(() => tome.changes(0n as unknown as number, 0, 10))).toBe(
      "RangeError: changes(since, offset, limit): since must be Unix seconds, an integer of 0 or more, not 0n.",
    );
    // Answered 3 pages.
    expect(refused(() => tome.changes(0, 0, 2.5))).toBe(
      "RangeError: changes(since, offset, limit): limit must be an integer of 1 or more, not 2.5.",
    );
    expect(refused(() => tome.pageByTitle(undefined as unknown as string))).toBe(
      "TypeError: pageByTitle(title): title must be a string, not undefined.",
    );
    // Each was no page (undefined), as if the snapshot had none by that id.
    for (const [pageId, shown] of [
      ["39", '"39"'],
      [-1, "-1"],
      [2.5, "2.5"],
      [Number.NaN, "NaN"],
      [undefined, "undefined"],
    ])
      expect(refused(() => tome.page(pageId as number))).toBe(
        `RangeError: page(pageId): pageId must be a page id, an integer of 0 or more, not ${shown}.`,
      );
    // Taken, then every later search threw "watcher is not a function" from inside.
    expect(refused(() => tome.watch(undefined as unknown as () => void))).toBe(
      "TypeError: watch(watcher): watcher must be a function, not undefined.",
    );
    expect(tome.search("the", { limit: 1 }).hits.length).toBe(1);
    expect(refused(() => tome.pageByTitle(Object.create(null)))).toBe(
      "TypeError: pageByTitle(title): title must be a string, not [Object: null prototype] {}.",
    );
    const first = every.pages[0]!.pageId;
    expect(tome.page(first)?.pageId).toBe(first);
    expect(tome.changes(0, 1, 2).pages).toEqual(every.pages.slice(1, 3));
  });

  test("close() lets the file go: every later call says the engine is closed, where one let go answered as if empty", async () => {
    const path = await snapshotFor({ dumps: [SQUAD] });
    const tome = open(path);
    const hits = tome.search("the", { limit: 3 }).hits.map((h) => h.page.pageId);
    expect(hits.length).toBe(3);
    const kept = tome.search("the", { limit: 1 });
    const keptText = kept.hits[0]!.text;
    const page = tome.page(hits[0]!)!;
    tome.close();
    tome.close();
    const closed = `SnapshotError: ${path} is closed: open() it again to search it.`;
    expect(refused(() => tome.search("the"))).toEqual(closed);
    expect(refused(() => tome.lucky("the"))).toEqual(closed);
    expect(refused(() => tome.changes(0, 0, 2))).toEqual(closed);
    expect(refused(() => tome.page(hits[0]!))).toEqual(closed);
    expect(refused(() => tome.pageByTitle("x"))).toEqual(closed);
    // Made orders from zeros.
    expect(refused(() => tome.pageOrders(1000, 10))).toEqual(closed);
    // What it answered before reads the file no more: a hit's page answered no chunks, a page's chunk a TypeError from inside.
    expect(refused(() => kept.hits[0]!.page.chunks)).toEqual(closed);
    expect(refused(() => page.chunks[0]!.text)).toEqual(closed);
    expect(kept.hits[0]!.text).toBe(keptText);
    expect(
      open(path)
        .search("the", { limit: 3 })
        .hits.map((h) => h.page.pageId),
    ).toEqual(hits);
  });
});

describe("open(path), as a program calls it", () => {
  /** This process's open descriptors, and its mappings of the file at `path`. */
  const held = (path: string) => ({
    descriptors: readdirSync("/proc/self/fd").length,
    maps: readFileSync("/proc/self/maps", "utf8")
      .split("\n")
      .filter((line) => line.endsWith(path)).length,
  });

  test.if(process.platform === "linux")(
    "anything but a path is a TypeError; a damaged header or index is a SnapshotError saying what to do, and nothing of the file is held after",
    async () => {
      // Said "undefined cannot be read (ERR_INVALID_ARG_TYPE)", a SnapshotError.
      for (const [path, shown] of [
        [undefined, "undefined"],
        [null, "null"],
        [42, "42"],
        [{}, "{}"],
      ])
        expect(refused(() => open(path as string))).toBe(
          `TypeError: open(path): path must be a snapshot file's path, a string, not ${shown}.`,
        );
      // Said "snapshot not found: . Build one with …".
      expect(refused(() => open(""))).toBe("RangeError: open(path): path is empty: name a snapshot file (a .tome).");
      // Waited for a writer to the FIFO, forever: opened in a process of its own, killed if it waits, so that a
      // return of the wait fails this test instead of hanging the run.
      const fifo = join(tempDir(), "fifo.tome");
      Bun.spawnSync(["mkfifo", fifo]);
      const search = join(import.meta.dir, "../src/search");
      for (const path of [fifo, "/dev/null"]) {
        const opening = Bun.spawnSync(
          [
            "bun",
            "-e",
            `import { open } from ${JSON.stringify(search)};
            try { open(${JSON.stringify(path)}); console.log("answered"); } catch (e) { console.log(e.name + ": " + e.message); }`,
          ],
          { timeout: 30_000, stderr: "inherit" },
        );
        expect({ path, said: opening.stdout.toString().trim(), signal: opening.signalCode ?? null }).toEqual({
          path,
          said: `SnapshotError: ${path} is not a file (a FIFO or a device?): a snapshot is a .tome file, mapped to be read.`,
          signal: null,
        });
      }
      // Said "TypeError: The URL must be of scheme file", whose argument not said.
      for (const [url, why] of [
        ["http://example.com/en.tome", "The URL must be of scheme file"],
        ["file://example.com/en.tome", 'File URL host must be "localhost" or empty on linux'],
      ])
        expect(refused(() => open(new URL(url!)))).toBe(
          `TypeError: open(path): path must be a file: URL of a snapshot, not ${url} (${why}).`,
        );
      const whole = readFileSync(await snapshotFor({ dumps: [SQUAD] }));
      const path = join(tempDir(), "damaged.tome");
      // Said "is truncated: … bytes, expected 13021231110855195000".
      const header = Buffer.from(whole);
      header.fill(0xa5, 16, 32);
      writeFileSync(path, header);
      expect(refused(() => open(path))).toBe(
        `SnapshotError: ${path} is corrupt: its header does not say where its table of contents is. Rebuild it with \`bun run snapshot:build --dump <dump>\`.`,
      );
      // Said "SyntaxError: JSON Parse error", and held the file and its maps until a collection.
      writeFileSync(path, whole);
      const meta = openContainer(path).sections.find((s) => s.name === "index.text.meta")!;
      const index = Buffer.from(whole);
      index.fill(0xff, meta.offset, meta.offset + 8);
      writeFileSync(path, index);
      const before = held(path);
      const said = refused(() => open(path));
      expect(said).toStartWith(`SnapshotError: ${path} cannot be read (`);
      expect(said).toEndWith(
        `): is it damaged? \`bun run snapshot:verify ${path}\` checks every section against its hash; rebuild it with \`bun run snapshot:build --dump <dump>\` if one does not match.`,
      );
      expect(held(path)).toEqual(before);
    },
  );
});

describe("an engine opened as a library holds a read lease on its file, as the server does (D84, D151)", () => {
  /** This process's leases on the file at `path` (/proc/locks: "LEASE  ACTIVE    READ <pid> <dev>:<inode> 0 EOF"). */
  const leases = (path: string) => {
    const inode = statSync(path).ino;
    return readFileSync("/proc/locks", "utf8")
      .split("\n")
      .filter(
        (line) =>
          / LEASE +ACTIVE +READ /.test(line) && line.includes(` ${process.pid} `) && line.includes(`:${inode} `),
      ).length;
  };

  test.if(process.platform === "linux")(
    "a copy over the file waits until the engine lets go, and later calls say why, where reading the file cut short killed the process (SIGBUS)",
    async () => {
      const path = join(tempDir(), "copied.tome");
      copyFileSync(await snapshotFor({ dumps: [SQUAD] }), path);
      const tome = open(path);
      const other = open(path);
      expect(leases(path)).toBe(2);
      expect(tome.search("the", { limit: 1 }).hits.length).toBe(1);
      const mapped = () => readFileSync("/proc/self/maps", "utf8").includes(path);
      expect(mapped()).toBe(true);
      // Shorter than the snapshot: its pages past the new end were a SIGBUS on the next search (Bun: "panic: Bus error").
      expect(await Bun.spawn(["cp", SQUAD, path]).exited).toBe(0);
      expect(readFileSync(path).equals(readFileSync(SQUAD))).toBe(true);
      // Nothing of the file was mapped any more when cp's open went on.
      expect(mapped()).toBe(false);
      const gone = `SnapshotError: ${path} was opened for writing by another process (a copy over it?): this engine let go of it, as reading a file cut short would crash the process (D84). open() it again once it is whole; replace a snapshot by renaming a new file onto it.`;
      for (const engine of [tome, other]) {
        expect(refused(() => engine.search("the"))).toBe(gone);
        expect(refused(() => engine.lucky("the"))).toBe(gone);
        expect(refused(() => engine.page(1))).toBe(gone);
        expect(refused(() => engine.changes(0, 0, 1))).toBe(gone);
        engine.close();
      }
      expect(leases(path)).toBe(0);
    },
  );

  test.if(process.platform === "linux")(
    "a program searching in a loop that never turns the event loop lets go at its next call, where the kernel broke the lease after 45 s and the next search was killed (SIGBUS)",
    async () => {
      const path = join(tempDir(), "looped.tome");
      copyFileSync(await snapshotFor({ dumps: [SQUAD] }), path);
      // In a process of its own, which a read of the file cut short kills. The lease signal waits for a turn of the
      // event loop, which a batch of synchronous searches never gives: the loop stops at the first call that throws, or
      // after a minute (past /proc/sys/fs/lease-break-time, 45 s, the kernel lets the copy go on).
      const script = `import { open } from ${JSON.stringify(join(import.meta.dir, "../src/search"))};
        const tome = open(${JSON.stringify(path)});
        const cp = Bun.spawn(["cp", ${JSON.stringify(SQUAD)}, ${JSON.stringify(path)}]);
        let said = "searched for a minute";
        for (const until = performance.now() + 60_000; performance.now() < until; ) {
          try {
            tome.search("the", { limit: 3 }).hits.forEach((h) => h.page.chunks[h.chunk].text);
          } catch (e) {
            said = e.name + ": " + e.message;
            break;
          }
        }
        console.log(said);
        console.log("cp", await cp.exited);`;
      const looping = Bun.spawnSync(["bun", "-e", script], { timeout: 90_000, stderr: "pipe" });
      expect({ said: looping.stdout.toString().trim().split("\n"), signal: looping.signalCode ?? null }).toEqual({
        said: [
          `SnapshotError: ${path} was opened for writing by another process (a copy over it?): this engine let go of it, as reading a file cut short would crash the process (D84). open() it again once it is whole; replace a snapshot by renaming a new file onto it.`,
          "cp 0",
        ],
        signal: null,
      });
      expect(readFileSync(path).equals(readFileSync(SQUAD))).toBe(true);
    },
  );

  test.if(process.platform === "linux")(
    "close() lets the lease go; a file open for writing (being copied) is refused until it is closed",
    async () => {
      const path = join(tempDir(), "leased.tome");
      copyFileSync(await snapshotFor({ dumps: [SQUAD] }), path);
      const tome = open(path);
      expect(leases(path)).toBe(1);
      tome.close();
      expect(leases(path)).toBe(0);
      const writing = openSync(path, "r+");
      try {
        expect(refused(() => open(path))).toBe(
          `SnapshotError: ${path} is open for writing (being copied?): open() it once it is whole and closed.`,
        );
        expect(leases(path)).toBe(0);
      } finally {
        closeSync(writing);
      }
      expect(open(path).search("the", { limit: 1 }).hits.length).toBe(1);
    },
  );
});

describe("hostile queries never throw", () => {
  test("edge cases", async () => {
    const tome = await en();
    for (const q of [
      "",
      "   ",
      "...",
      '"',
      '""',
      '"unbalanced',
      "a\u0000b",
      "(((",
      "[a-z]+*",
      ".*",
      "\\",
      "🙂🙃",
      "שָׁלוֹם עולם",
      "مرحبا",
      "x".repeat(500),
      "a ".repeat(250),
      "AND OR NOT",
      "-",
      "*",
    ]) {
      const r = tome.search(q);
      expect(Array.isArray(r.hits)).toBe(true);
      expect(r.estimatedTotalHits).toBeGreaterThanOrEqual(0);
      tome.lucky(q);
    }
    expect(tome.search("...").hits).toEqual([]);
  });

  test("a word longer than any in the index (the 500 letters q may hold) answers nothing without a typo walk, which ran out of memory (at 100,000, now refused: D172)", async () => {
    const tome = open(await snapshotFor({ dumps: [SQUAD] }));
    const walks = [spyOn(Vocabulary.prototype, "typoTermsByRows"), spyOn(Vocabulary.prototype, "typoTermsByMasks")];
    try {
      expect(tome.search("a".repeat(500)).hits).toEqual([]);
      expect(tome.lucky("x".repeat(500))).toBeUndefined();
      expect(walks.map((w) => w.mock.calls.length)).toEqual([0, 0]);
      // A word the walk is taken for, so that the spies are seen to count.
      tome.search("einstien");
      expect(walks[0]!.mock.calls.length + walks[1]!.mock.calls.length).toBeGreaterThan(0);
    } finally {
      for (const w of walks) w.mockRestore();
      tome.close();
    }
  });

  test("fuzz: 2,000 random queries", async () => {
    const tome = await en();
    const alphabet = [
      '"',
      " ",
      "a",
      "e",
      "s",
      "t",
      "albedo",
      "\u0000",
      "(",
      ")",
      "*",
      "?",
      "é",
      "東",
      "🙂",
      "\u202e",
      "_",
      "-",
      "\\",
      "|",
      "'",
      "[",
      "]",
      "{",
    ];
    let seed = 42;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
    for (let i = 0; i < 2000; i++) {
      let q = "";
      for (let j = rand(30); j > 0; j--) q += alphabet[rand(alphabet.length)];
      const r = tome.search(q, {
        limit: 1 + rand(50),
        offset: rand(3),
        cropLength: 50 + rand(1950),
        highlight: rand(2) === 0,
      });
      for (const h of r.hits) expect(typeof h.formatted.text).toBe("string");
    }
  });
});

describe("a shard scores as MiniSearch does", () => {
  test("same documents and scores as MiniSearch's own index over the same chunks, for single words and AND/OR", async () => {
    const source = await ingested({ dumps: [SQUAD] });
    const docs = source.articles.flatMap((a) =>
      a.chunks.map((c) => ({ text: c.text, section: a.sections[c.section]?.heading ?? "", title: a.title })),
    );
    const options = textShardOptions("en");
    const shard = new Shard(
      buildShard(docs.length, (i) => docs[i]!, options),
      TEXT_BOOSTS,
    );
    const boost: Record<string, number> = Object.fromEntries(TEXT_FIELDS.map((f, i) => [f, TEXT_BOOSTS[i]!]));
    const mini = new MiniSearch({
      fields: TEXT_FIELDS,
      tokenize: (t) => terms(t, "en"),
      processTerm: indexKey,
      searchOptions: { boost },
    });
    mini.addAll(docs.map((d, id) => ({ id, ...d })));
    let compared = 0;
    for (const q of ["the", "nfl", "super bowl", "oxygen water", "warsaw university"]) {
      const ws = terms(q, "en");
      for (const combineWith of ["AND", "OR"] as const) {
        const expected = new Map(
          mini.search(q, { combineWith, tokenize: (t) => terms(t, "en") }).map((r) => [r.id as number, r.score]),
        );
        const m = shard.match(ws.map((w) => ({ key: indexKey(w), prefix: false, fuzzy: 0 })));
        const got = new Map<number, number>();
        for (let i = 0; i < m.count; i++)
          if (combineWith === "OR" || m.masks[i] === 2 ** ws.length - 1) got.set(m.docs[i]!, m.scores[i]!);
        expect(got.size).toBe(expected.size);
        expect(expected.size).toBeGreaterThan(0);
        for (const [doc, score] of expected) expect(Math.abs(got.get(doc)! - score) / score).toBeLessThan(1e-5);
        compared += expected.size;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  test("match() within documents [from, to) gives the whole match's documents in that range, with the same scores", async () => {
    const source = await ingested({ dumps: [SQUAD] });
    const docs = source.articles.flatMap((a) =>
      a.chunks.map((c) => ({ text: c.text, section: a.sections[c.section]?.heading ?? "", title: a.title })),
    );
    const shard = new Shard(
      buildShard(docs.length, (i) => docs[i]!, textShardOptions("en")),
      TEXT_BOOSTS,
      { matchWindow: 64 },
    );
    let compared = 0;
    for (const q of ["the", "super bowl champions", "oxygen"]) {
      const words = terms(q, "en").map((w) => ({ key: indexKey(w), prefix: false, fuzzy: 0 }));
      const whole = shard.match(words);
      const sums = new Map<number, number>();
      for (let i = 0; i < whole.count; i++) sums.set(whole.docs[i]!, whole.scores[i]!);
      // Ranges that start and end inside postings blocks, and cross windows.
      for (const [from, to] of [
        [1, 130],
        [129, 700],
        [500, docs.length],
      ]) {
        const part = shard.match(words, { from, to });
        const expected = [...sums.keys()].filter((d) => d >= from! && d < to!).sort((a, b) => a - b);
        const got = Array.from(part.docs.subarray(0, part.count)).sort((a, b) => a - b);
        expect(got).toEqual(expected);
        expect(part.postings).toBeGreaterThanOrEqual(part.count);
        for (let i = 0; i < part.count; i++) expect(part.scores[i]).toBe(sums.get(part.docs[i]!)!);
        compared += part.count;
      }
    }
    expect(compared).toBeGreaterThan(500);
  });

  test("match() window by window sums the same numbers as list after list (several words, prefixes, typos)", async () => {
    const source = await ingested({ dumps: [SQUAD] });
    const docs = source.articles.flatMap((a) =>
      a.chunks.map((c) => ({ text: c.text, section: a.sections[c.section]?.heading ?? "", title: a.title })),
    );
    const data = buildShard(docs.length, (i) => docs[i]!, textShardOptions("en"));
    const windowed = new Shard(data, TEXT_BOOSTS, { matchWindow: 64 });
    const whole = new Shard(data, TEXT_BOOSTS, { matchWindow: Infinity });
    let compared = 0;
    for (const q of ["the nfl", "super bowl champions", "oxygen water carbon", "warsaw university"]) {
      for (const spec of [
        { prefix: false, fuzzy: 0 },
        { prefix: true, fuzzy: 0 },
        { prefix: false, fuzzy: 1 },
      ]) {
        const words = terms(q, "en").map((w) => ({ key: indexKey(w), ...spec }));
        const a = whole.match(words);
        const b = windowed.match(words);
        const sums = new Map<number, [number, number]>();
        for (let i = 0; i < a.count; i++) sums.set(a.docs[i]!, [a.scores[i]!, a.masks[i]!]);
        expect(b.count).toBe(a.count);
        expect(b.postings).toBe(a.postings);
        for (let i = 0; i < b.count; i++) expect([b.scores[i]!, b.masks[i]!]).toEqual(sums.get(b.docs[i]!)!);
        // Window by window, the documents come in ascending windows.
        for (let i = 1; i < b.count; i++)
          expect(Math.floor(b.docs[i]! / 64)).toBeGreaterThanOrEqual(Math.floor(b.docs[i - 1]! / 64));
        compared += b.count;
      }
    }
    expect(compared).toBeGreaterThan(2 * docs.length);
  });
});

/** A key's word's first letter (a non-ASCII word's key starts with two bucket characters). */
const firstLetter = (key: string) => String.fromCodePoint(termOfKey(key).codePointAt(0) ?? 0);

describe("the vocabulary", () => {
  test("answers as MiniSearch's own SearchableMap built key by key (its fuzzy matches among the typo neighbours)", async () => {
    const texts = chunkTextsOf(await el()); // Greek, with Latin words
    const all = [...new Set(texts.flatMap((text) => terms(text, "el")).map(indexKey))].sort();
    const keys = all.filter((_k, i) => i % 4 === 0); // a quarter: the key-by-key tree is the slow one
    expect(keys.length).toBeGreaterThan(5000);
    const fast = new Vocabulary(vocabularyOf(keys));
    const slow = new SearchableMap<number>();
    for (const [i, k] of keys.entries()) slow.set(k, i);
    expect(fast.size).toBe(keys.length);
    for (let i = 0; i < keys.length; i += 101) {
      const k = keys[i]!;
      expect(fast.get(k)).toBe(i);
      expect([...fast.atPrefix(k.slice(0, 3))].sort()).toEqual([...slow.atPrefix(k.slice(0, 3))].sort());
      // SearchableMap counts Levenshtein edits; typoNeighbours also counts a swap as one, and
      // keeps Meilisearch's first-letter rule (D98): with one typo, only keys of k's first letter.
      const typos = new Map(fast.typoNeighbours(k, 1).map(([key, , d]) => [key, d]));
      for (const [key, [, d]] of slow.fuzzyGet(k, 1))
        expect([k, key, typos.get(key)]).toEqual([k, key, !k || firstLetter(key) === firstLetter(k) ? d : undefined]);
    }
    expect(fast.get("zzqxv")).toBeUndefined();
  });
});

describe("pages without text", () => {
  test("a page whose content was all dropped never breaks search or lucky", async () => {
    const tome = await engineFor({ dumps: [TRUNCATED_XZ[4]!], allowTruncated: true }); // mrwiki: infobox-only stubs
    const empty = tome.snapshot.pages.list().filter((p) => !p.chunks.length);
    expect(empty.length).toBeGreaterThan(100);
    for (const p of empty.slice(0, 50)) {
      const r = tome.search(p.title);
      for (const h of r.hits) expect(h.page.chunks[h.chunk]).toBeDefined();
      const lucky = tome.lucky(p.title);
      if (lucky) expect(lucky.page.chunks.length).toBeGreaterThan(0);
    }
  });
});

describe("the garbage of searches", () => {
  test("a search long enough after the last collection collects the young generation, once", async () => {
    const tome = await squad();
    const gc = spyOn(Bun, "gc");
    // The engine's clock, held still but where the test moves it: a search slowed by a loaded machine cannot count as time passing.
    let clock = performance.now() + 1e6;
    const now = spyOn(performance, "now").mockImplementation(() => clock);
    try {
      tome.search("albedo");
      gc.mockClear();
      clock += 50;
      tome.search("albedo");
      expect(gc).not.toHaveBeenCalled();
      clock += 150;
      tome.search("albedo");
      tome.search("albedo");
      expect(gc.mock.calls).toEqual([[false]]);
    } finally {
      now.mockRestore();
      gc.mockRestore();
    }
  });
});
