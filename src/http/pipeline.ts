/**
 * The request pipeline, like Hono's compose: a list of steps around the routes, each of
 * which answers the request itself or hands it on with `next`. The chain is linked once, when
 * the app is made, so a request allocates nothing for it but its Exchange.
 *
 * The steps, in order (app.ts lists them): response headers (D22) → log → faults (500) →
 * target (the request's one path) → methods (HEAD, OPTIONS, 405) → keys (D2: 401/403, 429,
 * quota hold) → the routes.
 */
import type { Server } from "bun";

/** One request on its way through the pipeline. */
export interface Exchange {
  request: Request;
  /** The server that received it, when it came over HTTP (for per-request socket timeouts). */
  server: Server<undefined> | undefined;
  /** X-Request-Id (D22), set by the first step. */
  id: string;
  /**
   * The request's path without its query, decided once by the target step: the key check and
   * the router both read this path (where it starts in request.url: pathStart).
   */
  path: string;
  pathStart: number;
  /** A HEAD request, answered as its GET without the body. */
  head: boolean;
}

export type Handler = (x: Exchange) => Response | Promise<Response>;
export type Step = (x: Exchange, next: Handler) => Response | Promise<Response>;

/** The steps around the last handler, linked once. */
export function compose(steps: readonly Step[], last: Handler): Handler {
  return steps.reduceRight<Handler>((next, step) => (x) => step(x, next), last);
}

export function exchange(request: Request, server?: Server<undefined>): Exchange {
  return { request, server, id: "", path: "", pathStart: -1, head: false };
}

/** Runs `after` on the response, at once when it is ready (no promise made per step on the sync path). */
export function then(response: Response | Promise<Response>, after: (r: Response) => Response): Response | Promise<Response> {
  return response instanceof Promise ? response.then(after) : after(response);
}
