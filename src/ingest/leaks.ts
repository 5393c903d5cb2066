/**
 * Leaks in one dump's text: markup left in its chunks and headings, and words JavaScript
 * writes for a missing value ("undefined", "NaN") that the page's wikitext does not hold.
 * Used by `bun run leaks` and the tests.
 */
import { ingest } from "./ingestion";
import type { IngestResult } from "./types";
import { countArtifacts } from "./wikitext/artifacts";
import { countLeaks, LEAK_PATTERNS } from "./wikitext/text";

export interface DumpLeaks {
  articles: number;
  /** The dump's conversion (the tests check more of it than its leaks). */
  result: IngestResult;
  /** Chunks and headings checked. */
  texts: number;
  /** Per leak pattern, the texts that hold it. */
  counts: Record<string, number>;
}

/**
 * Converts a dump and counts its leaks. allowTruncated (`bun run leaks` passes it): a damaged dump is converted up to
 * its damage, as --allow-truncated does; without it a damaged dump fails, as a build's default does.
 */
export async function dumpLeaks(dump: string, allowTruncated: boolean): Promise<DumpLeaks> {
  const authored = new Map<number, Map<string, number>>();
  const result = await ingest({
    dumps: [dump],
    allowTruncated,
    onPage: (page) => {
      const words = countArtifacts(page.text);
      if (words.size) authored.set(page.pageId, words);
      else authored.delete(page.pageId);
    },
  });
  const counts = Object.fromEntries(LEAK_PATTERNS.map((p) => [p, 0])) as Record<string, number>;
  let texts = 0;
  for (const article of result.articles) {
    const own = [...article.chunks.map((c) => c.text), ...article.sections.map((s) => s.heading)];
    texts += own.length;
    for (const [p, n] of Object.entries(countLeaks(own, authored.get(article.pageId)))) counts[p]! += n;
  }
  return { articles: result.articles.length, result, texts, counts };
}
