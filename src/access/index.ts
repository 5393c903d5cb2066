/**
 * access: API keys, plans, rate limits and quotas (api.md sections 3, 5, 8; D2, D18–D21),
 * kept under TOME_DATA. The key tool (src/cli/keys.ts) writes the key store; the server
 * reads it through an Access, which also counts usage. With TOME_REDIS_URL, replicas keep all
 * of it in Redis instead (redis/: RedisAccess); both are Gates (grant.ts) to the HTTP pipeline.
 */
import {
  invalidKey,
  readKey,
  readScope,
  type Gate,
  type Grant,
  type Health,
  type QuotaState,
  type Refusal,
} from "./grant";
import { existsSync } from "node:fs";
import { checkKeyStore, keysPath, type Scope } from "./store";
import { journalFiles } from "./usage-journal";
import { printableName } from "../printable";
import { PlanTally, type PlanName } from "./plans";
import { RateLimiter } from "./rate";
import { WorkShare } from "./work";
import { KeyRing, UNLIMITED, type KnownKey } from "./ring";
import { countedAt, MonthReached, UsageLedger, usagePath, type Meter } from "./usage";
import type { AccountStore } from "./accounts";
import { fileAccountStore } from "./file-accounts";
import { lockDataFolder } from "./server-lock";
import { DEFAULT_KEY_MS_PER_SECOND } from "../request-time";

export {
  checkKeyStore,
  keysHeld,
  keysPath,
  readKeyFile,
  SCOPES,
  stateOf,
  updateKeyFile,
  type Account,
  type KeyFile,
  type KeyRecord,
  type KeyState,
  type KeyStoreState,
  type Scope,
} from "./store";
export { createKey, findKey, revokeKey, setPlan } from "./commands";
export {
  accountOfToken,
  createAccountAccess,
  hashToken,
  replaceAccountToken,
  SESSION_MS,
  type AccountStore,
  type Session,
} from "./accounts";
export { WindowCounts } from "./window-counts";
export { ADDRESS, addressBlockFor, addressGroup } from "./address-blocks";
export {
  ADDRESS_FAILURES,
  KNOWN_ADDRESS_MS,
  MAX_COUNTED_ADDRESSES,
  OPERATOR_FAILURES,
  SIGN_IN_WINDOW_MS,
  MemorySignIns,
  operatorSignedIn,
  signInFailed,
  signInRefusal,
  signInRetrySeconds,
  type SignInCounts,
} from "./sign-in-limits";
export { DataFolderTaken, dataFolderHeld, lockDataFolder } from "./server-lock";
export { KeyStoreError, KeyStoreUnwritable } from "./errors";
export { accountNameProblem, KEY_NAME_MAX, keyNameProblem } from "./names";
export { KEY_SHAPE, keyIdFrom, shownPrefix } from "./key-text";
export { INVALID_KEY, INVALID_KEY_NEXT, READ_SCOPE_MESSAGE } from "./grant";
export type { KnownKey } from "./ring";
export type { Gate, Grant, Health, Hold, QuotaState, Refusal, Withheld } from "./grant";
export { ENTERPRISE_DEFAULT_RATE, isPlan, limitsOf, PLAN_NAMES, PLANS, type Plan, type PlanName } from "./plans";
export {
  FLUSH_INTERVAL_MS,
  monthOf,
  readUsage,
  UsageFileError,
  UsageNotSaved,
  usagePath,
  writeUsage,
  type Meter,
  type UsageData,
} from "./usage";
export { journalFiles } from "./usage-journal";

export { checkRedisUrl, KEYS_LOST, RedisAccess, RedisKeyStore, UNAVAILABLE_RETRY_AFTER } from "./redis";
export { redisAddress } from "./redis/connection";

/** D20: what a successful request costs. */
export const COST = { request: 1, pdf: 10 } as const;

/** The scope a request needs (admit's `needs`): a read key may do everything but render a PDF. */
export const NEEDS = { request: "read", pdf: "full" } as const satisfies Record<keyof typeof COST, Scope>;

export interface AccessOptions {
  dataDir: string;
  /** The clock (ms since the epoch); tests move it. */
  now?: () => number;
  /** The monotonic clock (ms; performance.now()): tests move it with `now` where the clock runs rather than steps (MonthReached). */
  monotonic?: () => number;
  /** Where problems met while serving go (default console.error). */
  log?: (line: string) => void;
  /** Milliseconds of the server's thread one key may use per second (default DEFAULT_KEY_MS_PER_SECOND; 0: no limit). */
  keyMsPerSecond?: number;
}

export class Access implements Gate {
  readonly dataDir: string;
  readonly now: () => number;
  private readonly keys: KeyRing;
  private readonly usage: UsageLedger;
  private readonly rates = new RateLimiter();
  private readonly work: WorkShare;
  /** Credits spent since the server started, by the plan of the account that spent them (for /metrics). */
  private readonly spentByPlan = new PlanTally();
  /** Milliseconds charged to work shares since the server started, by plan (for /metrics). */
  private readonly workByPlan = new PlanTally();
  /** The UTC month usage is counted in (MonthReached). */
  private readonly months: MonthReached;

