/**
 * What a snapshot holds, in the snapshot's own types: the file format is defined here, not
 * by whatever ingest happens to produce. The bytes are laid out by container.ts (sections),
 * text.ts (chunk text in compressed blocks) and pages.ts (the page table).
 */
import { UserError } from "../errors";

export { beginsAsSnapshot, SNAPSHOT_EXTENSION, SNAPSHOT_MAGIC } from "../files";

export interface Wiki {
  host: string;
  dbname: string;
  lang: string;
  sitename: string;
}

export interface SourceReport {
  dump: string;
  schema: string;
  compression: string;
  articles: number;
  redirects: number;
  truncated: boolean;
  damage?: string;
}

export interface SnapshotSection {
  heading: string;
  level: number;
}

export interface SnapshotChunk {
  /** Index into the page's sections. */
  section: number;
  text: string;
}

/** A page as served. Stored pages read their sections and chunk text from the file when asked. */
export interface SnapshotPage {
  pageId: number;
  revId: number;
  title: string;
  /** ISO 8601, UTC. */
  timestamp: string;
  tsUnix: number;
  sections: SnapshotSection[];
  chunks: SnapshotChunk[];
}

export interface Redirect {
  title: string;
  target: string;
}

/** Redirects by index, sorted by title: a list of objects, or a build's columns read one at a time. */
export interface RedirectList {
  readonly length: number;
  title(i: number): string;
  target(i: number): string;
  /** Lets the strings go (a build's, once its title index has what it needs of them): title() and target() no longer answer. */
  release?(): void;
}

/** A list of redirect objects as a RedirectList. */
export function redirectListOf(redirects: readonly Redirect[]): RedirectList {
  return { length: redirects.length, title: (i) => redirects[i]!.title, target: (i) => redirects[i]!.target };
}

export interface SnapshotMeta {
  formatVersion: number;
  /** ISO 8601, UTC. */
  createdAt: string;
  /** The newest revision among its pages (ISO 8601, UTC): how new its data is (D55). Snapshots written before it have none. */
  newestRevision?: string;
  wiki: Wiki;
  sources: SourceReport[];
  truncated: boolean;
  indexedPages: number;
  indexedChunks: number;
  skippedRedirects: number;
  chunkWords: number;
  /** What the build did to the source text, as the attribution must say (recorded by the build that made the file). */
  modifications: string[];
  /** sha256 over the sections' hashes, hex: names the data independently of when it was built. */
  contentHash: string;
  /** Made by snapshot:update: the content hash of the snapshot it was updated from. */
  base?: string;
  /** The updates applied since the full build, oldest first (each update adds one). */
  updates?: AppliedUpdate[];
}

/** One snapshot:update run, as the snapshot it made records it. */
export interface AppliedUpdate {
  /** ISO 8601, UTC. */
  createdAt: string;
  /** The content hash of the snapshot it started from. */
  base: string;
  /** The dumps applied, as given. */
  dumps: string[];
  /** The days of the incremental dumps among them (YYYYMMDD, from their names), for snapshot:follow. */
  days: string[];
  /**
   * The deletion list applied, if any, and what it removed of the base: pages (counted among `removed`) and
   * redirects, apart. An update written before they were told apart recorded `removed` instead, the two together.
   */
  deleted?: { file: string; pages: number; redirects: number };
  /** Pages whose revision changed, pages added, pages removed (deleted, or their title taken by another). */
  changed: number;
  added: number;
  removed: number;
}

/** A snapshot that cannot be written or loaded. The message is written for the user. */
export class SnapshotError extends UserError {}

/**
 * A snapshot's path named another file when a container opened it again (its mapping, a section's read) than when it
 * read its header (one renamed onto it in between): nothing of either was read, and opened again the file there now is
 * read whole (D84).
 */
export class SnapshotReplaced extends SnapshotError {}
