/**
 * The beginnings of words given page orders (D51, src/search/plans/orders.ts): each word's beginnings of MIN_PREFIX
 * to PREFIX_LETTERS letters, counted in code points, read as slices of the word (D141: no array of its letters, and
 * no string joined from it, for each of the vocabulary's millions of words).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { eachBeginning } from "../src/search/plans/orders";
import { termOfKey } from "../src/search/text/analyze";
import { EN_2016, engineFor, TRUNCATED_XZ } from "./helpers";

setDefaultTimeout(120_000);

/** The beginnings as orders.ts made them before D141: from the word's letters, joined. */
function joined(letters: string[], least: number, most: number): string[] {
  const out: string[] = [];
  for (let n = least; n < letters.length && n <= most; n++) out.push(letters.slice(0, n).join(""));
  return out;
}

const sameStrings = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

describe("the beginnings of a word given orders (D141)", () => {
  // English, Armenian and Vietnamese: their vocabularies hold words of letters beyond 16 bits (𐤀, 𐎠𐎼𐎷𐎡𐎴, 𫌠).
  // The snapshots the other test files read (snapshotFor's options as theirs: English complete, the others truncated),
  // not one of the English dump's own.
  const wikis = {
    en: { dumps: [EN_2016] },
    hy: { dumps: [TRUNCATED_XZ[2]!], allowTruncated: true },
    vi: { dumps: [TRUNCATED_XZ[6]!], allowTruncated: true },
  };
  for (const [lang, options] of Object.entries(wikis))
    test(`every word of the ${lang} fixture's vocabulary: the same beginnings as its letters joined`, async () => {
      const engine = await engineFor(options);
      let words = 0;
      let astral = 0;
      // Every word's three comparisons made here, the differing ones collected and asserted none at the end: one
      // expect per word and range cost more than the comparisons themselves (over 400,000 of them). Reported: how many
      // differ, and the first 20 (a defect in every word would print hundreds of thousands).
      let differing = 0;
      const first: { word: string; least: number; most: number; found: string[]; joined: string[] }[] = [];
      engine.text.eachTerm((key) => {
        const word = termOfKey(key);
        const letters = [...word];
        words++;
        if (letters.length !== word.length) astral++;
        for (const [least, most] of [
          [2, 4],
          [1, 1],
          [3, 6],
        ] as const) {
          const found: string[] = [];
          eachBeginning(word, least, most, (prefix) => found.push(prefix));
          const expected = joined(letters, least, most);
          if (!sameStrings(found, expected) && differing++ < 20)
            first.push({ word, least, most, found, joined: expected });
        }
      });
      expect({ differing, first }).toEqual({ differing: 0, first: [] });
      expect(words).toBeGreaterThan(10_000);
      expect(astral).toBeGreaterThan(0);
    });
});
