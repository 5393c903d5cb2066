/**
 * build: dumps → snapshot files. full.ts builds one from dumps (or pages in memory), update.ts
 * applies incremental dumps and a deletion list to one, follow.ts finds the days to apply.
 */
export {
  buildFromDumps,
  buildFromPages,
  SnapshotBuild,
  writeIngested,
  type BuildAbout,
  type BuildOptions,
  type BuildReport,
} from "./full";
export { DEFAULT_MEMORY_BYTES, MEMORY_BOUND, memoryBound, MOST_MEMORY_BYTES, WIKIMEDIA_INCR } from "../build-defaults";
export { buildParsingWorker, type AnalysedArticle } from "./analysed";
export { dayOfDump, updateSnapshot, type UpdateOptions, type UpdateReport } from "./update";
export { DeletionsError, parseDeletions, readDeletions, type Deletions } from "./deletions";
export {
  appliedDays,
  dayOf,
  daysToApply,
  httpPlace,
  incrName,
  localPlace,
  nextDay,
  wikiOf,
  type DumpPlace,
} from "./follow";
