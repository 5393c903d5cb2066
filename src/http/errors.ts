/** D1: every error the API sends is `{error, message, details?}`; 500s say nothing about the server. */
import type { ErrorBody } from "./schemas";

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

/** D1's `invalid_parameter`, for the cases api.md leaves open. */
export function invalidParameter(parameter: string, value: string, constraint: string): ApiError {
  return new ApiError(400, "invalid_parameter", `${parameter} must be ${constraint}.`, { parameter, value: value.slice(0, 200), constraint });
}

export const notFound = (message: string) => new ApiError(404, "not found", message);

export const INTERNAL_ERROR: ErrorBody = {
  error: "internal_error",
  message: "The server failed to answer this request. It has been logged; please try again later.",
};
