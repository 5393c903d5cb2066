/**
 * A list's bound in a window of chunks (ranking/list-reader.ts): from its blocks' impacts, or,
 * for a word ranked alone (`sparse`), from its postings in the window when its block there spans
 * far more chunks than the window. Either way never below what a posting of the window adds; the
 * sparse reading is 0 where the list holds none of the window's chunks, which an impact is not.
 */
import { describe, expect, test } from "bun:test";
import { querySampler } from "../bench/queries";
import { ListReader } from "../src/search/ranking/list-reader";
import { QueryLists } from "../src/search/ranking/query-lists";
import { queryTerms } from "../src/search/stages/terms";
import { parseQuery } from "../src/search/text/query";
import { EN_2006, EN_2016, engineFor } from "./helpers";

describe("a list's bound in a window", () => {
  test("read from a sparse block's postings: never below a posting of the window, 0 where it holds none (an impact is not)", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { text } = engine;
    const { firstDoc, chunkCounts } = engine.snapshot.pages;
    const { sampleWords, typo } = querySampler(engine.snapshot, 61);
    let windows = 0;
    let empty = 0;
    for (const word of [...sampleWords(10), ...sampleWords(6).map(typo)]) {
      const terms = queryTerms(parseQuery(word, engine.lang), { text, lang: engine.lang } as never);
      const lists = new QueryLists(text, { derived: text.derive(terms.fuzzy), words: 1, required: 1, phraseWords: 0 });
      for (const form of lists.forms)
        for (const list of form.lists) {
          const [sparse, impacts] = [true, false].map((s) =>
            new ListReader().open(text.newCursor(), list, text.norms(list.field), undefined, s),
          );
          // What each posting adds, by chunk.
          const adds = new Map<number, number>();
          const { lengths, table } = text.norms(list.field);
          text
            .newCursor()
            .open(list.address)
            .forEach((doc, tf) => {
              adds.set(doc, (list.unit * tf) / table[lengths[doc]!]!);
            });
          // Windows of 4 pages, forward (as the executor reads them).
          for (let p = 0; p + 4 <= firstDoc.length; p += 4) {
            const from = firstDoc[p]!;
            const to = firstDoc[p + 3]! + chunkCounts[p + 3]! - 1;
            let most = 0;
            for (let d = from; d <= to; d++) most = Math.max(most, adds.get(d) ?? 0);
            const read = sparse!.bound(from, to);
            const bounded = impacts!.bound(from, to);
            expect(read).toBeGreaterThanOrEqual(most * (1 - 1e-12));
            expect(read).toBeLessThanOrEqual(bounded * (1 + 1e-12));
            if (most === 0 && bounded > 0) {
              expect(read).toBe(0);
              empty++;
            }
            windows++;
          }
        }
    }
    expect(windows).toBeGreaterThan(1000);
    // Windows an impact bounded though the list held none of their chunks.
    expect(empty).toBeGreaterThan(windows / 10);
  }, 300_000);
});
