/**
 * The bodies of the API's answers (api.md section 4), built from arguments already read and
 * checked: the REST routes and the MCP tools give the same ones. A missing page or chunk
 * throws the ApiError the caller shows (404 for a route, a tool error for MCP).
 */
import type { Engine } from "../search";
import type { Attributions } from "./attribution";
import { apiError, ERRORS, notFound } from "./errors";
import type { Resources } from "./resources";
import { MAX_CHUNKS_DEFAULT } from "./schemas";

/** D13: lucky shows all of the page's chunks, as a page answer's default window. */
const LUCKY_CHUNKS = MAX_CHUNKS_DEFAULT;

/** D10: the chunks of a window joined into one text. */
function joinText(chunks: { text: string }[]): string {
  return chunks.map((c) => c.text).join("\n\n");
}

export type Answers = ReturnType<typeof answers>;

/** `searchTimeoutMs`: a search's time limit (D91; the engine's GUARDS.budgetMs when not given). */
export function answers(engine: Engine, resources: Resources, attributions: Attributions, searchTimeoutMs?: number) {
  return {
    search(q: {
      q: string;
      limit: number;
      offset: number;
      page_id?: number;
      crop_length: number;
      highlight: boolean;
      show_ranking_score?: boolean;
    }) {
      const started = performance.now();
      const result = engine.search(q.q, {
        limit: q.limit,
        offset: q.offset,
        pageId: q.page_id,
        cropLength: q.crop_length,
        highlight: q.highlight,
        budgetMs: searchTimeoutMs,
      });
      return {
        hits: result.hits.map((h) => resources.hit(h, q.show_ranking_score)),
        query: q.q,
        processingTimeMs: Math.round(performance.now() - started),
        limit: q.limit,
        offset: q.offset,
        estimatedTotalHits: result.estimatedTotalHits,
        timedOut: result.timedOut,
        attribution: attributions.results,
      };
    },

    page(pageId: number, q: { offset: number; max_chunks: number; format: string }) {
      const page = engine.page(pageId);
      if (!page) throw notFound(`page with id ${pageId}`);
      const results = resources.chunks(page, q.offset, q.max_chunks);
      const shown = resources.page(page);
      return {
        page: shown,
        chunks: { results, offset: q.offset, limit: q.max_chunks, total: page.chunks.length },
        ...(q.format === "concat" ? { text: joinText(results) } : {}),
        attribution: attributions.page(page.title, shown.url),
      };
    },

    /** A chunk by its id, {page_id}_{chunk_index}, already checked to be of that form (D11). */
    chunk(id: string) {
      const [pageId, index] = id.split("_").map(Number) as [number, number];
      const page = engine.page(pageId);
      if (!page || index >= page.chunks.length) throw notFound(`chunk with id ${id}`);
      return { page, chunk: resources.chunk(page, index) };
    },

    changes(q: { since: number; offset: number; limit: number }) {
      const { pages, total } = engine.changes(q.since, q.offset, q.limit);
      return {
        results: pages.map((p) => resources.page(p)),
        offset: q.offset,
        limit: q.limit,
        total,
        attribution: attributions.results,
      };
    },

    /** max_chunks is the MCP tool's (D59); the route always shows LUCKY_CHUNKS. */
    lucky(q: { q: string; format: string; max_chunks?: number }) {
      const started = performance.now();
      const found = engine.lucky(q.q, searchTimeoutMs);
      if (!found) throw apiError(ERRORS.noResults);
      const { page } = found;
      const shown = resources.luckyPage(page);
      const limit = q.max_chunks ?? LUCKY_CHUNKS;
      const results = resources.chunks(page, 0, limit);
      return {
        page: shown,
        chunks: { results, offset: 0, limit, total: page.chunks.length },
        ...(q.format === "concat" ? { text: joinText(results) } : {}),
        search_context: {
          query: q.q,
          matched_chunk: resources.hit(found.hit),
          total_results: found.totalResults,
          search_time_ms: Math.round(found.processingTimeMs),
          timed_out: found.timedOut,
        },
        attribution: attributions.page(page.title, shown.url),
        processingTimeMs: Math.round(performance.now() - started),
      };
    },
  };
}
