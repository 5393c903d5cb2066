/**
 * Every error code the API sends, with its HTTP status and its message: the one list (D1's
 * `{error, message, details?}` bodies), as Meilisearch's error.rs lists its codes. Routes,
 * steps and the strict reader name a row here rather than writing a code out; 500s say
 * nothing about the server. api.md section 7 and decision D1 (docs/decisions/) name most codes: `spec`
 * says which, and test/errors.test.ts holds the table and the spec to each other.
 * The key store's refusals come from the access layer as reasons; steps/keys.ts answers each
 * with its row here (REFUSAL_ROWS).
 */
import { type Static, Type as t } from "@sinclair/typebox";

/** One code: its status, where the spec names it ("tome": Tome's own, beyond the spec), and its message. */
export interface ErrorRow<A extends unknown[] = never[]> {
  readonly status: number;
  readonly code: string;
  readonly spec: "api.md" | "D1" | "tome";
  readonly message: (...args: A) => string;
}

const row = <A extends unknown[]>(
  status: number,
  code: string,
  spec: ErrorRow["spec"],
  message: (...args: A) => string,
): ErrorRow<A> => ({
  status,
  code,
  spec,
  message,
});

/** A parameter's value broken a rule: "limit must be an integer from 1 to 50 (base-10 digits)." */
const mustBe = (parameter: string, constraint: string) => `${parameter} must be ${constraint}.`;
const given = (message: string) => message;

export const ERRORS = {
  missingQ: row(400, "missing q", "api.md", () => "The query parameter q is required."),
  pageIdNotInteger: row(400, "page_id must be an integer", "api.md", mustBe),
  sinceFormat: row(
    400,
    "since must be unix seconds or RFC3339",
    "api.md",
    () =>
      "since must be Unix seconds (digits only) or an RFC 3339 date-time with a zone, such as 2016-01-31T12:00:00Z.",
  ),
  invalidParameter: row(400, "invalid_parameter", "D1", mustBe),
  badRequest: row(400, "bad_request", "tome", (why: "host" | "hosts" | "fragment") =>
    why === "host"
      ? "The request has no valid Host header, so its address cannot be read. Send Host: with the server's name or address."
      : why === "hosts"
        ? "The request has several Host lines (RFC 9112 3.2: a 400), which may name different servers: send one."
        : "The request's target holds a fragment (#…), which a request never carries (RFC 9112 3.2): send it without the # and what follows it, and a # that belongs to a value as %23.",
  ),
  unauthorized: row(401, "unauthorized", "api.md", given),
  forbidden: row(403, "forbidden", "api.md", given),
  notFound: row(404, "not found", "api.md", (what: string) => `There is no ${what}.`),
  pageNotFound: row(404, "page not found", "api.md", (pageId: number) => `There is no page with id ${pageId}.`),
  noResults: row(404, "no results found", "api.md", () => "No page matches this query."),
  methodNotAllowed: row(405, "method not allowed", "tome", given),
  contentTooLarge: row(
    413,
    "content_too_large",
    "tome",
    (maxBytes: number) =>
      `The request's body is over ${maxBytes} bytes, more than any route takes: the API's routes take no body, /mcp one JSON-RPC message.`,
  ),
  rateLimitExceeded: row(429, "rate_limit_exceeded", "api.md", given),
  quotaExceeded: row(
    429,
    "quota_exceeded",
    "api.md",
    (cost: number, remaining: number, limit: number, reset: number) =>
      `The monthly quota lacks the ${cost} credit${cost > 1 ? "s" : ""} this request costs: ${remaining} of ${limit} remain until ${new Date(reset * 1000).toISOString()}.`,
  ),
  pdfFailed: row(
    500,
    "PDF generation failed",
    "api.md",
    () => "The PDF could not be generated; nothing was charged. Please try again later.",
  ),
  internalError: row(
    500,
    "internal_error",
    "D1",
    () => "The server failed to answer this request. It has been logged; please try again later.",
  ),
  serviceUnavailable: row(503, "service_unavailable", "tome", given),
} as const;

/** What the unknown route's 404 (D1) says there is no: notFound's argument, wherever it is answered. */
export const noSuchRoute = (openApiPath: string) => `such route. The API is described at ${openApiPath}`;

/** An error the client should see, with its status and D1 body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorBody["details"],
    /** Fields beside error and message that the answer documents (a 429's quota_limit, retry_after…). */
    readonly extra?: Record<string, number | string>,
    /** Headers the answer carries (Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
  }

  get body(): ErrorBody {
    const body = { error: this.code, message: this.message, ...this.extra } as ErrorBody;
    if (this.details) body.details = this.details;
    return body;
  }
}

/** The error of a row, its message made from args. */
export function apiError<A extends unknown[]>(row: ErrorRow<A>, ...args: A): ApiError {
  return new ApiError(row.status, row.code, row.message(...args));
}

/**
 * A refusal that says when to come back (a full queue's 503, a key's 429): the row's error with `retry_after` in its
 * body and `Retry-After`, both in whole seconds.
 */
