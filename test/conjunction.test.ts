/**
 * The conjunction (src/search/ranking/conjunction.ts): match()'s documents holding every required
 * word, with match()'s very scores and masks, in document order, whichever words narrow.
 */
import { describe, expect, test } from "bun:test";
import { indexKey } from "../src/search/text/analyze";
import { matchAll, sortThroughBits } from "../src/search/ranking/conjunction";
import { matchBuffer } from "../src/search/index/shard";
import type { Matches, WordSpec } from "../src/search/index/shard-types";
import { EN_2006, EN_2016, engineFor } from "./helpers";

const specs = (...words: string[]): WordSpec[] =>
  words.map((w, i) => ({ key: indexKey(w), prefix: i === words.length - 1, fuzzy: 0 }));

/** match()'s documents whose masks hold `required`, as [doc, mask, score] in document order. */
function holding(m: Matches, required: number): [number, number, number][] {
  const rows: [number, number, number][] = [];
  for (let i = 0; i < m.count; i++)
    if ((m.masks[i]! & required) >>> 0 === required) rows.push([m.docs[i]!, m.masks[i]!, m.scores[i]!]);
  return rows.sort((a, b) => a[0] - b[0]);
}

const rows = (m: Matches): [number, number, number][] =>
  Array.from({ length: m.count }, (_x, i) => [m.docs[i]!, m.masks[i]!, m.scores[i]!]);

describe("the conjunction", () => {
  test("gives match()'s documents holding every required word, with the same scores and masks", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const cursor = text.newCursor();
    const cases: [string[], number][] = [
      [["history", "city"], 0b11],
      [["the", "history", "of", "city"], 0b1010],
      [["river", "valley", "the"], 0b011],
      [["albedo", "planet"], 0b11],
      [["history", "the"], 0b01],
    ];
    for (const [words, required] of cases) {
      const words_ = specs(...words);
      const expected = holding(text.match(words_), required);
      const all = matchAll(text, cursor, words_, required, { budget: Infinity });
      expect(all).toBeDefined();
      expect({ words, rows: rows(all!) }).toEqual({ words, rows: expected });
      expect(expected.length).toBeGreaterThan(0);
    }
  });

  test("leaves the shard's accumulators clean: the match after it is unchanged", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const before = rows(text.match(specs("history", "city")));
    matchAll(text, text.newCursor(), specs("history", "of", "city"), 0b101, { least: 1_000_000 });
    matchAll(text, text.newCursor(), specs("history", "of", "city"), 0b101, { scored: false });
    expect(rows(text.match(specs("history", "city")))).toEqual(before);
  });

  test("without scores, the same documents, even of words in most chunks", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const words = specs("of", "the");
    const all = matchAll(text, text.newCursor(), words, 0b11, { scored: false })!;
    expect(Array.from(all.docs.subarray(0, all.count))).toEqual(holding(text.match(words), 0b11).map(([d]) => d));
    // With scores, words this common are left to match(): reading their lists twice would cost more.
    expect(matchAll(text, text.newCursor(), words, 0b11)).toBeUndefined();
  });

  test("gives none once fewer than `least` documents are left", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const words = specs("albedo", "planet");
    const found = matchAll(text, text.newCursor(), words, 0b11)!.count;
    expect(found).toBeGreaterThan(0);
    expect(matchAll(text, text.newCursor(), words, 0b11, { least: found })!.count).toBe(found);
    expect(matchAll(text, text.newCursor(), words, 0b11, { least: found + 1 })!.count).toBe(0);
  });
});

describe("sorting the rarest word's documents through a bit a document", () => {
  test("gives them in order, at every bit of a word and the last document, and leaves the bits zero", () => {
    const documents = 32 * 1000 + 7;
    const bits = new Uint32Array(Math.ceil(documents / 32));
    let seed = 3;
    const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
    const chosen = new Set([0, 31, 32, 63, documents - 1]);
    while (chosen.size < 5000) chosen.add(Math.floor(random() * documents));
    // As several lists give them: runs, each in order.
    const all = [...chosen];
    const runs = [0, 1, 2].flatMap((r) => all.filter((_d, i) => i % 3 === r).sort((a, b) => a - b));
    const docs = Uint32Array.from(runs);
    sortThroughBits(docs, bits);
    expect([...docs]).toEqual(all.sort((a, b) => a - b));
    expect(bits.every((w) => w === 0)).toBe(true);
  });
});

describe("match buffers", () => {
  test("a buffer too small for a pass is grown, and holds what a new one would", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const words = specs("history", "the");
    const fresh = text.match(words);
    const small = matchBuffer(16);
    const into = text.match(words, { into: small });
    expect(into).toBe(small);
    expect(small.docs.length).toBeGreaterThanOrEqual(fresh.count);
    expect(rows(into)).toEqual(rows(fresh));
    const all = matchAll(text, text.newCursor(), specs("history", "city"), 0b11, {
      into: matchBuffer(1),
      budget: Infinity,
    })!;
    expect(rows(all)).toEqual(holding(text.match(specs("history", "city")), 0b11));
  });
});

describe("the conjunction in a range of documents", () => {
  test("gives the documents of the whole conjunction in [from, to), window after window", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const words = specs("of", "the", "city");
    const all = rows(matchAll(text, text.newCursor(), words, 0b111, { scored: false })!).map(([d]) => d);
    expect(all.length).toBeGreaterThan(10);
    const windows: number[] = [];
    for (let from = 0, size = 64; from < text.documentCount; from += size, size *= 2) {
      windows.push(
        ...rows(matchAll(text, text.newCursor(), words, 0b111, { scored: false, from, to: from + size })!).map(
          ([d]) => d,
        ),
      );
    }
    expect(windows).toEqual(all);
  });

  test("a window none of whose documents holds the rarest word gives none, and leaves the accumulators clean", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const before = rows(text.match(specs("history", "city")));
    const albedo = rows(matchAll(text, text.newCursor(), specs("albedo", "the"), 0b11, { scored: false })!);
    const first = albedo[0]![0];
    expect(first).toBeGreaterThan(0);
    const none = matchAll(text, text.newCursor(), specs("albedo", "the"), 0b11, { scored: false, from: 0, to: first })!;
    expect(none.count).toBe(0);
    expect(rows(text.match(specs("history", "city")))).toEqual(before);
  });
});