  /**
   * True when the data directory held no key store at all (checkKeyStore: "fresh"): the
   * server's first start, which should create the first key (updateKeyFile + createKey).
   */
  readonly firstStart: boolean;
  /** True when keys.json was there but usage.json (and its journal) not: said, and made, at start(). */
  private readonly usageMissing: boolean;

  /**
   * Reads the key store and the usage file. Throws a KeyStoreError or UsageFileError, saying what
   * is wrong and what to do, for a store that is empty, damaged, or missing where an earlier
   * one leaves traces (checkKeyStore), and for a damaged usage file.
   */
  constructor(options: AccessOptions) {
    this.dataDir = options.dataDir;
    this.now = options.now ?? Date.now;
    this.months = new MonthReached(options.monotonic);
    this.work = new WorkShare(options.keyMsPerSecond ?? DEFAULT_KEY_MS_PER_SECOND);
    // Before anything is written here: keys.gen, made by the key ring, is one of the traces it looks for.
    this.firstStart = checkKeyStore(this.dataDir) === "fresh";
    const usageFile = usagePath(this.dataDir);
    // Before the ledger reads it: a usage.json gone (or a link to one gone) with no journal beside it reads as no use.
    this.usageMissing = !this.firstStart && !existsSync(usageFile) && !journalFiles(usageFile).length;
    this.usage = new UsageLedger(usageFile);
    this.log = options.log ?? ((line) => console.error(line));
    this.keys = new KeyRing(this.dataDir, this.log);
  }

  /** Reads keys.json now, on this thread, if it changed (else at the next request that needs it, in a worker). */
  readKeys(): void {
    this.keys.refresh(true);
  }

  readingKeys(): boolean {
    return this.keys.reading;
  }

  /** Whether the store holds any key (right after construction, false only on a first start). */
  get hasKeys(): boolean {
    return !this.keys.empty;
  }

  /**
   * Whether the keys served are the key store's as it is on disk, and the counts saved. While keys.json is damaged
   * or gone the server keeps serving the keys it last read (logged once), and this says so; so too while usage.json
   * cannot be written (D190).
   */
  health(): Health {
    this.keys.refresh();
    const problems: string[] = [];
    const problem = this.keys.problem;
    if (problem)
      problems.push(
        `the key store cannot be read since ${new Date(problem.since).toISOString()}: the keys last read are served (the server's log says what is wrong)`,
      );
    // Counts that live in memory alone are the operator's to see before a stop loses them (D190).
    const unsaved = this.usage.problem;
    if (unsaved) problems.push(unsaved);
    if (this.lockLostSince !== undefined)
      problems.push(
        `the data folder's lock is another process's since ${new Date(this.lockLostSince).toISOString()}: another server may be writing over this one's usage counts (the server's log says more)`,
      );
    else if (this.lockUnmade)
      problems.push(
        `the data folder's lock was deleted and cannot be made again since ${new Date(this.lockUnmade.since).toISOString()}${this.lockUnmade.code && ` (${this.lockUnmade.code})`}: a second server started on the folder would write over this one's usage counts (the server's log says more)`,
      );
    return { ok: !problems.length, problems };
  }

  /**
   * Takes the data folder (one server per folder: server-lock.ts), then saves usage as it changes.
   * Throws DataFolderTaken while another server uses the folder, a UserError when it cannot be written.
   */
  start(): void {
    this.claim();
    // The clock's first reading (MonthReached): a month entered from here on, before the first request, is entered.
    this.months.at(this.now());
    this.usage.start();
    if (this.usageMissing) {
      // A store is never made without it (a server's first start makes it, the key tool and `keys export` write it with
      // a new keys.json; an older Tome's key tool did not), so its absence means it was lost. Not refused (D20): a refusal would stop every key over a
      // count that may have no backup. Said once: the file is made now (empty), so the next start is silent.
      const file = printableName(usagePath(this.dataDir));
      this.log(
        `WARNING: ${file} is missing beside ${printableName(keysPath(this.dataDir))}, so this month's usage counts from zero: every account's credits spent this month (and its keys' requests by day) are forgotten, and each account may spend its whole quota again. ` +
          `Every store is made with one now, so it was lost (or keys.json restored without it), unless the key tool of an older Tome made this store without one: then nothing is lost if no server used it. Else stop this server (Ctrl-C) and restore usage.json, with any usage.json.journal.* files, from the backup keys.json came from, then start again. ` +
          `Left to run, this server makes it now, empty.`,
      );
      this.usage.saveSoon();
    } else if (this.firstStart) {
      // Made at a store's first start too, so that a later start that finds it gone says so (not at a first use only).
      this.usage.saveSoon();
    }
  }

