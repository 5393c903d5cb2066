/**
 * A fault of ours becomes D1's 500 internal_error: reported here, never a stack trace or a path in
 * the answer. A client that left before its body arrived is no fault of ours: 499 (D28), unreported.
 */
import { BodyNotReceived } from "../body";
import { INTERNAL_ERROR } from "../errors";
import { CLIENT_GONE, type Exchange } from "../pipeline";

export function faults(report: (error: unknown, x: Exchange) => void): (x: Exchange, error: unknown) => Response {
  return (x, error) => {
    if (error instanceof BodyNotReceived) return new Response(null, { status: CLIENT_GONE });
    report(error, x);
    return Response.json(INTERNAL_ERROR, { status: 500 });
  };
}
