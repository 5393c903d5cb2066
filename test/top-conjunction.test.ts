/**
 * The conjunction's best pages (src/search/ranking/top-conjunction.ts), read window by window
 * with block bounds, are the best pages of the whole conjunction: the same pages, each with
 * every chunk holding the words and the same scores, whatever windows it skipped.
 */
import { describe, expect, test } from "bun:test";
import { querySampler } from "../bench/queries";
import { matchAll } from "../src/search/ranking/conjunction";
import { pageScore, placeBestThree } from "../src/search/ranking/rules";
import { TopConjunctionRanker } from "../src/search/ranking/top-conjunction";
import { matchBuffer } from "../src/search/index/shard";
import type { Matches, WordSpec } from "../src/search/index/shard-types";
import { indexKey } from "../src/search/text/analyze";
import { Catalog } from "../src/search/stages/catalog";
import { EN_2006, EN_2016, engineFor } from "./helpers";

const specs = (words: string[]): WordSpec[] => words.map((w) => ({ key: indexKey(w), prefix: false, fuzzy: 0 }));

/** Each page's chunks, as [chunk, score] in chunk order. */
function chunksByPage(m: Matches, pageOfChunk: Int32Array): Map<number, [number, number][]> {
  const pages = new Map<number, [number, number][]>();
  for (let i = 0; i < m.count; i++) {
    const p = pageOfChunk[m.docs[i]!]!;
    if (!pages.has(p)) pages.set(p, []);
    pages.get(p)!.push([m.docs[i]!, m.scores[i]!]);
  }
  for (const chunks of pages.values()) chunks.sort((a, b) => a[0] - b[0]);
  return pages;
}

/** The best `need` pages as the ranking rules score a page of tier 0 with no title boost: score, then page. */
function best(pages: Map<number, [number, number][]>, need: number, apart: Set<number>): [number, number][] {
  const scored: [number, number][] = [];
  for (const [p, chunks] of pages) {
    if (apart.has(p)) continue;
    const three = new Float64Array(3).fill(-1);
    for (const [, s] of chunks) placeBestThree(three, 0, s);
    scored.push([p, pageScore(three[0]!, three[1]!, three[2]!, 0)]);
  }
  return scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, need);
}

describe("the conjunction's best pages", () => {
  test("are the whole conjunction's, every chunk of each, whatever the windows skipped", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { text, snapshot } = engine;
    const catalog = new Catalog(snapshot, text.documentCount);
    const { sampleWords, common, pick } = querySampler(snapshot, 44);
    const frequent = common(30, 300);
    const queries = [
      ...Array.from({ length: 60 }, () => [pick(frequent), pick(frequent)]),
      ...Array.from({ length: 60 }, () => [pick(frequent), ...sampleWords(1)]),
      ...Array.from({ length: 30 }, () => [pick(frequent), pick(frequent), pick(frequent)]),
    ];
    let skipped = 0;
    let reread = 0;
    let compared = 0;
    for (const windowDocs of [5, 64, 1024]) {
      const ranker = new TopConjunctionRanker(text, catalog, windowDocs);
      for (const words of queries) {
        const required = 2 ** words.length - 1;
        const all = matchAll(text, text.newCursor(), specs(words), required);
        if (!all) continue; // every word too common for a conjunction to pay: the exhaustive passes rank it
        const whole = chunksByPage(all, catalog.pageOfChunk);
        if (whole.size < 2) continue;
        for (const need of [1, 3, 10]) {
          // The best page ranks apart (as a title match would): every chunk of it comes back, and the rest rank without it.
          const apart = new Set(best(whole, 1, new Set()).map(([p]) => p));
          const top = ranker.run(
            { words: specs(words), required, need, budget: Infinity, apart: [...apart], isApart: (p) => apart.has(p) },
            matchBuffer(0),
            matchBuffer(0),
          )!;
          const found = chunksByPage(top.matches, catalog.pageOfChunk);
          const expected = best(whole, need, apart);
          const label = `${words.join(" ")} need ${need} window ${windowDocs}`;
          expect({ label, pages: best(found, need, apart) }).toEqual({ label, pages: expected });
          for (const [p] of [...expected, ...[...apart].map((a) => [a])])
            expect({ label, page: p, chunks: found.get(p!) }).toEqual({ label, page: p, chunks: whole.get(p!) });
          skipped += top.skipped;
          reread += top.reread;
          compared++;
        }
      }
    }
    // The cases ran where the executor prunes: windows skipped, and pages across a skipped window read again.
    expect(compared).toBeGreaterThan(300);
    expect(skipped).toBeGreaterThan(100);
    expect(reread).toBeGreaterThan(0);
  }, 120_000);
});
