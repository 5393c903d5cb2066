/**
 * The built indexes, kept beside the snapshot (`X.tome.idx`) so that boot decodes them
 * instead of re-tokenizing the corpus. The file names the snapshot content it was built
 * from; a mismatch, another analyzer version, or damage means a rebuild.
 */
import MiniSearch, { type AsPlainObject } from "minisearch";
import { Packr } from "msgpackr";
import { atomicWrite } from "../files";
import { sameBytes, sha256, type Snapshot } from "../snapshot";
import { ANALYZER_VERSION } from "./analyze";
import { aliasesByPage, textIndexOptions, titleIndexOptions } from "./engine";

/** Bump when what is indexed changes (fields, options). */
const STORE_FORMAT = 4;
const packr = new Packr({ useRecords: true, moreTypes: false });

interface Stored {
  format: number;
  analyzer: number;
  contentHash: string;
  text: AsPlainObject;
  titles: AsPlainObject;
}

export interface Indexes {
  text: MiniSearch;
  titles: MiniSearch;
}

export function indexPath(snapshotPath: string): string {
  return `${snapshotPath}.idx`;
}

export function buildIndexes(snapshot: Snapshot): Indexes {
  const lang = snapshot.meta.wiki.lang;
  const text = new MiniSearch(textIndexOptions(lang));
  let g = 0;
  for (const page of snapshot.pages) {
    for (const chunk of page.chunks) text.add({ id: g++, text: chunk.text, section: page.sections[chunk.section]?.heading ?? "", title: page.title });
  }
  const titles = new MiniSearch(titleIndexOptions(lang));
  const aliases = aliasesByPage(snapshot);
  snapshot.pages.forEach((page, i) => titles.add({ id: i, title: page.title, aliases: (aliases.get(i) ?? []).join("\n") }));
  return { text, titles };
}

export function encodeIndexes(snapshot: Snapshot, indexes: Indexes): Uint8Array {
  const stored: Stored = {
    format: STORE_FORMAT,
    analyzer: ANALYZER_VERSION,
    contentHash: snapshot.meta.contentHash,
    text: indexes.text.toJSON(),
    titles: indexes.titles.toJSON(),
  };
  const body = packr.pack(stored);
  const out = new Uint8Array(32 + body.byteLength);
  out.set(sha256(body), 0);
  out.set(body, 32);
  return out;
}

/** The stored indexes, or null when absent, stale or damaged. */
export async function loadIndexes(path: string, snapshot: Snapshot): Promise<Indexes | null> {
  const file = Bun.file(path);
  if (!(await file.exists())) return null;
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.byteLength < 32) return null;
  const body = bytes.subarray(32);
  if (!sameBytes(sha256(body), bytes.subarray(0, 32))) return null;
  let stored: Stored;
  try {
    stored = packr.unpack(body) as Stored;
  } catch {
    return null;
  }
  if (stored.format !== STORE_FORMAT || stored.analyzer !== ANALYZER_VERSION || stored.contentHash !== snapshot.meta.contentHash) {
    return null;
  }
  const lang = snapshot.meta.wiki.lang;
  return {
    text: MiniSearch.loadJS(stored.text, textIndexOptions(lang)),
    titles: MiniSearch.loadJS(stored.titles, titleIndexOptions(lang)),
  };
}

/** Loads the stored indexes, or builds them and stores them for the next boot. */
export async function indexesFor(
  snapshotPath: string,
  snapshot: Snapshot,
  log: (line: string) => void = () => {},
): Promise<Indexes> {
  const path = indexPath(snapshotPath);
  const loaded = await loadIndexes(path, snapshot);
  if (loaded) return loaded;
  log(`building the search indexes for ${snapshotPath} (once; they are kept in ${path})`);
  const built = buildIndexes(snapshot);
  try {
    atomicWrite(path, encodeIndexes(snapshot, built));
  } catch (err) {
    log(`could not keep the indexes in ${path} (${(err as Error).message}); they will be rebuilt at the next boot`);
  }
  return built;
}
