/**
 * The request pipeline, like Hono's compose: a list of steps around the routes, linked once
 * when the app is made. Each step may act before the routes (and answer there, ending the
 * request) and after them, on the way out, in reverse order; a step that answered early is
 * seen on the way out by the steps before it only. The routes are awaited once, whatever the
 * number of steps: the steps' own work is synchronous (HEAD's body count and the ETag's body
 * hash aside).
 *
 * The steps, in order (app.ts lists them): measure (for /metrics) → response headers (D22) →
 * log → keyless (an answer without a key ends its connection if a 4xx, or past its address's 100 in a window: D188) →
 * target (the request's one path) → bodies (413 past 64 KiB) → the dashboard (/dashboard, answered whole there, when
 * the server has keys) → socket time → methods (HEAD, OPTIONS, 405) → home (GET /, open) → the
 * /metrics endpoint (admin token) → keys (D2: 401/403, 429, quota hold) → conditional (ETag,
 * Cache-Control, 304) → the routes; a fault anywhere after the first steps becomes a 500. Two steps may
 * wait before the routes: the keys step, with keys in Redis, and /metrics, for its own path alone (its sign-in
 * counts, D147); for every other request, without Redis, every step but the routes is synchronous.
 */
import type { Server } from "bun";
import type { Grant } from "../access";
import type { Served } from "./current";
import type { ApiError } from "./errors";

/** An answer's status when its client left before it was made (D28, as nginx logs it): never delivered. */
export const CLIENT_GONE = 499;

/** The route a path is served as: the router serves a static route with one slash at its end too (/healthz/, /mcp/). */
export const routedPath = (path: string): string => (path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path);

/**
 * One request on its way through the pipeline, as Hono's Context: what the steps learn of it,
 * each its own fields, handed to every step and then to the routes (handOver).
 */
export interface Exchange {
  request: Request;
  /**
   * The request as the server received it: for a HEAD, the methods step makes `request` a GET, a new Request that
   * Bun's server knows nothing of (server.requestIP gives null for it). Its connection is asked of this one.
   */
  received: Request;
  /** The server that received it, when it came over HTTP (for per-request socket timeouts). */
  server: Server<undefined> | undefined;
  /** X-Request-Id (D22), set by the first step. */
  id: string;
  /** When the measure or log step saw it (performance.now()). */
  started: number;
  /**
   * The request's path without its query, decided once by the target step: the key check and
   * the router both read this path (it starts at pathStart in request.url; -1 before the
   * target step, or when the URL could not be read).
   */
  path: string;
  pathStart: number;
  /** A HEAD request, answered as its GET without the body (the methods step made `request` its GET). */
  head: boolean;
  /** The key's grant, from the keys step, settled on the way out. */
  grant: Grant | undefined;
  /**
   * Set by the keys step when the quota could not hold the request's cost: the quota's 429,
   * which the route throws once its parameters are known to be valid (D2: a 400 comes first).
   */
  overQuota: (() => ApiError) | undefined;
  /**
   * Set by the keys step: the work share's 429 if the key has used its share up since its request was admitted, for
   * a request that waited for its body before its work began (POST /mcp, D162).
   */
  overShare: (() => Response | undefined) | undefined;
  /**
   * Set by the route when its 2xx did no work the key asked for, so that it costs no credit (D32): POST /mcp's
   * JSON-RPC protocol error (-32601, -32602: no tool or method's work ran, as no route's runs for REST's free 404 or
   * 400) and a message that asks for no answer (a notification or a response, 202). It still counted against the rate
   * and the work share.
   */
  free: boolean;
  /**
   * A keyed request's time on the server's thread, for its key's work share (the keys step; D25,
   * D57): when it was admitted, how long it has since waited outside the thread (outsideWork),
   * and its time in a search worker meanwhile (chargeElsewhere, D101); coreWaited: the thread's time waiting for a core
   * since admission, less that within the waits, as the clock's reading at admission taken from it (keys.ts), and
   * coreClock: that clock (milliseconds waited so far), the keys step's.
   */
  work: { started: number; waited: number; elsewhere: number; coreWaited: number; coreClock: () => number } | undefined;
  /** The snapshot this request is answered from, taken once as it arrived (current.ts). */
  served: Served<unknown>;
}

