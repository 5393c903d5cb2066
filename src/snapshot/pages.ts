/**
 * The page table: one row per page, sorted by page id, in typed arrays; titles and section
 * headings in UTF-8 blobs. A page object is made when asked for, and reads its chunks' text
 * from the text store only when shown.
 *
 * Sections: pages.id (u32), pages.rev (f64), pages.ts (f64, Unix seconds), pages.firstText
 * (u32, its first chunk in the text store), pages.firstDoc (u32, its first chunk in the search
 * index), pages.chunkCount (u32), pages.title + pages.titleEnd, pages.sectionStart and
 * pages.sectionCount (u32, into the section table), sections.level (u8), sections.heading +
 * sections.headingEnd, text.chunkSection (u16, each chunk's section within its page).
 */
import { makeScratch, removeScratch } from "../files";
import { join } from "node:path";
import { Growable, lowerBound, StoredStrings, StringColumn, viewOf } from "../columns";
import { SortedRuns } from "../sorted-runs";
import { printableName } from "../printable";
import { type Container, type ContainerWriter, damagedSections } from "./container";
import { Spool } from "./spool";
import type { SnapshotChunk, SnapshotMeta, SnapshotPage, SnapshotSection } from "./format";
import type { TextStore } from "./text";

export interface PageRow {
  pageId: number;
  revId: number;
  tsUnix: number;
  title: string;
  sections: SnapshotSection[];
  /** The text store's number of the page's first chunk, and each chunk's section. */
  firstText: number;
  chunkSections: number[];
}

/** Bytes of page rows held before they are sorted and written as a run (about 300,000 pages). */
const PAGE_RUN_BYTES = 24 << 20;

/**
 * Collects the rows in the order pages arrive, and writes them sorted by page id, in bounded
 * memory: each row goes to sorted runs on disk (SortedRuns), the sections' headings and the
 * chunks' sections (written in arrival order) to files as they come; what is held is two
 * numbers an arrival (where its chunks are, and how many), for numbering the documents.
 */
export class PageWriter {
  private readonly dir: string;
  private readonly rows: SortedRuns;
  private readonly firstText = new Growable(Uint32Array);
  private readonly chunkCount = new Growable(Uint32Array);
  private readonly levels: Spool<Uint8Array>;
  private readonly headings: Spool<Uint8Array>;
  private readonly headingEnds: Spool<Uint32Array>;
  private readonly chunkSection: Spool<Uint16Array>;
  private readonly encoder = new TextEncoder();
  private scratch = new Uint8Array(1024);
  /** The titles' UTF-8 bytes, all arrivals': room enough for the titles kept, made once (a column grown by doubling held up to three times its bytes). */
  private titleBytes = 0;

  /** `besides`: the folder its temporary files go in. `runBytes`: rows held before a run is written. */
  constructor(besides: string, runBytes = PAGE_RUN_BYTES) {
    this.dir = makeScratch(besides, "pages");
    this.rows = new SortedRuns({ besides: this.dir, numbers: 6, strings: 1, keyFields: 1, budgetBytes: runBytes });
    this.levels = new Spool(join(this.dir, "levels"), Uint8Array);
    this.headings = new Spool(join(this.dir, "headings"), Uint8Array);
    this.headingEnds = new Spool(join(this.dir, "headingEnds"), Uint32Array);
    this.chunkSection = new Spool(join(this.dir, "chunkSection"), Uint16Array);
  }

  get count(): number {
    return this.firstText.length;
  }

  /** Runs of rows written so far. */
  get runCount(): number {
    return this.rows.runCount;
  }

  add(row: PageRow): void {
    const arrival = this.count;
    this.firstText.push(row.firstText);
    this.chunkCount.push(row.chunkSections.length);
    // By page id (then arrival, the order pushed): [pageId, arrival, rev, ts, sectionStart, sectionCount], [title].
    const title = this.encode(row.title);
    this.titleBytes += title.length;
    this.rows.push([row.pageId, arrival, row.revId, row.tsUnix, this.levels.length, row.sections.length], [title]);
    for (const s of row.sections) {
      this.levels.push(s.level);
      this.headings.pushAll(this.encode(s.heading));
      this.headingEnds.push(this.headings.length);
    }
    for (const s of row.chunkSections) this.chunkSection.push(s);
  }

