/**
 * A list as the block-max executor reads it (ranking/list-reader.ts, D146): `firstFrom` answers, without decoding,
 * a document at or before the list's next posting (exact when its block is decoded), never past it; `skipTo` then
 * `scan` read exactly the list's postings of a range, ranges asked in order with gaps between them.
 */
import { expect, test } from "bun:test";
import { BLOCK } from "../src/search/postings/postings-format";
import { ListReader } from "../src/search/ranking/list-reader";
import { indexKey } from "../src/search/text/analyze";
import { EN_2006, EN_2016, engineFor } from "./helpers";

test("firstFrom is never past the next posting, and ranges scanned in order read exactly the list's postings", async () => {
  const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
  const { text } = engine;
  const N = text.documentCount;
  // Lists of one block and of many: a rare word's, a common word's, every field of each.
  const lists = ["albedo", "which", "the", "war"].flatMap((w) => text.termLists(text.termOf(indexKey(w))!));
  expect(lists.some((l) => l.df < BLOCK)).toBe(true);
  expect(lists.some((l) => l.df > 10 * BLOCK)).toBe(true);
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  for (const list of lists) {
    const docs: number[] = [];
    text
      .newCursor()
      .open(list.address)
      .forEach((d) => {
        docs.push(d);
      });
    expect(docs.length).toBe(list.df);
    const next = (doc: number) => docs.find((d) => d >= doc) ?? Infinity;
    const reader = new ListReader().open(text.newCursor(), { ...list, unit: 1 }, text.norms(list.field), undefined);
    // Ranges in order, of random lengths and gaps, as windows and pages are read; firstFrom asked before each.
    const combined = new Float64Array(N);
    const touched = new Uint32Array(N);
    let exact = 0;
    for (let from = 0; from < N; ) {
      const first = reader.firstFrom(from);
      const want = next(from);
      expect(first).toBeLessThanOrEqual(want);
      expect(first).toBeGreaterThanOrEqual(Math.min(from, want));
      if (first === want) exact++;
      const to = Math.min(N - 1, from + Math.floor(random() * 600));
      const n = reader.scan(from, to, combined, touched, 0);
      const got = Array.from(touched.subarray(0, n), (at) => from + at).sort((a, b) => a - b);
      for (let i = 0; i < n; i++) combined[touched[i]!] = 0;
      expect(got).toEqual(docs.filter((d) => d >= from && d <= to));
      from = to + 1 + Math.floor(random() * 900);
    }
    expect(exact).toBeGreaterThan(0);
  }
}, 120_000);
