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
  /** The file's sections, for the layers that add their own (the search indexes). */
  container: Container;
  pages: PageTable;
  /** Redirect title → target title, sorted by title (decoded when first asked for). */
  readonly redirects: Redirect[];
}

export function openSnapshot(path: string): Snapshot {
  const container = openContainer(path);
  const text = new TextStore(container);
  const pages = new PageTable(container, text);
  let redirects: Redirect[] | undefined;
  return {
    meta: container.meta as SnapshotMeta,
    path,
    container,
    pages,
    get redirects() {
      return (redirects ??= unpackr.unpack(container.section("redirects")) as Redirect[]);
    },
  };
}

/** Reads only the metadata (header and table checked). */
export function readSnapshotMeta(path: string): SnapshotMeta {
  return openContainer(path).meta as SnapshotMeta;
}
