/**
 * The claims of an ingest (claims.ts), one row per page id in the order the ids were first
 * claimed, held in typed columns and a UTF-8 string column rather than an object per page:
 * English Wikipedia has about 18 million pages and redirects, and every one is held until the
 * end of the read. A newer claim on an id replaces its row's values (its old strings stay in
 * the column, unreferenced: an id is claimed again only when several dumps hold it).
 */
import { Growable, StoredStrings, StringColumn } from "../columns";

/** What a page read asks of the snapshot: its page id's article or redirect, and its title. */
export interface Claim {
  kind: "article" | "redirect";
  /** Canonical. */
  title: string;
  revId: number;
  tsUnix: number;
  target?: string;
}

const ARTICLE = 0;
const REDIRECT = 1;

export class ClaimTable {
  private readonly ids = new Growable(Uint32Array);
  private readonly revs = new Growable(Float64Array);
  private readonly times = new Growable(Float64Array);
  private readonly kinds = new Growable(Uint8Array);
  /** 1 when the row's article was converted (kept or streamed); its claim's rows only. */
  private readonly converted = new Growable(Uint8Array);
  private readonly titles = new Growable(Uint32Array);
  /** The target's string number, -1 for an article. */
  private readonly targets = new Growable(Int32Array);
  private readonly strings = new StringColumn();
  private stored: StoredStrings | undefined;
  /** Open addressing by page id: row + 1 in each used slot, 0 in a free one; kept at most half full. */
  private slots = new Int32Array(1024);
  /** 32 − log2(slots.length): a slot is the top bits of the id's hash. */
  private shift = 22;

  get size(): number {
    return this.ids.length;
  }

  /** The row of a page id, or -1. */
  rowOf(pageId: number): number {
    const mask = this.slots.length - 1;
    for (let s = Math.imul(pageId, FIBONACCI) >>> this.shift; ; s = (s + 1) & mask) {
      const row = this.slots[s]! - 1;
      if (row < 0 || this.ids.get(row) === pageId) return row;
    }
  }

  /** Sets a page id's claim (replacing the one it held, and unmarking its conversion). */
  set(pageId: number, claim: Claim): void {
    let row = this.rowOf(pageId);
    const title = this.string(claim.title);
    const target = claim.kind === "redirect" ? this.string(claim.target ?? "") : -1;
    if (row < 0) {
      row = this.ids.length;
      this.ids.push(pageId);
      this.revs.push(claim.revId);
      this.times.push(claim.tsUnix);
      this.kinds.push(claim.kind === "article" ? ARTICLE : REDIRECT);
      this.converted.push(0);
      this.titles.push(title);
      this.targets.push(target);
      this.index(pageId, row);
      return;
    }
    this.revs.set(row, claim.revId);
    this.times.set(row, claim.tsUnix);
    this.kinds.set(row, claim.kind === "article" ? ARTICLE : REDIRECT);
    this.converted.set(row, 0);
    this.titles.set(row, title);
    this.targets.set(row, target);
  }

  pageIdOf(row: number): number {
    return this.ids.get(row);
  }
  isArticle(row: number): boolean {
    return this.kinds.get(row) === ARTICLE;
  }
  revOf(row: number): number {
    return this.revs.get(row);
  }
  /** The row's revision and time, as newer() weighs them. */
  version(row: number): { tsUnix: number; revId: number } {
    return { tsUnix: this.times.get(row), revId: this.revs.get(row) };
  }
  isConverted(row: number): boolean {
    return this.converted.get(row) === 1;
  }
  markConverted(row: number): void {
    this.converted.set(row, 1);
  }
  title(row: number): string {
    return this.read().at(this.titles.get(row));
  }

  /** Rows a and b by title: 0 when equal (in UTF-8 byte order, which only groups equal titles). */
  compareTitles(a: number, b: number): number {
    return this.read().compareAt(this.titles.get(a), this.titles.get(b));
  }

  /** Rows a and b by title in JS string order (as `title(a) < title(b)`), without making the strings. */
  compareTitlesAsStrings(a: number, b: number): number {
    return this.read().compareAsStrings(this.titles.get(a), this.titles.get(b));
  }

  /** Row `row`'s title and (a redirect's) target as UTF-8 bytes: views, valid until the next set(). */
  bytesOf(row: number): { title: Uint8Array; target: Uint8Array } {
    const strings = this.read();
    const target = this.targets.get(row);
    return {
      title: strings.bytesAt(this.titles.get(row)),
      target: target < 0 ? new Uint8Array(0) : strings.bytesAt(target),
    };
  }

