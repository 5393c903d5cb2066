/**
 * What both key stores answer a request with (the file store, index.ts's Access, and Redis,
 * redis/access.ts's RedisAccess): a grant or a refusal, and the Gate that the HTTP keys step
 * drives. The file store answers at once; Redis answers after its round trip (a Promise).
 */
import type { Scope } from "./store";
import type { PlanName } from "./plans";
import type { KnownKey } from "./ring";
import { commandLine } from "../invocation";

/** An account's claim on one month's quota, held by a request in flight until it is settled. */
export interface Hold {
  readonly account: string;
  readonly month: string;
}

/**
 * A request with a valid key: where it stands in its key's rate window (D19) and, if it is
 * within it, the quota hold of its cost (D20).
 */
export interface Grant {
  key: KnownKey;
  cost: number;
  /** Requests the key may still make this second, after this one; -1 if this one is over the limit. */
  rateRemaining: number;
  /** Unix seconds when the rate window resets. */
  rateReset: number;
  /** The hold of the cost, or undefined if the quota lacks it (or the rate refused the request). */
  held: Hold | undefined;
  /** 0, or the seconds to wait when the key has used its share of server time (WorkShare): the request is refused. */
  workWait: number;
}

/** A request without a usable key (api.md section 5), or, with Redis unreachable, one that cannot be checked (503). */
/**
 * Why a request's key is refused, in the access layer's words: HTTP turns the reason into its
 * error table's row (src/http/errors.ts): no key → 401 unauthorized; an invalid key or a read
 * key for a PDF → 403 forbidden; the key store unreachable → 503 service_unavailable.
 */
export interface Refusal {
  reason: "no key" | "invalid key" | "read scope" | "unavailable";
  message: string;
  /** Seconds to wait before retrying (unavailable). */
  retryAfter?: number;
  /**
   * A read key refused a PDF (D23): where its key stands, for the X-RateLimit-* and X-Quota-* headers every answer to a
   * valid key carries (D19, D20). Its rate is not counted and nothing is held: a grant never settled.
   */
  standing?: Grant;
}

export const NO_KEY: Refusal = {
  reason: "no key",
  message: "An API key is required via the X-API-Key header (or Authorization: Bearer <key>).",
};

/** What a read key asking for what needs full is told (D23). */
export const READ_SCOPE_MESSAGE =
  "This API key's scope is read, which does not allow this request (rendering a PDF needs scope full). " +
  `Use a key with scope full: make one on the server's /dashboard, or ask its operator (${commandLine("keys create --name NAME --account ACCOUNT --scope full")}).`;

/** A read key asking for what needs full (D23), with where its key stands (Refusal.standing). */
export function readScope(standing: Grant): Refusal {
  return { reason: "read scope", message: READ_SCOPE_MESSAGE, standing };
}

/** What a 403 for the key itself says (api.md 5.5), and what to do next. */
export const INVALID_KEY = "The API key is invalid or revoked.";
export const INVALID_KEY_NEXT =
  " Check that it was copied whole (wk_ and 32 letters and digits), or use another key of your account.";

/**
 * A key header sent more than once, which HTTP joins into one value with a comma (no key holds one): neither key is
 * read, and the client is told why rather than to check that its key was copied whole (D18).
 */
const SEVERAL_KEYS: Refusal = {
  reason: "invalid key",
  message:
    "The API key is invalid or revoked: this request sends more than one key (X-API-Key or Authorization given more than once, which HTTP joins with a comma). Send one key, once.",
};

/** A key that is unknown, revoked or expired. */
export function invalidKey(key: KnownKey | undefined): Refusal {
  const why = key && !key.record.revoked_at ? ` It expired at ${key.record.expires_at}.` : "";
  return { reason: "invalid key", message: `${INVALID_KEY}${why}${INVALID_KEY_NEXT}` };
}

/** HTTP's own whitespace around a header value or between its parts (RFC 9110's OWS): a space or a tab. */
const isOws = (c: string | undefined) => c === " " || c === "\t";

/**
 * A header value without the spaces and tabs around it, and nothing more: String's trim() also
 * strips U+00A0, vertical tab, form feed and the other Unicode spaces, which are no part of
 * HTTP's syntax, so a key sent wrapped in them is malformed (403, D18), not trimmed into a valid one.
 * A loop, not a pattern: [ \t]+$ takes time quadratic in the spaces inside a 128 KiB header (D88).
 */
function withoutOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value[start])) start++;
  while (end > start && isOws(value[end - 1])) end--;
  return value.slice(start, end);
}

/**
 * The key sent: X-API-Key wins over Authorization: Bearer (api.md section 5), an empty one
 * sending none (as alone: 401), so that the Bearer one is read. Whatever follows
 * "Bearer " is the key sent, so "Bearer <key> extra" is a malformed key (403, D18), not none
 * (401); only a header with no Bearer credential at all sends no key. Only spaces and tabs are
 * taken off around a key (withoutOws).
 */
function keyText(headers: Headers): string | undefined {
  const text = withoutOws(headers.get("x-api-key") ?? "");
  if (text) return text;
  const header = headers.get("authorization");
  const scheme = header && /^bearer[ \t]+/i.exec(header);
  if (!scheme) return undefined;
  return withoutOws(header.slice(scheme[0].length)) || undefined;
}

/**
 * The key a request sends (keyText), or why none is read: no key (401), or a key header sent more than once, which
 * HTTP joins with a comma, a character no key holds (SEVERAL_KEYS, D18). Both gates read the key through this.
 */
export function readKey(headers: Headers): string | Refusal {
  const text = keyText(headers);
  if (!text) return NO_KEY;
  return text.includes(",") ? SEVERAL_KEYS : text;
}

/**
 * Why a 2xx's answer is withheld (Gate.settle): the store could not be reached, or has lost its keys (D156), or the
 * request's hold lapsed before it was settled and the quota no longer has its cost (D181).
 */
export type Withheld = "unreachable" | "keys lost" | "quota spent";

/** Whether the server serves from its key store as it is (Gate.health). */
export interface Health {
  ok: boolean;
  /** What is wrong, one sentence each, naming no file path or address (for /healthz); the server's log has the detail. */
  problems: string[];
}

export interface QuotaState {
  limit: number;
  remaining: number;
  /** Spent this month, plus what requests in flight hold. */
  used: number;
  /** Unix seconds: 00:00:00 UTC on the 1st of next month. */
  reset: number;
}

/** Keys, rate limits and quotas as the HTTP pipeline sees them, whichever store keeps them. */
export interface Gate {
  /** The clock (ms since the epoch). */
  readonly now: () => number;
  /**
   * The time usage is counted at for `now` (ms): now, or the first instant of the month the server reached when its
   * clock stepped back over the 1st (D20: it stays in that month), so that the dashboard shows the month charged.
   */
  usageTime(now: number): number;
  /** D2's first checks: the key, its scope, its rate (D19), and the cost held from the quota (D20). */
  admit(headers: Headers, cost: number, needs?: Scope): Grant | Refusal | Promise<Grant | Refusal>;
  /** Whether admission now waits for a changed key store being read (the file store's, in a worker: D24). */
  readingKeys?(): boolean;
  /** What a request of the grant's key cost the server's thread, in milliseconds (D25). */
  spent(grant: Grant, ms: number): void;
  /**
   * Admission's work share check again, for a request that waited (for its body) before its work began: 0, or the
   * seconds until the grant's key may start work, its share having been used up meanwhile (D162).
   */
  workWait(grant: Grant): number;
  /**
   * A 2xx answer spends the grant's hold; anything else gives it back. Once only. The file store
   * settles at once; Redis resolves to true when the answer may go out, else to why it is withheld.
   */
  settle(grant: Grant, succeeded: boolean): void | Promise<true | Withheld>;
  /** The grant's account's quota, as of its latest word from the store. */
  quotaOf(grant: Grant): QuotaState;
  /** X-Quota-Remaining and X-Quota-Reset (D20), as sent. */
  quotaTextsOf(grant: Grant): [remaining: string, reset: string];
  /** For /healthz. */
  health(): Health;
  /** Credits spent through this server since it started, by plan (for /metrics). */
  creditsSpent(): ReadonlyMap<PlanName, number>;
  /** Milliseconds of this server's thread charged to keys' work shares since it started, by plan (for /metrics). */
  workCharged(): ReadonlyMap<PlanName, number>;
}
