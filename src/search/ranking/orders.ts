/**
 * Page orders (D51): for each word whose lists are long enough to be pruned, and each short
 * prefix whose words' lists are, its pages in the order a one-word search ranks them when no
 * title is involved, computed when the snapshot is built. Title groups and boosts depend only
 * on the query's word too, but they are cheap to find at search time (the title shard), while
 * this order costs every posting of the word: stored, a one-word search scores only the pages
 * it returns.
 *
 * Each order is the first ORDER_LENGTH pages (score, then page), and the number of pages holding
 * the word at all. The section, little-endian u32 words:
 *   the rules' fingerprint (rules.ts) | count | keys' byte length | keys (JSON array of strings, padded to 4 bytes)
 *   | starts (count + 1) | holding (count) | pages (starts[count])
 * A key is the word's index key after "1" when it is a prefix (the query's last word, typed
 * on), "0" when it is not.
 */
import type { Container } from "../../snapshot";
import { bestThreeScore, placeBestThree, RULES_FINGERPRINT } from "./rules";
import type { SearchContext } from "../stages/context";
import { ONE_TYPO_FROM, queryTerms } from "../stages/terms";
import { MIN_PREFIX, parseQuery } from "../text/query";
import { popcount, type WordSpec } from "../index/shard-types";
import { COLLECT_EVERY_MS } from "../options";
import { bestEntries } from "./topk";
import { indexKey, termOfKey } from "../text/analyze";

export const ORDERS_SECTION = "index.text.orders";
/**
 * Pages kept per word: deep pages of results, and enough that a word's title matches among
 * them fill a page (with 100, "in" at 1M chunks, a prefix of 808 titles, scored all 808).
 */
export const ORDER_LENGTH = 1000;
/** The longest beginnings given an order: longer ones may hold typos, which the pruned search leaves. */
const PREFIX_LETTERS = ONE_TYPO_FROM - 1;

/** A word's pages, best first, and how many pages hold it. */
export interface PageOrder {
  pages: Uint32Array;
  holding: number;
}

/** The stored orders of a snapshot (absent in files built before them: every lookup is then undefined). */
export class PageOrders {
  private readonly entries = new Map<string, number>();
  private readonly starts: Uint32Array;
  private readonly holding: Uint32Array;
  private readonly pages: Uint32Array;

  constructor(bytes: Uint8Array) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
    // Orders are ranking output: made under other rules they would rank wrongly (D61).
    if (words[0] !== RULES_FINGERPRINT)
      throw new Error(
        `this snapshot's page orders were made under other ranking rules (${words[0]}; this Tome ranks by ${RULES_FINGERPRINT}). Rebuild it from its dump with \`bun run snapshot:build\` (or \`bun run snapshot:update\` from it), then start again.`,
      );
    const count = words[1]!;
    const keyBytes = words[2]!;
    const keys = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + keyBytes))) as string[];
    for (const [i, k] of keys.entries()) this.entries.set(k, i);
    const at = 3 + ((keyBytes + 3) >>> 2);
    this.starts = words.subarray(at, at + count + 1);
    this.holding = words.subarray(at + count + 1, at + 2 * count + 1);
    this.pages = words.subarray(at + 2 * count + 1);
  }

  static of(container: Container): PageOrders | undefined {
    return container.has(ORDERS_SECTION) ? new PageOrders(container.section(ORDERS_SECTION)) : undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The order of a query word as its spec says it (a prefix or not); undefined when none is stored. */
  get(spec: WordSpec): PageOrder | undefined {
    const i = this.entries.get(orderKey(spec.key, spec.prefix));
    if (i === undefined) return undefined;
    return { pages: this.pages.subarray(this.starts[i]!, this.starts[i + 1]!), holding: this.holding[i]! };
  }
}

function orderKey(key: string, prefix: boolean): string {
  return `${prefix ? 1 : 0}${key}`;
}

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
    const key = orderKey(terms.exact[0]!.key, query.prefixLast);
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
