/**
 * search: a snapshot in memory, searchable. Also the library API for RAG pipelines:
 *
 *   import { open, SnapshotError } from "tome";
 *   const tome = open("snapshots/enwiki.tome");
 *   const { hits } = tome.search("albedo of snow", { limit: 5 });
 */
import { fileURLToPath } from "node:url";
import { said } from "../errors";
import { damagedSections, openForWriting, openSnapshot, SnapshotError } from "../snapshot";
import { Engine } from "./engine";
import type { IndexBuildProgress } from "./indexer/merge";
import { PRUNE_FROM, READ_WHOLE } from "./options";
import { ORDER_LENGTH, ORDERS_SECTION } from "./ranking/page-orders";
import { loadIndexes } from "./postings/store";

export { ANALYZER_VERSION, fold, phraseTest, terms, tokens } from "./text/analyze";
// What the engine throws and returns, for a program to catch and type by the package's own name ("tome").
export { SnapshotError, type SnapshotChunk, type SnapshotPage, type SnapshotSection } from "../snapshot";
export { Engine } from "./engine";
export {
  DEFAULTS,
  collector,
  GUARDS,
  checkOption,
  type OptionRule,
  type ChangesResult,
  type Hit,
  type LuckyResult,
  type Pruning,
  type SearchOptions,
  type SearchResult,
  type SearchWork,
} from "./options";
export { CROP_MARKER, escapeHtml } from "./text/highlight";
export { IndexBuilder } from "./indexer/build";
export { MEMORY_RULE } from "./indexer/memory";
export { MEMORY_BOUND, memoryBound, MOST_MEMORY_BYTES } from "../build-defaults";
export { type AnalysedPage, collectEvery, textPageAnalyser, transferOf } from "./indexer/analysis";
export type { IndexBuildProgress } from "./indexer/merge";
export { loadIndexes, readShardData } from "./postings/store";
export { logMemory, setMemoryLog } from "./indexer/memory-log";

/** The page orders section (D51, D90) of a snapshot whose other sections are written (SnapshotWriter.finish's `derive`). */
export function pageOrderSection(
  snapshotPath: string,
  progress?: IndexBuildProgress,
): { name: string; bytes: Uint8Array } {
  const stage = "ordering the pages of common words";
  return {
    name: ORDERS_SECTION,
    bytes: openUnguarded(snapshotPath).pageOrders(
      PRUNE_FROM,
      ORDER_LENGTH,
      progress && ((done, total) => progress(stage, done, total)),
      READ_WHOLE + 1,
    ),
  };
}

/**
 * Opens a snapshot (its sections mapped, not read) and its search indexes, under a read lease on its file (D84,
 * D151): a process opening the file to write it (`cp` over it) waits until this engine has let go of it, and every
 * later call throws a SnapshotError saying so, where reading the file cut short would kill the process (SIGBUS).
 * close(), or the process's end, lets the lease go. A file open for writing now (being copied) is refused; where no
 * lease can be taken (another user's file, a network filesystem) it is mapped unguarded.
 */
export function open(snapshotPath: string | URL): Engine {
  // Read as a file's name, undefined or 42 was said to be a snapshot that "cannot be read (ERR_INVALID_ARG_TYPE)".
  if (snapshotPath instanceof URL) {
    const url = snapshotPath;
    // fileURLToPath's own refusal ("The URL must be of scheme file") did not say whose argument it was.
    try {
      snapshotPath = fileURLToPath(url);
    } catch (err) {
      throw new TypeError(
        `open(path): path must be a file: URL of a snapshot, not ${url.href} (${(err as Error).message}).`,
      );
    }
  }
  if (typeof snapshotPath !== "string")
    throw new TypeError(`open(path): path must be a snapshot file's path, a string, not ${said(snapshotPath)}.`);
  // Said "snapshot not found: . Build one with …".
  if (snapshotPath === "") throw new RangeError("open(path): path is empty: name a snapshot file (a .tome).");
  const engine = openUnguarded(snapshotPath);
  const refused = engine.guard();
  if (refused?.writing) {
    engine.close();
    throw openForWriting(snapshotPath, "open() it");
  }
  return engine;
}

/**
 * open() without the lease: for the server, whose swap takes and answers the lease itself (D84), its search workers, and a build reading the file it writes.
 * `checked`: the identity of the file as the request thread checked it (its snapshot's `checked`), for a worker's open
 * not to check it again (D119).
 */
export function openUnguarded(snapshotPath: string, checked?: string): Engine {
  const snapshot = openSnapshot(snapshotPath, checked);
  try {
    const indexes = loadIndexes(snapshot);
    return new Engine(snapshot, indexes.text, indexes.titles);
  } catch (err) {
    // What was mapped, and the file, let go now: a program trying again held one more descriptor and its maps a try.
    snapshot.container.letGo();
    throw unreadable(snapshotPath, err);
  }
}

/** What broke reading a snapshot's sections at open, as a SnapshotError naming snapshot:verify (damagedSections). */
function unreadable(path: string, err: unknown): Error {
  if (err instanceof SnapshotError) return err;
  return damagedSections(path, (err as Error).message, err);
}
