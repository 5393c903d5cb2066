/**
 * The ranking rules, one small inline wiki each, with the exact order expected (as MiniSearch's
 * tests and Meilisearch's tests/typo.rs show theirs). Each wiki goes through the real pipeline
 * (test/helpers.ts: wikiOf) and is read only through Engine.search() and lucky(), so the tests hold for any
 * engine that ranks by the same rules. The real-dump suites (test/ranking.test.ts,
 * test/search.test.ts) stay the integration layer.
 *
 * The rules (docs/search.md; decisions D6–D9, D13, D36, D37, D43):
 *   1. an exact title or redirect first (D8, D13);
 *   2. then pages whose title holds every query word, or is made of query words holding at
 *      least half of the query's information (D36);
 *   3. within each group: chunks with every word (function words optional), then every word
 *      allowing typos, then fewer words;
 *   4. one hit per page, scored by its best chunk plus some of its next two (D7);
 *   5. BM25, raised where the words stand close; a page's hit is its closest passage (D43);
 *   6. a word's other forms (its stem's) count as the word, at a lower weight (D43);
 *   7. typos only in words the index lacks; the last word is a prefix (D6);
 *   8. quoted phrases must match when some chunk holds them (D37).
 */
import { describe, expect, test } from "bun:test";
import type { Engine, SearchOptions } from "../../src/search";
import stopwordsIso from "stopwords-iso/stopwords-iso.json";
import { DEFAULT_PARAMETERS, setScoreParameters, type ScoreParameters } from "../../src/search/ranking/parameters";
import { functionWords } from "../../src/search/stages/terms";
import { wikiOf, type InlinePage } from "../helpers";

/**
 * A search without its time budget (100 ms): a rule test wants the whole ranking, and the first
 * search of a process, on a machine busy with other tests, can take longer.
 */
const search = (tome: Engine, q: string, options: SearchOptions = {}) =>
  tome.search(q, { budgetMs: 60_000, ...options });
const titles = (tome: Engine, q: string) => search(tome, q).hits.map((h) => h.page.title);
/** An article: its title and wikitext (a lead paragraph, and sections where a rule needs them). */
const page = (title: string, text: string): InlinePage => ({ title, text });
/** The titles `q` finds with some score parameters set otherwise (the rule under test off), the defaults set back after. */
const titlesUnder = (tome: Engine, q: string, parameters: Partial<ScoreParameters>) => {
  setScoreParameters(parameters);
  try {
    return titles(tome, q);
  } finally {
    setScoreParameters(DEFAULT_PARAMETERS);
  }
};
const redirect = (title: string, target: string): InlinePage => ({ title, text: target, redirect: true });

describe("tiers: every word, then every word with typos, then fewer words", () => {
  const wiki = wikiOf([
    page(
      "Special relativity",
      "In physics, the theory of special relativity explains how space and time are linked. Relativity replaced the older ideas of absolute space and absolute time.",
    ),
    page(
      "Albert Einstein",
      "Albert Einstein was a German-born physicist. Einstein received the 1921 Nobel Prize in Physics for his work on the photoelectric effect.",
    ),
    page(
      "Ernst Mach",
      "Ernst Mach was an Austrian physicist and philosopher, known for his study of shock waves; the ratio of a speed to the speed of sound is named after him. He taught experimental physics at Prague and later at Vienna, where he also lectured on the history of science and on the psychology of the senses.\n\nHis criticism of absolute space and of Newton's bucket argument was read closely by the young Einstein. Historians still debate how far those ideas shaped general relativity.",
    ),
    page(
      "Mileva Marić",
      "Mileva Marić was a Serbian physicist. She studied at the Zurich Polytechnic, where she met Albert Einstein.",
    ),
  ]);

  test("only Ernst Mach's long page holds both words: it ranks above the pages saying one of them more", async () => {
    // The other three hold one word each: ordered by score.
    expect(titles(await wiki, "Einstein relativity")).toEqual([
      "Ernst Mach",
      "Special relativity",
      "Albert Einstein",
      "Mileva Marić",
    ]);
  });

  test("the last word as a prefix counts as every word: “Einst” is Einstein", async () => {
    const { hits } = search(await wiki, "relativity Einst");
    // "Special relativity" scores higher than Ernst Mach, but lacks a word.
    expect(hits.map((h) => h.page.title)).toEqual([
      "Ernst Mach",
      "Special relativity",
      "Albert Einstein",
      "Mileva Marić",
    ]);
    expect(hits[1]!.score).toBeGreaterThan(hits[0]!.score);
  });

  test("a misspelt word: every word with typos, then fewer words exactly, then fewer words with typos", async () => {
    // No page holds "Einstien": it is read as "Einstein" (one typo: two letters swapped).
    const { hits } = search(await wiki, "Einstien relativity");
    expect(hits.map((h) => h.page.title)).toEqual([
      "Ernst Mach",
      "Special relativity",
      "Albert Einstein",
      "Mileva Marić",
    ]);
    // "Special relativity" says "relativity" three times and scores higher, before coverage (D152) raises Ernst
    // Mach's passage holding both words: the tier decides.
    setScoreParameters({ pageCoverage: 0 });
    try {
      const [mach, special] = search(await wiki, "Einstien relativity").hits;
      expect(special!.score).toBeGreaterThan(mach!.score);
    } finally {
      setScoreParameters({ pageCoverage: DEFAULT_PARAMETERS.pageCoverage });
    }
  });
});

