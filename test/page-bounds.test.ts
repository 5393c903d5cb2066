/**
 * A word's page bound in a window (D133, ranking/word-reader.ts): what it adds to any page of
 * the window over the page's best three chunks, from its lists' impacts and page impacts. It
 * must never be below a page's true score for the word (the oracle's chunk scores through
 * pageScore), never above 1.75 times the word's chunk bound (the bound before D133), and below
 * it where pages hold the word in one or two chunks.
 */
import { describe, expect, test } from "bun:test";
import { querySampler } from "../bench/queries";
import { ListReader } from "../src/search/ranking/list-reader";
import { QueryLists } from "../src/search/ranking/query-lists";
import { RangeScorer } from "../src/search/ranking/range-scores";
import { pageFactor, pageScore } from "../src/search/ranking/rules";
import { WordReader } from "../src/search/ranking/word-reader";
import { queryTerms } from "../src/search/stages/terms";
import { parseQuery } from "../src/search/text/query";
import { EN_2006, EN_2016, engineFor } from "./helpers";

describe("a word's page bound (D133)", () => {
  test("bounds every page of a window over its best three chunks, is at most 1.75 × its chunk bound, and below it where pages hold the word in fewer chunks", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { text } = engine;
    const { firstDoc, chunkCounts } = engine.snapshot.pages;
    const ranges = new RangeScorer(text);
    const { sampleWords, common, typo } = querySampler(engine.snapshot, 133);
    // Rare and common words, and typo words (several forms, each over the three fields' lists).
    const words = [...sampleWords(6), ...common(20, 200).slice(0, 3), ...sampleWords(5).map(typo)];
    let windows = 0;
    let tighter = 0;
    for (const word of words) {
      const terms = queryTerms(parseQuery(word, engine.lang), { text, lang: engine.lang } as never);
      if (terms.words.length !== 1) continue;
      const lists = new QueryLists(text, { derived: text.derive(terms.fuzzy), words: 1, required: 1, phraseWords: 0 });
      const forms = lists.byWord[0]!;
      if (!forms.length) continue;
      const readerOf = () =>
        new WordReader(
          0,
          forms,
          text,
          () => text.newCursor(),
          () => new ListReader(),
        );
      // Windows of one page and of 16 pages, in page order (as the executor reads them: forward).
      for (const span of [1, 16]) {
        const reader = readerOf();
        for (let p = 0; p + span <= firstDoc.length; p += span) {
          const from = firstDoc[p]!;
          const to = firstDoc[p + span - 1]! + chunkCounts[p + span - 1]! - 1;
          if (to < from) continue;
          const scores = ranges.score(lists, from, to + 1);
          if (!scores.count) continue;
          let truth = 0;
          let page = -1;
          let best: number[] = [];
          const close = () => {
            if (best.length) truth = Math.max(truth, pageScore(best[0]!, best[1] ?? 0, best[2] ?? 0, 0));
          };
          for (let i = 0; i < scores.count; i++) {
            const d = scores.docs[i]!;
            let q = p;
            while (q + 1 < p + span && firstDoc[q + 1]! <= d) q++;
            if (q !== page) {
              close();
              page = q;
              best = [];
            }
            best.push(scores.all[i]!);
            best.sort((a, b) => b - a);
          }
          close();
          const chunkBound = reader.bound(from, to);
          const pageBound = reader.pageBound;
          expect(pageBound).toBeGreaterThanOrEqual(truth * (1 - 1e-9));
          expect(pageBound).toBeLessThanOrEqual(pageFactor() * chunkBound * (1 + 1e-9));
          windows++;
          if (pageBound < pageFactor() * chunkBound * 0.99) tighter++;
        }
      }
    }
    expect(windows).toBeGreaterThan(300);
    // Many windows hold only pages with the word in fewer than three chunks, or chunks below the best.
    expect(tighter).toBeGreaterThan(windows / 3);
  }, 300_000);
});
