/** D1: every error the API sends is `{error, message, details?}`; 500s say nothing about the server. */
import type { ErrorBody } from "./schemas";

/** An error the client should see, with its status and D1 body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorBody["details"],
  ) {
    super(message);
    this.name = "ApiError";
  }

  get body(): ErrorBody {
    return this.details ? { error: this.code, message: this.message, details: this.details } : { error: this.code, message: this.message };
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
