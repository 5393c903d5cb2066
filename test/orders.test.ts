/**
 * Page orders (D51, src/search/ranking/orders.ts): a one-word search ranked from the order stored for
 * its word ranks as the exhaustive search, title groups and paging included, and falls back
 * when the order is too short to tell.
 */
import { describe, expect, test } from "bun:test";
import { type Engine, PageOrders, type Pruning } from "../src/search";
import { querySampler } from "../bench/queries";
import { indexKey } from "../src/search/text/analyze";
import { EN_2006, EN_2016, engineFor, withOrders } from "./helpers";

/** The pruned search on whatever the lists' length (these snapshots are small), never giving up. */
const PRUNED: Pruning = { from: 0, workShare: Infinity };

/** One-word queries: words of the text, common words, both as typed on (a prefix) or ended, and beginnings of words. */
function oneWordQueries(engine: Engine, count: number): string[] {
  const { pick, sampleWords, common } = querySampler(engine.snapshot, 11);
  const frequent = common(40, 800);
  return Array.from({ length: count }, (_x, i) => {
    if (i % 6 >= 4) return [...(sampleWords(1, (w) => w.length >= 7)[0] ?? "history")].slice(0, 2 + (i % 3)).join("");
    const word = i % 2 ? pick(frequent) : (sampleWords(1)[0] ?? "the");
    return i % 6 < 2 ? word : `${word}.`;
  });
}

/** The engine with orders `length` pages long for its words of `least` postings or more. */
/** A search's hits as compared: page, chunk, score, and the passage as cropped and highlighted (the words matched depend on the path too). */
const shown = (r: ReturnType<Engine["search"]>) =>
  r.hits.map((h) => `${h.page.pageId}#${h.chunk} ${h.score.toPrecision(12)} ${h.formatted.text}`);

type Result = ReturnType<Engine["search"]>;

/**
 * Each query at each [limit, offset], searched by the engine with orders and by the exhaustive
 * search: the same hits. `seen` is told every pair, and what the engine without orders weighed.
 */
function compareAll(
  engine: Engine,
  ordered: Engine,
  queries: string[],
  pages: [number, number][],
  seen: (i: number, fast: Result, oracle: Result, unordered: Result) => void,
): void {
  for (const [i, q] of queries.entries()) {
    for (const [limit, offset] of pages) {
      const options = { limit, offset, budgetMs: Infinity };
      const oracle = engine.search(q, { ...options, pruning: false });
      const fast = ordered.search(q, { ...options, pruning: PRUNED });
      expect({ q, limit, offset, hits: shown(fast) }).toEqual({ q, limit, offset, hits: shown(oracle) });
      seen(i, fast, oracle, engine.search(q, { ...options, pruning: PRUNED }));
    }
  }
}

/** compareAll() of the queries at each [limit, offset], counting the searches `counts` says yes to (given the engine with orders' result, then the one without's). */
function countWhere(
  engine: Engine,
  ordered: Engine,
  queries: string[],
  pages: [number, number][],
  counts: (fast: Result, unordered: Result) => boolean,
): number {
  let n = 0;
  compareAll(engine, ordered, queries, pages, (_i, fast, _oracle, unordered) => {
    if (counts(fast, unordered)) n++;
  });
  return n;
}

