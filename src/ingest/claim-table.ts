/**
 * The claims of an ingest (claims.ts), one row per page id in the order the ids were first
 * claimed. What weighs a claim while the dumps are read (its page id, kind, revision and
 * time, and whether its article was converted) is held in typed columns rather than an object
 * a page; its title and a redirect's target, most of its bytes, go to sorted runs on disk as
 * they come (SortedRuns), read back once, in row order, when the dumps are read (standing()).
 * English Wikipedia has about 18 million pages and redirects; each keeps 14 bytes of columns
 * here and 5 to 11 of its slot to the end of the read, with room grown by half (columns.ts).
 * A newer claim on an id replaces its row's values and writes its strings again (the last
 * written stands): an id is claimed again only when several dumps hold it.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Growable, StoredStrings, StringColumn, StringFile } from "../columns";
import { makeScratch, removeScratch } from "../files";
import { KeptBytes, SortedRuns } from "../sorted-runs";

/** What a page read asks of the snapshot: its page id's article or redirect, and its title. */
export interface Claim {
  kind: "article" | "redirect";
  /** Canonical. */
  title: string;
  revId: number;
  tsUnix: number;
  target?: string;
}

/** A row's claim as it stands once the dumps are read (ClaimTable.standing): valid until the next. */
export interface StandingClaim {
  row: number;
  pageId: number;
  article: boolean;
  revId: number;
  tsUnix: number;
  converted: boolean;
  /** UTF-8; a redirect's target, empty for an article. */
  title: Uint8Array;
  target: Uint8Array;
}

/** Bytes of claims' strings held before they are written as a run (about 400,000 claims). */
const CLAIM_RUN_BYTES = 24 << 20;

const ARTICLE = 0;
const REDIRECT = 1;

export class ClaimTable {
  private ids = new Growable(Uint32Array);
  /** The claim's revision (id, Unix seconds), u32: claimFor's ids are checked to fit and toUnix's times clamp to it. */
  private revs = new Growable(Uint32Array);
  private times = new Growable(Uint32Array);
  private kinds = new Growable(Uint8Array);
  /** 1 when the row's article was converted (kept or streamed); its claim's rows only. */
  private converted = new Growable(Uint8Array);
  /** Each claim's [row], [title, target]: by row, then as written. */
  private readonly strings: SortedRuns;
  /**
   * Open addressing by page id: row + 1 in each used slot, 0 in a free one; kept at most three quarters full (English
   * Wikipedia's 18 million pages in 2^25 slots, 128 MB, not 2^26; page ids, mostly consecutive, spread evenly by the hash).
   */
  private slots = new Int32Array(1024);
  /** 32 − log2(slots.length): a slot is the top bits of the id's hash. */
  private shift = 22;

  /** `besides`: where the strings' runs go. `runBytes`: strings held before a run is written. */
  constructor(besides = tmpdir(), runBytes = CLAIM_RUN_BYTES) {
    this.strings = new SortedRuns({ besides, numbers: 1, strings: 2, keyFields: 1, budgetBytes: runBytes });
  }

  get size(): number {
    return this.ids.length;
  }