export interface Step {
  /** Before the routes: an answer ends the request here. A step may need to wait (the keys step, on Redis): a Promise. */
  before?(x: Exchange): Response | undefined | Promise<Response | undefined>;
  /** On the way out, with the answer so far. */
  after?(x: Exchange, response: Response): Response | Promise<Response>;
}

export type Handler = (x: Exchange) => Response | Promise<Response>;

/** The steps around the routes, linked once; `fault` answers for a route that throws. */
export function compose(
  steps: readonly Step[],
  routes: Handler,
  fault: (x: Exchange, error: unknown) => Response,
): Handler {
  const befores = steps.map((s) => s.before);
  const afters = steps.map((s) => s.after);
  const n = steps.length;

  /** The way out: the `after` of each step before `from`, last first. */
  const out = (x: Exchange, response: Response, from: number): Response | Promise<Response> => {
    for (let i = from - 1; i >= 0; i--) {
      const after = afters[i];
      if (!after) continue;
      const next = after(x, response);
      if (next instanceof Promise) return next.then((r) => out(x, r, i));
      response = next;
    }
    return response;
  };

  /** Runs the steps from `from` on, then the routes; a step that answers later (a Promise) is awaited before the next. */
  const run = (x: Exchange, from: number): Response | Promise<Response> => {
    let i = from;
    let early: Response | Promise<Response | undefined> | undefined;
    let answer: Response | Promise<Response>;
    try {
      for (; i < n && !early; i++) early = befores[i]?.(x);
      if (!early) answer = routes(x);
    } catch (error) {
      return out(x, fault(x, error), i);
    }
    if (early) {
      // Answered by step i: the way out starts before it.
      const at = i - 1;
      if (!(early instanceof Promise)) return out(x, early, at);
      return early.then(
        (response) => (response ? out(x, response, at) : run(x, at + 1)),
        (error) => out(x, fault(x, error), at),
      );
    }
    if (!(answer! instanceof Promise)) return out(x, answer!, n);
    return answer!.then(
      (response) => out(x, response, n),
      (error) => out(x, fault(x, error), n),
    );
  };

  return (x) => run(x, 0);
}

export function exchange(request: Request, server: Server<undefined> | undefined, served: Served<unknown>): Exchange {
  return {
    request,
    received: request,
    server,
    id: "",
    started: 0,
    path: "",
    pathStart: -1,
    head: false,
    grant: undefined,
    overQuota: undefined,
    overShare: undefined,
    free: false,
    work: undefined,
    served,
  };
}

/**
 * Where the routes find their exchange. Elysia hands a route its Request alone, so the request
 * handed to it carries its exchange (handOver); the route's reader (params.ts) takes it back.
 */
const EXCHANGE = Symbol("exchange");
type Carrying = Request & { [EXCHANGE]?: Exchange };

/** The request to hand the routes (Elysia), carrying its exchange. */
export function handOver(x: Exchange): Request {
  (x.request as Carrying)[EXCHANGE] = x;
  return x.request;
}

/** Nothing served: the snapshot of an exchange made outside the pipeline. */
const UNSERVED: Served<unknown> = { view: undefined, id: "", path: "", inFlight: 0, retired: false };

/**
 * The exchange a route's request was handed over with; a request handed to the routes without
 * the pipeline (a benchmark of the routes alone) gets one of its own, with no key.
 */
export function exchangeOf(request: Request): Exchange {
  return (request as Carrying)[EXCHANGE] ?? exchange(request, undefined, UNSERVED);
}
