/**
 * ingest: MediaWiki dumps → articles of clean sections and chunks, plus the redirect map.
 *
 * Dumps are streamed; wikitext is parsed on every core. Several dumps of one wiki merge,
 * and the newest revision of each page wins (claims.ts). The run's steps are in ingestion.ts.
 */
export type { Article } from "./article";
export type { Chunk, SectionHead } from "./chunk";
export { wordCount } from "./chunk";
export { RedirectColumns } from "./claim-table";
export { canonicalTitle, newer } from "./claims";
export type { Claim, RedirectIdLists } from "./claim-table";
export { DumpError } from "./errors";
export { checkIngest, ingest, INGEST_RULES, sameWiki, siteOf } from "./ingestion";
export { dumpLeaks, type DumpLeaks } from "./leaks";
export { modifications } from "./modifications";
export { cannotReachSaid, fetchFailureSaid } from "./source";
export { type ArticleExtension, serveParsing } from "./parsing";
export { buildWorkers, endResting, setBuildWorkers } from "./pool";
export type { RawPage, SiteInfo } from "./raw-page";
export {
  DEFAULT_CHUNK_WORDS,
  type IngestOptions,
  type IngestProgress,
  type IngestResult,
  type Redirect,
  type SourceReport,
  type Wiki,
} from "./types";
export { countLeaks, findLeaks, LEAK_PATTERNS } from "./wikitext";
