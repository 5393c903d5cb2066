/**
 * search: a snapshot in memory, searchable. Also the library API for RAG pipelines:
 *
 *   import { open } from "tome/src/search";
 *   const tome = await open("snapshots/enwiki.tome");
 *   const { hits } = tome.search("albedo of snow", { limit: 5 });
 */
import { readSnapshot } from "../snapshot";
import { Engine } from "./engine";
import { indexesFor, type BuildProgress } from "./store";

export { ANALYZER_VERSION, fold, phraseTest, terms, tokens } from "./analyze";
export { DEFAULTS, Engine, type ChangesResult, type Hit, type LuckyResult, type SearchOptions, type SearchResult, type SearchWork } from "./engine";
export { CROP_MARKER, escapeHtml } from "./highlight";
export { buildIndexes, encodeIndexes, indexPath, indexesFor, loadIndexes, type BuildProgress } from "./store";

export interface OpenOptions {
  /** Progress and notices, e.g. when the indexes are built for the first time. */
  log?: (line: string) => void;
  /** Told how far a first build of the indexes has come. */
  progress?: BuildProgress;
}

/** Loads a snapshot and its indexes (building and keeping them beside it the first time). */
export async function open(snapshotPath: string, options: OpenOptions = {}): Promise<Engine> {
  const snapshot = await readSnapshot(snapshotPath);
  const indexes = await indexesFor(snapshotPath, snapshot, options.log, options.progress);
  return new Engine(snapshot, indexes.text, indexes.titles);
}
