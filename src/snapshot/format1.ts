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

/**
 * What the builds of format 1 did to the source text. A format-1 file does not record it (the
 * server of its day asked ingest), so reading one supplies the list of the last format-1
 * build (commit 06dec57^), which a conversion then records in the format-2 file.
 */
export function format1Modifications(chunkWords: number): string[] {
  return [
    "Converted from wikitext markup to plain text",
    "Rendered mathematical and chemical formulas and number templates as plain text (Unicode symbols, a/b for fractions)",
    "Removed HTML tags, references and footnotes, most templates, infoboxes, tables, images and their captions",
    "Removed sections that only list sources or links (such as References, External links and See also)",
    "Split into sections by heading hierarchy",
    `Cut into passages (chunks) of at most ${chunkWords} words`,
  ];
}

export interface Format1 {
  /** With the modifications of format1Modifications, which the file itself lacks. */
  meta: SnapshotMeta;
  pages: SnapshotPage[];
  redirects: Redirect[];
}

export function readFormat1(path: string): Format1 {
  const bytes = new Uint8Array(readFileSync(path));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (
    bytes.byteLength < HEADER_BYTES ||
    new TextDecoder().decode(bytes.subarray(0, 8)) !== "TOMESNAP" ||
    view.getUint32(8, true) !== 1
  ) {
    throw new SnapshotError(`${path} is not a format-1 Tome snapshot.`);
  }
  const metaLength = Number(view.getBigUint64(16, true));
  const contentLength = Number(view.getBigUint64(24, true));
  if (bytes.byteLength !== HEADER_BYTES + metaLength + contentLength)
    throw new SnapshotError(`${path} is truncated; rebuild it from its dump instead.`);
  if (!sameBytes(sha256(bytes.subarray(HEADER_BYTES)), bytes.subarray(32, 64)))
    throw new SnapshotError(`${path} is corrupt: its checksum does not match; rebuild it from its dump instead.`);
  const stored = unpackr.unpack(bytes.subarray(HEADER_BYTES, HEADER_BYTES + metaLength)) as Omit<
    SnapshotMeta,
    "modifications"
  >;
  const meta: SnapshotMeta = { ...stored, modifications: format1Modifications(stored.chunkWords) };
  const content = unpackr.unpack(bytes.subarray(HEADER_BYTES + metaLength)) as {
    pages: SnapshotPage[];
    redirects: Redirect[];
  };
  return { meta, pages: content.pages, redirects: content.redirects };
}
