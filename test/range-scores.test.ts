/**
 * Pages scored one by one (ranking/range-scores.ts: title matches, a stored order's pages, a
 * typo word's rare forms' pages), in chunk order as the plans score them: each block of a list
 * is decoded once for the whole run of pages, and a page's scores are those of its chunks in a
 * scoring of all chunks at once.
 */
import { expect, test } from "bun:test";
import { BLOCK } from "../src/search/postings/postings-format";
import { QueryLists } from "../src/search/ranking/query-lists";
import { RangeScorer } from "../src/search/ranking/range-scores";
import { indexKey } from "../src/search/text/analyze";
import { decodedDuring, EN_2006, EN_2016, engineFor } from "./helpers";

test("pages scored in chunk order decode each block of a list once, and the decoded postings are the work counted", async () => {
  const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
  const { text } = engine;
  const { firstDoc, chunkCounts } = engine.snapshot.pages;
  // "the": in most chunks, a list of many blocks, each spanning a few pages.
  const term = text.termOf(indexKey("the"))!;
  const lists = new QueryLists(text, {
    derived: [{ word: 0, term, weight: 1 }],
    words: 1,
    required: 1,
    phraseWords: 0,
  });
  const blocks = lists.forms[0]!.lists.reduce((n, l) => n + Math.ceil(l.df / BLOCK), 0);
  expect(blocks).toBeGreaterThan(20);

  const all = new RangeScorer(text).score(lists, 0, text.documentCount);
  const want = new Map<number, number>();
  for (let i = 0; i < all.count; i++) want.set(all.docs[i]!, all.all[i]!);

  const scorer = new RangeScorer(text);
  // Every block decoded, counted by the cursors themselves.
  const { result, decoded: decodedPostings } = decodedDuring(() => {
    let counted = 0;
    let pages = 0;
    for (let p = 0; p < firstDoc.length; p++) {
      if (!chunkCounts[p]) continue;
      const from = firstDoc[p]!;
      const scores = scorer.score(lists, from, from + chunkCounts[p]!);
      counted += scorer.postings;
      pages++;
      for (let i = 0; i < scores.count; i++) expect(scores.all[i]).toBe(want.get(scores.docs[i]!)!);
      const held = [...want.keys()].filter((d) => d >= from && d < from + chunkCounts[p]!);
      expect([...scores.docs.subarray(0, scores.count)]).toEqual(held);
    }
    return { counted, pages };
  });
  const { counted, pages } = result;
  expect(pages).toBeGreaterThan(blocks);
  // Each block once: at most every posting of the lists (before: a page's next block decoded to find it past the page,
  // then its own block again for the next page, about twice a page).
  const postings = lists.forms[0]!.postings;
  expect(decodedPostings).toBeLessThanOrEqual(postings);
  expect(counted).toBe(decodedPostings);
}, 120_000);
