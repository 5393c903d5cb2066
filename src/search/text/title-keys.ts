/**
 * Every page's title key and every redirect's, resolved to its page once for both the title
 * shard's aliases and the exact-title lookup (D8, D13). Held as the keys and index arrays
 * sorted by key, searched by bisection, rather than maps of millions of entries: two such
 * maps of every title (and two of every redirect) made the title index the build's largest
 * cost per page at its end.
 */
import { join } from "node:path";
import { type RedirectList, Spool, StoredStrings, StringColumn } from "../../snapshot";
import { titleKey } from "./query";

/** Titles by index: a list, or a column of them (StoredStrings) read one at a time. */
export interface TitleList {
  readonly length: number;
  at(i: number): string | undefined;
}

/** Title keys sorted, as UTF-8 in a column rather than a string each: their indexes in key order, equal keys by index. */
class SortedKeys {
  readonly keys: StoredStrings;
  readonly order: Uint32Array;
  constructor(n: number, titleAt: (i: number) => string) {
    const keys = (this.keys = keysOf(n, titleAt));
    this.order = Uint32Array.from({ length: n }, (_, i) => i).sort((a, b) => keys.compareAsStrings(a, b) || a - b);
  }
  /** The first position in `order` of `key`, or -1. */
  find(key: string): number {
    return this.seek((i) => this.keys.compare(i, key));
  }
  /** The first position in `order` of key `at` of another column, or -1. */
  findStored(other: StoredStrings, at: number): number {
    return this.seek((i) => this.keys.compareAsStrings(i, at, other));
  }
  /** The end of the run of equal keys starting at position p. */
  runEnd(p: number): number {
    const { order, keys } = this;
    let end = p + 1;
    while (end < order.length && keys.compareAt(order[end]!, order[p]!) === 0) end++;
    return end;
  }
  /** Bisection: `against(i)` is key i against the key sought. */
  private seek(against: (i: number) => number): number {
    const order = this.order;
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (against(order[mid]!) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo < order.length && against(order[lo]!) === 0 ? lo : -1;
  }
}

/**
 * The title keys of n titles, in a column sized exactly: each key is made twice, once to count
 * its bytes (a column grown by doubling held up to three times its bytes while it grew: most of
 * the title resolution's peak). Each key leaves a few strings behind: a young collection every
 * 64K keys keeps them from piling up (by about 100 MB a million titles).
 */
function keysOf(n: number, titleAt: (i: number) => string): StoredStrings {
  const encoder = new TextEncoder();
  let scratch = new Uint8Array(1024);
  const keyOf = (i: number): Uint8Array => {
    const key = titleKey(titleAt(i));
    if (scratch.length < key.length * 3) scratch = new Uint8Array(key.length * 3);
    if ((i & 0xffff) === 0xffff) Bun.gc(false);
    return scratch.subarray(0, encoder.encodeInto(key, scratch).written);
  };
  let bytes = 0;
  for (let i = 0; i < n; i++) bytes += keyOf(i).length;
  const keys = new StringColumn(bytes, n);
  for (let i = 0; i < n; i++) keys.pushBytes(keyOf(i));
  return new StoredStrings(keys.blob(), keys.ends.view());
}

class TitleKeys {
  private readonly pages: SortedKeys;
  private readonly redirectKeys: SortedKeys;
  /**
   * The redirects kept, one per title key: the first of its key (whose place orders them) for
   * the key's last (whose target and title count, as a map set in order would keep them).
   */
  private readonly lastOf: Int32Array;
  /**
   * Where the target of each redirect kept (by its first, as lastOf) is among the pages' keys
   * and among the redirects' (a position in their order, -1 when not there): found once, for
   * both resolutions, chains followed by number.
   */
  private readonly toPage: Int32Array;
  private readonly toRedirect: Int32Array;

  constructor(
    private readonly chunkCounts: ArrayLike<number>,
    private readonly redirects: RedirectList,
    titles: TitleList,
  ) {
    this.pages = new SortedKeys(titles.length, (i) => titles.at(i)!);
    this.redirectKeys = new SortedKeys(redirects.length, (i) => redirects.title(i));
    this.lastOf = new Int32Array(redirects.length).fill(-1);
    const { order } = this.redirectKeys;
    for (let p = 0; p < order.length; ) {
      const end = this.redirectKeys.runEnd(p);
      this.lastOf[order[p]!] = order[end - 1]!;
      p = end;
    }
    this.toPage = new Int32Array(redirects.length).fill(-1);
    this.toRedirect = new Int32Array(redirects.length).fill(-1);
    for (let r = 0; r < redirects.length; r++) {
      const last = this.lastOf[r]!;
      if (last < 0) continue;
      const to = titleKey(redirects.target(last));
      this.toPage[r] = this.pages.find(to);
      this.toRedirect[r] = this.redirectKeys.find(to);
      if ((r & 0xffff) === 0xffff) Bun.gc(false);
    }
  }

  /** The page holding the key at position p of the pages' order: its last page, or (`withText`) its last with text; -1 when none. */
  private pageAt(p: number, withText: boolean): number {
    if (p < 0) return -1;
    const order = this.pages.order;
    for (let q = this.pages.runEnd(p) - 1; q >= p; q--) if (!withText || this.chunkCounts[order[q]!]) return order[q]!;
    return -1;
  }

