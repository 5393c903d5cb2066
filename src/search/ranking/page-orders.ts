/**
 * Page orders (D51, kept by D90 for one-word searches): for each word whose lists are long
 * enough to be pruned, and each short prefix whose words' lists are, its pages in the order a
 * one-word search ranks them when no title is involved, computed when the snapshot is built
 * (plans/orders.ts). Title groups and boosts depend only
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
import { type Container, SnapshotError } from "../../snapshot";
import type { WordSpec } from "../postings/shard-types";
import { commandLine } from "../../invocation";
import { printableName } from "../../printable";
import { rulesFingerprint } from "./rules";

export const ORDERS_SECTION = "index.text.orders";
/**
 * Pages kept per word: deep pages of results, and enough that a word's title matches among
 * them fill a page (with 100, "in" at 1M chunks, a prefix of 808 titles, scored all 808).
 */
export const ORDER_LENGTH = 1000;

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

  /** `path`: the snapshot's, for the refusal of orders made under other rules. */
  constructor(bytes: Uint8Array, path?: string) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
    // Orders are ranking output: made under other rules they would rank wrongly (D61). A SnapshotError, as the
    // analyzer version's refusal: a plain Error was taken for damage at open ("is it damaged? snapshot:verify …").
    const fingerprint = rulesFingerprint();
    if (words[0] !== fingerprint)
      throw new SnapshotError(
        `${path === undefined ? "this snapshot" : printableName(path)}: its page orders were made under other ranking rules (${words[0]}; this Tome ranks by ${fingerprint}), by another release of Tome or under other score parameters; it is not damaged. Rebuild it from its dump with \`${commandLine("snapshot:build --dump <dump>")}\`, then start again.`,
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
    return container.has(ORDERS_SECTION)
      ? new PageOrders(container.section(ORDERS_SECTION), container.path)
      : undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The order of a word searched alone, as a typo term's bound (D100, D124): its one-word order, or its typo order. */
  typoOrder(key: string): PageOrder | undefined {
    return this.at(this.entries.get(orderKey(key, false)) ?? this.entries.get(typoOrderKey(key)));
  }

  /** The order of a query word as its spec says it (a prefix or not); undefined when none is stored. */
  get(spec: WordSpec): PageOrder | undefined {
    return this.at(this.entries.get(orderKey(spec.key, spec.prefix)));
  }

  private at(i: number | undefined): PageOrder | undefined {
    if (i === undefined) return undefined;
    return { pages: this.pages.subarray(this.starts[i]!, this.starts[i + 1]!), holding: this.holding[i]! };
  }
}

export function orderKey(key: string, prefix: boolean): string {
  return `${prefix ? 1 : 0}${key}`;
}

/** The key of a word's order kept only for the typo-orders plan (D124): its lists are shorter than a one-word search prunes. */
export function typoOrderKey(key: string): string {
  return `2${key}`;
}

/** The section's bytes: the orders of `keys`, and how many pages hold each. */
export function packOrders(keys: string[], orders: Uint32Array[], holding: number[]): Uint8Array {
  const keyBytes = new TextEncoder().encode(JSON.stringify(keys));
  const keyWords = (keyBytes.byteLength + 3) >>> 2;
  const total = orders.reduce((n, o) => n + o.length, 0);
  const words = new Uint32Array(3 + keyWords + keys.length + 1 + keys.length + total);
  words[0] = rulesFingerprint();
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