describe("one hit per page, scored by its best chunk and some of its next two (D7)", () => {
  const wiki = wikiOf([
    page("Deccan Traps", "The Deccan Traps are a large igneous province of flood basalt in west-central India."),
    page(
      "Siberian Traps",
      "The Siberian Traps are a large igneous province of flood basalt in the north of Siberia, in the Russian Federation.\n\n== Age ==\nThe basalt of the Siberian Traps erupted about 252 million years ago, at the end of the Permian period, over roughly two million years.",
    ),
  ]);

  test("a page with two chunks holding the word is one hit, and its second chunk lifts it", async () => {
    const tome = await wiki;
    const { hits, estimatedTotalHits } = search(tome, "basalt");
    expect(hits.map((h) => [h.page.title, h.chunk])).toEqual([
      ["Siberian Traps", 0],
      ["Deccan Traps", 0],
    ]);
    expect(estimatedTotalHits).toBe(2);
    // Alone, the longer Siberian lead scores below the Deccan one: the "Age" section's evidence decides.
    const lead = (title: string) => search(tome, "basalt", { pageId: tome.pageByTitle(title)!.pageId }).hits[0]!.score;
    expect(lead("Siberian Traps")).toBeLessThan(lead("Deccan Traps"));
  });

  test("within one page (page_id), every matching chunk is a hit, best first", async () => {
    const tome = await wiki;
    const { hits, estimatedTotalHits } = search(tome, "basalt", { pageId: tome.pageByTitle("Siberian Traps")!.pageId });
    expect(hits.map((h) => [h.page.title, h.chunk])).toEqual([
      ["Siberian Traps", 0],
      ["Siberian Traps", 1],
    ]);
    expect(estimatedTotalHits).toBe(2);
  });
});

