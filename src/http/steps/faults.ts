/** A fault of ours becomes D1's 500 internal_error: logged here, never a stack trace or a path in the answer. */
import { INTERNAL_ERROR } from "../errors";
import type { Exchange, Step } from "../pipeline";

export function faults(report: (error: unknown, x: Exchange) => void): Step {
  const fail = (error: unknown, x: Exchange) => {
    report(error, x);
    return Response.json(INTERNAL_ERROR, { status: 500 });
  };
  return function catchFaults(x, next) {
    try {
      const response = next(x);
      return response instanceof Promise ? response.catch((error) => fail(error, x)) : response;
    } catch (error) {
      return fail(error, x);
    }
  };
}
