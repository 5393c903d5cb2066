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

/**
 * Wikitext beyond this is not converted, and its page is left out (a failure): four times the most
 * Wikipedia stores in a revision (2 MB), and a conversion holds about 30 bytes a character
 * (100 MB of wikitext took 3 GB).
 */
const MAX_WIKITEXT_CHARS = 8 << 20;

export function articleBuilder(wiki: WikiContext, chunkWords: number): ArticleBuilder {
  const convert = makeConverter(wiki);
  return (page) => {
    if (page.text.length > MAX_WIKITEXT_CHARS)
      throw new Error(
        `its wikitext is ${(page.text.length / (1 << 20)).toFixed(1)} M characters, over the ${MAX_WIKITEXT_CHARS >> 20} M a page may have`,
      );
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

/**
 * A revision's time in Unix seconds, as every table keeps it (u32, as the redirects' section): one past 2106-02-07
 * (only a damaged dump's) is that last second, so that a claim, its table's row and its article agree on it.
 */
export function toUnix(timestamp: string): number {
  return Math.min(Math.floor(revisionTime(timestamp) / 1000), 0xffffffff);
}

function toIsoUtc(timestamp: string): string {
  return new Date(revisionTime(timestamp)).toISOString().replace(/\.000Z$/, "Z");
}
