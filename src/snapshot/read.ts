/** Opens a format-2 snapshot: the table is checked, the sections mapped (not read) from the file. */
import { Unpackr } from "msgpackr";
import { type Container, openContainer } from "./container";
import type { Redirect, SnapshotMeta } from "./format";
import { PageTable } from "./pages";
import { TextStore } from "./text";

const unpackr = new Unpackr({ useRecords: false, moreTypes: false });

export interface Snapshot {
  meta: SnapshotMeta;
  path: string;
  /** The identity of the file whose structure open checked (D119): what a search worker's open is handed, not to check it again. */
  checked: string;
  /** The file's sections, for the layers that add their own (the search indexes). */
  container: Container;
  pages: PageTable;
  /** Redirect title → target title, sorted by title (decoded when first asked for). */
  readonly redirects: Redirect[];
}

/**
 * Opens a snapshot, checking its structure (D119) in a pass over its pages and text blocks, unless `checked` is the
 * identity of this very file (Container.identity), whose structure was checked already in this process: a search
 * worker opening the file the request thread opened. The library's open() passes none.
 */
export function openSnapshot(path: string, checked?: string): Snapshot {
  const container = openContainer(path);
  const known = Boolean(checked) && checked === container.identity;
  let pages: PageTable;
  try {
    pages = new PageTable(container, new TextStore(container, undefined, known), known);
  } catch (err) {
    // The file and what was mapped let go now, not at a collection (damage found in the page or block tables).
    container.letGo();
    throw err;
  }
  let redirects: Redirect[] | undefined;
  return {
    meta: container.meta as SnapshotMeta,
    path,
    checked: container.identity,
    container,
    pages,
    get redirects() {
      return (redirects ??= unpackr.unpack(container.section("redirects")) as Redirect[]);
    },
  };
}

/**
 * Calls `each` with every redirect of a snapshot, in order, one decoded at a time: the
 * redirects section is one msgpack array (writeRedirects), read past its header as a sequence
 * of values rather than into a list of millions of objects.
 */
export function eachRedirect(container: Container, each: (title: string, target: string, i: number) => void): void {
  const bytes = container.section("redirects");
  const head = bytes[0]!;
  const skip = head >= 0x90 && head <= 0x9f ? 1 : head === 0xdc ? 3 : head === 0xdd ? 5 : -1;
  if (skip < 0) throw new Error("snapshot: the redirects section is not a msgpack array");
  let i = 0;
  if (bytes.length > skip)
    unpackr.unpackMultiple(bytes.subarray(skip), (r: Redirect) => {
      each(r.title, r.target, i++);
    });
}

/** Reads only the metadata (header and table checked). */
export function readSnapshotMeta(path: string): SnapshotMeta {
  return openContainer(path).meta as SnapshotMeta;
}