describe("page orders", () => {
  test("orders made under other ranking rules are refused, with how to rebuild (D61)", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const bytes = engine.pageOrders(1, 10);
    expect(new PageOrders(bytes).size).toBeGreaterThan(0);
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, 1);
    words[0] = (words[0]! + 1) >>> 0;
    expect(() => new PageOrders(bytes)).toThrow(/other ranking rules.*snapshot:build/);
  }, 120_000);

  test("one-word searches ranked from full orders rank as the exhaustive search", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    // Every word of the index has its order.
    const { ordered, orders } = withOrders(engine, 1, 1000);
    expect(orders.size).toBeGreaterThan(50_000);
    let fromOrders = 0;
    let prefixesFromOrders = 0;
    let sameTotal = 0;
    const queries = oneWordQueries(engine, 600);
    compareAll(
      engine,
      ordered,
      queries,
      [
        [10, 0],
        [3, 7],
        [50, 20],
      ],
      (i, fast, oracle, unordered) => {
        const q = queries[i]!;
        // The stored count is of the pages holding the word; the exhaustive one adds title matches that do not.
        expect({ q, lower: fast.estimatedTotalHits <= oracle.estimatedTotalHits }).toEqual({ q, lower: true });
        if (fast.estimatedTotalHits === oracle.estimatedTotalHits) sameTotal++;
        // Pages scored, against the chunks or pages the search without orders weighs.
        if (fast.work.candidates < unordered.work.candidates) {
          fromOrders++;
          if (i % 6 >= 4 && !engine.text.has(q)) prefixesFromOrders++;
        }
      },
    );
    // The comparison must exercise the orders, not only the searches they leave to the pruned one; beginnings of words too.
    expect(fromOrders).toBeGreaterThan(queries.length * 2);
    expect(prefixesFromOrders).toBeGreaterThan(queries.length / 3);
    expect(sameTotal).toBeGreaterThan(queries.length * 2);
  }, 300_000);

  test("a function word typed on is whole (D79): its order is stored as the word ended, and “the” ranks from it", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { ordered, orders } = withOrders(engine, 1000, 50);
    const the = { key: indexKey("the"), fuzzy: 0 };
    expect(orders.get({ ...the, prefix: false })).toBeDefined();
    expect(orders.get({ ...the, prefix: true })).toBeUndefined();
    const options = { limit: 10, budgetMs: Infinity };
    const fast = ordered.search("the", { ...options, pruning: PRUNED });
    const oracle = engine.search("the", { ...options, pruning: false });
    expect(shown(fast)).toEqual(shown(oracle));
    expect(fast.work.candidates).toBeLessThan(engine.search("the", { ...options, pruning: PRUNED }).work.candidates);
  }, 300_000);

  test("orders too short to tell leave the search to the pruned one, and rank the same", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { ordered } = withOrders(engine, 40, 6);
    const pages: [number, number][] = [
      [4, 0],
      [10, 0],
      [5, 10],
    ];
    const fellBack = countWhere(
      engine,
      ordered,
      oneWordQueries(engine, 300),
      pages,
      (fast, unordered) => fast.work.postings === unordered.work.postings,
    );
    expect(fellBack).toBeGreaterThan(100);
  }, 300_000);

  test("several words, each with an order, rank as the exhaustive search, from the orders or after giving up", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    // Orders of 50 pages: the threshold algorithm must stop on its bound, or give up, well before most orders end.
    const { ordered } = withOrders(engine, 1, 50);
    const { pick, sampleWords, common } = querySampler(engine.snapshot, 13);
    const frequent = common(60, 800);
    const queries = Array.from({ length: 240 }, (_x, i) => {
      const words = Array.from({ length: 2 + (i % 3) }, (_w, k) =>
        k % 2 === i % 2 ? pick(frequent) : (sampleWords(1)[0] ?? "the"),
      );
      return i % 4 === 3 ? `${words.join(" ")}.` : words.join(" ");
    });
    let fromOrders = 0;
    let gaveUp = 0;
    compareAll(
      engine,
      ordered,
      queries,
      [
        [10, 0],
        [3, 7],
        [20, 30],
      ],
      (_i, fast, _oracle, unordered) => {
        if (fast.work.candidates < unordered.work.candidates) fromOrders++;
        // Given up: the work of the search without orders, and what the conjunction read again (D52) when it fell short.
        else if (fast.work.postings >= unordered.work.postings) gaveUp++;
      },
    );
    // Of the 720 searches, some answered from the orders with fewer pages scored, some given up on (180 and 539 when last changed).
    expect(fromOrders).toBeGreaterThan(80);
    expect(gaveUp).toBeGreaterThan(80);
  }, 300_000);

  test("several words whose conjunction falls short rank past it from the orders of the words that have one, as the exhaustive search", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    // Orders only for words of 40 postings or more: a rare word has none, and its pages are scored apart.
    const { ordered, orders } = withOrders(engine, 40, 50);
    const { pick, sampleWords, common } = querySampler(engine.snapshot, 17);
    const frequent = common(60, 800);
    const unordered = (w: string) => !orders.get({ key: indexKey(w), prefix: false, fuzzy: 0 });
    const queries = Array.from({ length: 200 }, (_x, i) => {
      const words = [
        pick(frequent),
        sampleWords(1, unordered)[0] ?? "the",
        ...Array.from({ length: i % 3 }, () => pick(frequent)),
      ];
      return i % 4 === 3 ? `${words.join(" ")}.` : words.join(" ");
    });
    const pages: [number, number][] = [
      [10, 0],
      [3, 7],
    ];
    const past = countWhere(
      engine,
      ordered,
      queries,
      pages,
      (fast, unordered) => fast.work.candidates < unordered.work.candidates,
    );
    // Of the 400 searches, 186 answered past the conjunction when written.
    expect(past).toBeGreaterThan(60);
  }, 300_000);

  test("one word with typos ranks from its typo terms' orders as the exhaustive search, the pages of terms with none bounded apart", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { sampleWords, typo } = querySampler(engine.snapshot, 19);
    // English words of 5 letters or more with one letter changed; some as typed on (a prefix), some ended.
    const queries = Array.from({ length: 240 }, (_x, i) => {
      const word = typo(sampleWords(1, (w) => /^[a-z]{5,}$/.test(w))[0] ?? "history");
      return i % 3 === 2 ? `${word}.` : word;
    });
    // Every term ordered; then only terms of 20 postings or more (the others' pages bounded apart), in orders of 30 pages that often end.
    for (const [least, length, fewest] of [
      [1, 1000, 200],
      [20, 30, 150],
    ] as const) {
      const { ordered } = withOrders(engine, least, length);
      const pages: [number, number][] = [
        [10, 0],
        [3, 7],
      ];
      // Tiny lists: the orders' pages may outnumber the chunks the exhaustive search scores, so any other work tells the path.
      const fromOrders = countWhere(
        engine,
        ordered,
        queries,
        pages,
        (fast, unordered) =>
          fast.work.postings !== unordered.work.postings || fast.work.candidates !== unordered.work.candidates,
      );
      // Of the 480 searches, 394 (every term ordered) and 268 answered from the orders when written; fewer once
      // every search ranked at least the pages proximity reorders (D61).
      expect({ least, fromOrders: fromOrders > fewest }).toEqual({ least, fromOrders: true });
    }
  }, 300_000);

  test("several words from their orders are a pruned search: not asked with pruning off, nor past its number of words", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const { ordered } = withOrders(engine, 1, 1000);
    const q = "history of the city";
    const work = (pruning: false | Pruning) => ordered.search(q, { pruning, budgetMs: Infinity }).work.candidates;
    const exhaustive = engine.search(q, { pruning: false, budgetMs: Infinity }).work.candidates;
    expect(work(PRUNED)).toBeLessThan(exhaustive / 4);
    expect(work(false)).toBe(exhaustive);
    expect(work({ ...PRUNED, words: 3 })).toBeGreaterThan(work(PRUNED));
  }, 120_000);

  test("a title match ranks above the word's best untitled pages, from the order or past its end", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    // A word in many titles: the first page is title matches only, most of them past the order's two pages.
    const q = "american";
    const { ordered } = withOrders(engine, 40, 2);
    const options = { limit: 5, budgetMs: Infinity };
    const oracle = engine.search(q, { ...options, pruning: false });
    expect(oracle.hits.length).toBe(5);
    for (const h of oracle.hits) expect(h.page.title).toMatch(/\bamerican/i);
    expect(shown(ordered.search(q, { ...options, pruning: PRUNED }))).toEqual(shown(oracle));
  }, 120_000);

  test("every build stores the section; the shared dumps have no word of 16,384 postings, so it holds no order", async () => {
    const engine = await engineFor({ dumps: [EN_2006, EN_2016] });
    const stored = PageOrders.of(engine.snapshot.container);
    expect(stored?.size).toBe(0);
    expect(new PageOrders(engine.pageOrders()).size).toBe(0);
  }, 120_000);
});
