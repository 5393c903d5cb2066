/**
 * Format 1, read only to convert it (`bun run snapshot:convert`): one msgpackr blob of every
 * page, decoded whole into the heap, which stopped scaling past a million chunks.
 *   "TOMESNAP" | u32 1 | u32 reserved | u64 meta length | u64 content length | sha256 | meta | content
 */
import { readFileSync } from "node:fs";
import { Unpackr } from "msgpackr";
import type { Redirect, SnapshotMeta, SnapshotPage } from "./format";
import { SnapshotError } from "./format";
import { sameBytes, sha256 } from "./hash";

const unpackr = new Unpackr({ useRecords: true, moreTypes: false });
const HEADER_BYTES = 64;

export interface Format1 {
  meta: Omit<SnapshotMeta, "modifications">;
  pages: SnapshotPage[];
  redirects: Redirect[];
}

export function readFormat1(path: string): Format1 {
  const bytes = new Uint8Array(readFileSync(path));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < HEADER_BYTES || new TextDecoder().decode(bytes.subarray(0, 8)) !== "TOMESNAP" || view.getUint32(8, true) !== 1) {
    throw new SnapshotError(`${path} is not a format-1 Tome snapshot.`);
  }
  const metaLength = Number(view.getBigUint64(16, true));
  const contentLength = Number(view.getBigUint64(24, true));
  if (bytes.byteLength !== HEADER_BYTES + metaLength + contentLength) throw new SnapshotError(`${path} is truncated; rebuild it from its dump instead.`);
  if (!sameBytes(sha256(bytes.subarray(HEADER_BYTES)), bytes.subarray(32, 64))) throw new SnapshotError(`${path} is corrupt: its checksum does not match; rebuild it from its dump instead.`);
  const meta = unpackr.unpack(bytes.subarray(HEADER_BYTES, HEADER_BYTES + metaLength)) as Format1["meta"];
  const content = unpackr.unpack(bytes.subarray(HEADER_BYTES + metaLength)) as { pages: SnapshotPage[]; redirects: Redirect[] };
  return { meta, pages: content.pages, redirects: content.redirects };
}
