/**
 * Format 1, read only to convert it (`bun run snapshot:convert`): one msgpackr blob of every
 * page, decoded whole into the heap, which stopped scaling past a million chunks.
 *   "TOMESNAP" | u32 1 | u32 reserved | u64 meta length | u64 content length | sha256 | meta | content
 */
import { readFileSync } from "node:fs";
import { FormatRegistry, type Static, Type as t, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { Unpackr } from "msgpackr";
import type { Redirect, SnapshotMeta, SnapshotPage } from "./format";
import { beginsAsSnapshot, SnapshotError } from "./format";
import { aFolder, FORMAT_VERSION, unreadable } from "./container";
import { sameBytes, sha256 } from "./hash";
import { printableName } from "../printable";

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

/** The file's bytes, or a SnapshotError saying why not (snapshot:convert's argument: a missing file was a stack trace). */
function readWhole(path: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(path));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT")
      throw new SnapshotError(`no file ${printableName(path)}: name the format-1 snapshot to convert.`, {
        missing: path,
      });
    if (code === "EISDIR") throw aFolder(path);
    throw unreadable(path, err);
  }
}

export function readFormat1(path: string): Format1 {
  const bytes = readWhole(path);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tome = bytes.byteLength >= 12 && beginsAsSnapshot(bytes);
  if (tome && view.getUint32(8, true) === FORMAT_VERSION)
    throw new SnapshotError(
      `${printableName(path)} has snapshot format 2 already: there is nothing to convert; serve it as it is.`,
    );
  if (!tome || bytes.byteLength < HEADER_BYTES || view.getUint32(8, true) !== 1) {
    throw new SnapshotError(`${printableName(path)} is not a format-1 Tome snapshot.`);
  }
  const metaLength = Number(view.getBigUint64(16, true));
  const contentLength = Number(view.getBigUint64(24, true));
  if (bytes.byteLength !== HEADER_BYTES + metaLength + contentLength)
    throw new SnapshotError(`${printableName(path)} is truncated; rebuild it from its dump instead.`);
  if (!sameBytes(sha256(bytes.subarray(HEADER_BYTES)), bytes.subarray(32, 64)))
    throw new SnapshotError(
      `${printableName(path)} is corrupt: its checksum does not match; rebuild it from its dump instead.`,
    );
  const corrupt = (what: string) =>
    new SnapshotError(`${printableName(path)} is corrupt: ${what}; rebuild it from its dump instead.`);
  let stored: Omit<SnapshotMeta, "modifications">;
  let content: { pages: SnapshotPage[]; redirects: Redirect[] };
  try {
    stored = unpackr.unpack(bytes.subarray(HEADER_BYTES, HEADER_BYTES + metaLength));
    content = unpackr.unpack(bytes.subarray(HEADER_BYTES + metaLength));
  } catch {
    throw corrupt("its content is not msgpack");
  }
  // Its checksum is only over the bytes: a file its writer got wrong (or made by hand) is said so, not left to crash the conversion.
  const wrong = faultOf(checkers().meta, stored) ?? wrongContent(content);
  if (wrong) throw corrupt(wrong);
  const meta: SnapshotMeta = { ...stored, modifications: format1Modifications(stored.chunkWords) };
  return { meta, pages: content.pages, redirects: content.redirects };
}

/** A time as Date.parse reads it (format 1 wrote Date's toISOString). */
const PARSED_TIME = "date-parse";
if (!FormatRegistry.Has(PARSED_TIME)) FormatRegistry.Set(PARSED_TIME, (text) => Number.isFinite(Date.parse(text)));

// What a conversion reads of a format-1 file, each part with the fault a user is told of when it
// is wrong: a part without one is told as the part around it.
const Meta = t.Object(
  {
    wiki: t.Object({ lang: t.String() }),
    chunkWords: t.Integer({ minimum: 1, fault: "its metadata has no chunk size" }),
    createdAt: t.String({ format: PARSED_TIME, fault: "its metadata has no creation time" }),
    sources: t.Array(t.Unknown(), { fault: "its metadata lists no sources" }),
  },
  { fault: "its metadata names no wiki" },
);

