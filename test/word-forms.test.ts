/**
 * One word of several forms ranked alone by the block-max executor (WordReader.split(), D146): a form whose bound
 * cannot lift a page past the bar gives no candidates, and is read only for the chunks of the pages the other forms
 * find. The pages are those of scoring every chunk; most of the common form's blocks are never decoded.
 */
import { expect, test } from "bun:test";
import { Executor } from "../src/search/ranking/executor";
import { PageHeap } from "../src/search/ranking/page-heap";
import { QueryLists } from "../src/search/ranking/query-lists";
import { RangeScorer } from "../src/search/ranking/range-scores";
import { pageScore } from "../src/search/ranking/rules";
import { Catalog } from "../src/search/stages/catalog";
import { indexKey } from "../src/search/text/analyze";
import { decodedDuring, EN_2006, EN_2016, engineFor } from "./helpers";

test("a word's forms that cannot lift a page past the bar are read only for the pages its other forms find", async () => {
  const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
  const { text } = engine;
  const catalog = new Catalog(engine.snapshot, text.documentCount);
  // One word: "which" (in most pages) as a typo form weighing little, "albedo" (a few pages) as its other form.
  const common = text.termOf(indexKey("which"))!;
  const rare = text.termOf(indexKey("albedo"))!;
  const lists = new QueryLists(text, {
    derived: [
      { word: 0, term: rare, weight: 1 },
      { word: 0, term: common, weight: 0.05, typo: true },
    ],
    words: 1,
    required: 1,
    phraseWords: 0,
  });
  const commonPostings = lists.forms.find((f) => f.term === common)!.postings;
  expect(commonPostings).toBeGreaterThan(1000);

  // Every page's score from all its chunks' (a chunk's: its best form), the best three.
  const all = new RangeScorer(text).score(lists, 0, text.documentCount);
  const byPage = new Map<number, number[]>();
  for (let i = 0; i < all.count; i++) {
    const p = catalog.pageOfChunk[all.docs[i]!]!;
    byPage.set(p, [...(byPage.get(p) ?? []), all.all[i]!]);
  }
  const want = [...byPage]
    .map(([page, s]) => {
      const [a = 0, b = 0, c = 0] = s.sort((x, y) => y - x);
      return { page, score: pageScore(a, b, c, 0) };
    })
    .sort((x, y) => y.score - x.score || x.page - y.page)
    .slice(0, 3);

  const heap = new PageHeap();
  heap.reset(3);
  const executor = new Executor(text, catalog);
  const { decoded } = decodedDuring(() =>
    executor.run({ lists, required: 1, typos: true, tier: 1, heap, excluded: () => false, late: () => false }),
  );
  const got: { page: number; score: number }[] = [];
  heap.forEach((page, score) => {
    got.push({ page, score });
  });
  got.sort((x, y) => y.score - x.score || x.page - y.page);
  expect(got.map((g) => g.page)).toEqual(want.map((w) => w.page));
  for (const [i, g] of got.entries()) expect(g.score).toBeCloseTo(want[i]!.score, 9);
  // Before: 1,199 postings of 1,736 (every window holding "albedo" read "which" whole; finding a window decoded a block of
  // every list); after, 687 ("which" read whole until the heap is full, then over the pages "albedo" finds).
  expect(decoded).toBeLessThan(commonPostings / 2);
}, 120_000);
