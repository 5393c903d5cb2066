/**
 * The API's documentation: what each response means and carries (its description, media type
 * and headers, attached to the route's own response schema by `described`), the OpenAPI
 * document built from the routes (openapi.ts) at /v1/openapi.json, and its reader, Swagger
 * UI, at /docs, served from the installed swagger-ui-dist package so that it works offline.
 */
import { Type as t, type TSchema } from "@sinclair/typebox";
import { readFileSync } from "node:fs";
import { Elysia, type DocumentDecoration } from "elysia";
import { COST, INVALID_KEY, INVALID_KEY_NEXT, READ_SCOPE_MESSAGE } from "../access";
import { PDF_MAX_CHARACTERS } from "../pdf";
// Imported as files, so that the executable (bun run compile) carries them.
import swaggerUiBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerUiCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import swaggerUiIcon from "swagger-ui-dist/favicon-32x32.png" with { type: "file" };
import { version as SWAGGER_UI_VERSION } from "swagger-ui-dist/package.json";
import {
  ALSO_AT,
  openApiDocument,
  RESPONSE_DOC,
  UNCHECKED,
  type ApiRoute,
  type HeaderDoc,
  type ResponseDoc,
} from "./openapi";
import * as schemas from "./schemas";
import { ErrorBody, LimitErrorBody, UnavailableBody } from "./schemas";
import { EXAMPLE } from "./examples";
import { MAX_BODY_BYTES } from "./body";
import { errorBody, errorResponse, ERRORS, noSuchRoute } from "./errors";
import { routedPath } from "./pipeline";

export const OPENAPI_PATH = "/v1/openapi.json";

/** The 404 of a path no route answers, pointing at the API's description. */
export const noRouteAnswer = (): Response => errorResponse(ERRORS.notFound, [noSuchRoute(OPENAPI_PATH)]);
export const DOCS_PATH = "/docs";

/**
 * The API's description: this document, its UI and the UI's files (one slash at their end too, as the router serves
 * them). They need no key (D29), and read nothing of the snapshot: they answer while it may not be read (D165).
 */
