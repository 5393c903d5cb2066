/**
 * The exact-title lookup (D8, D13): every page's title key and every redirect's, resolved to
 * its page (title-keys.ts), sorted, in the snapshot's sections titles.key/keyEnd/page; found by
 * binary search instead of a Map of millions of entries.
 */
import {
  type Container,
  type ContainerWriter,
  damagedSections,
  type Spool,
  StoredStrings,
  viewOf,
} from "../../snapshot";

export class TitleLookup {
  private readonly keys: StoredStrings;
  private readonly pages: Uint32Array;
  /** `pageCount`: the page table's, which every page found must be within (checked as found, not at open: D119). */
  constructor(
    private readonly container: Container,
    private readonly pageCount: number,
  ) {
    this.keys = new StoredStrings(
      container.section("titles.key"),
      viewOf(Uint32Array, container.section("titles.keyEnd")),
    );
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
    if (!(lo < this.keys.length && this.keys.compare(lo, key) === 0)) return undefined;
    const page = this.pages[lo]!;
    // A damaged one was a page past the table: its time read as undefined, "RangeError: Invalid Date".
    if (!(page < this.pageCount))
      throw damagedSections(this.container.path, `titles.page names page ${page} of ${this.pageCount}`);
    return page;
  }
}

/** Writes the lookup: its keys in order, each with its page (TitleKeys.lookup, in files). */
export function writeTitleLookup(
  out: ContainerWriter,
  lookup: { keys: Spool<Uint8Array>; keyEnds: Spool<Uint32Array>; page: Spool<Uint32Array> },
): void {
  lookup.keys.copyInto(out, "titles.key");
  lookup.keyEnds.copyInto(out, "titles.keyEnd");
  lookup.page.copyInto(out, "titles.page");
}