describe("an exact title or redirect first (D8), and lucky's answer (D13)", () => {
  const wiki = wikiOf([
    page(
      "Solar System",
      "The Solar System has eight planets. Mercury is closest to the Sun; after Mercury come Venus, Earth and Mars. Mercury has no moon.",
    ),
    page(
      "Mercury (planet)",
      "Mercury is the smallest planet in the Solar System and the closest to the Sun. A year on Mercury lasts 88 days.",
    ),
    page(
      "Mercury (element)",
      "Mercury is a chemical element with the symbol Hg. Mercury is the only metal that is liquid at room temperature, and mercury thermometers have long used it.",
    ),
    page(
      "Mercury",
      "Mercury is the name of a planet, of a chemical element and of the Roman god of trade, merchants and travellers, who carried the messages of the other gods on winged sandals. The name was later given to an American programme of spaceflight, to a record label, to a newspaper, to a car made in Detroit and to several ships of the Royal Navy.",
    ),
    redirect("Quicksilver", "Mercury (element)"),
  ]);

  test("the page titled as the query comes first, then pages whose title holds it, then the rest", async () => {
    const { hits } = search(await wiki, "Mercury");
    expect(hits.map((h) => h.page.title)).toEqual(["Mercury", "Mercury (element)", "Mercury (planet)", "Solar System"]);
    // The long page "Mercury" says the word once, and scores below the pages about the element (three times) and the planet (twice).
    expect(hits[1]!.score).toBeGreaterThan(hits[0]!.score);
    expect(hits[2]!.score).toBeGreaterThan(hits[0]!.score);
  });

  test("a redirect's title counts as its target's (case- and accent-insensitive, _ for a space)", async () => {
    const tome = await wiki;
    expect(titles(tome, "quicksilver")[0]).toBe("Mercury (element)");
    expect(titles(tome, "QUICKSILVER")[0]).toBe("Mercury (element)");
    expect(titles(tome, "mercury_(element)")[0]).toBe("Mercury (element)");
  });

  test("lucky: the exact title or redirect, else the best hit's page; nothing matching, nothing", async () => {
    const tome = await wiki;
    expect(tome.lucky("Quicksilver")?.page.title).toBe("Mercury (element)");
    expect(tome.lucky("Quicksilver")?.hit.chunk).toBe(0);
    expect(tome.lucky("mercury")?.page.title).toBe("Mercury");
    expect(tome.lucky("liquid metal")?.page.title).toBe("Mercury (element)");
    expect(tome.lucky("tungsten")).toBeUndefined();
  });
});

describe("title matches: every query word, or query words holding half the query's information (D36)", () => {
  const wiki = wikiOf([
    page(
      "1883 eruption of Krakatoa",
      "The 1883 eruption of Krakatoa in the Dutch East Indies began in May and peaked on 27 August.",
    ),
    page("Krakatoa", "Krakatoa is a caldera in the Sunda Strait between Java and Sumatra."),
    page("Eruption", "An eruption is the release of lava, ash and gas from a volcano."),
    page(
      "Sunda Strait",
      "The Sunda Strait lies between Java and Sumatra. The Krakatoa eruption of 1883 sent tsunamis along the strait, and the eruption was heard in Australia.",
    ),
    page("Mount Vesuvius", "Mount Vesuvius is a volcano near Naples. Its eruption in 79 AD buried Pompeii."),
    page(
      "Mount St. Helens",
      "Mount St. Helens is a volcano in Washington. Its eruption in 1980 was the deadliest in the history of the United States.",
    ),
  ]);

  test("a title made of the query's rare word ranks as a title match; one of its common word does not", async () => {
    // "Krakatoa" is in fewer pages than "eruption": the title "Krakatoa" holds most of the query's information,
    // and ranks above "Sunda Strait" (which holds both words); "Eruption" holds less, and ranks below it,
    // though above the other pages holding only "eruption", whose titles lack it.
    const { hits } = search(await wiki, "Krakatoa eruption");
    expect(hits.map((h) => h.page.title)).toEqual([
      "1883 eruption of Krakatoa",
      "Krakatoa",
      "Sunda Strait",
      "Eruption",
      "Mount Vesuvius",
      "Mount St. Helens",
    ]);
    expect(hits[2]!.score).toBeGreaterThan(hits[1]!.score);
  });

  const countries = wikiOf([
    page("Anatolia", "Anatolia is a peninsula in Western Asia, between the Black Sea and the Mediterranean Sea."),
    page("Turkey", "Turkey is a country that lies mostly on the peninsula of Anatolia, with a small part in Europe."),
    page(
      "Byzantine Empire",
      "The Byzantine Empire ruled from Constantinople over much of what is now Greece and Anatolia.",
    ),
    page("Greece", "Greece is a country in southeastern Europe."),
    page("Armenia", "Armenia is a country in the Armenian Highlands of Western Asia."),
  ]);

  test("function words (what, is, in) hold none of the information, though “what” is rare in the text", async () => {
    // Anatolia holds half of what "country" and "Anatolia" say: a title match, above Turkey, which holds both.
    // Counted as information, the rare "what" (in Byzantine Empire) would leave Anatolia below Turkey.
    // The other three hold one of the two words: ordered by score.
    expect(titles(await countries, "What country is Anatolia in?")).toEqual([
      "Anatolia",
      "Turkey",
      "Byzantine Empire",
      "Greece",
      "Armenia",
    ]);
  });
});

