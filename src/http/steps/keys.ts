/**
 * D2's access checks, around the routes: the key (401/403), its rate (429), and the request's
 * cost held from the account's quota; on the way out the hold is spent on a 2xx that reached
 * the client or given back (D20), and the X-RateLimit-* and X-Quota-* headers are written
 * (D19, D20). Every path needs a key but the few open ones (deny by default); a request without
 * one for a path outside /v1 that none of them answers is told there is no such route (D87): a
 * person who types an address is not asked for a key the route would not need.
 *
 * A request the quota cannot hold still has its parameters read first (D2: 400 before the
 * quota's 429): the exchange carries the refusal (x.overQuota), which the route's strict reader
 * throws once they are valid.
 *
 * With keys in Redis (TOME_REDIS_URL) admission and settlement each wait for Redis; when it
 * cannot be reached, keyed requests get 503 service_unavailable with Retry-After (fail closed).
 */
import {
  COST,
  KEYS_LOST,
  NEEDS,
  UNAVAILABLE_RETRY_AFTER,
  type Gate,
  type Grant,
  type Refusal,
  type Withheld,
} from "../../access";
import { coreWaitClock, type CoreWaitClock } from "../../scheduling";
import { isDocumentation, noRouteAnswer } from "../docs";
import { ApiError, errorAnswer, errorResponse, ERRORS, retryLater } from "../errors";
import { CLIENT_GONE, routedPath, type Exchange, type Step } from "../pipeline";
import { isMcpPath } from "./methods";
import { KEY_STORE_SOCKET_SECONDS } from "../../request-time";

/** Whether a path needs a key: all but the liveness check and the API's description (its document and UI), with one slash at their end too, as the router serves them (/healthz/). */
export function needsKey(path: string): boolean {
  return routedPath(path) !== "/healthz" && !isDocumentation(path);
}

/** The API's own paths: /v1 and under it, and /mcp. Any other path that needs a key is no route at all. */
const isApiPath = (path: string) => isMcpPath(path) || path === "/v1" || path.startsWith("/v1/");

/**
 * A path the router answers 404 whatever the snapshot, told from the path alone: neither the API's own (isApiPath), nor
 * the liveness check, nor the API's description (needsKey). A path under /v1 is not told so: only the router knows it.
 */
export const isNoRoute = (path: string): boolean => needsKey(path) && !isApiPath(path);

const PDF_PREFIX = "/v1/pdf/";
const PDF_COST = String(COST.pdf);

/** A grant the quota could not hold, with the Retry-After its refusal said. */
interface RefusedGrant extends Grant {
  retryAfter?: number;
}

/**
 * What Bun's HTTP layer spends on a request outside any JavaScript (parsing it, writing the
 * answer), which no timer here sees: bench/load/charged.ts measured the server's CPU at 0.100 ms a
 * /v1/chunk against 0.042 ms timed, and the gap is alike on other routes.
 */
const UNTIMED_MS = 0.05;

/**
 * The request thread's time waiting for a core (D144's clock, made in the thread that first admits a key: the request
 * thread). A request's wall time on the thread includes the time the thread was runnable but another process or thread
 * had the core: no key's work, yet charged to whichever request was open, so that on a busy machine a key far within
 * its share was refused (D25 amended).
 */
let clock: CoreWaitClock | undefined;
/** Milliseconds the request thread has waited for a core so far; 0 where it cannot be read. The keys step's default. */
const threadCoreWaited = (): number => {
  const ms = (clock ??= coreWaitClock()).read();
  return Number.isNaN(ms) ? 0 : ms;
};

/** Awaits something outside the server's thread (a request body still arriving): the wait is not the key's work. */
export async function outsideWork<T>(x: Exchange, pending: Promise<T>): Promise<T> {
  const started = performance.now();
  const coreAt = x.work ? x.work.coreClock() : 0;
  try {
    return await pending;
  } finally {
    // Its waits for a core meanwhile were other requests', within this wait: not subtracted twice.
    if (x.work) {
      x.work.waited += performance.now() - started;
      x.work.coreWaited -= x.work.coreClock() - coreAt;
    }
  }
}

/** Charges a request's key for work done for it on another thread (a search worker: D101), which outsideWork left out. */
export function chargeElsewhere(x: Exchange, ms: number): void {
  if (x.work) x.work.elsewhere += ms;
}

/** The error table's row for each reason the access layer refuses a key for. */
export const REFUSAL_ROWS = {
  "no key": ERRORS.unauthorized,
  "invalid key": ERRORS.forbidden,
  "read scope": ERRORS.forbidden,
  unavailable: ERRORS.serviceUnavailable,
} as const satisfies Record<Refusal["reason"], unknown>;

/** A refusal before any grant: 401/403 for the key, 503 when the key store cannot be reached. */
function refused(refusal: Refusal): Response {
  const row = REFUSAL_ROWS[refusal.reason];
  if (refusal.retryAfter === undefined) return errorResponse(row, [refusal.message]);
  return errorAnswer(retryLater(row, refusal.retryAfter, refusal.message));
}

