/** GET /v1/page/{page_id} (api.md 4.2; D10) and GET /v1/chunk/{id} (api.md 4.4; D11). */
import { Elysia } from "elysia";
import type { ApiContext } from "../context";
import { described, JSON_ONLY, KEY_ERRORS, KEYED } from "../docs";
import { notFound } from "../errors";
import { strict, type Filled } from "../params";
import { Chunk, ChunkParams, ErrorBody, PageParams, PageQuery, PageResponse } from "../schemas";

const PAGE_ID = { codes: { page_id: "page_id must be an integer" } };

export const pageRoutes = ({ engine, resources, attributions }: ApiContext) =>
  new Elysia()
    .get(
      "/v1/page/:page_id",
      (ctx) => {
        const { page_id } = ctx.params as Filled<typeof PageParams>;
        const query = ctx.query as Filled<typeof PageQuery>;
        const page = engine.page(page_id);
        if (!page) throw notFound(`There is no page with id ${page_id}.`);
        const results = resources.chunks(page, query.offset, query.max_chunks);
        const shown = resources.page(page);
        return {
          page: shown,
          chunks: { results, offset: query.offset, limit: query.max_chunks, total: page.chunks.length },
          ...(query.format === "concat" ? { text: joinText(results) } : {}),
          attribution: attributions.page(page.title, shown.url),
        };
      },
      {
        ...strict({ params: PageParams, query: PageQuery, ...PAGE_ID }),
        parse: JSON_ONLY,
        response: {
          200: described(PageResponse, "The page and the requested window of its chunks; an offset past the end gives empty results (D10)"),
          400: described(ErrorBody, "`page_id must be an integer` for the path, or `invalid_parameter` for format, max_chunks or offset (D3, D5)"),
          404: described(ErrorBody, "`not found`: no page has this id"),
          ...KEY_ERRORS,
        },
        detail: {
        ...KEYED, summary: "A page and its chunks", description: "Page metadata and a window of its chunks; format=concat adds them joined as one text (D10)." },
      },
    )
    .get(
      "/v1/chunk/:id",
      (ctx) => {
        const { id } = ctx.params as Filled<typeof ChunkParams>;
        const [pageId, index] = id.split("_").map(Number) as [number, number];
        const page = engine.page(pageId);
        if (!page || index >= page.chunks.length) throw notFound(`There is no chunk with id ${id}.`);
        return resources.chunk(page, index);
      },
      {
        ...strict({ params: ChunkParams }),
        parse: JSON_ONLY,
        response: {
          200: described(Chunk, "The chunk, with its source, license and modifications"),
          400: described(ErrorBody, "`invalid_parameter`: the id is not {page_id}_{chunk_index} in base-10 digits (D11)"),
          404: described(ErrorBody, "`not found`: well-formed, but no such chunk (D11)"),
          ...KEY_ERRORS,
        },
        detail: {
        ...KEYED, summary: "One chunk", description: "One chunk by its id {page_id}_{chunk_index} (D11)." },
      },
    );

/** D10: the returned chunks joined by a blank line. */
export function joinText(chunks: { text: string }[]): string {
  return chunks.map((c) => c.text).join("\n\n");
}