describe("the last word is a prefix, unless the query ends in a mark or a quote (D6)", () => {
  const wiki = wikiOf([
    page("Photosynthesis", "Photosynthesis is the process by which green plants turn light into chemical energy."),
    page("Leaf", "A leaf is green: its cells hold chlorophyll, a green pigment."),
  ]);

  test('“photosynth” finds Photosynthesis; “photosynth?” and “"photosynth"” find nothing', async () => {
    const tome = await wiki;
    expect(titles(tome, "photosynth")).toEqual(["Photosynthesis"]);
    // A trailing space is trimmed (D6): still a prefix.
    expect(titles(tome, "photosynth ")).toEqual(["Photosynthesis"]);
    expect(titles(tome, "photosynth?")).toEqual([]);
    expect(titles(tome, '"photosynth"')).toEqual([]);
  });

  test("only the last word: “green photosynth” holds both words in Photosynthesis, “photosynth green” only “green”", async () => {
    const tome = await wiki;
    expect(titles(tome, "green photosynth")).toEqual(["Photosynthesis", "Leaf"]);
    expect(titles(tome, "photosynth green")).toEqual(["Leaf", "Photosynthesis"]);
  });
});

describe("a function word is whole, never a prefix (D79)", () => {
  const wiki = wikiOf([
    page("Theory", "A theory is a tested explanation of something in nature."),
    page("Hypothesis", "A hypothesis is a guess that the tests may disprove."),
  ]);

  test("“the” finds the page saying “the”, not the one saying “theory”; “theo” still finds “theory”", async () => {
    const tome = await wiki;
    expect(titles(tome, "the")).toEqual(["Hypothesis"]);
    expect(titles(tome, "theo")).toEqual(["Theory"]);
  });

  test("“explanation the” scores Theory as “explanation” does: “theory” adds nothing", async () => {
    const tome = await wiki;
    const [withThe] = search(tome, "explanation the").hits;
    const [alone] = search(tome, "explanation").hits;
    expect(withThe!.page.title).toBe("Theory");
    expect(withThe!.score).toBe(alone!.score);
  });
});

describe("typos: only in words the index lacks; one from 5 letters, two from 9", () => {
  const wiki = wikiOf([
    page("Prussia", "Prussia was a German state on the south coast of the Baltic Sea."),
    page("Russia", "Russia is a country spanning Eastern Europe and Northern Asia."),
    page("Mediterranean Sea", "The Mediterranean Sea is connected to the Atlantic Ocean by the Strait of Gibraltar."),
  ]);

  test("a word the index holds is not read as another (Prussia is one letter from Russia)", async () => {
    const tome = await wiki;
    expect(titles(tome, "Prussia")).toEqual(["Prussia"]);
    expect(titles(tome, "Russia")).toEqual(["Russia"]);
  });

  test("a word it lacks finds words one typo away, two adjacent letters swapped counting as one", async () => {
    const tome = await wiki;
    expect(titles(tome, "Prusia")).toEqual(["Prussia"]);
    expect(titles(tome, "Rusia")).toEqual(["Russia"]);
    expect(titles(tome, "Rsusia")).toEqual(["Russia"]);
  });

  test("two typos from 9 letters, none under 5", async () => {
    const tome = await wiki;
    expect(titles(tome, "Mediteranian")).toEqual(["Mediterranean Sea"]);
    // Four letters: no typo allowed ("Rusa" is also no word's beginning).
    expect(titles(tome, "Rusa")).toEqual([]);
  });
});

