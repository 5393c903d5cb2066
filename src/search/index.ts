/**
 * search: a snapshot in memory, searchable. Also the library API for RAG pipelines:
 *
 *   import { open } from "tome/src/search";
 *   const tome = open("snapshots/enwiki.tome");
 *   const { hits } = tome.search("albedo of snow", { limit: 5 });
 */
import { openSnapshot } from "../snapshot";
import { Engine } from "./engine";
import { loadIndexes } from "./index/store";

export { ANALYZER_VERSION, fold, phraseTest, terms, tokens } from "./text/analyze";
export {
  DEFAULTS,
  Engine,
  GUARDS,
  type ChangesResult,
  type Hit,
  type LuckyResult,
  type Pruning,
  type SearchOptions,
  type SearchResult,
  type SearchWork,
} from "./engine";
export { CROP_MARKER, escapeHtml } from "./text/highlight";
export { IndexBuilder } from "./indexer/build";
export type { IndexBuildProgress } from "./indexer/merge";
export { loadIndexes, readShardData } from "./index/store";
export { logMemory, setMemoryLog } from "./indexer/memory-log";

/** Opens a snapshot (its sections mapped, not read) and its search indexes. */
export function open(snapshotPath: string): Engine {
  const snapshot = openSnapshot(snapshotPath);
  const indexes = loadIndexes(snapshot);
  return new Engine(snapshot, indexes.text, indexes.titles);
}
