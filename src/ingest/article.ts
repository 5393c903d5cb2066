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

export function toUnix(timestamp: string): number {
  const ms = Date.parse(timestamp);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : 0;
}

function toIsoUtc(timestamp: string): string {
  const ms = Date.parse(timestamp);
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(/\.000Z$/, "Z") : "1970-01-01T00:00:00Z";
}