describe("a word's other forms (its stem's) count as the word, weighed below it (D43)", () => {
  const wiki = wikiOf([
    page("Battle of Waterloo", "At Waterloo in 1815 the allied armies defeated Napoleon."),
    page("Grande Armée", "The Grande Armée was the army of Napoleon, the largest army Europe had seen."),
    page("Shetland pony", "The Shetland pony is a small horse from the Shetland Isles."),
  ]);

  test("“armies” ranks the page saying “armies” above the one saying “army” twice", async () => {
    expect(titles(await wiki, "armies")).toEqual(["Battle of Waterloo", "Grande Armée"]);
  });

  test("and “army” the other way round", async () => {
    expect(titles(await wiki, "army")).toEqual(["Grande Armée", "Battle of Waterloo"]);
  });

  test("a word no page holds finds its other forms (ponies → pony)", async () => {
    expect(titles(await wiki, "ponies")).toEqual(["Shetland pony"]);
  });
});

describe("a soft hyphen is no character of the word it sits in (D153)", () => {
  const wiki = wikiOf([
    page("Ivan Bahrianyi", "His book «Зо&shy;ло&shy;тий бу&shy;ме&shy;ранг» appeared in 1946, in emigration."),
    page("Boomerang", "A boomerang is a thrown tool. Золото is gold."),
  ]);

  test("“Золотий бумеранг” finds the page whose wikitext wrote it with soft hyphens, and so does the query copied with them", async () => {
    expect(titles(await wiki, "Золотий бумеранг")).toEqual(["Ivan Bahrianyi"]);
    expect(titles(await wiki, "Зо\u00adло\u00adтий бу\u00adме\u00adранг")).toEqual(["Ivan Bahrianyi"]);
  });
});

describe("proximity: words standing close raise a chunk (D43)", () => {
  const wiki = wikiOf([
    page(
      "Saros cycle",
      "The saros is a period of about eighteen years after which the Sun, Earth and Moon return to the same geometry, so that a solar eclipse repeats itself; astronomers of Babylon used it to predict when the next one would come.",
    ),
    page("Corona", "The corona is seen in an eclipse, when the Moon hides the disc of the Sun. Solar probes study it."),
  ]);

  test("the page whose words stand together ranks first, though the other is shorter", async () => {
    const tome = await wiki;
    expect(titles(tome, "solar eclipse")).toEqual(["Saros cycle", "Corona"]);
    // Word by word, the short Corona scores higher.
    expect(titles(tome, "solar")).toEqual(["Corona", "Saros cycle"]);
    expect(titles(tome, "eclipse")).toEqual(["Corona", "Saros cycle"]);
  });
});

describe("coverage: a best chunk holding most of the query's words in one run raises its page (D152)", () => {
  const query = "glacier carved Yosemite valley";
  const halfDome = page(
    "Half Dome",
    "Half Dome is a granite dome at the eastern end of a valley in California, above Mirror Lake, and one of the best known rock formations of the park. It rises nearly 1,444 metres above the floor below, and at the peak of the last ice age a glacier reached within 150 metres of its top, in Yosemite as in every canyon nearby. Its sheer northwest face was long thought to be a dome cut in half; geologists now think that a glacier carved the Yosemite cliffs along joints in the granite, leaving the face standing. The first recorded ascent was made by George Anderson in 1875, who drilled holes into the rock and climbed on iron eyebolts. Today hikers climb the last 120 metres of the east ridge on a pair of steel cables raised each summer.",
  );
  const ICE_AGE =
    ", and at the peak of the last ice age a glacier reached within 150 metres of its top, in Yosemite as in every canyon nearby";
  test("three of the four words in one sentence outrank the four scattered over a page that scores higher", async () => {
    const tome = await wikiOf([
      page(
        "Sierra Nevada",
        "The Sierra Nevada is a mountain range in the western United States. Yosemite is its best known park, visited by millions of people each year, and the range's highest peak, Mount Whitney, stands near its southern end. The range was raised by faulting along its eastern side, and its rocks are granite formed deep underground during the Cretaceous. Ice ages covered the high country many times, and a glacier flowed down each canyon toward the foothills. Its western slope rises gently from the farms of the Central Valley, crossed by rivers that run to the Pacific. Over millions of years the rivers and the ice together carved that slope into deep canyons, the deepest of them in Yosemite and Kings Canyon.",
      ),
      page(halfDome.title, halfDome.text.replace(ICE_AGE, "")),
    ]);
    expect(titlesUnder(tome, query, { pageCoverage: 0 })).toEqual(["Sierra Nevada", "Half Dome"]);
    expect(titles(tome, query)).toEqual(["Half Dome", "Sierra Nevada"]);
  });

  test("a word the page's title names counts as held in every run of its chunks", async () => {
    // Glacier Point's text holds "Yosemite valley … carved" in one run, and "glacier" only in its title's words.
    const tome = await wikiOf([
      page(
        "Glacier Point",
        "Glacier Point is a viewpoint on the south wall of the gorge, 975 metres above Curry Village, reached by a road from Chinquapin or by the Four Mile Trail. From its railing visitors see Half Dome, Vernal Fall, Nevada Fall and the high country beyond. A hotel, the Mountain House, stood at the point from 1878 until it burned in 1969, and until 1968 a bonfire was pushed over the edge on summer evenings as the Firefall. The Yosemite valley below was carved out by ice and water over the last million years, as the granite walls show.",
      ),
      halfDome,
    ]);
    expect(titlesUnder(tome, query, { pageCoverage: 0 })).toEqual(["Half Dome", "Glacier Point"]);
    expect(titles(tome, query)).toEqual(["Glacier Point", "Half Dome"]);
  });
});

