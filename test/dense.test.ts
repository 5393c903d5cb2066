/**
 * Dense lists (src/search/index/dense.ts): a common list's term frequencies, a byte a document, give
 * for every document what the list itself holds (0 where it holds nothing); lists in fewer
 * documents are not made dense.
 */
import { describe, expect, test } from "bun:test";
import { indexKey } from "../src/search/text/analyze";
import { DENSE_SHARE, LOOKUP_RATIO, LOOKUP_SHARE, lookupTf } from "../src/search/index/dense";
import { TEXT_FIELD } from "../src/search/index/fields";
import { EN_2006, EN_2016, engineFor } from "./helpers";

describe("dense lists", () => {
  test("hold every document's frequency of a common word, large ones too (above 15: not a nibble)", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const [the] = text.scoredLists(text.derive([{ key: indexKey("the"), prefix: false, fuzzy: 0 }]), [TEXT_FIELD]);
    expect(the!.df).toBeGreaterThanOrEqual(DENSE_SHARE * text.documentCount);
    const expected = new Uint32Array(text.documentCount);
    const cursor = text.newCursor().open(the!.address);
    for (let b = 0; b < cursor.blocks; b++) {
      const n = cursor.decode(b);
      for (let i = 0; i < n; i++) expected[cursor.docs[i]!] = cursor.tfs[i]!;
    }
    const dense = text.dense(the!)!;
    const got = Uint32Array.from(dense);
    expect(got).toEqual(expected);
    expect(Math.max(...expected)).toBeGreaterThan(15);
  });

  test("are made only for lists in half the documents or more", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const [albedo] = text.scoredLists(text.derive([{ key: indexKey("albedo"), prefix: false, fuzzy: 0 }]), [
      TEXT_FIELD,
    ]);
    expect(albedo!.df).toBeLessThan(DENSE_SHARE * text.documentCount);
    expect(text.dense(albedo!)).toBeUndefined();
  });
});

describe("lookup lists", () => {
  test("give every document's frequency of a list far longer than the documents asked, from the second time it is asked for", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const N = text.documentCount;
    const lists = text
      .scoredLists(text.derive([{ key: indexKey("which"), prefix: false, fuzzy: 0 }]), [TEXT_FIELD])
      .filter((l) => l.df >= LOOKUP_SHARE * N && l.df < DENSE_SHARE * N);
    expect(lists.length).toBe(1);
    const list = lists[0]!;
    const expected = new Uint8Array(N);
    const cursor = text.newCursor().open(list.address);
    for (let b = 0; b < cursor.blocks; b++) {
      const n = cursor.decode(b);
      for (let i = 0; i < n; i++) expected[cursor.docs[i]!] = cursor.tfs[i]!;
    }
    const asked = Math.floor(list.df / LOOKUP_RATIO);
    // Asked once: read as a list (a list asked once costs less read than made).
    expect(text.lookup(list, asked)).toBeUndefined();
    const lookup = text.lookup(list, asked)!;
    expect(lookup).toBeDefined();
    const got = new Uint8Array(N);
    for (let d = 0; d < N; d++) got[d] = lookupTf(lookup, d);
    expect(got).toEqual(expected);
    expect(expected.filter((tf) => tf > 0).length).toBe(list.df);
    expect(Math.max(...expected)).toBeGreaterThan(1);
    // The same list, asked again: the one made.
    expect(text.lookup(list, asked)).toBe(lookup);
  });

  test("are not made for lists below their share of the documents, nor for lists less than LOOKUP_RATIO times the documents asked", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const N = text.documentCount;
    const [albedo] = text.scoredLists(text.derive([{ key: indexKey("albedo"), prefix: false, fuzzy: 0 }]), [
      TEXT_FIELD,
    ]);
    expect(albedo!.df).toBeLessThan(LOOKUP_SHARE * N);
    for (let i = 0; i < 3; i++) expect(text.lookup(albedo!, 1)).toBeUndefined();
    const [which] = text.scoredLists(text.derive([{ key: indexKey("which"), prefix: false, fuzzy: 0 }]), [
      TEXT_FIELD,
    ]);
    const tooMany = Math.floor(which!.df / LOOKUP_RATIO) + 1;
    for (let i = 0; i < 3; i++) expect(text.lookup(which!, tooMany)).toBeUndefined();
  });
});
