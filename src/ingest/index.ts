/**
 * ingest: MediaWiki dumps → articles of clean sections and chunks, plus the redirect map.
 *
 * Dumps are streamed; wikitext is parsed on every core. Several dumps of one wiki merge,
 * and the newest revision of each page wins (claims.ts). The run's steps are in ingestion.ts.
 */
import { DumpError } from "./errors";
import { Ingestion } from "./ingestion";
import { readExport, type SiteInfo } from "./mediawiki";
import { openDump } from "./source";
import type { IngestOptions, IngestResult } from "./types";

export type { Article } from "./article";
export type { Chunk, SectionHead } from "./chunk";
export { wordCount } from "./chunk";
export { canonicalTitle, newer, type Claim } from "./claims";
export { DumpError } from "./errors";
export { sameWiki } from "./ingestion";
export { modifications } from "./modifications";
export type { RawPage, SiteInfo } from "./mediawiki";
export { DEFAULT_CHUNK_WORDS, type IngestOptions, type IngestProgress, type IngestResult, type Redirect, type SourceReport, type Wiki } from "./types";
export { countLeaks, findLeaks, LEAK_PATTERNS } from "./wikitext";

export async function ingest(options: IngestOptions): Promise<IngestResult> {
  if (!options.dumps.length) throw new DumpError("no dump given: ingest needs at least one dump path or URL.");
  const run = new Ingestion(options);
  try {
    for (const [dumpIndex, spec] of options.dumps.entries()) {
      if (run.full) break;
      await run.readDump(spec, dumpIndex);
    }
    await run.drain();
  } finally {
    run.close();
  }
  return run.result();
}

/** A dump's site information (its <siteinfo>), read without going further. */
export async function siteOf(spec: string): Promise<SiteInfo> {
  const source = await openDump(spec);
  try {
    for await (const item of readExport(source.xml, spec)) if (item.kind === "site") return item.site;
  } catch (err) {
    const decoderError = err instanceof DumpError ? await source.decoderError() : null;
    throw decoderError ?? err;
  } finally {
    source.cancel();
  }
  throw new DumpError(`${spec} has no <siteinfo>: it is not a MediaWiki export.`);
}