  /**
   * Writes the pages that `keep` keeps (by arrival number), sorted by page id. Their chunks
   * are numbered for the search index in arrival order (or in `docOrder`, arrival numbers
   * listed in the order their chunks are to be numbered), the others left out: returns each
   * text chunk's document number (-1: left out) and the number of documents.
   */
  finish(
    out: ContainerWriter,
    keep: (arrival: number) => boolean,
    docOrder?: ArrayLike<number>,
  ): {
    docOfText: Int32Array;
    documents: number;
    pages: number;
    titles: StoredStrings;
    chunkCounts: Uint32Array;
    newestTs: number;
  } {
    try {
      return this.write(out, keep, docOrder);
    } finally {
      this.close();
    }
  }

  /** Removes the temporary files (after a failure, or once written). */
  close(): void {
    for (const spool of [this.levels, this.headings, this.headingEnds, this.chunkSection]) spool.close();
    this.rows.close();
    removeScratch(this.dir);
  }

  private write(out: ContainerWriter, keep: (arrival: number) => boolean, docOrder?: ArrayLike<number>) {
    const n = this.count;
    const docOfText = new Int32Array(this.chunkSection.length).fill(-1);
    // Each arrival's first document, -1 when it is left out.
    const firstDoc = new Int32Array(n).fill(-1);
    let documents = 0;
    let kept = 0;
    for (let i = 0; i < (docOrder?.length ?? n); i++) {
      const a = docOrder ? docOrder[i]! : i;
      if (!keep(a)) continue;
      kept++;
      firstDoc[a] = documents;
      const first = this.firstText.get(a);
      for (let c = 0; c < this.chunkCount.get(a); c++) docOfText[first + c] = documents++;
    }
    const spool = <T extends Uint32Array | Float64Array | Uint8Array>(name: string, make: new (n: number) => T) =>
      new Spool(join(this.dir, name), make);
    const columns = {
      id: spool("pages.id", Uint32Array),
      rev: spool("pages.rev", Float64Array),
      ts: spool("pages.ts", Float64Array),
      firstText: spool("pages.firstText", Uint32Array),
      firstDoc: spool("pages.firstDoc", Uint32Array),
      chunkCount: spool("pages.chunkCount", Uint32Array),
      sectionStart: spool("pages.sectionStart", Uint32Array),
      sectionCount: spool("pages.sectionCount", Uint32Array),
    };
    // Held to the build's end (the title index): sized once, not grown by doubling.
    const titles = new StringColumn(this.titleBytes, kept);
    const chunkCounts = new Growable(Uint32Array, kept);
    let newestTs = 0;
    // Held for the time order (8 bytes a page kept: 56 MB at English Wikipedia's 7M), written after the columns.
    const times = new Float64Array(kept);
    try {
      // Each page id is kept once at most: by page id, the order is the one a sort of the kept rows gives.
      for (const row of this.rows.drain()) {
        const v = row.numbers;
        const a = v[1]!;
        if (firstDoc[a]! < 0) continue;
        columns.id.push(v[0]!);
        columns.rev.push(v[2]!);
        columns.ts.push(v[3]!);
        columns.firstText.push(this.firstText.get(a));
        columns.firstDoc.push(firstDoc[a]!);
        columns.chunkCount.push(this.chunkCount.get(a));
        columns.sectionStart.push(v[4]!);
        columns.sectionCount.push(v[5]!);
        chunkCounts.push(this.chunkCount.get(a));
        titles.pushBytes(row.string(0));
        times[chunkCounts.length - 1] = v[3]!;
        newestTs = Math.max(newestTs, v[3]!);
      }
      for (const [name, column] of Object.entries(columns)) column.copyInto(out, `pages.${name}`);
    } finally {
      for (const column of Object.values(columns)) column.close();
    }
    out.section(TIME_ORDER_SECTION, timeOrder(times));
    out.section("pages.title", titles.blob());
    out.section("pages.titleEnd", titles.ends.view());
    this.levels.copyInto(out, "sections.level");
    this.headings.copyInto(out, "sections.heading");
    this.headingEnds.copyInto(out, "sections.headingEnd");
    this.chunkSection.copyInto(out, "text.chunkSection");
    // Without room beyond the titles kept: the bytes of titles left out (a page read twice, a title lost), when many.
    if (titles.blob().length < this.titleBytes * 0.9) titles.trim();
    chunkCounts.trim();
    // The titles in page order, for the title index: read from their column, not held as a string each.
    return {
      docOfText,
      documents,
      pages: chunkCounts.length,
      titles: new StoredStrings(titles.blob(), titles.ends.view()),
      chunkCounts: chunkCounts.view(),
      newestTs,
    };
  }