  /** Runs of strings written so far. */
  get runCount(): number {
    return this.strings.runCount;
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
    if (row < 0) {
      row = this.ids.length;
      this.ids.push(pageId);
      this.revs.push(claim.revId);
      this.times.push(claim.tsUnix);
      this.kinds.push(claim.kind === "article" ? ARTICLE : REDIRECT);
      this.converted.push(0);
      this.index(pageId, row);
    } else {
      this.revs.set(row, claim.revId);
      this.times.set(row, claim.tsUnix);
      this.kinds.set(row, claim.kind === "article" ? ARTICLE : REDIRECT);
      this.converted.set(row, 0);
    }
    this.strings.push([row], [claim.title, claim.kind === "redirect" ? (claim.target ?? "") : ""]);
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

  /**
   * Every row's claim as it stands (the last set), in row order, with its strings: once (the
   * runs are removed as they are read, also when the loop is left early; the table is empty after).
   */
  *standing(): Generator<StandingClaim> {
    const title = new KeptBytes();
    const target = new KeptBytes();
    const claim: StandingClaim = {
      row: -1,
      pageId: 0,
      article: false,
      revId: 0,
      tsUnix: 0,
      converted: false,
      title: new Uint8Array(0),
      target: new Uint8Array(0),
    };
    const fill = (row: number) => {
      claim.row = row;
      claim.pageId = this.ids.get(row);
      claim.article = this.kinds.get(row) === ARTICLE;
      claim.revId = this.revs.get(row);
      claim.tsUnix = this.times.get(row);
      claim.converted = this.converted.get(row) === 1;
    };
    for (const record of this.strings.drain()) {
      const row = record.numbers[0]!;
      if (row !== claim.row && claim.row >= 0) yield claim;
      // The row's strings written last stand: copied, the record's views go with the next one.
      claim.title = title.keep(record.string(0));
      claim.target = target.keep(record.string(1));
      fill(row);
    }
    if (claim.row >= 0) yield claim;
    this.release();
  }

  /** Lets the columns go once read: what follows the read (the titles' sort, the redirects kept) is not to add to them. */
  private release(): void {
    this.ids = new Growable(Uint32Array);
    this.revs = new Growable(Uint32Array);
    this.times = new Growable(Uint32Array);
    this.kinds = new Growable(Uint8Array);
    this.converted = new Growable(Uint8Array);
    this.slots = new Int32Array(1024);
    this.shift = 22;
  }

  /** Removes the strings' runs (after a failure; standing() removes them once read). */
  close(): void {
    this.strings.close();
  }

  private index(pageId: number, row: number): void {
    if ((row + 1) * 4 > this.slots.length * 3) {
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

/** Each redirect's page id, and the revision (id, Unix seconds) that made it one: 0 where unknown, older than any. */
export interface RedirectIdLists {
  pageIds: Uint32Array;
  revIds: Uint32Array;
  tsUnix: Uint32Array;
}

/** A revision's id or time as kept (u32): an unknown one (−∞, a base without them) as 0, older than any. */
const storedRevision = (n: number): number => (n > 0 ? Math.min(n, 0xffffffff) : 0);

/**
 * The redirects kept, in UTF-8 columns (string 2i is redirect i's title, 2i + 1 its target)
 * rather than an object and two strings each: English Wikipedia has about 11 million, held
 * to a build's end. Given a folder (`besides`), the strings go to a file in a scratch folder
 * made there as they come (StringFile), and only their ends, page ids and revisions are held:
 * 20 bytes a redirect rather than about 70; release() (or close()) removes it.
 */
export class RedirectColumns {
  private strings: StringColumn | StringFile;
  private readonly dir: string | undefined;
  private ids = new Growable(Uint32Array);
  /** The revision that made each a redirect (id, Unix seconds); 0 where unknown (older than any). */
  private revs = new Growable(Uint32Array);
  private times = new Growable(Uint32Array);
  private stored: StoredStrings | StringFile | undefined;
  private released = false;
  constructor(besides?: string) {
    this.dir = besides === undefined ? undefined : makeScratch(besides, "strings");
    this.strings = this.dir === undefined ? new StringColumn() : new StringFile(join(this.dir, "redirects"));
  }
  get length(): number {
    return this.ids.length;
  }
  /** Whether the titles and targets are in a file rather than held. */
  get spilled(): boolean {
    return this.dir !== undefined;
  }
  /** Adds a redirect: its title and target (UTF-8), page id and revision (0 where unknown). */
  push(title: Uint8Array, target: Uint8Array, pageId: number, revId: number, tsUnix: number): void {
    this.strings.pushBytes(title);
    this.strings.pushBytes(target);
    this.ids.push(pageId);
    this.revs.push(storedRevision(revId));
    this.times.push(storedRevision(tsUnix));
    this.stored = undefined;
  }
  title(i: number): string {
    return this.read().at(2 * i);
  }
  target(i: number): string {
    return this.read().at(2 * i + 1);
  }
  /** Lets the columns' room beyond the redirects go: they are held to the build's end. */
  trim(): void {
    this.strings.trim();
    this.ids.trim();
    this.revs.trim();
    this.times.trim();
    this.stored = undefined;
  }
  /** Lets the titles and targets go (RedirectList.release), and their file; the page ids stay. */
  release(): void {
    this.close();
    this.strings = new StringColumn(0, 0);
    this.stored = undefined;
    this.released = true;
  }
  /** Removes the strings' file, if any (after a failure; release() does it too). */
  close(): void {
    if (this.strings instanceof StringFile) this.strings.close();
    if (this.dir !== undefined) removeScratch(this.dir);
  }
  /** Each redirect's page id and revision, in order (snapshot/write.ts keeps them). */
  get idLists(): RedirectIdLists {
    return { pageIds: this.ids.view(), revIds: this.revs.view(), tsUnix: this.times.view() };
  }
  private read(): StoredStrings | StringFile {
    if (this.released)
      throw new Error("redirects: their titles and targets were let go once the title index was built");
    if (this.strings instanceof StringFile) return this.strings;
    return (this.stored ??= new StoredStrings(this.strings.blob(), this.strings.ends.view()));
  }
}

/** Fibonacci hashing (2^32 over the golden ratio): ids in runs or strides spread over the slots. */
const FIBONACCI = 0x9e3779b1;