/**
 * A refusal of the key or its rate ends its connection (D183): Bun drops unread the requests pipelined behind it, so that
 * a client that writes hundreds of requests a connection past its rate, or with no usable key, costs the request thread
 * one answer a connection rather than one a request, while the other keys' requests wait behind them.
 */
function closing(answer: Response): Response {
  answer.headers.set("connection", "close");
  return answer;
}

/** Why the store did not take a 2xx's credit, as the client is told it. */
const WITHHELD_BECAUSE: Record<Exclude<Withheld, "quota spent">, string> = {
  unreachable: "its shared store is unreachable",
  "keys lost": KEYS_LOST,
};

/** A 2xx whose credit the key store did not take (Redis went away, or lost its keys, meanwhile): withheld, as nothing unpaid goes out. */
function unsettled(why: Exclude<Withheld, "quota spent">): Response {
  const retry = UNAVAILABLE_RETRY_AFTER;
  const message = `The service could not record this request's cost (${WITHHELD_BECAUSE[why]}), so its answer is withheld; nothing was charged. Retry after ${retry} s.`;
  return errorAnswer(retryLater(ERRORS.serviceUnavailable, retry, message));
}

/**
 * The keys step over `access`; `readCoreWaited` reads the request thread's time waiting for a core so far, in
 * milliseconds (D25 amended; default the thread's schedstat, 0 where it cannot be read).
 */