  private encode(s: string): Uint8Array {
    if (this.scratch.length < s.length * 3) this.scratch = new Uint8Array(s.length * 3);
    return this.scratch.subarray(0, this.encoder.encodeInto(s, this.scratch).written);
  }
}

/** The page table of an opened snapshot. */
export class PageTable {
  readonly ids: Uint32Array;
  private readonly rev: Float64Array;
  readonly ts: Float64Array;
  /** Each page's first chunk in the text store. */
  readonly firstText: Uint32Array;
  readonly firstDoc: Uint32Array;
  readonly chunkCounts: Uint32Array;
  private readonly sectionStart: Uint32Array;
  private readonly sectionCount: Uint32Array;
  private readonly titles: StoredStrings;
  private readonly levels: Uint8Array;
  private readonly headings: StoredStrings;
  private readonly chunkSection: Uint16Array;

  /** The pages by time of change, then page id (/v1/changes, D12): byTime(). */
  private timeOrdered: Uint32Array | undefined;

  /** `checked`: this file's structure was checked already (openSnapshot's `checked`): the pass is not run again. */
  constructor(
    private readonly container: Container,
    private readonly text: TextStore,
    checked = false,
  ) {
    const u32 = (name: string) => viewOf(Uint32Array, container.section(name));
    this.ids = u32("pages.id");
    this.rev = viewOf(Float64Array, container.section("pages.rev"));
    this.ts = viewOf(Float64Array, container.section("pages.ts"));
    this.firstText = u32("pages.firstText");
    this.firstDoc = u32("pages.firstDoc");
    this.chunkCounts = u32("pages.chunkCount");
    this.sectionStart = u32("pages.sectionStart");
    this.sectionCount = u32("pages.sectionCount");
    this.titles = new StoredStrings(container.section("pages.title"), u32("pages.titleEnd"));
    this.levels = container.section("sections.level");
    this.headings = new StoredStrings(container.section("sections.heading"), u32("sections.headingEnd"));
    this.chunkSection = viewOf(Uint16Array, container.section("text.chunkSection"));
    const fault = checked ? undefined : this.fault(container.meta as SnapshotMeta, text.chunkCount);
    if (fault) throw damagedSections(container.path, fault);
  }

  /** As console.log shows it: every page and hit holds its table, whose columns would fill the screen for each one. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `PageTable { ${this.ids.length} pages of ${printableName(this.container.path)} }`;
  }

  /**
   * What reading a page relies on to stay within its sections and end soon (D119), in one pass over the pages: every
   * column a row a page, as many as the meta says; each page's chunks, sections and timestamp where they can be. A
   * damaged count was a loop of billions of chunks (a hang), a damaged first chunk a TypeError from inside the text
   * store, a damaged time "Invalid Date"; the sections' hashes are checked only by verify().
   */
  private fault(meta: SnapshotMeta, textChunks: number): string | undefined {
    const n = this.ids.length;
    if (n !== meta.indexedPages) return `pages.id holds ${n} pages, the snapshot ${meta.indexedPages}`;
    const columns: [string, ArrayLike<number>][] = [
      ["pages.rev", this.rev],
      ["pages.ts", this.ts],
      ["pages.firstText", this.firstText],
      ["pages.firstDoc", this.firstDoc],
      ["pages.chunkCount", this.chunkCounts],
      ["pages.sectionStart", this.sectionStart],
      ["pages.sectionCount", this.sectionCount],
      ["pages.titleEnd", { length: this.titles.length }],
    ];
    for (const [name, column] of columns)
      if (column.length !== n) return `${name} holds ${column.length} rows for ${n} pages`;
    const sections = this.levels.length;
    if (this.headings.length !== sections)
      return `sections.headingEnd holds ${this.headings.length} rows for ${sections} sections`;
    if (this.chunkSection.length !== textChunks)
      return `text.chunkSection holds ${this.chunkSection.length} rows for ${textChunks} chunks`;
    const { ts, firstText, firstDoc, chunkCounts, sectionStart, sectionCount } = this;
    const documents = meta.indexedChunks;
    let chunks = 0;
    let headed = 0;
    for (let i = 0; i < n; i++) {
      const count = chunkCounts[i]!;
      chunks += count;
      headed += sectionCount[i]!;
      if (firstText[i]! + count > textChunks || firstDoc[i]! + count > documents)
        return `page ${i}'s ${count} chunks from ${firstText[i]} (text), ${firstDoc[i]} (index) run past the ${textChunks} and ${documents} chunks there are`;
      if (sectionStart[i]! + sectionCount[i]! > sections)
        return `page ${i}'s ${sectionCount[i]} sections from ${sectionStart[i]} run past the ${sections} there are`;
      // Past ±8.64e12 s (or NaN) a Date is invalid: toISOString() threw "Invalid Date".
      if (!(Math.abs(ts[i]!) <= MAX_DATE_SECONDS)) return `page ${i}'s time is ${ts[i]}, no date`;
    }
    if (chunks !== documents) return `pages.chunkCount counts ${chunks} chunks, the snapshot ${documents}`;
    if (headed > sections) return `pages.sectionCount counts ${headed} sections, sections.level ${sections}`;
    return undefined;
  }