  /** Takes the data folder now (start() does too): a server checks before the minutes a snapshot may take to load. */
  claim(): void {
    this.unlock ??= lockDataFolder(this.dataDir, undefined, this.log, {
      lost: () => (this.lockLostSince ??= Date.now()),
      unmade: (err) => (this.lockUnmade ??= { since: Date.now(), code: (err as NodeJS.ErrnoException).code ?? "" }),
      remade: () => (this.lockUnmade = undefined),
    });
  }
  /** Since when (Date.now()) server.lock, deleted, cannot be made again, and the system's code for why: no server holds the folder. */
  private lockUnmade: { since: number; code: string } | undefined;
  private unlock: (() => void) | undefined;
  /** When server.lock was found another process's (Date.now()): from then on another server may write over these counts. */
  private lockLostSince: number | undefined;
  private readonly log: (line: string) => void;

  /** The dashboard's accounts, sessions and usage: keys.json as the key ring holds it, and this server's own counts. */
  accounts(): AccountStore {
    return fileAccountStore(this.dataDir, this.keys, this.usage, this.work);
  }

  /** Saves the last counts: resolves once they are on disk (a UsageNotSaved when they cannot be), and lets the data folder go. */
  async stop(): Promise<void> {
    try {
      await this.usage.stop();
    } finally {
      this.unlock?.();
      this.unlock = undefined;
    }
  }

  /**
   * D2's first checks, with one reading of the clock: the key (D18 and api.md section 5;
   * X-API-Key wins over Authorization: Bearer) and its scope (a read key asking for what
   * needs full: 403, with where its key stands, counting nothing: D23), then its rate limit (D19); and for a request
   * within its rate, its cost held from the quota (D20), to be settled once it is answered. While a changed keys.json
   * is read (in a worker: ring.ts), a request with a key waits for it: a key revoked is refused from the next request
   * after the key tool returns (D18).
   */
  admit(headers: Headers, cost: number, needs: Scope = NEEDS.request): Grant | Refusal | Promise<Grant | Refusal> {
    const text = readKey(headers);
    if (typeof text !== "string") return text;
    const loading = this.keys.refresh();
    if (loading) return loading.then(() => this.admit(headers, cost, needs));
    const key = this.keys.find(text);
    const now = this.now();
    if (key === undefined || now >= key.endsAt) return invalidKey(key);
    const id = key.record.id;
    const second = Math.floor(now / 1000);
    if (needs === "full" && key.scope !== "full") {
      const rateRemaining = this.rates.remaining(id, key.limits.rate, second);
      return readScope({ key, cost, rateRemaining, rateReset: second + 1, held: undefined, workWait: 0 });
    }
    const month = this.months.at(now);
    // A clock stepped back over the 1st counts the request on the month's first day, the month it is charged to.
    this.usage.touch(id, countedAt(month, now));
    const rateRemaining = this.rates.admit(id, key.limits.rate, second);
    const workWait = rateRemaining < 0 ? 0 : this.work.wait(id);
    const held =
      rateRemaining < 0 || workWait ? undefined : this.usage.hold(key.account, month.name, cost, key.limits.quota);
    return { key, cost, rateRemaining, rateReset: second + 1, held, workWait };
  }

  /** Admission's work share check again, for a request whose work starts later (D162). */
  workWait(grant: Grant): number {
    return this.work.wait(grant.key.record.id);
  }

  /** What a request of the grant's key cost the server's thread, in milliseconds (WorkShare). */
  spent(grant: Grant, ms: number): void {
    this.work.spend(grant.key.record.id, ms);
    this.workByPlan.add(grant.key.plan, ms);
  }

  /** A 2xx answer spends the grant's hold; anything else gives it back. Once only; a grant the quota refused holds nothing. */
  settle(grant: Grant, succeeded: boolean): void {
    if (grant.held === undefined) return;
    this.usage.settle(grant.held as Meter, grant.cost, succeeded, grant.key.record.id, this.now());
    grant.held = undefined;
    if (succeeded) this.spentByPlan.add(grant.key.plan, grant.cost);
  }

  /** Credits spent since the server started, by plan (every plan, 0 for those that spent none). */
  creditsSpent(): ReadonlyMap<PlanName, number> {
    return this.spentByPlan.all;
  }

  workCharged(): ReadonlyMap<PlanName, number> {
    return this.workByPlan.all;
  }

  usageTime(now: number): number {
    return this.months.usageTime(now);
  }

  quota(key: KnownKey): QuotaState {
    const { name: month, end } = this.months.at(this.now());
    const limit = key.limits.quota;
    return {
      limit,
      remaining: this.usage.remaining(key.account, month, limit),
      used: this.usage.spent(key.account, month) + this.usage.holding(key.account, month),
      reset: end,
    };
  }

  quotaOf(grant: Grant): QuotaState {
    return this.quota(grant.key);
  }

  quotaTextsOf(grant: Grant): [remaining: string, reset: string] {
    return this.quotaTexts(grant.key);
  }

  /** X-Quota-Remaining and X-Quota-Reset (D20), as sent. */
  quotaTexts(key: KnownKey): [remaining: string, reset: string] {
    const month = this.months.at(this.now());
    if (key.quotaText === UNLIMITED) return [UNLIMITED, month.endText];
    return [String(this.usage.remaining(key.account, month.name, key.limits.quota)), month.endText];
  }
}
