import { Packr } from "msgpackr";
import { atomicWrite } from "../files";
import { sha256, sha256Hex } from "./hash";
import type { IngestResult } from "../ingest";
import {
  FORMAT_VERSION,
  HEADER_BYTES,
  MAGIC,
  type Snapshot,
  type SnapshotContent,
  SnapshotError,
  type SnapshotMeta,
} from "./format";

const packr = new Packr({ useRecords: true, moreTypes: false });

/** Turns an ingest result into a snapshot (in memory). */
export function fromIngest(result: IngestResult, chunkWords: number, createdAt = new Date()): Snapshot {
  const pages = result.articles.map(({ pageId, revId, title, timestamp, tsUnix, sections, chunks }) => ({
    pageId,
    revId,
    title,
    timestamp,
    tsUnix,
    sections,
    chunks,
  }));
  const meta: SnapshotMeta = {
    formatVersion: FORMAT_VERSION,
    createdAt: createdAt.toISOString(),
    wiki: result.wiki,
    sources: result.sources,
    truncated: result.truncated,
    indexedPages: pages.length,
    indexedChunks: pages.reduce((n, p) => n + p.chunks.length, 0),
    skippedRedirects: result.redirects.length,
    chunkWords,
    contentHash: "",
  };
  return { meta, pages, redirects: result.redirects };
}

/**
 * Encodes a snapshot file. Also records the content hash in `snapshot.meta`, so that the
 * indexes built from this snapshot in the same process name the content they belong to.
 */
export function encodeSnapshot(snapshot: Snapshot): Uint8Array {
  const content: SnapshotContent = { pages: snapshot.pages, redirects: snapshot.redirects };
  const contentBytes = packr.pack(content);
  const meta: SnapshotMeta = { ...snapshot.meta, contentHash: sha256Hex(contentBytes) };
  snapshot.meta.contentHash = meta.contentHash;
  const metaBytes = packr.pack(meta);

  const file = new Uint8Array(HEADER_BYTES + metaBytes.byteLength + contentBytes.byteLength);
  const view = new DataView(file.buffer);
  file.set(new TextEncoder().encode(MAGIC), 0);
  view.setUint32(8, FORMAT_VERSION, true);
  view.setUint32(12, 0, true);
  view.setBigUint64(16, BigInt(metaBytes.byteLength), true);
  view.setBigUint64(24, BigInt(contentBytes.byteLength), true);
  file.set(metaBytes, HEADER_BYTES);
  file.set(contentBytes, HEADER_BYTES + metaBytes.byteLength);
  file.set(sha256(file.subarray(HEADER_BYTES)), 32);
  return file;
}

/** Writes a snapshot atomically (see atomicWrite). */
export function writeSnapshot(path: string, snapshot: Snapshot): { bytes: number } {
  const bytes = encodeSnapshot(snapshot);
  try {
    atomicWrite(path, bytes);
  } catch (err) {
    throw new SnapshotError(`cannot write the snapshot to ${path}: ${(err as Error).message}`);
  }
  return { bytes: bytes.byteLength };
}