  /**
   * The pages' indexes by time of change, then page id (the table is in page id order): the snapshot's stored order, read
   * from its mapping, or, in a snapshot written before it was stored, made on the first call. Sorting English
   * Wikipedia's 7M pages with a comparator took 15–23 s of the thread that asked, every other request waiting.
   */
  byTime(): Uint32Array {
    if (this.timeOrdered) return this.timeOrdered;
    if (!this.container.has(TIME_ORDER_SECTION)) return (this.timeOrdered = timeOrder(this.ts));
    const stored = viewOf(Uint32Array, this.container.section(TIME_ORDER_SECTION));
    // What keeps a read within the table (D119), checked once here rather than at every open: one index a page, each a page's.
    const n = this.ts.length;
    let inTable = stored.length === n;
    for (let i = 0; inTable && i < n; i++) inTable = stored[i]! < n;
    if (!inTable) throw damagedSections(this.container.path, `${TIME_ORDER_SECTION} does not list the ${n} pages`);
    return (this.timeOrdered = stored);
  }

  get length(): number {
    return this.ids.length;
  }

  /** The row of a page id, or -1. */
  indexOf(pageId: number): number {
    const ids = this.ids;
    const lo = lowerBound(ids, pageId);
    return lo < ids.length && ids[lo] === pageId ? lo : -1;
  }

  title(i: number): string {
    return this.titles.at(i);
  }

  revOf(i: number): number {
    return this.rev[i]!;
  }

  /** The text of chunk c of page i. */
  chunkText(i: number, c: number): string {
    return this.text.chunk(this.firstText[i]! + c);
  }

  /** The heading of the section holding chunk c of page i. */
  chunkHeading(i: number, c: number): string {
    const s = this.chunkSection[this.firstText[i]! + c]!;
    return s < this.sectionCount[i]! ? this.headings.at(this.sectionStart[i]! + s) : "";
  }

  /** Page i's row as a writer takes it (firstText: its first chunk in this file's text store). */
  row(i: number): PageRow {
    const first = this.firstText[i]!;
    return {
      pageId: this.ids[i]!,
      revId: this.rev[i]!,
      tsUnix: this.ts[i]!,
      title: this.titles.at(i),
      sections: this.sectionsOf(i),
      firstText: first,
      chunkSections: Array.from(this.chunkSection.subarray(first, first + this.chunkCounts[i]!)),
    };
  }

  /** Page i, as served. */
  at(i: number): SnapshotPage {
    const tsUnix = this.ts[i]!;
    return {
      pageId: this.ids[i]!,
      revId: this.rev[i]!,
      title: this.titles.at(i),
      timestamp: isoSeconds(tsUnix),
      tsUnix,
      sections: this.sectionsOf(i),
      chunks: this.chunksOf(i),
    };
  }

  /**
   * Page i as a search hit shows it: its title and timestamp made now, its sections and chunks
   * only when asked for (a search ranks many pages and shows one chunk of each).
   */
  shown(i: number): SnapshotPage & { chunkText(c: number): string } {
    return new StoredPage(this, i, this.titles.at(i));
  }

  /** Page i's sections. */
  sectionsOf(i: number): SnapshotSection[] {
    this.container.checkReadable();
    const sections: SnapshotSection[] = [];
    const start = this.sectionStart[i]!;
    for (let s = 0; s < this.sectionCount[i]!; s++)
      sections.push({ heading: this.headings.at(start + s), level: this.levels[start + s]! });
    return sections;
  }

  /** Page i's chunks, their text read when first asked for; `known` is the text of chunk `knownAt`, already read. */
  chunksOf(i: number, knownAt = -1, known?: string): SnapshotChunk[] {
    // A page kept past its engine's close() answered no chunks.
    this.container.checkReadable();
    const first = this.firstText[i]!;
    const chunks: SnapshotChunk[] = [];
    for (let c = 0; c < this.chunkCounts[i]!; c++)
      chunks.push(
        new StoredChunk(this.text, first + c, this.chunkSection[first + c]!, c === knownAt ? known : undefined),
      );
    return chunks;
  }

