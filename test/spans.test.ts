/**
 * The smallest span holding a term of each group (shard-positions.ts smallestSpan(), proximity in
 * passages), asked chunk after chunk: the right span, from each list's blocks decoded once for
 * the run of chunks rather than once a chunk.
 */
import { expect, test } from "bun:test";
import { TEXT_FIELD } from "../src/search/postings/fields";
import { indexKey } from "../src/search/text/analyze";
import { open } from "../src/search";
import { decodedDuring, EN_2006, EN_2016, engineFor, snapshotFor } from "./helpers";

/** The fewest consecutive words holding one position of each list (each list sorted, at least one position). */
function bruteSpan(lists: number[][]): number {
  let best = Infinity;
  for (const start of lists.flat()) {
    let end = start;
    for (const l of lists) {
      const p = l.find((x) => x >= start);
      if (p === undefined) {
        end = Infinity;
        break;
      }
      end = Math.max(end, p);
    }
    best = Math.min(best, end - start + 1);
  }
  return best;
}

test("smallestSpan chunk after chunk: the brute-force span, each list's blocks decoded once", async () => {
  const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
  const { text } = engine;
  // Two lists dense enough to be read from their tfs a chunk (dense-lists.ts), two read block by block.
  const groups = ["the", "of", "war", "city"].map((w) => [text.termOf(indexKey(w))!]);
  const chunks = text.documentCount;

  // The reference first (its own reads, not counted).
  const want: number[] = [];
  for (let d = 0; d < chunks; d++) {
    const held = groups.map(([t]) => [...(text.positions(t!, TEXT_FIELD, d) ?? [])]).filter((p) => p.length);
    want.push(held.length < 2 ? 0 : bruteSpan(held));
  }

  const { result: got, decoded } = decodedDuring(() =>
    Array.from({ length: chunks }, (_x, d) => text.smallestSpan(groups, TEXT_FIELD, d)),
  );
  expect(got).toEqual(want);
  expect(got.filter((s) => s > 0).length).toBeGreaterThan(chunks / 2);
  // Every block of the lists read block by block at most once (before: a block of each list for every chunk, 2,069,829
  // postings; after, 658); the dense lists' positions are found from their tfs a chunk.
  const postings = groups
    .slice(2)
    .reduce((n, [t]) => n + text.termLists(t!).find((l) => l.field === TEXT_FIELD)!.df, 0);
  expect(decoded).toBeGreaterThan(0);
  expect(decoded).toBeLessThanOrEqual(postings);
  // Asked in any order (passages ask chunks best first): the same spans.
  const order = want.map((_x, d) => d).reverse();
  expect(order.map((d) => text.smallestSpan(groups, TEXT_FIELD, d))).toEqual(order.map((d) => want[d]!));
}, 120_000);

test("a search lets go of the kept cursors once they are full: the next one's spans still read each block once", async () => {
  // An engine of its own: no list kept by another test.
  const engine = open(await snapshotFor({ dumps: [EN_2006, EN_2016] }));
  const { text } = engine;
  // More lists than the shard keeps cursors for (256), each looked up once, as a process's searches do.
  const words = engine
    .search("war", { limit: 50 })
    .hits.flatMap((h) => h.text.toLowerCase().split(/[^a-z]+/))
    .map((w) => text.termOf(indexKey(w)))
    .filter((t): t is number => t !== undefined && text.termLists(t).some((l) => l.field === TEXT_FIELD));
  const groups = ["war", "city"].map((w) => [text.termOf(indexKey(w))!]);
  const many = [...new Set(words)].filter((t) => !groups.some(([g]) => g === t));
  expect(many.length).toBeGreaterThan(300);
  for (let i = 0; i + 1 < many.length; i += 2) text.smallestSpan([[many[i]!], [many[i + 1]!]], TEXT_FIELD, 0);
  engine.search("albedo");
  const { decoded } = decodedDuring(() => {
    for (let d = 0; d < text.documentCount; d++) text.smallestSpan(groups, TEXT_FIELD, d);
  });
  const postings = groups.reduce((n, [t]) => n + text.termLists(t!).find((l) => l.field === TEXT_FIELD)!.df, 0);
  // Before: past 256 lists, a list not kept was read on the shard's one cursor, a block for every chunk (995,852
  // postings when the other search tests ran first).
  expect(decoded).toBeLessThanOrEqual(postings);
}, 120_000);

/** The most weight of distinct groups among the positions of a run of `width` words, by trying every start. */
function bruteWindow(lists: { group: number; positions: number[] }[], weights: number[], width: number): number {
  let most = 0;
  for (const start of lists.flatMap((l) => l.positions)) {
    const held = new Set(
      lists.filter((l) => l.positions.some((p) => p >= start && p < start + width)).map((l) => l.group),
    );
    most = Math.max(
      most,
      [...held].reduce((sum, g) => sum + weights[g]!, 0),
    );
  }
  return most;
}

test("windowWeight: a run of words' weight, each group counted once, by a brute force over the positions (D145)", async () => {
  const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
  const { text } = engine;
  const term = (w: string) => text.termOf(indexKey(w))!;
  // A group of two terms, a term in two groups, a group weighing nothing.
  const groups = [[term("war"), term("army")], [term("the")], [term("city"), term("war")], [term("of")]];
  const weights = [3, 0.5, 2, 0];
  let compared = 0;
  let held = 0;
  for (let d = 0; d < text.documentCount; d += 3)
    for (const width of [1, 5, 20]) {
      const lists = groups.flatMap((g, group) =>
        g.map((t) => ({ group, positions: [...(text.positions(t, TEXT_FIELD, d) ?? [])] })),
      );
      const want = bruteWindow(lists, weights, width);
      expect([d, width, text.windowWeight(groups, weights, TEXT_FIELD, d, width)]).toEqual([d, width, want]);
      compared++;
      if (want > 3) held++;
    }
  expect(compared).toBeGreaterThan(3000);
  // Runs holding more than one group: the sums were tried.
  expect(held).toBeGreaterThan(100);
}, 120_000);
