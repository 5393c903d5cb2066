/**
 * /metrics for operators (metrics.ts), not for API clients: `measure` times and counts every
 * request; `metricsEndpoint` answers GET /metrics with the Prometheus text to a request that
 * sends the admin token (Authorization: Bearer, TOME_ADMIN_TOKEN), before the keys step, so
 * that no API key is needed, nor ever enough. Without an admin token /metrics is not served (404).
 *
 * A wrong token is a guess at TOME_ADMIN_TOKEN, limited as the dashboard limits sign-ins with it
 * (D83, D147): ADDRESS_FAILURES a window per client address (an IPv6 one's /64), and
 * OPERATOR_FAILURES from all addresses together, past which a token is refused (429, the right
 * one too) but from an address that gave the right one in the last KNOWN_ADDRESS_MS: the scraper
 * that already reads /metrics goes on reading it.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import {
  ADDRESS_FAILURES,
  KNOWN_ADDRESS_MS,
  MAX_COUNTED_ADDRESSES,
  OPERATOR_FAILURES,
  SIGN_IN_WINDOW_MS,
  WindowCounts,
} from "../../access";
import { addressGroup, clientAddress, normalAddress } from "../client-address";
import { OPENAPI_PATH } from "../docs";
import { errorAnswer, errorResponse, ERRORS, noSuchRoute, retryLater } from "../errors";
import type { Metrics } from "../metrics";
import type { Exchange, Step } from "../pipeline";

const METRICS_PATH = "/metrics";

/** Counts each request by route and status, and its time, once it is answered. */
export function measure(metrics: Metrics): Step {
  return {
    before(x) {
      x.started = performance.now();
      return undefined;
    },
    after(x, response) {
      metrics.observe(x.pathStart >= 0 ? x.path : undefined, response.status, (performance.now() - x.started) / 1000);
      return response;
    },
  };
}

const NO_TOKEN =
  "/metrics needs the server's admin token (TOME_ADMIN_TOKEN) via the Authorization: Bearer <token> header; an API key does not open it.";
const WRONG_TOKEN = "The admin token is wrong.";

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Answers /metrics: with the metrics to the admin token, else 401 or 403; 404 when there is no admin token. */
export function metricsEndpoint(
  metrics: Metrics | undefined,
  adminToken: string | undefined,
  options: { trustedProxies?: string[]; now?: () => number } = {},
): Step {
  const expected = adminToken ? digest(adminToken) : undefined;
  const isMetrics = (x: Exchange) => x.path === METRICS_PATH || x.path === "/metrics/";
  const trusted = new Set((options.trustedProxies ?? []).map(normalAddress));
  const now = options.now ?? Date.now;
  const failures = new WindowCounts(SIGN_IN_WINDOW_MS, MAX_COUNTED_ADDRESSES);
  /** Addresses that gave the right token, and until when they are known. */
  const known = new Map<string, number>();
  const tooMany = (what: string, t: number) => {
    const retry = failures.secondsLeft(t);
    return errorAnswer(retryLater(ERRORS.rateLimitExceeded, retry, `${what} Retry after ${retry} s.`));
  };
  return {
    before(x) {
      if (!isMetrics(x)) return undefined;
      if (!metrics || !expected) return errorResponse(ERRORS.notFound, [noSuchRoute(OPENAPI_PATH)]);
      const given = /^bearer\s+(\S+)\s*$/i.exec(x.request.headers.get("authorization") ?? "")?.[1];
      if (!given)
        return errorResponse(ERRORS.unauthorized, [NO_TOKEN], {
          headers: { "www-authenticate": 'Bearer realm="metrics"' },
        });
      const t = now();
      const socket = x.server?.requestIP(x.request)?.address ?? "unknown";
      const address = addressGroup(clientAddress(socket, x.request.headers.get("x-forwarded-for"), trusted));
      if (failures.count(`address ${address}`, 0, t) >= ADDRESS_FAILURES)
        return tooMany("Too many wrong admin tokens from your address.", t);
      if (failures.count("operator", 0, t) >= OPERATOR_FAILURES && !((known.get(address) ?? 0) > t))
        return tooMany("Too many wrong admin tokens from new addresses.", t);
      // Compared as digests: equal lengths, so the comparison takes the same time whatever the token given.
      if (!timingSafeEqual(digest(given), expected)) {
        failures.count(`address ${address}`, 1, t);
        failures.count("operator", 1, t);
        return errorResponse(ERRORS.forbidden, [WRONG_TOKEN]);
      }
      if (known.size >= MAX_COUNTED_ADDRESSES) known.clear();
      known.set(address, t + KNOWN_ADDRESS_MS);
      // The steps answer synchronously; the registry's text comes as a promise, so the body waits for it.
      const text = metrics.text();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          controller.enqueue(new TextEncoder().encode(await text));
          controller.close();
        },
      });
      return new Response(body, { headers: { "content-type": metrics.contentType, "cache-control": "no-store" } });
    },
  };
}
