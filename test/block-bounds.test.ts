/**
 * Block bounds (bench/search/block-bounds.ts, what bench/search/bounds-ceiling.ts bounds chunks with): each block's bound is the most one of its
 * postings adds before the list's weight, exactly: never below a posting's, and reached by one.
 */
import { expect, test } from "bun:test";
import { BlockBounds } from "../bench/search/block-bounds";
import { BM25 } from "../src/search/index/shard-types";
import { indexKey } from "../src/search/text/analyze";
import { EN_2006, EN_2016, engineFor } from "./helpers";

test("a block's bound is the largest of its postings' BM25 terms", async () => {
  const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
  const lists = text.scoredLists(
    text.derive(["the", "history", "city", "albedo"].map((w) => ({ key: indexKey(w), prefix: false, fuzzy: 0 }))),
  );
  const cursor = text.newCursor();
  const made = new BlockBounds(text);
  let blocks = 0;
  for (const l of lists) {
    const bounds = made.of(l);
    const { lengths, table } = text.norms(l.field);
    cursor.open(l.address);
    expect(bounds.length).toBe(cursor.blocks);
    for (let b = 0; b < cursor.blocks; b++) {
      const n = cursor.decode(b);
      let max = 0;
      for (let i = 0; i < n; i++) {
        const tf = cursor.tfs[i]!;
        max = Math.max(max, BM25.d + (tf * (BM25.k + 1)) / (tf + table[lengths[cursor.docs[i]!]!]!));
      }
      expect(bounds[b]).toBe(max);
      blocks++;
    }
    // Made once: the same array comes back.
    expect(made.of(l)).toBe(bounds);
  }
  // Long lists were among them: several blocks each.
  expect(blocks).toBeGreaterThan(lists.length * 2);
});
