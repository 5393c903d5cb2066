/** Page orders (D51, their section: page-orders.ts) made when a snapshot is built, as a one-word search ranks its pages. */
import { bestThreeScore, placeBestThree, RULES_FINGERPRINT } from "./rules";
import type { SearchContext } from "../stages/context";
import { ONE_TYPO_FROM, queryTerms } from "../stages/terms";
import { MIN_PREFIX, parseQuery } from "../text/query";
import { popcount } from "../index/shard-types";
import { COLLECT_EVERY_MS } from "../options";
import { bestEntries } from "./topk";
import { indexKey, termOfKey } from "../text/analyze";
import { orderKey } from "./page-orders";

/** The longest beginnings given an order: longer ones may hold typos, which the pruned search leaves. */
const PREFIX_LETTERS = ONE_TYPO_FROM - 1;

/**
 * The orders, `length` pages long, of the one-word queries whose lists hold `least` postings
 * or more (PRUNE_FROM when built), as the search would rank their pages with no title group
 * or boost: each page's best three chunks holding the word, scored by match() (the numbers
 * the search computes).
 */
export function buildPageOrders(
  ctx: SearchContext,
  least: number,
  length: number,
  progress: (done: number, total: number) => void = () => {},
): Uint8Array {
  const { text, catalog, scratch } = ctx;
  const queries = orderedQueries(ctx, least);
  const stored: string[] = [];
  const keys = new Set<string>();
  const orders: Uint32Array[] = [];
  const holding: number[] = [];
  const pages = catalog.pageCount;
  // Per page, its best three chunks; per page reached, its page and score: reused, so that ordering makes no garbage a page.
  const best = new Float64Array(3 * pages);
  const reached = new Uint8Array(pages);
  const touched = new Int32Array(pages);
  const entryPage = new Int32Array(pages);
  const entryScore = new Float64Array(pages);
  const entryClass = new Uint8Array(pages);
  let collectedAt = performance.now();
  queries.forEach((q, i) => {
    if (i % 64 === 0) progress(i, queries.length);
    // The mapped file counts as heap: left alone, the collector lets the lookups' garbage grow to gigabytes (2.4 GB at 1M chunks).
    if (performance.now() - collectedAt >= COLLECT_EVERY_MS) {
      Bun.gc(false);
      collectedAt = performance.now();
    }
    const query = parseQuery(q, ctx.lang);
    if (query.words.length !== 1) return;
    const terms = queryTerms(query, ctx);
    const key = orderKey(terms.exact[0]!.key, terms.exact[0]!.prefix);
    if (terms.typoable || keys.has(key) || text.postingsOf(text.derive(terms.exact)) < least) return;
    keys.add(key);
    const matches = text.match(terms.exact, { into: scratch.textBuffer(0) });
    let count = 0;
    for (let i = 0; i < matches.count; i++) {
      const p = catalog.pageOfChunk[matches.docs[i]!]!;
      if (!reached[p]) {
        reached[p] = 1;
        touched[count++] = p;
        best[3 * p] = best[3 * p + 1] = best[3 * p + 2] = -1;
      }
      const m = matches.masks[i]!;
      if ((m & terms.required) >>> 0 === terms.required) placeBestThree(best, 3 * p, matches.scores[i]! * popcount(m));
    }
    let entries = 0;
    for (let t = 0; t < count; t++) {
      const p = touched[t]!;
      reached[p] = 0;
      if (best[3 * p]! < 0) continue;
      entryPage[entries] = p;
      entryScore[entries++] = bestThreeScore(best, 3 * p, 0);
    }
    stored.push(key);
    orders.push(
      Uint32Array.from(bestEntries(entryClass, entryScore, entries, length, entryPage), (e) => entryPage[e]!),
    );
    holding.push(count);
  });
  progress(queries.length, queries.length);
  return packOrders(stored, orders, holding);
}

/**
 * The one-word queries given an order: each word ended (a full stop ends it) whose lists hold
 * `least` postings, typed on (a prefix) when it and the words it begins do; and each beginning
 * of MIN_PREFIX to PREFIX_LETTERS letters that is not a word, whose words' lists hold `least`
 * postings together (longer ones may hold typos: the pruned search leaves those). Meilisearch
 * keeps the documents of frequent prefixes for the same reason (word_prefix_docids).
 */
function orderedQueries(ctx: SearchContext, least: number): string[] {
  const words: string[] = [];
  const prefixPostings = new Map<string, number>();
  ctx.text.eachTerm((key, postings, withLonger) => {
    const word = termOfKey(key);
    if (postings >= least) words.push(`${word}.`);
    if (withLonger >= least) words.push(word);
    const letters = [...word];
    for (let n = MIN_PREFIX; n < letters.length && n <= PREFIX_LETTERS; n++) {
      const prefix = letters.slice(0, n).join("");
      prefixPostings.set(prefix, (prefixPostings.get(prefix) ?? 0) + postings);
    }
  });
  const prefixes = [...prefixPostings]
    .filter(([prefix, postings]) => postings >= least && !ctx.text.has(indexKey(prefix)))
    .map(([prefix]) => prefix);
  return [...words, ...prefixes];
}

function packOrders(keys: string[], orders: Uint32Array[], holding: number[]): Uint8Array {
  const keyBytes = new TextEncoder().encode(JSON.stringify(keys));
  const keyWords = (keyBytes.byteLength + 3) >>> 2;
  const total = orders.reduce((n, o) => n + o.length, 0);
  const words = new Uint32Array(3 + keyWords + keys.length + 1 + keys.length + total);
  words[0] = RULES_FINGERPRINT;
  words[1] = keys.length;
  words[2] = keyBytes.byteLength;
  new Uint8Array(words.buffer).set(keyBytes, 12);
  let at = 3 + keyWords;
  const startsAt = at;
  at += keys.length + 1;
  const holdingAt = at;
  at += keys.length;
  let start = 0;
  orders.forEach((o, i) => {
    words[startsAt + i] = start;
    words[holdingAt + i] = holding[i]!;
    words.set(o, at + start);
    start += o.length;
  });
  words[startsAt + keys.length] = start;
  return new Uint8Array(words.buffer);
}
