/**
 * /metrics for operators (metrics.ts), not for API clients: `measure` times and counts every
 * request; `metricsEndpoint` answers GET /metrics with the Prometheus text to a request that
 * sends the admin token (Authorization: Bearer, TOME_ADMIN_TOKEN), before the keys step, so
 * that no API key is needed, nor ever enough. Without an admin token /metrics is not served (404).
 *
 * A wrong token is a guess at TOME_ADMIN_TOKEN, counted with the dashboard's failed sign-ins, in
 * its account store when the server has one (Redis with replicas), and limited as they are (D83,
 * D147, sign-in-limits.ts): per client address (an IPv6 one's /64), and from all addresses
 * together, past which a token is refused (429, the right one too) but from an address that gave
 * the right one before: the scraper that already reads /metrics goes on reading it.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import {
  addressGroup,
  MemorySignIns,
  operatorSignedIn,
  signInFailed,
  signInRefusal,
  signInRetrySeconds,
  type SignInCounts,
} from "../../access";
import { clientAddress, normalAddress } from "../client-address";
import { noRouteAnswer } from "../docs";
import { errorAnswer, errorResponse, ERRORS, retryLater } from "../errors";
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
  options: {
    trustedProxies?: string[];
    now?: () => number;
    /** Where failed sign-ins are counted: the dashboard's account store; else this step's memory. */
    signIns?: SignInCounts;
    /** Where a failure of the account store, and its end, are told (default console.error). */
    notice?: (line: string) => void;
  } = {},
): Step {
  const expected = adminToken ? digest(adminToken) : undefined;
  const isMetrics = (x: Exchange) => x.path === METRICS_PATH || x.path === "/metrics/";
  const trusted = new Set((options.trustedProxies ?? []).map(normalAddress));
  const now = options.now ?? Date.now;
  const counts = options.signIns
    ? orInMemory(options.signIns, options.notice ?? ((line) => console.error(line)))
    : new MemorySignIns();
  const refuse = (what: string, t: number) => {
    const retry = signInRetrySeconds(t);
    return errorAnswer(retryLater(ERRORS.rateLimitExceeded, retry, `${what} Retry after ${retry} s.`));
  };
  return {
    // Not async: every other request passes on at once.
    before: (x) => (isMetrics(x) ? answer(x) : undefined),
  };

  async function answer(x: Exchange): Promise<Response> {
    if (!metrics || !expected) return noRouteAnswer();
    // Spaces and tabs alone around the token (RFC 9110's OWS): \s would take U+00A0 and the other Unicode spaces off it too.
    const given = /^bearer[ \t]+([^ \t]+)[ \t]*$/i.exec(x.request.headers.get("authorization") ?? "")?.[1];
    if (!given)
      return errorResponse(ERRORS.unauthorized, [NO_TOKEN], {
        headers: { "www-authenticate": 'Bearer realm="metrics"' },
      });
    const t = now();
    const socket = x.server?.requestIP(x.received)?.address ?? "unknown";
    const address = addressGroup(clientAddress(socket, x.request.headers.get("x-forwarded-for"), trusted));
    const refused = await signInRefusal(counts, address, t, true);
    if (refused === "address") return refuse("Too many wrong admin tokens from your address.", t);
    if (refused === "operator") return refuse("Too many wrong admin tokens from new addresses.", t);
    // Compared as digests: equal lengths, so the comparison takes the same time whatever the token given.
    if (!timingSafeEqual(digest(given), expected)) {
      await signInFailed(counts, address, t, true);
      return errorResponse(ERRORS.forbidden, [WRONG_TOKEN]);
    }
    await operatorSignedIn(counts, address, t);
    return new Response(await metrics.text(), {
      headers: { "content-type": metrics.contentType, "cache-control": "no-store" },
    });
  }
}

/**
 * The store's counts, or memory's while the store cannot answer: with Redis unreachable, /metrics is how the operator
 * sees it. Told once when the store first fails and once when it answers again, not at every request between.
 */
function orInMemory(store: SignInCounts, notice: (line: string) => void): SignInCounts {
  const memory = new MemorySignIns();
  let failingSince: number | undefined;
  const either = <T>(asked: Promise<T>, instead: () => Promise<T>): Promise<T> =>
    asked.then(
      (value) => {
        if (failingSince !== undefined) {
          notice(
            `/metrics: the account store answers again (after ${((performance.now() - failingSince) / 1000).toFixed(1)} s): wrong admin tokens are counted in it again.`,
          );
          failingSince = undefined;
        }
        return value;
      },
      (err) => {
        if (failingSince === undefined) {
          failingSince = performance.now();
          notice(
            `/metrics: the account store cannot answer (${(err as Error)?.message ?? err}): wrong admin tokens are counted in this server's memory until it answers again.`,
          );
        }
        return instead();
      },
    );
  return {
    failures: (name, fail, now) => either(store.failures(name, fail, now), () => memory.failures(name, fail, now)),
    remember: (name, now) => either(store.remember(name, now), () => memory.remember(name, now)),
    known: (name, now) => either(store.known(name, now), () => memory.known(name, now)),
  };
}
