/** GET /v1/lucky (api.md 4.5; D13). */
import { Elysia } from "elysia";
import type { ApiContext } from "../context";
import { anyAnswerNotModified, described, JSON_ONLY, FAULT, KEY_ERRORS, KEYED, SEARCH_BUSY } from "../docs";
import { route } from "../params";
import { ErrorBody, LuckyQuery, LuckyResponse } from "../schemas";
import { errorBody, ERRORS } from "../errors";

export const luckyRoutes = ({ answers, searches }: ApiContext) => {
  const lucky = searches
    ? route({ query: LuckyQuery }, async ({ query, x }) =>
        searches.answer("lucky", query, x, () => answers.lucky(query)),
      )
    : route({ query: LuckyQuery }, ({ query }) => answers.lucky(query));
  return new Elysia().get("/v1/lucky", lucky.handler, {
    ...lucky.hooks,
    parse: JSON_ONLY,
    response: {
      200: described(LuckyResponse, "The best page with all its chunks"),
      ...anyAnswerNotModified("a query some page matches has an answer (the search still runs, to find out)"),
      400: described(ErrorBody, "`missing q`, or `invalid_parameter` for q over 500 characters or an unknown format", {
        examples: {
          [ERRORS.missingQ.code]: errorBody(ERRORS.missingQ),
          [ERRORS.invalidParameter.code]: {
            ...errorBody(ERRORS.invalidParameter, "format", "one of chunks, concat"),
            details: { parameter: "format", value: "x", constraint: "one of chunks, concat" },
          },
        },
      }),
      404: described(ErrorBody, "`no results found`: nothing matches", {
        examples: { [ERRORS.noResults.code]: errorBody(ERRORS.noResults) },
      }),
      ...KEY_ERRORS,
      ...FAULT,
      ...SEARCH_BUSY,
    },
    detail: {
      ...KEYED,
      operationId: "lucky",
      tags: ["Search"],
      summary: "The best page for a query",
      description:
        "An exact title match (any case, redirects followed) wins; otherwise the page of the best search hit. " +
        "The page comes with all its chunks, and by default (format=concat) their text joined in one field.",
    },
  });
};
