/**
 * Lookup lists (src/search/index/lookup-lists.ts): a list as a bit a document and its frequencies
 * gives for every document what the list itself holds (0 where it holds nothing); the most
 * common lists are made on first use, other common ones once reading them by block has cost
 * as much as making them, and short lists never.
 */
import { describe, expect, test } from "bun:test";
import { indexKey } from "../src/search/text/analyze";
import { DENSE_SHARE, LOOKUP_RATIO, LOOKUP_SHARE, LOOKUP_SPREAD, lookupTf } from "../src/search/index/lookup-lists";
import { TEXT_FIELD } from "../src/search/index/fields";
import { BLOCK } from "../src/search/index/postings-format";
import type { Shard } from "../src/search/index/shard";
import type { ScoredList } from "../src/search/index/shard-types";
import { open } from "../src/search";
import { EN_2006, EN_2016, snapshotFor } from "./helpers";

/** An engine of its own: the lists other tests' searches asked for (and made) are not its. */
const freshEngine = async () => open(await snapshotFor({ dumps: [EN_2006, EN_2016] }));

const textList = (text: Shard, word: string): ScoredList =>
  text.scoredLists(text.derive([{ key: indexKey(word), prefix: false, fuzzy: 0 }]), [TEXT_FIELD])[0]!;

/** Each document's frequency in the list, decoded block by block. */
function frequencies(text: Shard, list: ScoredList): Uint8Array<ArrayBuffer> {
  const expected = new Uint8Array(text.documentCount);
  const cursor = text.newCursor().open(list.address);
  for (let b = 0; b < cursor.blocks; b++) {
    const n = cursor.decode(b);
    for (let i = 0; i < n; i++) expected[cursor.docs[i]!] = cursor.tfs[i]!;
  }
  return expected;
}

describe("lookup lists", () => {
  test("of a word in half the chunks or more: made on first use, every document's frequency, large ones too (above 15: not a nibble)", async () => {
    const { text } = await freshEngine();
    const the = textList(text, "the");
    expect(the.df).toBeGreaterThanOrEqual(DENSE_SHARE * text.documentCount);
    const expected = frequencies(text, the);
    const lookup = text.lookup(the, 1)!;
    expect(lookup).toBeDefined();
    const got = new Uint8Array(text.documentCount);
    for (let d = 0; d < got.length; d++) got[d] = lookupTf(lookup, d);
    expect(got).toEqual(expected);
    expect(Math.max(...expected)).toBeGreaterThan(15);
  });

  test("of a less common word: made once reading its blocks has cost as many postings as it holds, every document's frequency", async () => {
    const { text } = await freshEngine();
    const N = text.documentCount;
    const which = textList(text, "which");
    expect(which.df).toBeGreaterThanOrEqual(LOOKUP_SHARE * N);
    expect(which.df).toBeLessThan(DENSE_SHARE * N);
    const expected = frequencies(text, which);
    const asked = Math.floor(which.df / LOOKUP_RATIO);
    // Asked for, then read by block: not made until those reads have decoded `df` postings.
    expect(text.lookup(which, asked)).toBeUndefined();
    text.noteRead(which, which.df - 1);
    expect(text.lookup(which, asked)).toBeUndefined();
    text.noteRead(which, 1);
    const lookup = text.lookup(which, asked)!;
    expect(lookup).toBeDefined();
    const got = new Uint8Array(N);
    for (let d = 0; d < N; d++) got[d] = lookupTf(lookup, d);
    expect(got).toEqual(expected);
    expect(expected.filter((tf) => tf > 0).length).toBe(which.df);
    expect(Math.max(...expected)).toBeGreaterThan(1);
    expect(text.lookup(which, asked)).toBe(lookup);
  });

  test("are not made for short lists, nor for too many documents asked, nor for too few spread over many blocks", async () => {
    const { text } = await freshEngine();
    const N = text.documentCount;
    const albedo = textList(text, "albedo");
    expect(albedo.df).toBeLessThan(LOOKUP_SHARE * N);
    for (let i = 0; i < 3; i++) expect(text.lookup(albedo, 1)).toBeUndefined();
    // A list asked for at many documents, and one at few, unmade for either (a word no other test asks for).
    const many = textList(text, "from");
    expect(many.df).toBeLessThan(DENSE_SHARE * N);
    const blocks = Math.ceil(many.df / BLOCK);
    expect(blocks).toBeGreaterThan(LOOKUP_SPREAD);
    for (let i = 0; i < 3; i++) expect(text.lookup(many, Math.floor(many.df / LOOKUP_RATIO) + 1)).toBeUndefined();
    for (let i = 0; i < 3; i++) expect(text.lookup(many, Math.floor((blocks - 1) / LOOKUP_SPREAD))).toBeUndefined();
    // Reads by block count toward its making only once a search has asked for it within both limits.
    text.noteRead(many, many.df);
    const within = Math.ceil(blocks / LOOKUP_SPREAD);
    expect(text.lookup(many, within)).toBeUndefined();
    text.noteRead(many, many.df);
    expect(text.lookup(many, within)).toBeDefined();
  });
});
