/**
 * One raw page → one article of clean sections and chunks. Runs inside the parsing workers.
 */
import { chunkSections, type Chunk, type SectionHead } from "./chunk";
import type { RawPage } from "./raw-page";
import { makeConverter, type WikiContext } from "./wikitext";

export interface Article {
  pageId: number;
  revId: number;
  title: string;
  /** ISO 8601, UTC. */
  timestamp: string;
  tsUnix: number;
  sections: SectionHead[];
  chunks: Chunk[];
  /** Size of the source wikitext in UTF-16 code units, for statistics. */
  wikitextLength: number;
}

export type ArticleBuilder = (page: RawPage) => Article;

export function articleBuilder(wiki: WikiContext, chunkWords: number): ArticleBuilder {
  const convert = makeConverter(wiki);
  return (page) => {
    const { sections, chunks } = chunkSections(convert(page.text), chunkWords);
    return {
      pageId: page.pageId,
      revId: page.revId,
      title: page.title,
      timestamp: toIsoUtc(page.timestamp),
      tsUnix: toUnix(page.timestamp),
      sections,
      chunks,
      wikitextLength: page.text.length,
    };
  };
}

/**
 * A revision's time in milliseconds; a malformed one, or one before 1970 (MediaWiki has none: the
 * changes and the export list pages from time 0), is read as 1970-01-01.
 */
function revisionTime(timestamp: string): number {
  const ms = Date.parse(timestamp);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

export function toUnix(timestamp: string): number {
  return Math.floor(revisionTime(timestamp) / 1000);
}

function toIsoUtc(timestamp: string): string {
  return new Date(revisionTime(timestamp)).toISOString().replace(/\.000Z$/, "Z");
}