export function isDocumentation(path: string): boolean {
  const routed = routedPath(path);
  return routed === OPENAPI_PATH || routed === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`);
}

type Headers = Record<string, HeaderDoc>;

const header = (description: string, schema: Record<string, unknown>, example: unknown): HeaderDoc => ({
  description,
  schema,
  example,
});
const unlimitedOr = {
  anyOf: [
    { type: "integer", minimum: 0 },
    { type: "string", const: "unlimited" },
  ],
};

/** The response headers a web page's script may read (CORS): every one the API documents but the safelisted. */
export const EXPOSED_HEADERS =
  "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Quota-Limit, X-Quota-Remaining, X-Quota-Reset, Retry-After, X-Credit-Cost, X-PDF-Truncated, Content-Disposition, ETag, X-Snapshot";

/** Sent with every response, a refusal of its key too. */
const REFUSAL_HEADERS: Headers = {
  "X-Request-Id": header(
    "The request's id, for support: the client's own X-Request-Id when it is a safe token, otherwise a new UUID",
    { type: "string" },
    "0b6a8f7e-3c1d-4f5a-9e2b-7d4c6a1f8e30",
  ),
  "Access-Control-Allow-Origin": header(
    "Always `*`: any web page may call the API",
    { type: "string", const: "*" },
    "*",
  ),
  "Access-Control-Expose-Headers": header(
    "The headers a web page's script may read: the ones described here",
    { type: "string", const: EXPOSED_HEADERS },
    EXPOSED_HEADERS,
  ),
};

/** Sent with every response but a refusal of its key. */
export const COMMON_HEADERS: Headers = {
  ...REFUSAL_HEADERS,
  "X-Snapshot": header(
    "The content hash (sha256, hex) of the snapshot that answered, as in /v1/meta's `search_engine_version.commitSha`: it changes when the server moves to a newer snapshot. " +
      "Not sent when the request's key is refused (401, 403, or the rate limit's 429)",
    { type: "string", pattern: "^[0-9a-f]{64}$" },
    EXAMPLE.meta.commitSha,
  ),
};

/** Sent with an answer no one may keep: a search's or a lucky lookup's (never twice the same), and every error. */
const UNSTORED: Headers = {
  "Cache-Control": {
    ...header(
      "`no-store`: the answer may not be kept, by any cache. Errors, searches and lucky answers (which report their own processing time) are sent so",
      { type: "string", const: "no-store" },
      "no-store",
    ),
    component: "Cache-Control-no-store",
  },
};

/** The key's rate (D19) and its account's quota (D20): sent with every response to a request with a valid key. */
const LIMIT_HEADERS: Headers = {
  "X-RateLimit-Limit": header(
    "Requests per second this key may make (by its plan)",
    { type: "integer", minimum: 1 },
    10,
  ),
  "X-RateLimit-Remaining": header("Requests left in the current second", { type: "integer", minimum: 0 }, 9),
  "X-RateLimit-Reset": header("Unix seconds when the current second's window ends", { type: "integer" }, 1764460801),
  "X-Quota-Limit": header("Credits per UTC calendar month for the key's account, or `unlimited`", unlimitedOr, 5000),
  "X-Quota-Remaining": header("Credits left this month (never negative), or `unlimited`", unlimitedOr, 4999),
  "X-Quota-Reset": header(
    "Unix seconds of 00:00:00 UTC on the 1st of next month, when the quota resets",
    { type: "integer" },
    1764547200,
  ),
};

/** Sent with every response to a request with a valid key (an answer with an ETag replaces its Cache-Control: CACHED_HEADERS). */
const KEYED_HEADERS: Headers = { ...COMMON_HEADERS, ...UNSTORED, ...LIMIT_HEADERS };

/** Sent with an answer a client may keep and revalidate, and with its 304. */
const CACHE_HEADERS: Headers = {
  ETag: header(
    "The answer's version. Send it back in If-None-Match to get 304 Not Modified, without a body and without cost, while it is still the answer. " +
      "A hash of the body (so it changes with the query string, and with a new snapshot); a PDF's is weak (`W/…`), from the article it is made of",
    { type: "string" },
    '"9c1f0e6a2b7d4c3e"',
  ),
  "Cache-Control": header(
    "`private, no-cache`: no shared cache may keep the answer (it needs a key), and the client's own cache asks again, with If-None-Match, before each reuse",
    { type: "string", const: "private, no-cache" },
    "private, no-cache",
  ),
};

/** Sent with a JSON answer that has an ETag. */
export const CACHED_HEADERS: Headers = { ...KEYED_HEADERS, ...CACHE_HEADERS };

/** Sent with a PDF. */
export const PDF_HEADERS: Headers = {
  ...CACHED_HEADERS,
  "Content-Disposition": header(
    "`attachment`, with a filename made from the article's title and ending in `.pdf`: an ASCII `filename` and the exact title in `filename*`",
    { type: "string" },
    `attachment; filename="Albedo.pdf"; filename*=UTF-8''Albedo.pdf`,
  ),
  "X-Credit-Cost": header(
    `Credits this response cost: a PDF costs ${COST.pdf}; a HEAD that rendered nothing, 0`,
    { type: "integer", enum: [0, COST.pdf] },
    COST.pdf,
  ),
  "X-PDF-Truncated": header(
    `Sent when the article's text is longer than a PDF holds (${PDF_MAX_CHARACTERS.toLocaleString("en")} characters): the characters the PDF shows, of the article's. ` +
      "The document stops there and says so in its list of modifications, with the article's address, where it continues",
    { type: "string", pattern: "^[0-9]+ of [0-9]+ characters$" },
    "500000 of 6712345 characters",
  ),
};

const RETRY_AFTER: Headers = {
  "Retry-After": header("Whole seconds to wait before trying again, at least 1", { type: "integer", minimum: 1 }, 1),
};

/** Sent with an answer that says when to come back. */
export const RETRY_HEADERS: Headers = { ...KEYED_HEADERS, ...RETRY_AFTER };

/** /healthz's refusal while the snapshot served cannot be read (it is being written over in place). */
export const HEALTH_UNAVAILABLE = {
  503: described(
    UnavailableBody,
    "`service_unavailable`: the snapshot served is being written over in place, and no request may read it until the next is swapped in. Retry-After says when to come back",
    { headers: { ...COMMON_HEADERS, ...UNSTORED, ...RETRY_AFTER } },
  ),
};

export interface ResponseOptions {
  /** The response's headers (default: KEYED_HEADERS). */
  headers?: Headers;
  /** Its media type (default: application/json; "" for an answer without a body). */
  mediaType?: string;
  /** Real answers, by name, where the schema's own examples would mislead (such as each error code). */
  examples?: Record<string, unknown>;
  /**
   * false: Elysia does not check each answer against the schema (TypeBox, its formats' regular
   * expressions included) before sending it. For a hot route whose answers TypeScript types
   * from the schema and a test checks at run time; a search's check cost more than its own JSON.
   */
  checked?: boolean;
}

/** The schema, documented as a response with this description (and headers, media type, examples). */
export function described<T extends TSchema>(schema: T, description: string, options: ResponseOptions = {}): T {
  const doc: ResponseDoc = {
    description,
    headers: options.headers ?? KEYED_HEADERS,
    mediaType: options.mediaType ?? "application/json",
    examples: options.examples,
  };
  return { ...schema, ...(options.checked === false ? { [UNCHECKED]: true } : {}), [RESPONSE_DOC]: doc };
}

/** A route's documentation also names this second path, where the same operation answers (spread into `detail`). */
export function alsoAt(path: string, operationId: string, summary: string): DocumentDecoration {
  return { [ALSO_AT]: { path, operationId, summary } } as DocumentDecoration;
}

/** The search pool's refusal (D104), documented on the routes answered in it: the pool is full. */
export const SEARCH_BUSY = {
  503: described(
    UnavailableBody,
    "`service_unavailable`: every search worker is busy (or the one answering stopped), the shared key store (Redis) cannot be reached, or the snapshot is being written over in place; nothing is charged. Retry-After says when to come back",
    {
      headers: RETRY_HEADERS,
      examples: {
        [ERRORS.serviceUnavailable.code]: {
          ...errorBody(ERRORS.serviceUnavailable, "Every search worker is busy; nothing was charged. Retry after 1 s."),
          retry_after: 1,
        },
      },
    },
  ),
};

/**
 * The answers to a request Tome cannot read (D28), given before its key is looked at: a 400 `bad_request` (a route that
 * reads parameters declares its own 400, of the same schema) and a 413 for a body declared too long.
 */
function unreadable(headers: Headers) {
  const bodyTooLarge = described(
    ErrorBody,
    `\`content_too_large\`: the request declares a body of over ${MAX_BODY_BYTES} bytes; the API's routes take none`,
    { headers, examples: { [ERRORS.contentTooLarge.code]: errorBody(ERRORS.contentTooLarge, MAX_BODY_BYTES) } },
  );
  const badRequest = described(
    ErrorBody,
    "`bad_request`: the request has no valid Host header, several Host lines, or its target holds a fragment (`#…`)",
    { headers },
  );
  return { 400: badRequest, 413: bodyTooLarge };
}

