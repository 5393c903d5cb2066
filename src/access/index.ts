/**
 * access: API keys, plans, rate limits and quotas (api.md sections 3, 5, 8; D2, D18–D21),
 * kept under TOME_DATA. The key tool (src/cli/keys.ts) writes the key store; the server
 * reads it through an Access, which also counts usage.
 */
import { KeyRing, KEY_SHAPE, stateOf, type ActiveKey } from "./keys";
import { RateLimiter, type RateDecision } from "./rate";
import { monthEnd, monthOf, monthStart, UsageLedger, usagePath } from "./usage";

export { KeyStoreError, KEY_SHAPE, keysPath, readKeyFile, stateOf, updateKeyFile, createKey, revokeKey, setPlan, SCOPES, type ActiveKey, type KeyRecord, type Scope, type KeyState } from "./keys";
export type { RateDecision } from "./rate";
export { ENTERPRISE_DEFAULT_RATE, isPlan, limitsOf, PLAN_NAMES, PLANS, type Plan, type PlanName } from "./plans";
export { FLUSH_INTERVAL_MS, monthOf, readUsage, UsageError, usagePath } from "./usage";

export const DEFAULT_DATA_DIR = "data";

/** D20: what a successful request costs. */
export const COST = { request: 1, pdf: 10 } as const;

/** What the first checks of a request found: a key within its rate, a refusal, or a key over its rate. */
export type Admission =
  | { ok: true; key: ActiveKey; rate: RateDecision }
  | { ok: false; status: 401 | 403; body: { error: string; message: string } }
  | { ok: false; status: 429; key: ActiveKey; rate: RateDecision };

export interface QuotaState {
  limit: number;
  remaining: number;
  /** Spent this month, plus what requests in flight hold. */
  used: number;
  /** Unix seconds: 00:00:00 UTC on the 1st of next month. */
  reset: number;
}

/** One request's claim on its account's quota. */
export interface Hold {
  account: string;
  month: string;
  cost: number;
}

export interface AccessOptions {
  dataDir: string;
  /** The clock (ms since the epoch); tests move it. */
  now?: () => number;
}

export class Access {
  readonly dataDir: string;
  readonly now: () => number;
  private readonly keys: KeyRing;
  private readonly usage: UsageLedger;
  private readonly rates = new RateLimiter();
  /** The current UTC month: its name, and its start and end in Unix seconds; recomputed when the clock leaves it. */
  private month = { name: "", start: 0, end: 0 };

  /** Reads the key store and the usage file; a damaged one throws, with what to do. */
  constructor(options: AccessOptions) {
    this.dataDir = options.dataDir;
    this.now = options.now ?? Date.now;
    this.keys = new KeyRing(this.dataDir);
    this.usage = new UsageLedger(usagePath(this.dataDir));
  }

  get hasKeys(): boolean {
    return !this.keys.empty;
  }

  start(): void {
    this.usage.start();
  }

  /** Saves the last counts. */
  stop(): void {
    this.usage.stop();
  }

  /**
   * D2's first checks, with one reading of the clock: the key (D18 and api.md section 5;
   * X-API-Key wins over Authorization: Bearer), then its rate limit (D19).
   */
  admit(headers: Headers): Admission {
    const key = headers.get("x-api-key")?.trim() || bearer(headers.get("authorization"));
    if (!key) {
      return { ok: false, status: 401, body: { error: "unauthorized", message: "An API key is required via the X-API-Key header (or Authorization: Bearer <key>)." } };
    }
    const found = KEY_SHAPE.test(key) ? this.keys.find(key) : undefined;
    const now = this.now();
    const state = found && stateOf(found.record, now);
    if (!found || state !== "active") {
      const why = state === "expired" ? ` It expired at ${found!.record.expires_at}.` : "";
      return { ok: false, status: 403, body: { error: "forbidden", message: `The API key is invalid or revoked.${why}` } };
    }
    this.usage.touch(found.record.id, now);
    const rate = this.rates.admit(found.record.id, found.limits.rate, now);
    return rate.admitted ? { ok: true, key: found, rate } : { ok: false, status: 429, key: found, rate };
  }

  private currentMonth(now: number): { name: string; end: number } {
    if (now < this.month.start * 1000 || now >= this.month.end * 1000) this.month = { name: monthOf(now), start: monthStart(now), end: monthEnd(now) };
    return this.month;
  }

  quota(key: ActiveKey): QuotaState {
    const { name: month, end } = this.currentMonth(this.now());
    const limit = key.limits.quota;
    return {
      limit,
      remaining: this.usage.remaining(key.account, month, limit),
      used: this.usage.spent(key.account, month) + this.usage.holding(key.account, month),
      reset: end,
    };
  }

  /** Holds a request's cost (D20), or says the quota lacks it. */
  hold(key: ActiveKey, cost: number): Hold | undefined {
    const month = this.currentMonth(this.now()).name;
    return this.usage.hold(key.account, month, cost, key.limits.quota) ? { account: key.account, month, cost } : undefined;
  }

  /** A 2xx answer spends the hold; anything else gives it back. */
  settle(hold: Hold, succeeded: boolean): void {
    this.usage.settle(hold.account, hold.month, hold.cost, succeeded);
  }
}

function bearer(header: string | null): string | undefined {
  const m = header && /^bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}
