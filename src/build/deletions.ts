/**
 * The --deleted list of snapshot:update: pages (and redirects) to remove, one a line.
 *
 *   12345          a page id (a line of digits)
 *   id:12345       a page id, said explicitly
 *   Some title     a title (MediaWiki's form: `_` = space, first letter either case)
 *   title:1984     a title, said explicitly (for titles made only of digits)
 *
 * Blank lines and lines starting with # are ignored.
 */
import { readFileSync } from "node:fs";
import { canonicalTitle } from "../ingest";
import { UserError } from "../errors";
import { cannotRead } from "../files";
import { printableName } from "../printable";

export interface Deletions {
  /** The file read, for the snapshot's metadata. */
  file: string;
  ids: Set<number>;
  /** Canonical titles. */
  titles: Set<string>;
}

/** A deletion list that cannot be read, said for the person at the terminal. */
export class DeletionsError extends UserError {}

export function parseDeletions(text: string, file: string): Deletions {
  const out: Deletions = { file, ids: new Set(), titles: new Set() };
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const explicit = /^(id|title):\s*(.*)$/.exec(line);
    const kind = explicit ? explicit[1] : /^[0-9]+$/.test(line) ? "id" : "title";
    const value = explicit ? explicit[2]!.trim() : line;
    if (kind === "id") {
      if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(Number(value)))
        throw new DeletionsError(`${printableName(file)}, line ${i + 1}: "${printableName(value)}" is not a page id.`);
      out.ids.add(Number(value));
    } else {
      const title = canonicalTitle(value);
      if (!title) throw new DeletionsError(`${printableName(file)}, line ${i + 1}: an empty title.`);
      out.titles.add(title);
    }
  });
  return out;
}

export function readDeletions(file: string): Deletions {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
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
  return parseDeletions(text, file);
}
