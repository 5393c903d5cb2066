/**
 * The snapshot: everything the service serves, in one msgpackr file.
 *
 * Layout (little-endian):
 *   "TOMESNAP" | u32 format version | u32 reserved | u64 meta length | u64 content length
 *   | sha256(meta ‖ content), 32 bytes | meta | content
 * meta and content are msgpackr-encoded. meta.contentHash is sha256(content): it names the
 * data independently of when it was built.
 */
import type { Article, Redirect, SourceReport, Wiki } from "../ingest";

export const MAGIC = "TOMESNAP";
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 8 + 4 + 4 + 8 + 8 + 32;
export const SNAPSHOT_EXTENSION = ".tome";

/** An article as ingest made it, less its build statistics. */
export type SnapshotPage = Omit<Article, "wikitextLength">;

export interface SnapshotMeta {
  formatVersion: number;
  /** ISO 8601, UTC. */
  createdAt: string;
  wiki: Wiki;
  sources: SourceReport[];
  truncated: boolean;
  indexedPages: number;
  indexedChunks: number;
  skippedRedirects: number;
  chunkWords: number;
  /** sha256 of the content section, hex. */
  contentHash: string;
}

export interface SnapshotContent {
  /** Sorted by page id. */
  pages: SnapshotPage[];
  /** Redirect title → target title, sorted by title. */
  redirects: Redirect[];
}

export interface Snapshot extends SnapshotContent {
  meta: SnapshotMeta;
}

/** A snapshot that cannot be written or loaded. The message is written for the user. */
export class SnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SnapshotError";
  }
}