  /** Every page, as objects: for small snapshots (tests, tools), not for serving. */
  list(): SnapshotPage[] {
    return [...this];
  }

  *[Symbol.iterator](): IterableIterator<SnapshotPage> {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }
}

/** A page of the table whose sections and chunks are read when first asked for. */
class StoredPage implements SnapshotPage {
  // Its own properties are its identity, what a hit's page serialises to (JSON.stringify, structuredClone: D151);
  // what it reads from is private (#), not cloned (the table's functions made structuredClone throw) nor written out.
  readonly pageId: number;
  readonly revId: number;
  readonly title: string;
  readonly timestamp: string;
  readonly tsUnix: number;
  readonly #table: PageTable;
  readonly #row: number;
  #shownAt = -1;
  #shownText: string | undefined;
  #sections: SnapshotSection[] | undefined;
  #chunks: SnapshotChunk[] | undefined;
  constructor(table: PageTable, row: number, title: string) {
    this.#table = table;
    this.#row = row;
    this.pageId = table.ids[row]!;
    this.revId = table.revOf(row);
    this.title = title;
    this.tsUnix = table.ts[row]!;
    this.timestamp = isoSeconds(this.tsUnix);
  }
  get sections(): SnapshotSection[] {
    return (this.#sections ??= this.#table.sectionsOf(this.#row));
  }
  get chunks(): SnapshotChunk[] {
    return (this.#chunks ??= this.#table.chunksOf(this.#row, this.#shownAt, this.#shownText));
  }
  /** The text of chunk c, kept for the chunks asked for later (a hit shows one chunk, and the response reads it again). */
  chunkText(c: number): string {
    if (this.#chunks) return this.#chunks[c]!.text;
    if (this.#shownAt !== c) {
      this.#shownText = this.#table.chunkText(this.#row, c);
      this.#shownAt = c;
    }
    return this.#shownText!;
  }
  /**
   * Its identity, not its sections and chunks (a hit's page in a log or a cache was the whole page, megabytes for a
   * long one, D151); engine.page(pageId) gives the whole page.
   */
  toJSON(): Omit<SnapshotPage, "sections" | "chunks"> {
    const { pageId, revId, title, timestamp, tsUnix } = this;
    return { pageId, revId, title, timestamp, tsUnix };
  }
}

/** A chunk whose text is read from its block when first asked for. */
class StoredChunk implements SnapshotChunk {
  constructor(
    private readonly store: TextStore,
    private readonly at: number,
    readonly section: number,
    private cached?: string,
  ) {}
  get text(): string {
    return (this.cached ??= this.store.chunk(this.at));
  }
  toJSON(): SnapshotChunk {
    return { section: this.section, text: this.text };
  }
}

/** The furthest a Date reaches from 1970, in seconds. */
const MAX_DATE_SECONDS = 8.64e12;

/** The section of a snapshot's pages by time of change (PageTable.byTime). */
const TIME_ORDER_SECTION = "pages.byTime";

/**
 * The indexes of `times` (a page's time of change, in page id order) sorted by time, then index. Whole seconds within a
 * span whose product with the count stays below 2⁵³ (English Wikipedia's 25 years × 7M pages is 5.5e15) are sorted as
 * one number each, time × count + index, by the typed array's own sort: seconds at 7M pages, where a comparator took
 * 15–23 s. Other times take the comparator.
 */
export function timeOrder(times: Float64Array): Uint32Array {
  const n = times.length;
  const order = new Uint32Array(n);
  let least = Infinity;
  let most = -Infinity;
  let whole = true;
  for (let i = 0; i < n; i++) {
    const t = times[i]!;
    if (t < least) least = t;
    if (t > most) most = t;
    if (!Number.isInteger(t)) whole = false;
  }
  if (!n) return order;
  if (whole && (most - least + 1) * n < Number.MAX_SAFE_INTEGER) {
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = (times[i]! - least) * n + i;
    keys.sort();
    for (let i = 0; i < n; i++) order[i] = keys[i]! % n;
    return order;
  }
  for (let i = 0; i < n; i++) order[i] = i;
  return order.sort((a, b) => times[a]! - times[b]! || a - b);
}

/** ISO 8601 in whole seconds, as ingest writes timestamps. */
const WHOLE_SECONDS = /\.000Z$/;
export function isoSeconds(tsUnix: number): string {
  return new Date(tsUnix * 1000).toISOString().replace(WHOLE_SECONDS, "Z");
}