describe("a page's hit is its passage: of its best chunks, the one whose words stand closest (D43)", () => {
  const wiki = wikiOf([
    page(
      "Arthur Eddington",
      "Arthur Eddington was an English astronomer who wrote on solar physics and the eclipse.\n\n== Príncipe ==\nIn 1919 Eddington sailed to the island of Príncipe, off the coast of Africa, to photograph the total solar eclipse of 29 May and to measure how starlight bent around the Sun.",
    ),
  ]);

  test("“solar eclipse” is answered by the Príncipe section; one word, by the best-scored chunk, the lead", async () => {
    const tome = await wiki;
    expect(search(tome, "solar eclipse").hits.map((h) => h.chunk)).toEqual([1]);
    expect(search(tome, "solar").hits.map((h) => h.chunk)).toEqual([0]);
    expect(search(tome, "eclipse").hits.map((h) => h.chunk)).toEqual([0]);
  });
});

describe("function words (stopwords-iso) are optional in the every-word tier", () => {
  const wiki = wikiOf([
    page(
      "Leonardo da Vinci",
      "Leonardo da Vinci was an Italian polymath of the High Renaissance, active as a painter, engineer, scientist and architect. Among his works, he painted the Mona Lisa and The Last Supper.",
    ),
    page("Vincenzo Peruggia", "Vincenzo Peruggia was the thief who stole the Mona Lisa."),
    page("Louvre", "The Louvre in Paris holds works painted by Raphael, Titian and Rembrandt."),
    page("Rembrandt", "Rembrandt painted The Night Watch in 1642."),
  ]);

  test("“who painted the Mona Lisa”: the page with every other word first, though it lacks “who”", async () => {
    const { hits } = search(await wiki, "who painted the Mona Lisa");
    expect(hits.map((h) => h.page.title)).toEqual(["Leonardo da Vinci", "Vincenzo Peruggia", "Rembrandt", "Louvre"]);
    // Peruggia's short page, holding the rare "who", scores higher: the tier decides. The last two hold
    // only "painted": by score.
    expect(hits[1]!.score).toBeGreaterThan(hits[0]!.score);
  });
});

