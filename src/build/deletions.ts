/**
 * The --deleted list of snapshot:update: pages (and redirects) to remove, one a line.
 *
 *   12345          a page id (a line of digits)
 *   id:12345       a page id, said explicitly
 *   Some title     a title (MediaWiki's form: `_` = space, first letter either case)
 *   title:1984     a title, said explicitly (for titles made only of digits)
 *
 * Blank lines and lines starting with # are ignored. A file that is not text (a NUL byte, bytes that are not UTF-8)
 * is refused; lines that match no page or redirect are counted, and the update says how many (D45).
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { canonicalTitle } from "../ingest";
import { UserError } from "../errors";
import { cannotRead } from "../files";
import { printableName } from "../printable";

export interface Deletions {
  /** The file read, for the snapshot's metadata. */
  file: string;
  /** Page ids, each with the line that named it first, to say which matched nothing (D45). */
  ids: Map<number, DeletionLine>;
  /** Canonical titles, each with the line that named it first. */
  titles: Map<string, DeletionLine>;
}

/** Where an entry of the list was written: its line (1-based) and its text there. */
export interface DeletionLine {
  line: number;
  text: string;
}

/** The entries that named no page or redirect (neither `matchedIds` nor `matchedTitles` holds theirs): how many, the first. */
export function unmatchedDeletions(
  deleted: Deletions,
  matchedIds: Set<number>,
  matchedTitles: Set<string>,
): { count: number; first: DeletionLine } | undefined {
  const unmatched = [
    ...[...deleted.ids].filter(([id]) => !matchedIds.has(id)),
    ...[...deleted.titles].filter(([title]) => !matchedTitles.has(title)),
  ].map(([, at]) => at);
  if (!unmatched.length) return undefined;
  const first = unmatched.reduce((a, b) => (b.line < a.line ? b : a));
  return { count: unmatched.length, first: { line: first.line, text: first.text } };
}

/** A deletion list that cannot be read, said for the person at the terminal. */
export class DeletionsError extends UserError {}

export function parseDeletions(text: string, file: string): Deletions {
  const out: Deletions = { file, ids: new Map(), titles: new Map() };
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const explicit = /^(id|title):\s*(.*)$/.exec(line);
    const kind = explicit ? explicit[1] : /^[0-9]+$/.test(line) ? "id" : "title";
    const value = explicit ? explicit[2]!.trim() : line;
    if (kind === "id") {
      if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value)))
        throw new DeletionsError(`${printableName(file)}, line ${i + 1}: "${printableName(value)}" is not a page id.`);
      if (!out.ids.has(Number(value))) out.ids.set(Number(value), { line: i + 1, text: line });
    } else {
      const title = canonicalTitle(value);
      if (!title) throw new DeletionsError(`${printableName(file)}, line ${i + 1}: an empty title.`);
      if (!out.titles.has(title)) out.titles.set(title, { line: i + 1, text: line });
    }
  });
  return out;
}

/** The bytes of a list read and checked first (D45): a wrong file, a dump of gigabytes, is refused by them, not read whole. */
const HEAD_BYTES = 64 * 1024;

export function readDeletions(file: string): Deletions {
  const head = readList(file, HEAD_BYTES);
  if (head.length < HEAD_BYTES) return parseDeletions(textOf(head, file), file);
  textOf(head, file, { cut: true });
  return parseDeletions(textOf(readList(file), file), file);
}

/** The list's bytes, whole or its first `upTo`; a file not there, a folder, or one not readable, said for the person. */
function readList(file: string, upTo?: number): Buffer {
  try {
    if (upTo === undefined) return readFileSync(file);
    const fd = openSync(file, "r");
    try {
      const head = Buffer.alloc(upTo);
      return head.subarray(0, readSync(fd, head, 0, upTo, 0));
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // As a dump or a snapshot not found, or a folder given for one, is said.
    if (code === "ENOENT")
      throw new DeletionsError(
        `deletion list not found: ${printableName(file)}. Give the file of pages to remove, one a line.`,
        { missing: file },
      );
    if (code === "EISDIR")
      throw new DeletionsError(`${printableName(file)} is a folder, not a deletion list: name the file in it.`);
    throw new DeletionsError(cannotRead(`the deletion list ${printableName(file)}`, err));
  }
}

/**
 * The list's text; a file that is not text is refused, naming the first line that is not (D45): read as UTF-8 anyway,
 * a wrong file (a dump, a snapshot) was a list of "titles" that matched nothing, and the update said "0 removed".
 */
function textOf(bytes: Uint8Array, file: string, { cut = false } = {}): string {
  let text: string | undefined;
  try {
    // Cut (the file's first bytes), a character its last bytes begin is not refused.
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: cut });
  } catch {}
  if (text !== undefined && !text.includes("\0")) return text;
  throw new DeletionsError(
    `${printableName(file)} is not a text file (line ${firstLineNotText(bytes)} holds bytes that are not text): a deletion list holds page ids or titles, one a line (D45). Give the list, as text; nothing was written.`,
  );
}

/** The first line (1-based) of `bytes` holding a NUL byte or bytes that are not UTF-8: read only to name it, once refused. */
function firstLineNotText(bytes: Uint8Array): number {
  const strict = new TextDecoder("utf-8", { fatal: true });
  for (let at = 0, line = 1; ; line++) {
    const newline = bytes.indexOf(10, at);
    const ofLine = bytes.subarray(at, newline < 0 ? bytes.length : newline);
    if (ofLine.includes(0) || newline < 0) return line;
    try {
      strict.decode(ofLine);
    } catch {
      return line;
    }
    at = newline + 1;
  }
}
