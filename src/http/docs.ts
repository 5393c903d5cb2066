/**
 * OpenAPI details the schemas alone do not carry: each response's description and headers.
 * They ride on the response schema itself (as extra keywords, which validation ignores), so
 * the document is still generated from the route's own schemas.
 */
import type { TSchema } from "@sinclair/typebox";
import { ErrorBody, LimitErrorBody } from "./schemas";

type Headers = Record<string, { description: string; schema: { type: string } }>;

const header = (description: string, type = "string") => ({ description, schema: { type } });

/** Sent with every response (D22). */
export const COMMON_HEADERS: Headers = {
  "X-Request-Id": header("The request's id: the client's own X-Request-Id when it is a safe token, otherwise a new UUID (D22)"),
  "Access-Control-Allow-Origin": header("Always * (D22)"),
};

/** Sent with every response to a request with a valid key (D19, D20). */
export const KEYED_HEADERS: Headers = {
  ...COMMON_HEADERS,
  "X-RateLimit-Limit": header("Requests per second this key may make (D19)", "integer"),
  "X-RateLimit-Remaining": header("Requests left in the current second", "integer"),
  "X-RateLimit-Reset": header("Unix seconds when the current second's window ends", "integer"),
  "X-Quota-Limit": header("Credits per UTC month for the key's account, or `unlimited` (D20)"),
  "X-Quota-Remaining": header("Credits left this month (never negative), or `unlimited`"),
  "X-Quota-Reset": header("Unix seconds of 00:00:00 UTC on the 1st of next month", "integer"),
};

/** The schema, documented as a response with this description and these headers. */
export function described<T extends TSchema>(schema: T, description: string, headers: Headers = KEYED_HEADERS): T {
  return { ...schema, description, headers };
}

/** The answers every keyed route can give before its own work (api.md sections 5 and 7; D2, D18–D20). */
export const KEY_ERRORS = {
  401: described(ErrorBody, "`unauthorized`: no API key in X-API-Key or Authorization: Bearer", COMMON_HEADERS),
  403: described(ErrorBody, "`forbidden`: the key is malformed, unknown, revoked or expired (D18)", COMMON_HEADERS),
  429: described(
    LimitErrorBody,
    "`rate_limit_exceeded` (the key's requests per second, D19) or `quota_exceeded` (the account's monthly credits, D20); nothing is spent",
    { ...KEYED_HEADERS, "Retry-After": header("Whole seconds to wait, at least 1", "integer") },
  ),
};

/** How to send a key (api.md section 5), for the OpenAPI document. */
export const SECURITY_SCHEMES = {
  apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "wk_ followed by 32 letters and digits" },
  bearer: { type: "http", scheme: "bearer", description: "Authorization: Bearer <key>; X-API-Key wins when both are sent" },
} as const;

export const KEYED: { security: Record<string, string[]>[] } = { security: [{ apiKey: [] }, { bearer: [] }] };

/** What a route's responses hold, for parse: the API answers JSON only. */
export const JSON_ONLY = "application/json" as const;
