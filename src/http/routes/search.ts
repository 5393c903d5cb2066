/** GET /v1/search (api.md 4.1; D6–D9). */
import { Elysia } from "elysia";
import type { ApiContext } from "../context";
import { anyAnswerNotModified, described, JSON_ONLY, FAULT, KEY_ERRORS, KEYED, SEARCH_BUSY } from "../docs";
import { route } from "../params";
import type { Exchange } from "../pipeline";
import { ErrorBody, SearchQuery, SearchResponse } from "../schemas";
import { errorBody, ERRORS } from "../errors";

/**
 * `If-None-Match: *` asks for the answer only if there is none (RFC 9110 13.1.2), and a search with
 * valid parameters always has one: its 304, free (D20), is answered before the search runs (D148).
 */
const anyAnswer = (x: Exchange) =>
  x.request.headers.get("if-none-match")?.trim() === "*"
    ? new Response(null, { status: 304, headers: { "cache-control": "no-store" } })
    : undefined;

export const searchRoutes = ({ answers, searches }: ApiContext) => {
  const search = searches
    ? route(
        { query: SearchQuery },
        async ({ query, x }) => anyAnswer(x) ?? searches.answer("search", query, x, () => answers.search(query)),
      )
    : route({ query: SearchQuery }, ({ query, x }) => anyAnswer(x) ?? answers.search(query));
  return new Elysia().get("/v1/search", search.handler, {
    ...search.hooks,
    parse: JSON_ONLY,
    response: {
      200: described(SearchResponse, "One hit per page, best first; with page_id, that page's matching chunks", {
        checked: false,
      }),
      ...anyAnswerNotModified("a search always has an answer"),
      400: described(
        ErrorBody,
        "`missing q` (absent or blank), or `invalid_parameter` with details: q over 500 characters, a bad or repeated limit, offset, page_id, crop_length, highlight or show_ranking_score",
        {
          examples: {
            [ERRORS.missingQ.code]: errorBody(ERRORS.missingQ),
            [ERRORS.invalidParameter.code]: {
              ...errorBody(ERRORS.invalidParameter, "limit", "an integer from 1 to 50 (base-10 digits)"),
              details: { parameter: "limit", value: "99", constraint: "an integer from 1 to 50 (base-10 digits)" },
            },
          },
        },
      ),
      ...KEY_ERRORS,
      ...FAULT,
      ...SEARCH_BUSY,
    },
    detail: {
      ...KEYED,
      operationId: "search",
      tags: ["Search"],
      summary: "Search chunks",
      description:
        "Full-text search over chunks: one hit per page (its passage: its lead when the query names the page, else its best chunk), pages whose title matches first (an exact title first of all), " +
        "then pages with every word before pages with some. Text in double quotes must match as a phrase. " +
        "With page_id, the matching chunks of that one page. show_ranking_score=true adds each hit's _rankingScore (0 to 1).",
    },
  });
};
