/**
 * The vocabulary in typed arrays answers as the radix tree of Maps it replaced (bench/search/radix-tree.ts):
 * exact, prefix and typo lookups on the real vocabularies of the shared English dumps and of a
 * Japanese one, for their own keys and for misspellings of them; its writer refuses keys out of
 * order; its arrays survive the snapshot file.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import SearchableMap from "minisearch/SearchableMap";
import { indexKey, terms } from "../src/search/text/analyze";
import { open } from "../src/search";
import { loadIndexes } from "../src/search/postings/store";
import { openSnapshot } from "../src/snapshot";
import {
  Vocabulary,
  vocabularyArrays,
  vocabularyFromArrays,
  vocabularyOf,
  VocabularyWriter,
  type VocabularyArrays,
  type VocabularyData,
} from "../src/search/postings/vocabulary";
import { chunkTextsOf, EN_2006, EN_2016, engineFor, snapshotFor, TRUNCATED_XZ } from "./helpers";
import { radixTree, typoNeighbours } from "../bench/search/radix-tree";
import { TOP_LEVELS, trieTop } from "../src/search/postings/trie-runs";
import { walkByMasks } from "../src/search/postings/typo-walk";

setDefaultTimeout(300_000);

const EN = { dumps: [EN_2016, EN_2006] };

/** The text of every chunk of a dump, from the snapshot the test files share (not a conversion of this file's own). */
const chunkTexts = async (dump: string) => chunkTextsOf(await engineFor({ dumps: [dump], allowTruncated: true }));

/** Every key of a vocabulary, by term number. */
const keysOf = (v: Vocabulary) => Array.from({ length: v.size }, (_x, t) => v.keyOf(t));

/** A deterministic pseudo-random sequence, so that a failure can be replayed. */
function randomFrom(seed: number): () => number {
  return () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
}

/**
 * Queries drawn from real keys: the keys themselves, each with a letter deleted, inserted,
 * replaced or two swapped, prefixes, and words no vocabulary holds. `letters` are the code
 * units misspellings draw from; `skip` code units at the start of a key are left alone (the
 * bucket characters of a non-ASCII key).
 */
function queriesFrom(keys: string[], count: number, letters: string, seed: number): string[] {
  const random = randomFrom(seed);
  const pick = <T>(a: ArrayLike<T>) => a[Math.floor(random() * a.length)]!;
  const out = new Set<string>(["", "zzqxv", "a", "e", "the", "th"]);
  for (let i = 0; i < count; i++) {
    const key = pick(keys);
    const skip = key.charCodeAt(0) >= 0xe000 && key.charCodeAt(0) < 0xf000 ? 2 : 0;
    const at = skip + Math.floor(random() * Math.max(1, key.length - skip));
    const letter = pick(letters);
    out.add(key);
    out.add(key.slice(0, at) + key.slice(at + 1)); // deleted
    out.add(key.slice(0, at) + letter + key.slice(at)); // inserted
    out.add(key.slice(0, at) + letter + key.slice(at + 1)); // replaced
    if (at + 1 < key.length) out.add(key.slice(0, at) + key[at + 1] + key[at] + key.slice(at + 2)); // swapped
    out.add(key.slice(0, skip + 1 + Math.floor(random() * 3))); // prefix
  }
  return [...out];
}

/** Compares a vocabulary with the radix tree oracle on every query; returns how many keys they found. */
function compareWithOracle(
  vocabulary: Vocabulary,
  keys: string[],
  queries: string[],
): { exact: number; prefixed: number; typos: number } {
  const tree = radixTree(keys);
  const map = new SearchableMap<number>(tree as never);
  const found = { exact: 0, prefixed: 0, typos: 0 };
  for (const q of queries) {
    expect({ q, term: vocabulary.get(q) }).toEqual({ q, term: map.get(q) });
    if (map.has(q)) found.exact++;
    // Short prefixes list thousands of keys: compared for the longer ones and by count for these.
    const oracle = [...map.atPrefix(q)].sort((a, b) => a[1] - b[1]);
    const prefixed = [...vocabulary.atPrefix(q)];
    if (q.length >= 2) expect({ q, prefixed }).toEqual({ q, prefixed: oracle });
    else
      expect({ q, prefixed: prefixed.length, first: prefixed[0], last: prefixed.at(-1) }).toEqual({
        q,
        prefixed: oracle.length,
        first: oracle[0],
        last: oracle.at(-1),
      });
    found.prefixed += oracle.length;
    for (const max of [1, 2]) {
      if (max === 2 && q.length < 3) continue; // every short key is within 2 edits of a 2-letter query: the oracle's slow case
      const expected = typoNeighbours(tree, q, max);
      expect({ q, max, typos: vocabulary.typoNeighbours(q, max) }).toEqual({ q, max, typos: expected });
      found.typos += expected.length;
    }
  }
  return found;
}

