/** GET /v1/page/{page_id} (api.md 4.2; D10) and GET /v1/chunk/{id} (api.md 4.4; D11). */
import { Elysia } from "elysia";
import type { ApiContext } from "../context";
import { CACHED_HEADERS, described, FAULT, JSON_ONLY, KEY_ERRORS, KEYED, NOT_MODIFIED } from "../docs";
import { errorBody, ERRORS } from "../errors";
import { route } from "../params";
import { Chunk, ChunkParams, ErrorBody, PageParams, PageQuery, PageResponse } from "../schemas";

const PAGE_ID = { codes: { page_id: ERRORS.pageIdNotInteger } };

export const pageRoutes = ({ answers }: ApiContext) => {
  const page = route({ params: PageParams, query: PageQuery, ...PAGE_ID }, ({ params, query }) =>
    answers.page(params.page_id, query),
  );
  const chunk = route({ params: ChunkParams }, ({ params }) => answers.chunk(params.id).chunk);
  return new Elysia()
    .get("/v1/page/:page_id", page.handler, {
      ...page.hooks,
      parse: JSON_ONLY,
      response: {
        200: described(
          PageResponse,
          "The page and the requested window of its chunks; an offset past the end gives empty results",
          { headers: CACHED_HEADERS },
        ),
        ...NOT_MODIFIED,
        400: described(
          ErrorBody,
          "`page_id must be an integer` for the path, or `invalid_parameter` for format, max_chunks or offset",
          {
            examples: {
              [ERRORS.pageIdNotInteger.code]: {
                ...errorBody(
                  ERRORS.pageIdNotInteger,
                  "page_id",
                  "an integer from 0 to 9007199254740991 (base-10 digits)",
                ),
                details: {
                  parameter: "page_id",
                  value: "abc",
                  constraint: "an integer from 0 to 9007199254740991 (base-10 digits)",
                },
              },
              [ERRORS.invalidParameter.code]: {
                ...errorBody(ERRORS.invalidParameter, "format", "one of chunks, concat"),
                details: { parameter: "format", value: "html", constraint: "one of chunks, concat" },
              },
            },
          },
        ),
        404: described(ErrorBody, "`not found`: no page has this id", {
          examples: { [ERRORS.notFound.code]: errorBody(ERRORS.notFound, "page with id 1") },
        }),
        ...KEY_ERRORS,
        ...FAULT,
      },
      detail: {
        ...KEYED,
        operationId: "getPage",
        tags: ["Pages"],
        summary: "A page and its chunks",
        description:
          "The page and a window of its chunks (all of them by default); format=concat adds their text joined in one field.",
      },
    })
    .get("/v1/chunk/:id", chunk.handler, {
      ...chunk.hooks,
      parse: JSON_ONLY,
      response: {
        200: described(Chunk, "The chunk, with its source, license and modifications", { headers: CACHED_HEADERS }),
        ...NOT_MODIFIED,
        400: described(
          ErrorBody,
          "`invalid_parameter`: the id is not {page_id}_{chunk_index}, two integers of base-10 digits up to 2^53 - 1",
          {
            examples: {
              [ERRORS.invalidParameter.code]: {
                ...errorBody(ERRORS.invalidParameter, "id", `of the form ${ChunkParams.properties.id.description}`),
                details: {
                  parameter: "id",
                  value: "39-0",
                  constraint: `of the form ${ChunkParams.properties.id.description}`,
                },
              },
            },
          },
        ),
        404: described(ErrorBody, "`not found`: well-formed, but no such chunk", {
          examples: { [ERRORS.notFound.code]: errorBody(ERRORS.notFound, "chunk with id 39_99") },
        }),
        ...KEY_ERRORS,
        ...FAULT,
      },
      detail: {
        ...KEYED,
        operationId: "getChunk",
        tags: ["Pages"],
        summary: "One chunk",
        description: "One chunk by its id, {page_id}_{chunk_index}.",
      },
    });
};

/** D10: the returned chunks joined by a blank line. */