/** A route without a key's answers to a request it cannot read. */
export const UNREADABLE = unreadable({ ...COMMON_HEADERS, ...UNSTORED });
const KEYED_UNREADABLE = unreadable({ ...REFUSAL_HEADERS, ...UNSTORED });
/** The 400 of a keyed route that reads no parameters: a request it cannot read. */
export const BAD_REQUEST = { 400: KEYED_UNREADABLE[400] };

const FORBIDDEN_DESCRIPTION = "`forbidden`: the key is malformed, unknown, revoked or expired";
/** The forbidden example of a key that is none: its message as the keys step says it. */
const INVALID_KEY_EXAMPLE = errorBody(ERRORS.forbidden, `${INVALID_KEY}${INVALID_KEY_NEXT}`);

/**
 * The PDF route's 403: also a read key's (D23), which carries its key's limits, as they stand: the refusal counts
 * against neither.
 */
export const PDF_FORBIDDEN = {
  403: described(
    ErrorBody,
    `${FORBIDDEN_DESCRIPTION}; or its scope is read, which may not render a PDF (then with the key's X-RateLimit-* and X-Quota-* headers, the refusal counted against neither)`,
    {
      headers: { ...REFUSAL_HEADERS, ...UNSTORED, ...LIMIT_HEADERS },
      examples: {
        [ERRORS.forbidden.code]: INVALID_KEY_EXAMPLE,
        "read scope": errorBody(ERRORS.forbidden, READ_SCOPE_MESSAGE),
      },
    },
  ),
};

