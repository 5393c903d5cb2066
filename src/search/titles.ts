/**
 * The exact-title lookup (D8, D13): every page's title key and every redirect's, resolved to
 * its page, sorted, in the snapshot's sections titles.key/keyEnd/page; found by binary search
 * instead of a Map of millions of entries.
 */
import { type Container, type ContainerWriter, type Redirect, StoredStrings, StringColumn, viewOf } from "../snapshot";
import { titleKey } from "./query";

export class TitleLookup {
  private readonly keys: StoredStrings;
  private readonly pages: Uint32Array;
  constructor(container: Container) {
    this.keys = new StoredStrings(container.section("titles.key"), viewOf(Uint32Array, container.section("titles.keyEnd")));
    this.pages = viewOf(Uint32Array, container.section("titles.page"));
  }
  /** The page index of a title key, if a page or redirect has it. */
  get(key: string): number | undefined {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys.compare(mid, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    // Compared in place: decoding a key at each step of every search's lookup made ~30 objects.
    return lo < this.keys.length && this.keys.compare(lo, key) === 0 ? this.pages[lo] : undefined;
  }
}

/**
 * Writes the lookup for pages in index order. A page with no text (its whole content was
 * tables or lists of sources) is no answer, so its title is not looked up.
 */
export function writeTitleLookup(out: ContainerWriter, titles: string[], chunkCounts: ArrayLike<number>, redirects: Redirect[]): void {
  const own = new Map<string, number>();
  titles.forEach((t, i) => chunkCounts[i] && own.set(titleKey(t), i));
  const entries: [string, number][] = [...own];
  for (const [from, page] of resolveRedirectKeys(own, redirects)) if (!own.has(from)) entries.push([from, page]);
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const keys = new StringColumn();
  const pages = new Uint32Array(entries.length);
  entries.forEach(([k, p], i) => {
    keys.push(k);
    pages[i] = p;
  });
  out.section("titles.key", keys.blob());
  out.section("titles.keyEnd", keys.ends.view());
  out.section("titles.page", pages);
}

/** Redirect title keys → page, following chains of redirects (at most 5 hops). */
function resolveRedirectKeys(own: Map<string, number>, redirects: Redirect[]): Map<string, number> {
  const targets = new Map(redirects.map((r) => [titleKey(r.title), titleKey(r.target)]));
  const out = new Map<string, number>();
  for (const from of targets.keys()) {
    let to = targets.get(from)!;
    for (let hops = 0; hops < 5 && !own.has(to) && targets.has(to); hops++) to = targets.get(to)!;
    const page = own.get(to);
    if (page !== undefined) out.set(from, page);
  }
  return out;
}

/** Titles of the redirects to each page (by index in `titles`), for the title shard's aliases. */
export function aliasesOf(titles: string[], redirects: Redirect[]): Map<number, string[]> {
  const own = new Map<string, number>();
  titles.forEach((t, i) => own.set(titleKey(t), i));
  const out = new Map<number, string[]>();
  const byKey = new Map(redirects.map((r) => [titleKey(r.title), r.title]));
  for (const [from, page] of resolveRedirectKeys(own, redirects)) {
    const list = out.get(page) ?? [];
    list.push(byKey.get(from)!);
    out.set(page, list);
  }
  return out;
}