export function keys(access: Gate | undefined, readCoreWaited: () => number = threadCoreWaited): Step {
  if (!access) return {};
  // A read of the thread's schedstat costs about 3 µs, two a request (bench/http/keyed-pipeline.ts, D25): one taken
  // less than UNTIMED_MS ago is used again (one request's settlement and the next one's admission share it), which
  // leaves out at most that much of a wait, as UNTIMED_MS stands for what no timer sees.
  let last = { at: Number.NEGATIVE_INFINITY, ms: 0 };
  const coreWaited = (): number => {
    const now = performance.now();
    if (now - last.at >= UNTIMED_MS) last = { at: now, ms: readCoreWaited() };
    return last.ms;
  };
  /** The last rate window's reset, as sent (it changes once a second). */
  let reset = { at: 0, text: "0" };
  const secondsUntil = (unixSeconds: number) => Math.max(1, Math.ceil(unixSeconds - access.now() / 1000));

  /** X-RateLimit-* (D19) and X-Quota-* (D20), and Retry-After if given. */
  const writeLimits = (headers: Headers, grant: Grant, retryAfter: number | undefined) => {
    const { key, rateReset } = grant;
    if (reset.at !== rateReset) reset = { at: rateReset, text: String(rateReset) };
    const [quotaRemaining, quotaReset] = access.quotaTextsOf(grant);
    headers.set("x-ratelimit-limit", key.rateText);
    headers.set("x-ratelimit-remaining", String(Math.max(0, grant.rateRemaining)));
    headers.set("x-ratelimit-reset", reset.text);
    headers.set("x-quota-limit", key.quotaText);
    headers.set("x-quota-remaining", quotaRemaining);
    headers.set("x-quota-reset", quotaReset);
    if (retryAfter !== undefined) headers.set("retry-after", String(retryAfter));
  };

  const rateRefusal = (grant: Grant) => {
    const retry = grant.workWait || secondsUntil(grant.rateReset);
    const message = grant.workWait
      ? `Too much work: this key's requests have used their share of the server's time (costly searches and large pages count for more). Retry after ${retry} s.`
      : `Too many requests: this key's plan allows ${grant.key.limits.rate} per second. Retry after ${retry} s.`;
    const refusal = errorAnswer(retryLater(ERRORS.rateLimitExceeded, retry, message));
    writeLimits(refusal.headers, grant, undefined);
    return closing(refusal);
  };

  /** The quota's refusal, thrown by the route; its Retry-After is then written with the limits. */
  const quotaError = (grant: RefusedGrant) => () => {
    const q = access.quotaOf(grant);
    grant.retryAfter = secondsUntil(q.reset);
    const row = ERRORS.quotaExceeded;
    return new ApiError(row.status, row.code, row.message(grant.cost, q.remaining, q.limit, q.reset), undefined, {
      quota_limit: q.limit,
      quota_used: q.used,
      retry_after: grant.retryAfter,
    });
  };

  /**
   * Whether the request is charged its cost (D20): a 2xx; for a PDF, one rendered or kept, as its X-Credit-Cost says (D26);
   * not a 2xx its route said was free (x.free: /mcp's protocol errors and notifications, D32).
   */
  const succeeded = (x: Exchange, grant: Grant, response: Response) => {
    if (x.free) return false;
    const status = response.status;
    const ok = status >= 200 && status < 300;
    if (grant.cost === COST.request) return ok;
    // A PDF: rendered or kept; not a HEAD that rendered nothing (its X-Credit-Cost says 0).
    return ok && response.headers.get("x-credit-cost") === PDF_COST;
  };

  /**
   * A request whose client has left (D28: its connection closed; Bun aborts the request's signal): nobody to answer. Before
   * admission it is not run, and counts against nothing; after its route, its answer is never sent, so it costs no
   * credit (D20: a 499 is a 4xx) while the time it took is still its key's work (D57). The search pool and the PDF queue
   * answer 499 themselves when they see it first (D108, D26); this step sees it for every route, an MCP call's and a
   * search on the request thread included.
   */
  const clientGone = (x: Exchange): boolean => x.received.signal.aborted;
  const goneAnswer = () => new Response(null, { status: CLIENT_GONE });

  /** The refusal of the key (or, without one, of a path outside the API), answered here. */
  const keyRefusal = (x: Exchange, grant: Refusal): Response => {
    // Answered here, not by the router: a path outside the API never reaches the routes without a key.
    if (grant.reason === "no key" && !isApiPath(x.path)) return noRouteAnswer();
    const answer = refused(grant);
    if (grant.standing) writeLimits(answer.headers, grant.standing, undefined);
    return answer;
  };

  /** Whether the request goes on to the routes (undefined) or is answered here: a refusal, which ends its connection (D183). */
  const decide = (x: Exchange, grant: Grant | Refusal): Response | undefined => {
    if ("reason" in grant) return closing(keyRefusal(x, grant));
    if (grant.rateRemaining < 0 || grant.workWait) return rateRefusal(grant);
    x.grant = grant;
    if (!grant.held) x.overQuota = quotaError(grant);
    // Only a request with a body to wait for (POST /mcp) starts its work after admission: no closure for the others.
    if (x.request.method === "POST")
      x.overShare = () => {
        grant.workWait = access.workWait(grant);
        return grant.workWait ? rateRefusal(grant) : undefined;
      };
    // Every keyed request is timed for the work share (D25, D57): the whole request on the
    // server's thread, from here to its settlement (the route, the answer's validation and
    // serialization, the ETag's hash; a PDF's article read and hashed), less what it waited for
    // outside the thread (outsideWork: a PDF's render, whose queue shares its own time by key),
    // plus its time in a search worker (chargeElsewhere, D102). Bun runs a request's microtasks
    // before it takes the next request (bench/http/microtask-order.ts), so the time between is
    // this request's alone unless it awaited real input or output.
    // The thread's waits for a core meanwhile are taken off (D25 amended, as D144 does for a search worker).
    x.work = { started: performance.now(), waited: 0, elsewhere: 0, coreWaited: -coreWaited(), coreClock: coreWaited };
    return undefined;
  };

  return {
    before(x) {
      if (!needsKey(x.path)) return undefined;
      // Its client left while it waited for the thread (requests behind a long search, or a long page): not run.
      if (clientGone(x)) return goneAnswer();
      const pdf = x.path.startsWith(PDF_PREFIX);
      const grant = access.admit(x.request.headers, pdf ? COST.pdf : COST.request, pdf ? NEEDS.pdf : NEEDS.request);
      if (grant instanceof Promise) {
        // Waiting for a changed keys.json read in a worker (D24), longer than Bun's idle timeout at a large store; a
        // PDF's socket already has longer (socket-time.ts).
        if (x.server && !pdf && access.readingKeys?.()) x.server.timeout(x.request, KEY_STORE_SOCKET_SECONDS);
        return grant.then((g) => decide(x, g));
      }
      return decide(x, grant);
    },
    after(x, response) {
      const grant = x.grant;
      if (!grant) return response;
      // Its client left while it was answered (an MCP call's tool, a route awaiting): never delivered, not charged.
      if (response.status !== CLIENT_GONE && clientGone(x)) response = goneAnswer();
      const work = x.work;
      if (work) {
        const onCore = performance.now() - work.started - work.waited - Math.max(0, work.coreWaited + coreWaited());
        access.spent(grant, UNTIMED_MS + Math.max(0, onCore) + work.elsewhere);
      }
      const settled = access.settle(grant, succeeded(x, grant, response));
      if (settled instanceof Promise) {
        return settled.then((deliver) => {
          // A hold that lapsed, the quota spent meanwhile (D181): the quota's refusal, as had it lacked the cost at admission.
          const answer =
            deliver === true
              ? response
              : deliver === "quota spent"
                ? errorAnswer(quotaError(grant)())
                : unsettled(deliver);
          writeLimits(answer.headers, grant, deliver ? (grant as RefusedGrant).retryAfter : undefined);
          return answer;
        });
      }
      writeLimits(response.headers, grant, (grant as RefusedGrant).retryAfter);
      return response;
    },
  };
}
