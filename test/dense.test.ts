/**
 * Dense lists (src/search/index/dense.ts): a common list's term frequencies, a byte a document, give
 * for every document what the list itself holds (0 where it holds nothing); lists in fewer
 * documents are not made dense.
 */
import { describe, expect, test } from "bun:test";
import { indexKey } from "../src/search/text/analyze";
import { DENSE_SHARE } from "../src/search/index/dense";
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
