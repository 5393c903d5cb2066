/**
 * Writes a snapshot as a stream: each page's text is compressed into blocks as it arrives,
 * its row kept in a few typed arrays; the search layer adds its sections to the same file
 * (`out`) before finish() writes the table and renames the file into place.
 */
import { dirname } from "node:path";
import { Packr } from "msgpackr";
import { ContainerWriter } from "./container";
import { FORMAT_VERSION } from "./container";
import type { RedirectList, SnapshotMeta, SnapshotPage } from "./format";
import { isoSeconds, PageWriter, type PageRow } from "./pages";
import { TextWriter, type TextStore } from "./text";

const packr = new Packr({ useRecords: false, moreTypes: false });

export type PageInput = Omit<SnapshotPage, "timestamp">;

/**
 * Each redirect's page id and, where known, the revision that made it a redirect (id, Unix seconds; 0 where unknown):
 * sections redirects.pageId, redirects.rev and redirects.ts (u32 each, in the order of the redirects).
 */
export interface RedirectIds {
  pageIds: ArrayLike<number>;
  revIds?: ArrayLike<number>;
  tsUnix?: ArrayLike<number>;
}

export class SnapshotWriter {
  readonly out: ContainerWriter;
  private readonly text: TextWriter;
  /** The page rows; gone once finishPages() has written them. */
  private pages: PageWriter | undefined;
  /** The newest revision time among the pages kept (unix seconds), once finishPages() has written them. */
  private newestTs: number | undefined;

  /**
   * `background`: text compressed off the main thread (TextWriter); then settleText() before
   * finishPages(). `textDictionary`: what to compress the text with (TextWriter).
   */
  constructor(
    readonly path: string,
    background = false,
    textDictionary?: Uint8Array | null,
  ) {
    this.out = new ContainerWriter(path);
    this.text = new TextWriter(this.out, background, textDictionary);
    this.pages = new PageWriter(dirname(path));
  }

  /** Undefined when more pages may come now; otherwise a promise of when they may (the text's compressor threads are behind). */
  ready(): Promise<void> | undefined {
    return this.text.ready();
  }

  /** Waits until every page's text added so far is in the file. */
  settleText(): Promise<void> {
    return this.text.settle();
  }

  /** Adds a page (its text goes to the file now); returns its arrival number. */
  add(page: PageInput): number {
    let firstText = -1;
    for (const c of page.chunks) {
      const n = this.text.add(c.text);
      if (firstText < 0) firstText = n;
    }
    const arrival = this.rows.count;
    this.rows.add({
      pageId: page.pageId,
      revId: page.revId,
      tsUnix: page.tsUnix,
      title: page.title,
      sections: page.sections,
      firstText: Math.max(0, firstText),
      chunkSections: page.chunks.map((c) => c.section),
    });
    return arrival;
  }

  /** Adds a page whose text is already in the file (copied by copyText); returns its arrival number. */
  addRow(row: PageRow): number {
    const arrival = this.rows.count;
    this.rows.add(row);
    return arrival;
  }

  private get rows(): PageWriter {
    if (!this.pages) throw new Error("snapshot: a page added after the page table was written");
    return this.pages;
  }

  /** Copies the chunks of another snapshot's text that `alive` marks: each one's new number (-1: not copied). */
  copyText(from: TextStore, alive: Uint8Array, readThrough?: () => void): Int32Array {
    return this.text.copyFrom(from, alive, readThrough);
  }

  get textBytes(): { raw: number; compressed: number } {
    return { raw: this.text.bytesIn, compressed: this.text.bytesOut };
  }

  /**
   * Ends the text and writes the page table of the pages kept (see PageWriter.finish), and
   * the redirects (with their page ids, when given: in the same order).
   */
  finishPages(
    keep: (arrival: number) => boolean,
    redirects: RedirectList,
    docOrder?: ArrayLike<number>,
    redirectIds?: RedirectIds,
  ): ReturnType<PageWriter["finish"]> {
    this.text.finish();
    const done = this.rows.finish(this.out, keep, docOrder);
    this.newestTs = done.newestTs;
    this.pages = undefined;
    writeRedirects(this.out, redirects);
    // The redirects' page ids, when known: an update replaces a redirect by its id (its title may change), and
    // keeps it against a dump's older revision of its page by its own revision.
    if (redirectIds) {
      const u32 = (list: ArrayLike<number>) => (list instanceof Uint32Array ? list : Uint32Array.from(list));
      this.out.section("redirects.pageId", u32(redirectIds.pageIds));
      if (redirectIds.revIds && redirectIds.tsUnix) {
        this.out.section("redirects.rev", u32(redirectIds.revIds));
        this.out.section("redirects.ts", u32(redirectIds.tsUnix));
      }
    }
    return done;
  }

  /**
   * Writes the table and renames the file into place; returns the meta written and the file's
   * size. `derive` is given the file, whole but not yet in place, and returns sections made
   * from it (the search's page orders), added before the rename. They are not in the content
   * hash: they follow from the sections that are.
   */
  finish(
    meta: Omit<SnapshotMeta, "formatVersion" | "contentHash">,
    derive?: (path: string) => DerivedSection[],
  ): { meta: SnapshotMeta; bytes: number } {
    const hasher = new Bun.CryptoHasher("sha256");
    for (const s of [...this.out.written].sort((a, b) => (a.name < b.name ? -1 : 1)))
      hasher.update(`${s.name}\n${s.sha256}\n`);
    const newestRevision = this.newestTs === undefined ? {} : { newestRevision: isoSeconds(this.newestTs) };
    const full: SnapshotMeta = {
      formatVersion: FORMAT_VERSION,
      ...meta,
      ...newestRevision,
      contentHash: hasher.digest("hex"),
    };
    if (derive) for (const { name, bytes } of derive(this.out.seal(full))) this.out.section(name, bytes);
    const bytes = this.out.finish(full);
    return { meta: full, bytes };
  }

  abandon(): void {
    this.pages?.close();
    this.out.abandon();
  }
}

/** A section made from a sealed snapshot (SnapshotWriter.finish). */
export interface DerivedSection {
  name: string;
  bytes: Uint8Array;
}

const PACKED_BATCH_BYTES = 1 << 20;

/**
 * The redirects section: the msgpack array of {title, target} that packr.pack(list) makes,
 * written a redirect at a time (the array's header, then each element's bytes) rather than
 * as one list of objects and one buffer.
 */
export function writeRedirects(out: ContainerWriter, redirects: RedirectList): void {
  const n = redirects.length;
  out.begin("redirects");
  out.write(
    n < 16
      ? Uint8Array.of(0x90 | n)
      : n < 0x10000
        ? Uint8Array.of(0xdc, n >> 8, n & 0xff)
        : Uint8Array.of(0xdd, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff),
  );
  let batch = new Uint8Array(PACKED_BATCH_BYTES);
  let used = 0;
  for (let i = 0; i < n; i++) {
    const packed = packr.pack({ title: redirects.title(i), target: redirects.target(i) });
    if (used + packed.length > batch.length) {
      out.write(batch.subarray(0, used));
      used = 0;
      if (packed.length > batch.length) batch = new Uint8Array(packed.length);
    }
    batch.set(packed, used);
    used += packed.length;
    // Each redirect packed leaves an object and two strings: collected as they go (fully: a young collection let
    // them pile up), they do not pile up to the build's peak.
    if ((i & 0xffff) === 0xffff) Bun.gc(true);
  }
  out.write(batch.subarray(0, used));
  out.end();
}
