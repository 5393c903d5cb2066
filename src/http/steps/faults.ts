/** A fault of ours becomes D1's 500 internal_error: reported here, never a stack trace or a path in the answer. */
import { INTERNAL_ERROR } from "../errors";
import type { Exchange } from "../pipeline";

export function faults(report: (error: unknown, x: Exchange) => void): (x: Exchange, error: unknown) => Response {
  return (x, error) => {
    report(error, x);
    return Response.json(INTERNAL_ERROR, { status: 500 });
  };
}