/** The answers every keyed route can give before its own work: authentication, then the rate limit and the quota; and 503 while its key store or snapshot cannot be read. */
export const KEY_ERRORS = {
  413: KEYED_UNREADABLE[413],
  401: described(ErrorBody, "`unauthorized`: no API key in X-API-Key or Authorization: Bearer", {
    headers: { ...REFUSAL_HEADERS, ...UNSTORED },
    examples: {
      [ERRORS.unauthorized.code]: errorBody(
        ERRORS.unauthorized,
        "An API key is required via the X-API-Key header (or Authorization: Bearer <key>).",
      ),
    },
  }),
  403: described(ErrorBody, FORBIDDEN_DESCRIPTION, {
    headers: { ...REFUSAL_HEADERS, ...UNSTORED },
    examples: { [ERRORS.forbidden.code]: INVALID_KEY_EXAMPLE },
  }),
  429: described(
    LimitErrorBody,
    "`rate_limit_exceeded` (the key's requests per second) or `quota_exceeded` (the account's credits for the month); nothing is spent",
    {
      headers: RETRY_HEADERS,
      examples: {
        [ERRORS.rateLimitExceeded.code]: {
          ...errorBody(
            ERRORS.rateLimitExceeded,
            "Too many requests: this key's plan allows 10 per second. Retry after 1 s.",
          ),
          retry_after: 1,
        },
        [ERRORS.quotaExceeded.code]: {
          ...errorBody(ERRORS.quotaExceeded, COST.pdf, 5, 5000, Date.UTC(2025, 11, 1) / 1000),
          quota_limit: 5000,
          quota_used: 4995,
          retry_after: 86400,
        },
      },
    },
  ),
  503: described(
    UnavailableBody,
    "`service_unavailable`: the shared key store (Redis) cannot be reached, or the snapshot is being written over in place; nothing is charged. Retry-After says when to come back",
    { headers: RETRY_HEADERS },
  ),
};

/**
 * The answer to `If-None-Match: *` on a route whose answers have no ETag but which has an answer to give (D34,
 * D148): a search always, lucky when it finds a page.
 */
export const anyAnswerNotModified = (why: string) => ({
  304: described(
    t.Void(),
    `\`If-None-Match: *\`: ${why}, so none is sent. No body; costs no credit, but counts against the rate limit`,
    { mediaType: "" },
  ),
});

/**
 * A fault of the server's met by a request, on the routes that read the snapshot for each request: D1's 500, whose
 * most likely cause is damage in the snapshot served (D167, which the log names).
 */
const FAULT_DESCRIPTION =
  "`internal_error`: the server failed to answer (a fault of its own, such as damage in the snapshot it serves, which its log names); nothing is charged";
export const FAULT = {
  500: described(ErrorBody, FAULT_DESCRIPTION, {
    examples: { [ERRORS.internalError.code]: errorBody(ERRORS.internalError) },
  }),
};

/** The PDF route's 500: its renderer's failure, or a fault as any route's (FAULT). */
export const PDF_FAULT = {
  500: described(ErrorBody, `\`PDF generation failed\`: nothing is charged; or ${FAULT_DESCRIPTION}`, {
    examples: {
      [ERRORS.pdfFailed.code]: errorBody(ERRORS.pdfFailed),
      [ERRORS.internalError.code]: errorBody(ERRORS.internalError),
    },
  }),
};