describe("the vocabulary of the shared English dumps", () => {
  test("an engine makes its typo walk's runs when it opens, not at a user's first typo search", async () => {
    const engine = open(await snapshotFor(EN));
    const vocabulary = engine.text["vocabulary"] as Vocabulary;
    expect(vocabulary["runSkips"]).toBeInstanceOf(Uint16Array);
    expect(vocabulary["runSkips"]!.length).toBe(vocabulary.size);
    expect(vocabulary["top"]!.levels).toBe(TOP_LEVELS);
  });

  test("the trie's top levels, laid out node by node, hold each prefix's keys and its children", async () => {
    const engine = await engineFor(EN);
    const vocabulary = engine.text["vocabulary"] as Vocabulary;
    const keys = keysOf(vocabulary);
    const top = vocabulary["trieKeys"]().top;
    const wrong: string[] = [];
    for (let d = 1; d <= top.levels; d++) {
      // One node for each prefix of d code units that a key has.
      const prefixes = [...new Set(keys.filter((k) => k.length >= d).map((k) => k.slice(0, d)))];
      expect(top.lo[d]!.length).toBe(prefixes.length);
      expect(prefixes.length).toBeGreaterThan(d === 1 ? 30 : 500);
      for (let i = 0; i < prefixes.length; i++) {
        const prefix = keys[top.lo[d]![i]!]!.slice(0, d);
        const [lo, hi] = vocabulary.prefixRange(prefix);
        if (prefix !== prefixes[i] || top.letters[d]![i] !== prefix.charCodeAt(d - 1))
          wrong.push(`level ${d} node ${i}: ${prefix}`);
        if (top.lo[d]![i] !== lo || top.hi[d]![i] !== hi) wrong.push(`level ${d} node ${i}: keys of ${prefix}`);
        // Its children are the next level's nodes whose prefixes extend it.
        if (d < top.levels)
          for (let c = top.firstChild[d]![i]!; c < top.firstChild[d]![i + 1]!; c++)
            if (!keys[top.lo[d + 1]![c]!]!.startsWith(prefix)) wrong.push(`level ${d} node ${i}: child ${c}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("a typo walk steps through the top levels to the same keys as through the keys (1 to 6 levels laid out)", async () => {
    const engine = await engineFor(EN);
    const vocabulary = engine.text["vocabulary"] as Vocabulary;
    const trie = vocabulary["trieKeys"]();
    const keys = keysOf(vocabulary);
    const queries = queriesFrom(keys, 150, "abcdefghijklmnopqrstuvwxyz0", 7);
    const masks = new Int32Array(65536);
    const tops = [0, 1, 3, 6].map((levels) => trieTop(trie.chars, trie.starts, levels));
    const walk = (levels: number, q: string, max: number) => {
      const out: number[] = [];
      const top = tops.find((t) => t.levels === levels)!;
      walkByMasks({ ...trie, top }, masks, q, max, (term, d) => out.push(term, d));
      return out;
    };
    let found = 0;
    for (const q of queries)
      for (const max of [1, 2]) {
        const expected = walk(0, q, max);
        for (const levels of [1, 3, 6])
          expect({ q, max, levels, found: walk(levels, q, max) }).toEqual({ q, max, levels, found: expected });
        found += expected.length / 2;
      }
    expect(found).toBeGreaterThan(5000);
  });

  test("answers get, atPrefix and typoNeighbours (1 and 2 typos) as the radix tree did", async () => {
    const engine = await engineFor(EN);
    const built = engine.text["vocabulary"] as Vocabulary;
    const keys = keysOf(built);
    expect(keys.length).toBeGreaterThan(40_000);
    for (let i = 1; i < keys.length; i++) expect(keys[i - 1]! < keys[i]!).toBe(true);
    // The keys are the corpus's words, as the analyzer makes them (non-ASCII ones with their buckets): those of the
    // first 200 articles, read from the snapshot, which holds the ingest's articles in its order and their chunks as
    // the ingest made them (chunkTextsOf), rather than from an ingest of this file's own.
    const pages = engine.snapshot.pages;
    const texts: string[] = [];
    for (let i = 0; i < 200; i++) for (let c = 0; c < pages.chunkCounts[i]!; c++) texts.push(pages.chunkText(i, c));
    const words = [...new Set(texts.flatMap((text) => terms(text, "en")).map(indexKey))];
    for (const w of words) expect(built.get(w)).toBeDefined();
    const nonAscii = keys.filter((k) => k.charCodeAt(0) >= 0xe000);
    expect(nonAscii.length).toBeGreaterThan(100);

    const vocabulary = new Vocabulary(vocabularyOf(keys));
    const queries = [
      ...queriesFrom(keys, 250, "abcdefghijklmnopqrstuvwxyz0", 1),
      ...queriesFrom(nonAscii, 60, "éöüßαβ", 2),
    ];
    expect(queries.length).toBeGreaterThan(1000);
    const found = compareWithOracle(vocabulary, keys, queries);
    // Enough keys were found each way for the comparison to mean something.
    expect(found.exact).toBeGreaterThan(300);
    expect(found.prefixed).toBeGreaterThan(10_000);
    expect(found.typos).toBeGreaterThan(5_000);
  });

  test("walks with bit masks (D125) to the same keys and distances as with rows of the distance matrix", async () => {
    const engine = await engineFor(EN);
    const built = engine.text["vocabulary"] as Vocabulary;
    const keys = keysOf(built);
    const nonAscii = keys.filter((k) => k.charCodeAt(0) >= 0xe000);
    const queries = [
      ...queriesFrom(keys, 400, "abcdefghijklmnopqrstuvwxyz0", 5),
      ...queriesFrom(nonAscii, 100, "éöüßαβ", 6),
    ];
    let found = 0;
    for (const q of queries)
      for (const max of [1, 2]) {
        const byRows: number[][] = [];
        const byMasks: number[][] = [];
        built.typoTermsByRows(q, max, (term, d) => byRows.push([term, d]));
        built.typoTermsByMasks(q, max, (term, d) => byMasks.push([term, d]));
        expect({ q, max, byMasks }).toEqual({ q, max, byMasks: byRows });
        found += byRows.length;
      }
    expect(found).toBeGreaterThan(20_000);
  });

  test("keeps Meilisearch's first-letter rule (D98): one typo within the first letter; a new first letter only alone, as two", async () => {
    const engine = await engineFor(EN);
    const vocabulary = engine.text["vocabulary"] as Vocabulary;
    const neighbours = (q: string, max: number) => new Map(vocabulary.typoNeighbours(q, max).map(([k, , d]) => [k, d]));
    expect(vocabulary.get("albedo")).toBeDefined();
    expect(neighbours("albedi", 1).get("albedo")).toBe(1);
    expect(neighbours("zlbedo", 1).has("albedo")).toBe(false); // a changed first letter is more than one typo
    expect(neighbours("zlbedo", 2).get("albedo")).toBe(2); // and counts as two where two are allowed
    expect(neighbours("lbedo", 2).get("albedo")).toBe(2); // its deletion too
    expect(neighbours("zlbedi", 2).has("albedo")).toBe(false); // but never with another typo
    // Over real keys and their misspellings: a neighbour whose first letter is not the query's is
    // one edit from it, found only with two typos allowed, and counted as two.
    let changed = 0;
    for (const q of queriesFrom(keysOf(vocabulary), 300, "abcdefghijklmnopqrstuvwxyz", 3)) {
      if (q.length < 3) continue;
      for (const max of [1, 2])
        for (const [k, d] of neighbours(q, max)) {
          if (k[0] === q[0]) continue;
          changed++;
          const oneEdit =
            k.slice(1) === q.slice(1) ||
            k.slice(1) === q ||
            k === q.slice(1) ||
            (k[0] === q[1] && k[1] === q[0] && k.slice(2) === q.slice(2));
          expect({ q, k, max, d, oneEdit }).toEqual({ q, k, max: 2, d: 2, oneEdit: true });
        }
    }
    expect(changed).toBeGreaterThan(20);
  });

  test("the snapshot file stores the vocabulary's arrays and gives them back", async () => {
    const engine = await engineFor(EN);
    const loaded = loadIndexes(openSnapshot(await snapshotFor(EN)));
    expect(loaded).not.toBeNull();
    for (const [shard, own] of [
      ["text", engine.text],
      ["titles", engine.titleIndex],
    ] as const) {
      const a = own["vocabulary"] as Vocabulary;
      const b = loaded![shard]["vocabulary"] as Vocabulary;
      expect(b.size).toBe(a.size);
      expect(keysOf(b)).toEqual(keysOf(a));
    }
    expect(loaded!.text.derive([{ key: "einstien", prefix: true, fuzzy: 2 }])).toEqual(
      engine.text.derive([{ key: "einstien", prefix: true, fuzzy: 2 }]),
    );
  });
});

describe("a vocabulary where a run of the trie holds more than 65,535 keys", () => {
  test("answers typoNeighbours as the radix tree did (a typo walk steps over such a run by searching for its end)", () => {
    const letters = "abcdefghijklmnopqrstuvwxyz";
    // "a…" keys first, so that the 70,304 "b…" keys are the root's second child, then a few "c…".
    const keys: string[] = ["a", "ab", "abc", "azure"];
    for (let i = 0; i < 70_304; i++)
      keys.push(
        `b${letters[Math.floor(i / 2704) % 26]}${letters[Math.floor(i / 104) % 26]}${letters[Math.floor(i / 4) % 26]}${"aeio"[i % 4]}`,
      );
    keys.push("ca", "cab", "cbbae");
    const sorted = [...new Set(keys)].sort();
    expect(sorted.filter((k) => k.startsWith("b")).length).toBeGreaterThan(65_535);
    const vocabulary = new Vocabulary(vocabularyOf(sorted));
    const tree = radixTree(sorted);
    let found = 0;
    for (const q of ["bkmqe", "bkmqa", "bkqme", "cbbbe", "cabe", "bzzzo", "azur", "abcde", "bammo", "cbba"]) {
      for (const max of [1, 2]) {
        const expected = typoNeighbours(tree, q, max);
        expect({ q, max, typos: vocabulary.typoNeighbours(q, max) }).toEqual({ q, max, typos: expected });
        found += expected.length;
      }
    }
    expect(found).toBeGreaterThan(100);
  });
});

describe("the vocabulary of a Japanese dump (every key non-ASCII, many letters per node)", () => {
  test("answers get, atPrefix and typoNeighbours as the radix tree did", async () => {
    const texts = await chunkTexts(TRUNCATED_XZ[3]!);
    const keys = [...new Set(texts.flatMap((text) => terms(text, "ja")).map(indexKey))].sort();
    expect(keys.length).toBeGreaterThan(5000);
    const vocabulary = new Vocabulary(vocabularyOf(keys));
    const letters = [...new Set(keys.join(""))].filter((c) => c.charCodeAt(0) < 0xe000).join("");
    const found = compareWithOracle(vocabulary, keys, queriesFrom(keys, 200, letters.slice(0, 400), 3));
    expect(found.exact).toBeGreaterThan(150);
    expect(found.typos).toBeGreaterThan(500);
  });
});

describe("the vocabulary writer", () => {
  test("refuses a key that does not sort after the last one, in JS string order", () => {
    const writer = new VocabularyWriter();
    expect(writer.add("")).toBe(0);
    expect(writer.add("a")).toBe(1);
    expect(writer.add("ab")).toBe(2);
    expect(() => writer.add("ab")).toThrow(/strictly increasing order: "ab" after "ab"/);
    expect(() => writer.add("aa")).toThrow(RangeError);
    expect(() => writer.add("a")).toThrow(RangeError);
    // Code unit order: a surrogate pair (U+1F600) sorts before U+FFFF.
    expect(writer.add("\ud83d\ude00")).toBe(3);
    expect(writer.add("\uffff")).toBe(4);
    expect(() => writer.add("\ud83d\ude01")).toThrow(RangeError);
    const v = new Vocabulary(writer.finish());
    expect(keysOf(v)).toEqual(["", "a", "ab", "\ud83d\ude00", "\uffff"]);
    expect(v.get("")).toBe(0);
    expect(v.get("\uffff")).toBe(4);
    expect(() => vocabularyOf(["b", "a"])).toThrow(RangeError);
  });

  test("grows past its first blocks, and keeps long keys whole", () => {
    const keys = Array.from({ length: 20_000 }, (_x, i) => `k${String(i).padStart(6, "0")}`);
    keys.push(`z${"y".repeat(10_000)}`);
    const v = new Vocabulary(vocabularyOf(keys));
    expect(v.size).toBe(keys.length);
    expect(keysOf(v)).toEqual(keys);
    expect(v.get(keys[12_345]!)).toBe(12_345);
  });
});

describe("an empty vocabulary", () => {
  test("holds nothing and finds nothing", () => {
    const v = new Vocabulary(vocabularyOf([]));
    expect(v.size).toBe(0);
    expect(v.get("")).toBeUndefined();
    expect(v.get("a")).toBeUndefined();
    expect([...v.atPrefix("")]).toEqual([]);
    expect(v.typoNeighbours("a", 2)).toEqual([]);
    expect(v.typoNeighbours("", 1)).toEqual([]);
    expect(new Vocabulary(vocabularyFromArrays(vocabularyArrays(vocabularyOf([])))).size).toBe(0);
  });
});

describe("vocabularyArrays", () => {
  /** The arrays as a file holds them: copied, each at an 8-byte aligned offset of one buffer, and viewed back. */
  function throughBuffer(arrays: VocabularyArrays): VocabularyArrays {
    const total = Object.values(arrays).reduce((n, a) => n + Math.ceil(a.byteLength / 8) * 8, 0);
    const buffer = new ArrayBuffer(total + 8);
    const out: VocabularyArrays = {};
    let at = 8;
    for (const [name, a] of Object.entries(arrays)) {
      new Uint8Array(buffer, at, a.byteLength).set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      const Type = a.constructor as new (b: ArrayBuffer, at: number, n: number) => typeof a;
      out[name] = new Type(buffer, at, a.length);
      at += Math.ceil(a.byteLength / 8) * 8;
    }
    return out;
  }

  test("holds only typed arrays, and a vocabulary made from their copies answers the same", async () => {
    const texts = await chunkTexts(TRUNCATED_XZ[0]!); // Bengali
    // Each distinct term's key once (indexKey, a function of the term alone: the same set as every occurrence's key,
    // at a ninth of the calls: 547,242 terms, 64,533 keys).
    const words = new Set<string>();
    for (const text of texts) for (const term of terms(text, "bn")) words.add(term);
    const keys = [...new Set([...words].map(indexKey))].sort();
    const data: VocabularyData = vocabularyOf(keys);
    const arrays = vocabularyArrays(data);
    for (const a of Object.values(arrays)) expect(ArrayBuffer.isView(a)).toBe(true);
    const a = new Vocabulary(data);
    const b = new Vocabulary(vocabularyFromArrays(throughBuffer(arrays)));
    expect(keysOf(b)).toEqual(keys);
    for (const k of keys.filter((_k, i) => i % 97 === 0)) {
      expect(b.get(k)).toBe(a.get(k)!);
      expect([...b.atPrefix(k.slice(0, 3))]).toEqual([...a.atPrefix(k.slice(0, 3))]);
      expect(b.typoNeighbours(k, 1)).toEqual(a.typoNeighbours(k, 1));
    }
  });

  test("arrays that are not a vocabulary's are refused with a clear error", () => {
    const { chars, starts } = vocabularyOf(["a", "b"]);
    expect(() => vocabularyFromArrays({ chars: new Uint8Array(2), starts })).toThrow(/not a vocabulary/);
    expect(() => vocabularyFromArrays({ chars })).toThrow(/not a vocabulary/);
    expect(() => vocabularyFromArrays({ chars: chars.subarray(0, 1), starts })).toThrow(/not a vocabulary/);
  });
});