  /** The page a kept redirect (by its first) leads to, following chains of redirects (at most 5 hops); -1 when none. */
  private resolve(first: number, withText: boolean): number {
    let p = this.toPage[first]!;
    let q = this.toRedirect[first]!;
    for (let hops = 0; hops < 5 && this.pageAt(p, withText) < 0 && q >= 0; hops++) {
      const next = this.redirectKeys.order[q]!;
      p = this.toPage[next]!;
      q = this.toRedirect[next]!;
    }
    return this.pageAt(p, withText);
  }

  /**
   * The titles of the redirects to each page, for the title shard: page i's are
   * list[start[i]] to list[start[i + 1]] (indexes into the redirects), in the order the
   * redirects come.
   */
  aliases(): { start: Uint32Array; list: Uint32Array } {
    const pageCount = this.chunkCounts.length;
    const target = new Int32Array(this.redirects.length).fill(-1);
    const start = new Uint32Array(pageCount + 1);
    this.lastOf.forEach((last, r) => {
      if (last < 0) return;
      target[r] = this.resolve(r, false);
      if (target[r] >= 0) start[target[r]! + 1]!++;
    });
    for (let i = 0; i < pageCount; i++) start[i + 1]! += start[i]!;
    const list = new Uint32Array(start[pageCount]!);
    const filled = start.slice(0, pageCount);
    target.forEach((page, r) => {
      if (page >= 0) list[filled[page]!++] = this.lastOf[r]!;
    });
    return { start, list };
  }

  /**
   * The lookup's entries in key order: each key of a page with text (a page with no text is
   * no answer), then each redirect's key not a page's, resolved to a page with text. Written
   * to files in `dir` as they come (its keys' UTF-8, their ends, their pages), not held: the
   * title index is built before they are copied into the snapshot.
   */
  lookup(dir: string): TitleLookupSpools {
    const pages = this.pages;
    const redirects = this.redirectKeys;
    const spooled: TitleLookupSpools = {
      keys: new Spool(join(dir, "titles.key"), Uint8Array),
      keyEnds: new Spool(join(dir, "titles.keyEnd"), Uint32Array),
      page: new Spool(join(dir, "titles.page"), Uint32Array),
    };
    const push = (bytes: Uint8Array, page: number) => {
      spooled.keys.pushAll(bytes);
      spooled.keyEnds.push(spooled.keys.length);
      spooled.page.push(page);
      // Each entry leaves a view or two behind: collected as they go, they do not pile up (by ~190 B an entry).
      if ((spooled.page.length & 0xffff) === 0) Bun.gc(false);
    };
    let p = 0;
    let r = 0;
    let nextPage = -1;
    let nextRedirect = -1;
    let pageAt = -1;
    let redirectAt = -1;
    const advancePage = () => {
      for (nextPage = -1; p < pages.order.length && nextPage < 0; ) {
        const first = pages.order[p]!;
        pageAt = this.pageAt(p, true);
        p = pages.runEnd(p);
        if (pageAt >= 0) nextPage = first;
      }
    };
    const advanceRedirect = () => {
      for (nextRedirect = -1; r < redirects.order.length && nextRedirect < 0; ) {
        const first = redirects.order[r]!;
        r = redirects.runEnd(r);
        if (this.pageAt(pages.findStored(redirects.keys, first), true) >= 0) continue;
        redirectAt = this.resolve(first, true);
        if (redirectAt >= 0) nextRedirect = first;
      }
    };
    advancePage();
    advanceRedirect();
    while (nextPage >= 0 || nextRedirect >= 0) {
      if (
        nextPage >= 0 &&
        (nextRedirect < 0 || pages.keys.compareAsStrings(nextPage, nextRedirect, redirects.keys) < 0)
      ) {
        push(pages.keys.bytesAt(nextPage), pageAt);
        advancePage();
      } else {
        push(redirects.keys.bytesAt(nextRedirect), redirectAt);
        advanceRedirect();
      }
    }
    return spooled;
  }
}

/** The lookup's sections (titles.key, titles.keyEnd, titles.page) in files, to be copied into the snapshot. */
export interface TitleLookupSpools {
  keys: Spool<Uint8Array>;
  keyEnds: Spool<Uint32Array>;
  page: Spool<Uint32Array>;
}

/**
 * The title shard's aliases and the lookup's entries (TitleKeys.aliases and lookup, in files
 * in `dir`), the keys made for them let go on return.
 */
export function resolveTitles(
  chunkCounts: ArrayLike<number>,
  redirects: RedirectList,
  titles: TitleList,
  dir: string,
): { aliases: ReturnType<TitleKeys["aliases"]>; lookup: TitleLookupSpools } {
  const keys = new TitleKeys(chunkCounts, redirects, titles);
  // Making the keys leaves several strings a title as garbage: collected between the steps, it does not pile up to the phase's peak.
  Bun.gc(true);
  const aliases = keys.aliases();
  Bun.gc(true);
  return { aliases, lookup: keys.lookup(dir) };
}
