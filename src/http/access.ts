/**
 * Access control in the request's life (D2): authentication (401/403) and the rate limit
 * (429) before anything else, even routing; parameters are then validated by the route;
 * then the quota (429) holds the request's cost, which a 2xx answer spends and anything
 * else gives back (D20). Every authenticated response carries the X-RateLimit-* and
 * X-Quota-* headers (D19, D20): they are kept with the request's grant and written when
 * the response is complete (finish), which costs far less than Elysia's set.headers. The
 * hold is settled there too, before the response is returned, so a stop that follows the
 * last answer never finds a count unsaved.
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
  /**
   * Called once the response's status is known: spends the request's held credits on a 2xx
   * or gives them back (D20), and returns the limit headers if the request was authenticated.
   */
  finish(request: Request, status: number): [string, string][] | undefined;
}

export function accessControl(access: Access | undefined): AccessControl {
  const grants = new WeakMap<Request, Grant>();
  return {
    plugin: hooks(access, grants),
    finish(request, status) {
      const grant = grants.get(request);
      if (!grant || !access) return undefined;
      if (grant.hold) {
        access.settle(grant.hold, status >= 200 && status < 300);
        grant.hold = undefined;
      }
      return headersOf(grant.rate, access.quota(grant.key), grant.retryAfter);
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
      if (!hold) {
        const q = access.quota(grant.key);
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
    });
}