describe("a number is no function word, though stopwords-iso lists 10 and 39 (D185)", () => {
  const wiki = wikiOf([
    page(
      "Apollo 8",
      "Apollo 8 was the first crewed spacecraft to leave Earth orbit. The crew of Apollo 8, Frank Borman, James Lovell and William Anders, were the first humans to see the far side of the Moon. The Apollo crew read from the Book of Genesis.",
    ),
    page(
      "Apollo 11",
      "Apollo 11 was the spaceflight that landed the first two people on the Moon. Its crew was the second all-veteran multi-person crew (the first being Apollo 10) in human spaceflight history. Neil Armstrong and Buzz Aldrin landed the Lunar Module Eagle on July 20, 1969, and spent about two and a quarter hours together outside the spacecraft.",
    ),
    page("Decimal", "The decimal numeral system has ten as its base: 10 is written with two of its digits."),
    page("Bowling", "In ten-pin bowling a game has 10 frames, and a bowler rolls up to 10 pins down in each."),
  ]);

  test("“Apollo 10 crew”: the page holding 10 with the other words first, though the other says them more", async () => {
    const { hits } = search(await wiki, "Apollo 10 crew");
    expect(hits.map((h) => h.page.title)).toEqual(["Apollo 11", "Apollo 8", "Bowling", "Decimal"]);
    // Apollo 8's page, saying "Apollo" and "crew" more, scores higher: the tier (every word, 10 among them) decides.
    expect(hits[1]!.score).toBeGreaterThan(hits[0]!.score);
  });
});

test("the function-word lists are those RULES_VERSION 6 was raised for: another list raises it again (D185)", () => {
  // The lists decide which page orders a build stores and which plan a query takes (D99), and rulesFingerprint() does
  // not read them: orders made under another list, searched under this one, ranked "39 10" at offset 5 unlike the
  // exhaustive plan. A change to them (an entry left out, stopwords-iso upgraded) must raise RULES_VERSION
  // (src/search/ranking/rules.ts) so that older snapshots are refused with how to rebuild them; then pin the new digest.
  const lists = Object.keys(stopwordsIso)
    .sort()
    .map((lang) => [lang, [...functionWords(lang)].sort()]);
  const digest = new Bun.CryptoHasher("sha256").update(JSON.stringify(lists)).digest("hex").slice(0, 16);
  expect(digest).toBe("a8e7c63946e24355");
});

describe("quoted phrases must match when some chunk holds them (D37)", () => {
  const wiki = wikiOf([
    page("Arctic Ocean", "Much of the Arctic Ocean is covered by sea ice for the whole year."),
    page(
      "Lake Baikal",
      "Lake Baikal is an inland sea of fresh water; its ice is thick in winter, and the sea freezes over.",
    ),
  ]);

  test("a phrase some chunk holds is required, in straight or typographic quotes", async () => {
    const tome = await wiki;
    expect(titles(tome, '"sea ice"')).toEqual(["Arctic Ocean"]);
    expect(titles(tome, "“sea ice”")).toEqual(["Arctic Ocean"]);
    // Unquoted, both pages (the words standing together in the first).
    expect(titles(tome, "sea ice")).toEqual(["Arctic Ocean", "Lake Baikal"]);
  });

  test("a phrase no chunk holds counts as its words", async () => {
    expect(titles(await wiki, '"ice sea"')).toEqual(["Arctic Ocean", "Lake Baikal"]);
  });
});

describe("the page's own text: of pages whose best chunks tie, the one more about the query's words first (D202)", () => {
  const LEAD =
    "Krill graze on the algae that grow beneath the sea ice in spring, and whales, seals and penguins feed on them.";
  // The same lead, so the same best chunk; the Southern Ocean, first in the snapshot, says much else besides.
  const wiki = wikiOf([
    page(
      "Southern Ocean",
      `${LEAD}\n\n== Extent ==\nThe Southern Ocean surrounds Antarctica south of the sixtieth parallel, where the Antarctic Circumpolar Current flows east around the continent without meeting land, the longest current on Earth.\n\n== Exploration ==\nJames Cook crossed the Antarctic Circle in 1773, and sealers and whalers followed him south through the nineteenth century, long before anyone set foot on the continent itself.`,
    ),
    page("Antarctic food web", LEAD),
  ]);
  test("“krill algae”: the page made of that chunk alone outranks the longer page holding the same chunk", async () => {
    const tome = await wiki;
    expect(titlesUnder(tome, "krill algae", { pageText: 0 })).toEqual(["Southern Ocean", "Antarctic food web"]);
    expect(titles(tome, "krill algae")).toEqual(["Antarctic food web", "Southern Ocean"]);
  });
});
