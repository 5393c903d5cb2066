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
import { Growable, lowerBound, StoredStrings, StringColumn, viewOf } from "../columns";
import type { Container, ContainerWriter } from "./container";
import type { SnapshotChunk, SnapshotPage, SnapshotSection } from "./format";
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

/** Collects the rows in the order pages arrive, and writes them sorted by page id. */
export class PageWriter {
  private readonly id = new Growable(Uint32Array);
  private readonly rev = new Growable(Float64Array);
  private readonly ts = new Growable(Float64Array);
  private readonly firstText = new Growable(Uint32Array);
  private readonly chunkCount = new Growable(Uint32Array);
  private readonly sectionStart = new Growable(Uint32Array);
  private readonly sectionCount = new Growable(Uint32Array);
  private readonly titles = new StringColumn();
  private readonly levels = new Growable(Uint8Array);
  private readonly headings = new StringColumn();
  private readonly chunkSection = new Growable(Uint16Array);

  get count(): number {
    return this.id.length;
  }

  add(row: PageRow): void {
    this.id.push(row.pageId);
    this.rev.push(row.revId);
    this.ts.push(row.tsUnix);
    this.firstText.push(row.firstText);
    this.chunkCount.push(row.chunkSections.length);
    this.sectionStart.push(this.levels.length);
    this.sectionCount.push(row.sections.length);
    this.titles.push(row.title);
    for (const s of row.sections) {
      this.levels.push(s.level);
      this.headings.push(s.heading);
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
    const n = this.count;
    const docOfText = new Int32Array(this.chunkSection.length).fill(-1);
    const firstDoc = new Uint32Array(n);
    let documents = 0;
    const kept = new Growable(Uint32Array);
    for (let i = 0; i < (docOrder?.length ?? n); i++) {
      const a = docOrder ? docOrder[i]! : i;
      if (!keep(a)) continue;
      kept.push(a);
      firstDoc[a] = documents;
      const first = this.firstText.get(a);
      for (let c = 0; c < this.chunkCount.get(a); c++) docOfText[first + c] = documents++;
    }
    const ids = this.id.view();
    const order = kept.view().sort((x, y) => ids[x]! - ids[y]!);
    const pick = <T extends Uint32Array | Float64Array>(
      make: { new (n: number): T },
      from: (a: number) => number,
    ): T => {
      const out = new make(order.length);
      for (let i = 0; i < order.length; i++) out[i] = from(order[i]!);
      return out;
    };
    const chunkCounts = pick(Uint32Array, (a) => this.chunkCount.get(a));
    let newestTs = 0;
    for (const a of order) newestTs = Math.max(newestTs, this.ts.get(a));
    // Each column is made as it is written, so that one at a time is held.
    const columns: [string, () => Uint32Array | Float64Array][] = [
      ["pages.id", () => pick(Uint32Array, (a) => this.id.get(a))],
      ["pages.rev", () => pick(Float64Array, (a) => this.rev.get(a))],
      ["pages.ts", () => pick(Float64Array, (a) => this.ts.get(a))],
      ["pages.firstText", () => pick(Uint32Array, (a) => this.firstText.get(a))],
      ["pages.firstDoc", () => pick(Uint32Array, (a) => firstDoc[a]!)],
      ["pages.chunkCount", () => chunkCounts],
      ["pages.sectionStart", () => pick(Uint32Array, (a) => this.sectionStart.get(a))],
      ["pages.sectionCount", () => pick(Uint32Array, (a) => this.sectionCount.get(a))],
    ];
    for (const [name, column] of columns) out.section(name, column());
    const arrivalTitles = new StoredStrings(this.titles.blob(), this.titles.ends.view());
    const titles = new StringColumn();
    for (const a of order) titles.push(arrivalTitles.at(a));
    out.section("pages.title", titles.blob());
    out.section("pages.titleEnd", titles.ends.view());
    out.section("sections.level", this.levels.view());
    out.section("sections.heading", this.headings.blob());
    out.section("sections.headingEnd", this.headings.ends.view());
    out.section("text.chunkSection", this.chunkSection.view());
    // The titles in page order, for the title index: read from their column, not held as a string each.
    return {
      docOfText,
      documents,
      pages: order.length,
      titles: new StoredStrings(titles.blob(), titles.ends.view()),
      chunkCounts,
      newestTs,
    };
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

  constructor(
    container: Container,
    private readonly text: TextStore,
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
   * Page i as a search hit shows it: its title read now, its sections, chunks and timestamp
   * only when asked for (a search ranks many pages and shows one chunk of each).
   */
  shown(i: number): SnapshotPage & { chunkText(c: number): string } {
    return new StoredPage(this, i, this.titles.at(i));
  }

  /** Page i's sections. */
  sectionsOf(i: number): SnapshotSection[] {
    const sections: SnapshotSection[] = [];
    const start = this.sectionStart[i]!;
    for (let s = 0; s < this.sectionCount[i]!; s++)
      sections.push({ heading: this.headings.at(start + s), level: this.levels[start + s]! });
    return sections;
  }

  /** Page i's chunks, their text read when first asked for; `known` is the text of chunk `knownAt`, already read. */
  chunksOf(i: number, knownAt = -1, known?: string): SnapshotChunk[] {
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

/** A page of the table whose sections, chunks and timestamp are made when first asked for. */
class StoredPage implements SnapshotPage {
  readonly pageId: number;
  readonly revId: number;
  readonly tsUnix: number;
  private shownAt = -1;
  private shownText: string | undefined;
  private timestamp_: string | undefined;
  private sections_: SnapshotSection[] | undefined;
  private chunks_: SnapshotChunk[] | undefined;
  constructor(
    private readonly table: PageTable,
    private readonly row: number,
    readonly title: string,
  ) {
    this.pageId = table.ids[row]!;
    this.revId = table.revOf(row);
    this.tsUnix = table.ts[row]!;
  }
  get timestamp(): string {
    return (this.timestamp_ ??= isoSeconds(this.tsUnix));
  }
  get sections(): SnapshotSection[] {
    return (this.sections_ ??= this.table.sectionsOf(this.row));
  }
  get chunks(): SnapshotChunk[] {
    return (this.chunks_ ??= this.table.chunksOf(this.row, this.shownAt, this.shownText));
  }
  /** The text of chunk c, kept for the chunks asked for later (a hit shows one chunk, and the response reads it again). */
  chunkText(c: number): string {
    if (this.chunks_) return this.chunks_[c]!.text;
    if (this.shownAt !== c) {
      this.shownText = this.table.chunkText(this.row, c);
      this.shownAt = c;
    }
    return this.shownText!;
  }
  toJSON(): SnapshotPage {
    const { pageId, revId, title, timestamp, tsUnix, sections, chunks } = this;
    return { pageId, revId, title, timestamp, tsUnix, sections, chunks };
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

/** ISO 8601 in whole seconds, as ingest writes timestamps. */
const WHOLE_SECONDS = /\.000Z$/;
export function isoSeconds(tsUnix: number): string {
  return new Date(tsUnix * 1000).toISOString().replace(WHOLE_SECONDS, "Z");
}