  /** A redirect row's target. */
  target(row: number): string {
    return this.read().at(this.targets.get(row));
  }

  /** Whether a redirect row leads somewhere: its target is not empty and not its own title. */
  leadsElsewhere(row: number): boolean {
    const target = this.targets.get(row);
    const ends = this.strings.ends;
    return (
      ends.get(target) > (target ? ends.get(target - 1) : 0) &&
      this.read().compareAt(this.titles.get(row), target) !== 0
    );
  }

  /** Row `row`'s claim as an object. */
  claim(row: number): Claim {
    const base = { title: this.title(row), revId: this.revs.get(row), tsUnix: this.times.get(row) };
    if (this.isArticle(row)) return { ...base, kind: "article" };
    return { ...base, kind: "redirect", target: this.read().at(this.targets.get(row)) };
  }

  /** Every page id with its claim, in the order the ids were first claimed. */
  *[Symbol.iterator](): IterableIterator<[number, Claim]> {
    for (let row = 0; row < this.size; row++) yield [this.ids.get(row), this.claim(row)];
  }

  private string(s: string): number {
    this.strings.push(s);
    this.stored = undefined;
    return this.strings.length - 1;
  }

  private read(): StoredStrings {
    return (this.stored ??= new StoredStrings(this.strings.blob(), this.strings.ends.view()));
  }

  private index(pageId: number, row: number): void {
    if ((row + 1) * 2 > this.slots.length) {
      const old = this.slots;
      this.slots = new Int32Array(old.length * 2);
      this.shift--;
      for (const r of old) if (r) this.place(this.ids.get(r - 1), r - 1);
    }
    this.place(pageId, row);
  }

  private place(pageId: number, row: number): void {
    const mask = this.slots.length - 1;
    let s = Math.imul(pageId, FIBONACCI) >>> this.shift;
    while (this.slots[s]) s = (s + 1) & mask;
    this.slots[s] = row + 1;
  }
}

/**
 * Redirects read from the claims' rows (sorted by title), one number a redirect rather than an
 * object and two strings: English Wikipedia has about 11 million, held until a build's end.
 */
export class ClaimedRedirects {
  constructor(
    private readonly claims: ClaimTable,
    private readonly rows: Uint32Array,
  ) {}
  get length(): number {
    return this.rows.length;
  }
  title(i: number): string {
    return this.claims.title(this.rows[i]!);
  }
  target(i: number): string {
    return this.claims.target(this.rows[i]!);
  }
  /** Each redirect's page id, in order. */
  pageIds(): Uint32Array {
    return this.rows.map((row) => this.claims.pageIdOf(row));
  }

  /**
   * The same redirects in columns of their own (their titles and targets' UTF-8 bytes, sized
   * exactly), so that the claims can be let go: a build holds the redirects to its end, and
   * the claims of every article and redirect were most of what it held per page.
   */
  detach(): StoredRedirects {
    let bytes = 0;
    for (const row of this.rows) {
      const { title, target } = this.claims.bytesOf(row);
      bytes += title.length + target.length;
    }
    const blob = new Uint8Array(bytes);
    const ends = new Uint32Array(this.rows.length * 2);
    let at = 0;
    this.rows.forEach((row, i) => {
      const { title, target } = this.claims.bytesOf(row);
      blob.set(title, at);
      ends[2 * i] = at += title.length;
      blob.set(target, at);
      ends[2 * i + 1] = at += target.length;
    });
    return new StoredRedirects(new StoredStrings(blob, ends), this.pageIds());
  }
}

/** Redirects in UTF-8 columns (ClaimedRedirects.detach): string 2i is redirect i's title, 2i + 1 its target. */
class StoredRedirects {
  constructor(
    private readonly strings: StoredStrings,
    readonly pageIdList: Uint32Array,
  ) {}
  get length(): number {
    return this.pageIdList.length;
  }
  title(i: number): string {
    return this.strings.at(2 * i);
  }
  target(i: number): string {
    return this.strings.at(2 * i + 1);
  }
}

/** Fibonacci hashing (2^32 over the golden ratio): ids in runs or strides spread over the slots. */
const FIBONACCI = 0x9e3779b1;
