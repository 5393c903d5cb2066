/**
 * Access control in the request's life (D2): authentication (401/403), then the rate limit
 * (429), then the route validates the parameters (400), then the quota (429), then the
 * handler. Every authenticated response carries the X-RateLimit-* and X-Quota-* headers
 * (D19, D20).
 *
 * The app's handle runs this around Elysia rather than in Elysia's hooks, which cost every
 * request more than the checks themselves: admit authenticates and rate-limits before
 * routing, and holds the request's cost from the quota at once. A request the quota cannot
 * hold is answered by a second set of routes whose hook refuses it after validation (so a
 * bad parameter still gets its 400). finish, once the status is known, spends the hold on a
 * 2xx or gives it back (D20) and writes the limit headers — before the response is
 * returned, so a stop that follows the last answer never finds a count unsaved.
 */
import { Elysia, type AnyElysia } from "elysia";
import { COST, type Access, type Grant as AccessGrant } from "../access";
import { pathIs, pathStart } from "./url";

/** The one path under /v1 that answers without a key: the API's own description (as do /healthz and /docs). */
const OPEN_V1_PATH = "/v1/openapi.json";

/** Where the path of a request that needs a key starts in its URL, or -1 (read in place: this runs on every request). */
function keyedPathStart(url: string): number {
  const start = pathStart(url);
  if (pathIs(url, start, "/v1")) return start;
  return url.startsWith("/v1/", start) && !pathIs(url, start, OPEN_V1_PATH) ? start : -1;
}

/** A request with a valid key within its rate (see Access.admit), and the Retry-After of its quota refusal, if it gets one. */
export interface Grant extends AccessGrant {
  retryAfter?: number;
}

/** What a request costs (D20), from its URL and where its path starts. */
function costOf(url: string, pathStart: number): number {
  return url.startsWith("/v1/pdf/", pathStart) ? COST.pdf : COST.request;
}

export interface AccessControl {
  /**
   * Authenticates and rate-limits a request, and holds its cost: a refusal to send as is, a
   * grant for finish, or undefined when the request needs no key (an open path, or no Access).
   */
  admit(request: Request): Response | Grant | undefined;
  /** A hook that answers 429 quota_exceeded for the grant's request once its parameters are valid. */
  quotaRefusal(): AnyElysia;
  /** Spends or gives back the grant's hold by the status (D20), and writes the limit headers if given the response's. */
  finish(grant: Grant, status: number, headers?: Headers): void;
}

/** Without an Access, every route answers without a key. */
const OPEN: AccessControl = {
  admit: () => undefined,
  quotaRefusal: () => new Elysia(),
  finish: () => {},
};

export function accessControl(access: Access | undefined): AccessControl {
  if (!access) return OPEN;
  /** Requests the quota could not hold, for the hook that refuses them (gone with the request). */
  const refused = new WeakMap<Request, Grant>();
  /** The last rate window's reset, as sent (it changes once a second). */
  let reset = { at: 0, text: "0" };

  /** X-RateLimit-* (D19) and X-Quota-* (D20), and Retry-After if given. */
  const writeLimits = (headers: Headers, grant: AccessGrant, retryAfter: number | undefined) => {
    const { key, rateReset } = grant;
    if (reset.at !== rateReset) reset = { at: rateReset, text: String(rateReset) };
    const [quotaRemaining, quotaReset] = access.quotaTexts(key);
    headers.set("x-ratelimit-limit", key.rateText);
    headers.set("x-ratelimit-remaining", String(Math.max(0, grant.rateRemaining)));
    headers.set("x-ratelimit-reset", reset.text);
    headers.set("x-quota-limit", key.quotaText);
    headers.set("x-quota-remaining", quotaRemaining);
    headers.set("x-quota-reset", quotaReset);
    if (retryAfter !== undefined) headers.set("retry-after", String(retryAfter));
  };
  const secondsUntil = (unixSeconds: number) => Math.max(1, Math.ceil(unixSeconds - access.now() / 1000));

  return {
    admit(request) {
      const url = request.url;
      const start = keyedPathStart(url);
      if (start < 0) return undefined;
      const admitted = access.admit(request.headers, costOf(url, start));
      if ("status" in admitted) return Response.json(admitted.body, { status: admitted.status });
      if (admitted.rateRemaining >= 0) {
        if (!admitted.held) refused.set(request, admitted);
        return admitted;
      }
      const limit = admitted.key.limits.rate;
      const retry = secondsUntil(admitted.rateReset);
      const refusal = Response.json(
        {
          error: "rate_limit_exceeded",
          message: `Too many requests: this key's plan allows ${limit} per second. Retry after ${retry} s.`,
          retry_after: retry,
        },
        { status: 429 },
      );
      writeLimits(refusal.headers, admitted, retry);
      return refusal;
    },

    quotaRefusal: () =>
      new Elysia({ name: "quota-refusal" }).onBeforeHandle({ as: "global" }, ({ request, set }) => {
        const grant = refused.get(request)!;
        const q = access.quota(grant.key);
        grant.retryAfter = secondsUntil(q.reset);
        set.status = 429;
        const { cost } = grant;
        return {
          error: "quota_exceeded",
          message: `The monthly quota lacks the ${cost} credit${cost > 1 ? "s" : ""} this request costs: ${q.remaining} of ${q.limit} remain until ${new Date(q.reset * 1000).toISOString()}.`,
          quota_limit: q.limit,
          quota_used: q.used,
          retry_after: grant.retryAfter,
        };
      }),

    finish(grant, status, headers) {
      access.settle(grant, status >= 200 && status < 300);
      if (headers) writeLimits(headers, grant, grant.retryAfter);
    },
  };
}
