/**
 * Access control in the request's life (D2): authentication (401/403) and the rate limit
 * (429) before anything else, even routing; parameters are then validated by the route;
 * then the quota (429) holds the request's cost, which a 2xx answer spends and anything
 * else gives back (D20). Every authenticated response carries the X-RateLimit-* and
 * X-Quota-* headers (D19, D20): they are kept with the request's grant and written by the
 * server when the response leaves (limitHeaders), which costs far less than Elysia's
 * set.headers.
 */
import { Elysia } from "elysia";
import { COST, type Access, type ActiveKey, type Hold, type QuotaState, type RateDecision } from "../access";
import { pathOf } from "./url";

/** Paths that answer without a key: liveness and the API's own description. */
export const OPEN_PATHS = new Set(["/healthz", "/docs", "/v1/openapi.json"]);

interface Grant {
  key: ActiveKey;
  path: string;
  rate: RateDecision;
  hold?: Hold;
  /** The quota as the response reports it; computed when the response leaves if unset. */
  quota?: QuotaState;
  retryAfter?: number;
}


export function costOf(path: string): number {
  return path.startsWith("/v1/pdf/") ? COST.pdf : COST.request;
}

function headersOf(rate: RateDecision, q: QuotaState, retryAfter: number | undefined): [string, string][] {
  const unlimited = !Number.isFinite(q.limit);
  const h: [string, string][] = [
    ["x-ratelimit-limit", String(rate.limit)],
    ["x-ratelimit-remaining", String(rate.remaining)],
    ["x-ratelimit-reset", String(rate.reset)],
    ["x-quota-limit", unlimited ? "unlimited" : String(q.limit)],
    ["x-quota-remaining", unlimited ? "unlimited" : String(q.remaining)],
    ["x-quota-reset", String(q.reset)],
  ];
  if (retryAfter !== undefined) h.push(["retry-after", String(retryAfter)]);
  return h;
}

export interface AccessControl {
  /** The Elysia hooks; without an Access they let everything through (benchmarks, local use). */
  plugin: ReturnType<typeof hooks>;
  /** The limit headers for the response to this request, if it is an authenticated one. */
  limitHeaders(request: Request): [string, string][] | undefined;
}

export function accessControl(access: Access | undefined): AccessControl {
  const grants = new WeakMap<Request, Grant>();
  return {
    plugin: hooks(access, grants),
    limitHeaders(request) {
      const grant = grants.get(request);
      if (!grant || !access) return undefined;
      return headersOf(grant.rate, grant.quota ?? access.quota(grant.key), grant.retryAfter);
    },
  };
}

function hooks(access: Access | undefined, grants: WeakMap<Request, Grant>) {
  return new Elysia({ name: "access-control" })
    .onRequest(({ request, set }) => {
      if (!access) return;
      const path = pathOf(request.url);
      if (OPEN_PATHS.has(path) || (path !== "/v1" && !path.startsWith("/v1/"))) return;
      const auth = access.authenticate(request.headers);
      if (!auth.ok) {
        set.status = auth.status;
        return auth.body;
      }
      const rate = access.admit(auth.key);
      if (!rate.admitted) {
        const retry = Math.max(1, Math.ceil(rate.reset - access.now() / 1000));
        grants.set(request, { key: auth.key, path, rate, retryAfter: retry });
        set.status = 429;
        return {
          error: "rate_limit_exceeded",
          message: `Too many requests: this key's plan allows ${rate.limit} per second. Retry after ${retry} s.`,
          retry_after: retry,
        };
      }
      grants.set(request, { key: auth.key, path, rate });
    })
    .onBeforeHandle({ as: "global" }, ({ request, set }) => {
      const grant = grants.get(request);
      if (!grant || !access) return;
      const cost = costOf(grant.path);
      const hold = access.hold(grant.key, cost);
      const q = access.quota(grant.key);
      grant.quota = q;
      if (!hold) {
        const retry = Math.max(1, Math.ceil(q.reset - access.now() / 1000));
        grant.retryAfter = retry;
        set.status = 429;
        return {
          error: "quota_exceeded",
          message: `The monthly quota lacks the ${cost} credit${cost > 1 ? "s" : ""} this request costs: ${q.remaining} of ${q.limit} remain until ${new Date(q.reset * 1000).toISOString()}.`,
          quota_limit: q.limit,
          quota_used: q.used,
          retry_after: retry,
        };
      }
      grant.hold = hold;
    })
    .onError({ as: "global" }, ({ request }) => {
      // The answer is an error: a hold will be given back, so report the quota without it.
      const grant = grants.get(request);
      if (grant && access) grant.quota = access.quota(grant.key, grant.hold?.cost ?? 0);
    })
    .onAfterResponse({ as: "global" }, ({ request, set }) => {
      const grant = grants.get(request);
      if (!grant?.hold || !access) return;
      const status = typeof set.status === "number" ? set.status : 200;
      access.settle(grant.hold, status >= 200 && status < 300);
      grant.hold = undefined;
    });
}