/** The answer to If-None-Match naming the current ETag, for the routes whose answers have one. */
export const NOT_MODIFIED = {
  304: described(
    t.Void(),
    "Not Modified: the ETag in If-None-Match is still the answer's. No body; costs no credit, but counts against the rate limit",
    {
      headers: CACHED_HEADERS,
      mediaType: "",
    },
  ),
};

/** How to send a key. */
const SECURITY_SCHEMES = {
  apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "`wk_` followed by 32 letters and digits" },
  bearer: {
    type: "http",
    scheme: "bearer",
    description: "`Authorization: Bearer wk_…`; X-API-Key wins when both are sent",
  },
} as const;

export const KEYED: { security: Record<string, string[]>[] } = { security: [{ apiKey: [] }, { bearer: [] }] };
/** For a route that needs no key. */
export const OPEN: { security: Record<string, string[]>[] } = { security: [] };

/** The routes' `parse`: they read no body. (The document takes each response's media type from `described`.) */
export const JSON_ONLY = "application/json" as const;

const INFO = {
  title: "Tome",
  version: "1",
  description: [
    "Searches and serves encyclopedia article text, cleaned and cut into passages (chunks), with source and license attribution.",
    "",
    "**Keys.** Every /v1 route needs an API key, sent as `X-API-Key: wk_…` or `Authorization: Bearer wk_…`; /healthz, /docs and this document do not. " +
      `Each key has a rate limit in requests per second, and its account a monthly quota of credits: a successful response costs ${COST.request} credit, a PDF ${COST.pdf}; ` +
      "errors and refusals cost nothing. Every response to a keyed request reports both in its X-RateLimit-* and X-Quota-* headers.",
    "",
    "**Caching.** Pages, chunks, changes, the license, the metadata and PDFs carry an `ETag` and `Cache-Control: private, no-cache`. " +
      "Send the ETag back in `If-None-Match`: while the answer is unchanged, the server replies 304 Not Modified without a body, which costs no credit " +
      "(it still counts against the rate limit, and carries the X-RateLimit-* and X-Quota-* headers). A PDF is not rendered to answer a 304. " +
      "Searches and lucky answers report their processing time, so they are never the same twice: they have no ETag, and are sent with `Cache-Control: no-store`, as errors are.",
    "",
    '**Errors** are JSON: `{"error": CODE, "message": SENTENCE}`, with `details: {parameter, value, constraint}` for an invalid parameter. ' +
      "Integer parameters take base-10 digits only; a parameter given twice is refused; unknown parameters are ignored.",
    "",
    "**Content.** The text is from Wikipedia and stays under CC BY-SA 4.0: every response carries its source and an attribution; /v1/license says how to credit it.",
  ].join("\n"),
};

const TAGS = [
  { name: "Search", description: "Full-text search over the chunks, and the best page for a query" },
  { name: "Pages", description: "Pages, chunks, recent changes and PDFs" },
  { name: "Service", description: "License, dataset metadata and liveness" },
];

/** The response schemas that get a name in the document (the rest are written out where they are used). */
const COMPONENTS: Record<string, TSchema> = {
  Source: schemas.Source,
  License: schemas.License,
  FullLicense: schemas.FullLicense,
  Attribution: schemas.Attribution,
  PageChunk: schemas.PageChunk,
  SearchHit: schemas.SearchHit,
  Chunk: schemas.Chunk,
  Page: schemas.Page,
  LuckyPage: schemas.LuckyPage,
  ChunkWindow: schemas.ChunkWindow,
  SearchResponse: schemas.SearchResponse,
  PageResponse: schemas.PageResponse,
  ChangesResponse: schemas.ChangesResponse,
  LuckyResponse: schemas.LuckyResponse,
  LicenseResponse: schemas.LicenseResponse,
  MetaResponse: schemas.MetaResponse,
  Health: schemas.Health,
  Error: schemas.ErrorBody,
  LimitError: schemas.LimitErrorBody,
  Unavailable: schemas.UnavailableBody,
};