export function retryLater<A extends unknown[]>(row: ErrorRow<A>, retryAfter: number, ...args: A): ApiError {
  const headers = { "retry-after": String(retryAfter) };
  return new ApiError(row.status, row.code, row.message(...args), undefined, { retry_after: retryAfter }, headers);
}

/**
 * A request the search worker answering it stopped under (it crashed, or the server stops): a 503 to retry, free
 * (D104). `failed` says what could not be done ("This search could not be answered"), `why` why.
 */
export const workerStopped = (failed: string, why: string, retryAfter: number): ApiError =>
  retryLater(
    ERRORS.serviceUnavailable,
    retryAfter,
    `${failed} (${why}); nothing was charged. Retry after ${retryAfter} s.`,
  );

/** A row's body, for the steps that answer before the routes (and for the OpenAPI examples). */
export function errorBody<A extends unknown[]>(row: ErrorRow<A>, ...args: A): { error: string; message: string } {
  return { error: row.code, message: row.message(...args) };
}

/** An error as the Response a step sends (the routes' errors reach the client through Elysia's onError, the same). */
export function errorAnswer(error: ApiError): Response {
  return Response.json(error.body, { status: error.status, headers: error.headers });
}

/** A row's answer as a Response, for the steps. */
export function errorResponse<A extends unknown[]>(
  row: ErrorRow<A>,
  args: A,
  init: { headers?: Record<string, string>; extra?: Record<string, number> } = {},
): Response {
  return Response.json({ ...errorBody(row, ...args), ...init.extra }, { status: row.status, headers: init.headers });
}

/** Rows whose message is "parameter must be constraint.", the ones a parameter's value can break. */
export type ParameterRow = typeof ERRORS.invalidParameter | typeof ERRORS.pageIdNotInteger;

/**
 * A parameter's value refused, with D1's details: which parameter, its value (at most 200
 * characters of it) and the rule. The row is D1's invalid_parameter unless api.md names one.
 */
export function parameterError(
  parameter: string,
  value: string,
  constraint: string,
  row: ParameterRow = ERRORS.invalidParameter,
  message = row.message(parameter, constraint),
): ApiError {
  return new ApiError(row.status, row.code, message, { parameter, value: echoed(value), constraint });
}

/**
 * At most 200 characters of a refused value, for its error's details. Cut between code points: half of a surrogate pair
 * is written as a lone `\ud83d` escape, which strict JSON readers (Rust's serde_json) refuse, so the client could not read
 * why it was refused. A lone half in the value itself is said as U+FFFD, as shortened() says it: the decoders of a
 * request's query and path never give one, but a value from elsewhere (a JSON body, a caller's string) may hold one.
 */
export function echoed(value: string): string {
  const cut = value.slice(0, 200);
  const split = /[\ud800-\udbff]$/.test(cut) && /^[\udc00-\udfff]/.test(value.slice(200, 201));
  return (split ? cut.slice(0, -1) : cut).toWellFormed();
}

/**
 * echoed(value) in a sentence: "…" after it when the value is longer. A lone half of a surrogate pair is said as U+FFFD,
 * not left out (the sentence would name a value never sent) nor written as a lone escape.
 */
export function shortened(value: string): string {
  const whole = value.toWellFormed();
  return whole.length > 200 ? `${echoed(whole)}…` : whole;
}

/** D1's `invalid_parameter`, for the cases api.md leaves open. */
export const invalidParameter = (parameter: string, value: string, constraint: string): ApiError =>
  parameterError(parameter, value, constraint);

/**
 * D6's `missing q`; a required parameter by another name (the MCP tools' page_id or id) is
 * refused the same way, `missing <name>`.
 */
export function missingParameter(name: string, message: string): ApiError {
  return new ApiError(ERRORS.missingQ.status, name === "q" ? ERRORS.missingQ.code : `missing ${name}`, message);
}

export const notFound = (what: string) => apiError(ERRORS.notFound, what);

export const INTERNAL_ERROR: ErrorBody = errorBody(ERRORS.internalError);

/** D1's error body: its schema (OpenAPI, the tests' validator) and its type. */
export const ErrorBody = t.Object(
  {
    error: t.String({
      description: "The error's code, such as `missing q`, `not found` or `invalid_parameter`",
      examples: [ERRORS.invalidParameter.code],
    }),
    message: t.String({
      description: "What went wrong and what to do, in a sentence",
      examples: ["limit must be an integer from 1 to 50 (base-10 digits)."],
    }),
    details: t.Optional(
      t.Object(
        {
          parameter: t.String({ description: "The parameter", examples: ["limit"] }),
          value: t.String({ description: "Its value as given (at most 200 characters)", examples: ["99"] }),
          constraint: t.String({
            description: "What it must be",
            examples: ["an integer from 1 to 50 (base-10 digits)"],
          }),
        },
        { description: "With invalid_parameter: which parameter, and why" },
      ),
    ),
  },
  { description: "An error" },
);
export type ErrorBody = Static<typeof ErrorBody>;
