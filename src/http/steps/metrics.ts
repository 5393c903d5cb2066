/**
 * /metrics for operators (metrics.ts), not for API clients: `measure` times and counts every
 * request; `metricsEndpoint` answers GET /metrics with the Prometheus text to a request that
 * sends the admin token (Authorization: Bearer, TOME_ADMIN_TOKEN), before the keys step, so
 * that no API key is needed, nor ever enough. Without an admin token /metrics is not served (404).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { OPENAPI_PATH } from "../docs";
import { errorResponse, ERRORS, noSuchRoute } from "../errors";
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
export function metricsEndpoint(metrics: Metrics | undefined, adminToken: string | undefined): Step {
  const expected = adminToken ? digest(adminToken) : undefined;
  const isMetrics = (x: Exchange) => x.path === METRICS_PATH || x.path === "/metrics/";
  return {
    before(x) {
      if (!isMetrics(x)) return undefined;
      if (!metrics || !expected) return errorResponse(ERRORS.notFound, [noSuchRoute(OPENAPI_PATH)]);
      const given = /^bearer\s+(\S+)\s*$/i.exec(x.request.headers.get("authorization") ?? "")?.[1];
      if (!given)
        return errorResponse(ERRORS.unauthorized, [NO_TOKEN], {
          headers: { "www-authenticate": 'Bearer realm="metrics"' },
        });
      // Compared as digests: equal lengths, so the comparison takes the same time whatever the token given.
      if (!timingSafeEqual(digest(given), expected)) return errorResponse(ERRORS.forbidden, [WRONG_TOKEN]);
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