/** The UI's files, each at DOCS_PATH/assets/<name>. */
const ASSETS: Record<string, string> = {
  "swagger-ui-bundle.js": swaggerUiBundle,
  "swagger-ui.css": swaggerUiCss,
  "favicon-32x32.png": swaggerUiIcon,
};
const asset = (name: string) => `${DOCS_PATH}/assets/${name}?v=${SWAGGER_UI_VERSION}`;

// Absolute URLs, so that /docs/ loads the same files as /docs. No validatorUrl: Swagger UI would
// otherwise send the document to validator.swagger.io.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${INFO.title} API</title>
<link rel="stylesheet" href="${asset("swagger-ui.css")}">
<link rel="icon" type="image/png" href="${asset("favicon-32x32.png")}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${asset("swagger-ui-bundle.js")}"></script>
<script>
window.ui = SwaggerUIBundle({ url: ${JSON.stringify(OPENAPI_PATH)}, dom_id: "#swagger-ui", validatorUrl: null, deepLinking: true });
</script>
</body>
</html>
`;

const HIDDEN = { detail: { hide: true } };

/** The OpenAPI document of the app's routes at OPENAPI_PATH, and Swagger UI reading it at DOCS_PATH. */
export function openApi() {
  const plugin = new Elysia();
  /**
   * The document's answer, made at the first request, when every route is registered (Elysia hands a plugin the routes
   * of the app that uses it, as its own OpenAPI plugins read them), and kept as bytes, plain and gzipped, as the UI's
   * files are: it is served without a key, so no work share holds a client that asks for it again and again, and its
   * 130 KB were encoded anew for every answer (fairness bench, --attack openapi: D25).
   */
  const answer = compressed(
    () =>
      new TextEncoder().encode(
        JSON.stringify(
          openApiDocument((plugin as unknown as { getGlobalRoutes(): ApiRoute[] }).getGlobalRoutes(), {
            info: INFO,
            servers: [{ url: "/", description: "This server" }],
            tags: TAGS,
            securitySchemes: SECURITY_SCHEMES,
            components: COMPONENTS,
          }),
        ),
      ),
    { "content-type": "application/json; charset=utf-8" },
  );
  const serveDocument = ({ request }: { request: Request }) => answer(request);
  plugin
    .get(DOCS_PATH, () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }), HIDDEN)
    .get(OPENAPI_PATH, serveDocument, HIDDEN);
  for (const [name, path] of Object.entries(ASSETS)) {
    const type = Bun.file(path).type;
    const answer = compressed(() => new Uint8Array(readFileSync(path)), {
      "content-type": type,
      "cache-control": "public, max-age=31536000, immutable",
    });
    plugin.get(`${DOCS_PATH}/assets/${name}`, ({ request }) => answer(request), HIDDEN);
  }
  return plugin;
}

/**
 * A file's answer, gzipped for a client that accepts it: the UI's script is 1.7 MB as it is and 0.5 MB gzipped,
 * and it is served without a key, so that no one asking for it again and again takes the server's time and
 * bandwidth from the API's clients. Both forms are made at the first request and kept.
 */
function compressed(
  read: () => Uint8Array<ArrayBuffer>,
  headers: Record<string, string>,
): (request: Request) => Response {
  let plain: Uint8Array<ArrayBuffer> | undefined;
  let gzipped: Uint8Array | undefined;
  return (request) => {
    plain ??= read();
    if (!acceptsGzip(request.headers.get("accept-encoding")) || headers["content-type"]?.startsWith("image/"))
      return new Response(plain, { headers: { ...headers, vary: "Accept-Encoding" } });
    gzipped ??= Bun.gzipSync(plain, { level: 9 });
    return new Response(gzipped, { headers: { ...headers, vary: "Accept-Encoding", "content-encoding": "gzip" } });
  };
}

/** Whether Accept-Encoding allows gzip (RFC 9110 12.5.3: named, or `*`, without q=0). */
function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  let star = false;
  for (const part of header.toLowerCase().split(",")) {
    const [coding = "", ...params] = part.trim().split(";");
    const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    const allowed = q === undefined || Number(q) > 0;
    if (coding.trim() === "gzip" || coding.trim() === "x-gzip") return allowed;
    if (coding.trim() === "*") star = allowed;
  }
  return star;
}
