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
  const corrupt = (what: string) => new SnapshotError(`${path} is corrupt: ${what}; rebuild it from its dump instead.`);
  let stored: Omit<SnapshotMeta, "modifications">;
  let content: { pages: SnapshotPage[]; redirects: Redirect[] };
  try {
    stored = unpackr.unpack(bytes.subarray(HEADER_BYTES, HEADER_BYTES + metaLength));
    content = unpackr.unpack(bytes.subarray(HEADER_BYTES + metaLength));
  } catch {
    throw corrupt("its content is not msgpack");
  }
  // Its checksum is only over the bytes: a file its writer got wrong (or made by hand) is said so, not left to crash the conversion.
  const wrong = wrongMeta(stored) ?? wrongContent(content);
  if (wrong) throw corrupt(wrong);
  const meta: SnapshotMeta = { ...stored, modifications: format1Modifications(stored.chunkWords) };
  return { meta, pages: content.pages, redirects: content.redirects };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;

/** What is wrong with a format-1 file's metadata, if anything: what a conversion reads of it. */
function wrongMeta(meta: unknown): string | undefined {
  if (!isObject(meta) || !isObject(meta.wiki) || typeof meta.wiki.lang !== "string")
    return "its metadata names no wiki";
  if (!isCount(meta.chunkWords) || meta.chunkWords === 0) return "its metadata has no chunk size";
  if (typeof meta.createdAt !== "string" || !Number.isFinite(Date.parse(meta.createdAt)))
    return "its metadata has no creation time";
  if (!Array.isArray(meta.sources)) return "its metadata lists no sources";
}

/** What is wrong with a format-1 file's pages and redirects, if anything (the first page wrong). */
function wrongContent(content: unknown): string | undefined {
  if (!isObject(content) || !Array.isArray(content.pages) || !Array.isArray(content.redirects))
    return "it holds no list of pages and redirects";
  for (const [i, p] of (content.pages as unknown[]).entries()) {
    const wrong = wrongPage(p);
    if (wrong) return `its page ${i + 1} ${wrong}`;
  }
  for (const [i, r] of (content.redirects as unknown[]).entries())
    if (!isObject(r) || typeof r.title !== "string" || typeof r.target !== "string")
      return `its redirect ${i + 1} has no title or target`;
}

function wrongPage(p: unknown): string | undefined {
  if (!isObject(p)) return "is not a page";
  if (!isCount(p.pageId) || p.pageId > 0xffffffff) return "has no page id";
  if (typeof p.revId !== "number" || typeof p.tsUnix !== "number") return "has no revision";
  if (typeof p.title !== "string" || typeof p.timestamp !== "string") return "has no title or time";
  if (!Array.isArray(p.sections) || !Array.isArray(p.chunks)) return "has no sections or chunks";
  for (const s of p.sections as unknown[])
    if (!isObject(s) || typeof s.heading !== "string" || !isCount(s.level)) return "has a section without a heading";
  const sections = p.sections.length;
  for (const c of p.chunks as unknown[])
    if (!isObject(c) || typeof c.text !== "string" || !isCount(c.section) || c.section >= sections)
      return "has a chunk without text or section";
}