/** Its pages and redirects are checked one by one (Page, RedirectEntry), so that the first wrong one is named. */
const Content = t.Object(
  { pages: t.Array(t.Unknown()), redirects: t.Array(t.Unknown()) },
  { fault: "it holds no list of pages and redirects" },
);

const Count = t.Integer({ minimum: 0 });
const Section = t.Object({ heading: t.String(), level: Count }, { fault: "has a section without a heading" });
const CHUNK_FAULT = "has a chunk without text or section";
const Chunk = t.Object({ text: t.String(), section: Count }, { fault: CHUNK_FAULT });

const Page = t.Object(
  {
    pageId: t.Integer({ minimum: 0, maximum: 0xffffffff, fault: "has no page id" }),
    revId: t.Number({ fault: "has no revision" }),
    tsUnix: t.Number({ fault: "has no revision" }),
    title: t.String({ fault: "has no title or time" }),
    timestamp: t.String({ fault: "has no title or time" }),
    sections: t.Array(Section, { fault: "has no sections or chunks" }),
    chunks: t.Array(Chunk, { fault: "has no sections or chunks" }),
  },
  { fault: "is not a page" },
);

const RedirectEntry = t.Object({ title: t.String(), target: t.String() }, { fault: "has no title or target" });

/** What is wrong with a format-1 file's pages and redirects, if anything (the first page wrong). */
function wrongContent(content: unknown): string | undefined {
  const check = checkers();
  const wrong = faultOf(check.content, content);
  if (wrong) return wrong;
  const { pages, redirects } = content as Static<typeof Content>;
  for (const [i, page] of pages.entries()) {
    const fault = faultOf(check.page, page) ?? unsectioned(page as Static<typeof Page>);
    if (fault) return `its page ${i + 1} ${fault}`;
  }
  for (const [i, redirect] of redirects.entries()) {
    const fault = faultOf(check.redirect, redirect);
    if (fault) return `its redirect ${i + 1} ${fault}`;
  }
  return undefined;
}

/** What a schema cannot say: a chunk's section is one of its page's. */
const unsectioned = (page: Static<typeof Page>) =>
  page.chunks.some((c) => c.section >= page.sections.length) ? CHUNK_FAULT : undefined;

/** A schema compiled, with the faults it names in the order it names them (depth first). */
interface Checker {
  check: TypeCheck<TSchema>;
  faults: string[];
}

function checker(schema: TSchema): Checker {
  function* faultsIn({ fault, items, properties }: TSchema): Generator<string> {
    if (fault) yield fault;
    if (items) yield* faultsIn(items);
    for (const inner of Object.values<TSchema>(properties ?? {})) yield* faultsIn(inner);
  }
  return { check: TypeCompiler.Compile(schema), faults: [...new Set(faultsIn(schema))] };
}

let compiled: Record<"meta" | "content" | "page" | "redirect", Checker> | undefined;
/** Compiled when a format-1 file is first read (most processes never read one). */
const checkers = () =>
  (compiled ??= {
    meta: checker(Meta),
    content: checker(Content),
    page: checker(Page),
    redirect: checker(RedirectEntry),
  });

/** What a user is told of a value its schema refuses: of its faults, the one the schema names first. */
function faultOf({ check, faults }: Checker, value: unknown): string | undefined {
  if (check.Check(value)) return undefined;
  const found = new Set(Array.from(check.Errors(value), (error) => faultAt(check.Schema(), error.path)));
  return faults.find((fault) => found.has(fault));
}

/** The fault of the innermost part on an error's path ("/chunks/0/text") that names one. */
function faultAt(schema: TSchema, path: string): string {
  /** What faultsIn reads of a part: the fault it names, and the parts inside it. */
  type Part = { fault?: string; items?: TSchema; properties?: Record<string, TSchema> };
  let part = schema as Part;
  let fault = part.fault!;
  for (const step of path.split("/").slice(1)) {
    const inner = (part.items ?? part.properties?.[step]) as Part | undefined;
    if (!inner) break;
    part = inner;
    fault = part.fault ?? fault;
  }
  return fault;
}
