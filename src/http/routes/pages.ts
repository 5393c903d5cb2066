/** GET /v1/page/{page_id} (api.md 4.2; D10) and GET /v1/chunk/{id} (api.md 4.4; D11). */
import { Elysia } from "elysia";
import type { ApiContext } from "../context";
import { CACHED_HEADERS, described, JSON_ONLY, KEY_ERRORS, KEYED, NOT_MODIFIED } from "../docs";
import { strict, type Filled } from "../params";
import { timed } from "../steps/keys";
import { Chunk, ChunkParams, ErrorBody, PageParams, PageQuery, PageResponse } from "../schemas";

const PAGE_ID = { codes: { page_id: "page_id must be an integer" } };

export const pageRoutes = ({ answers }: ApiContext) =>
  new Elysia()
    .get(
      "/v1/page/:page_id",
      (ctx) => timed(ctx.request, () => answers.page((ctx.params as Filled<typeof PageParams>).page_id, ctx.query as Filled<typeof PageQuery>)),
      {
        ...strict({ params: PageParams, query: PageQuery, ...PAGE_ID }),
        parse: JSON_ONLY,
        response: {
          200: described(PageResponse, "The page and the requested window of its chunks; an offset past the end gives empty results", { headers: CACHED_HEADERS }),
          ...NOT_MODIFIED,
          400: described(ErrorBody, "`page_id must be an integer` for the path, or `invalid_parameter` for format, max_chunks or offset", {
            examples: {
              "page_id must be an integer": {
                error: "page_id must be an integer",
                message: "page_id must be an integer from 0 to 9007199254740991 (base-10 digits).",
                details: { parameter: "page_id", value: "abc", constraint: "an integer from 0 to 9007199254740991 (base-10 digits)" },
              },
              invalid_parameter: {
                error: "invalid_parameter",
                message: "format must be one of chunks, concat.",
                details: { parameter: "format", value: "html", constraint: "one of chunks, concat" },
              },
            },
          }),
          404: described(ErrorBody, "`not found`: no page has this id", {
            examples: { "not found": { error: "not found", message: "There is no page with id 1." } },
          }),
          ...KEY_ERRORS,
        },
        detail: {
          ...KEYED,
          operationId: "getPage",
          tags: ["Pages"],
          summary: "A page and its chunks",
          description: "The page and a window of its chunks (all of them by default); format=concat adds their text joined in one field.",
        },
      },
    )
    .get(
      "/v1/chunk/:id",
      // One chunk costs microseconds: not counted against the work share, so many of them never crowd out a key.
      (ctx) => answers.chunk((ctx.params as Filled<typeof ChunkParams>).id).chunk,
      {
        ...strict({ params: ChunkParams }),
        parse: JSON_ONLY,
        response: {
          200: described(Chunk, "The chunk, with its source, license and modifications", { headers: CACHED_HEADERS }),
          ...NOT_MODIFIED,
          400: described(ErrorBody, "`invalid_parameter`: the id is not {page_id}_{chunk_index} in base-10 digits", {
            examples: {
              invalid_parameter: {
                error: "invalid_parameter",
                message: "id must be of the form {page_id}_{chunk_id}.",
                details: { parameter: "id", value: "39-0", constraint: "of the form {page_id}_{chunk_id}" },
              },
            },
          }),
          404: described(ErrorBody, "`not found`: well-formed, but no such chunk", {
            examples: { "not found": { error: "not found", message: "There is no chunk with id 39_99." } },
          }),
          ...KEY_ERRORS,
        },
        detail: { ...KEYED, operationId: "getChunk", tags: ["Pages"], summary: "One chunk", description: "One chunk by its id, {page_id}_{chunk_index}." },
      },
    );

/** D10: the returned chunks joined by a blank line. */
