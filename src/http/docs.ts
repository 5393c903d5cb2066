/**
 * OpenAPI details the schemas alone do not carry: each response's description and headers.
 * They ride on the response schema itself (as extra keywords, which validation ignores), so
 * the document is still generated from the route's own schemas.
 */
import type { TSchema } from "@sinclair/typebox";

type Headers = Record<string, { description: string; schema: { type: string } }>;

const header = (description: string, type = "string") => ({ description, schema: { type } });

/** Sent with every response (D22). */
export const COMMON_HEADERS: Headers = {
  "X-Request-Id": header("The request's id: the client's own X-Request-Id when it is a safe token, otherwise a new UUID (D22)"),
  "Access-Control-Allow-Origin": header("Always * (D22)"),
};

/** The schema, documented as a response with this description and these headers. */
export function described<T extends TSchema>(schema: T, description: string, headers: Headers = COMMON_HEADERS): T {
  return { ...schema, description, headers };
}

/** What a route's responses hold, for parse: the API answers JSON only. */
export const JSON_ONLY = "application/json" as const;
