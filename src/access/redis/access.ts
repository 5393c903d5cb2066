/**
 * Keys, rate limits and quotas kept in Redis (TOME_REDIS_URL), for replicas behind a load
 * balancer: every request is admitted by one script (scripts.ts ADMIT: the key, its rate
 * window, the quota hold, atomically) and settled by another once its status is known, and the
 * answer waits for the settlement's acknowledgement, so a replica killed at any moment has no
 * credit of its own to lose. The script checks the key itself on every request (a replica
 * keeps only what it built from a key's record, by the store's version), so a revocation
 * holds from every replica's next request. The work share (D25) stays each replica's own: it
 * measures that replica's thread.
 *
 * Redis unreachable: keyed requests are refused with 503 service_unavailable and Retry-After
 * (fail closed, no free traffic), /healthz says degraded, and service resumes by itself once
 * Redis answers again (connection.ts).
 */
import { commandLine } from "../../invocation";
import { hashKey, KEY_SHAPE, randomAlphanumeric } from "../key-text";
import type { Account, KeyRecord, Scope } from "../store";
import {
  invalidKey,
  readKey,
  readScope,
  type Gate,
  type Grant,
  type Health,
  type Hold,
  type QuotaState,
  type Refusal,
  type Withheld,
} from "../grant";
import { PlanTally, type PlanName } from "../plans";
import { knownKey, UNLIMITED, type KnownKey } from "../ring";
import { countedAt, dayOf, MonthReached, withinMonth, type UtcMonth } from "../usage";
import { WorkShare } from "../work";
import type { AccountStore } from "../accounts";
import { redisAccountStore } from "./accounts";
import { outageSaid, RedisConnection } from "./connection";
import { INDEX } from "./account-scripts";
import { ADMIT, HOLD_LEASE_MS, REQUEST_HOLD_LEASE_MS, SCRIPTS, SETTLE, UNADMIT, UNSETTLE } from "./scripts";
import type { Script } from "./connection";

/** Seconds a client is told to wait while Redis is unreachable (a probe runs every 250 ms). */
export const UNAVAILABLE_RETRY_AFTER = 2;

const UNAVAILABLE: Refusal = {
  reason: "unavailable",
  message: `The service cannot check API keys right now (its shared store is unreachable); nothing was charged. Retry after ${UNAVAILABLE_RETRY_AFTER} s.`,
  retryAfter: UNAVAILABLE_RETRY_AFTER,
};

/** Why a keyed request is refused, or its answer withheld, while the store has lost its keys (D156). */
export const KEYS_LOST = `its shared store has lost its keys, which an operator imports again with \`${commandLine("keys import")}\``;

/**
 * The store lost its keys (FLUSHALL, a Redis restarted empty without its AOF: D156): every key would be 403 "revoked" to a client
 * that did nothing wrong, so it is an outage of the store until an operator imports the keys again.
 */
const STORE_EMPTY: Refusal = {
  reason: "unavailable",
  message: `The service cannot check API keys right now (${KEYS_LOST}); nothing was charged. Retry after ${UNAVAILABLE_RETRY_AFTER} s.`,
  retryAfter: UNAVAILABLE_RETRY_AFTER,
};

/** A hold in Redis: its id in the account's holds (an unlimited quota's too, which refuses nothing: D194). */
interface RedisHold extends Hold {
  readonly holdId: string;
  /** When it lapses (ms, this replica's clock). */
  readonly lapsesAt: number;
}

/** Admissions and settlements given up on at most, kept to be undone (UNADMIT, UNSETTLE) once Redis answers again; past it, the oldest are dropped. */
const UNDO_LIMIT = 100_000;

/** A grant with the account's ledger as Redis last reported it (for X-Quota-Remaining and the quota's 429). */
interface RedisGrant extends Grant {
  spentThisMonth: number;
  heldThisMonth: number;
  /** The month it was admitted in, its hold's. */
  month: UtcMonth;
}

/** How this replica's settings differ from those the replica started before it wrote to Redis (at: when). */
export interface SettingsDiffer {
  at: string;
  differ: { name: string; here: string; there: string }[];
}

export interface RedisAccessOptions {
  url: string;
  /** The clock (ms since the epoch). Replicas must keep theirs in step (NTP): rate windows are named by it. */
  now?: () => number;
  /** As AccessOptions.monotonic. */
  monotonic?: () => number;
  log?: (line: string) => void;
  /** As AccessOptions.keyMsPerSecond: this replica's thread time per key per second (0: no limit). */
  keyMsPerSecond: number;
}

/** A key as Redis held it at some version, kept by the key's text to save a lookup. */
interface CachedKey {
  sha: string;
  version: string;
  key: KnownKey;
}

/** Keys kept as sent (RedisAccess.known) stay below this. */
const CACHE_LIMIT = 10_000;

export class RedisAccess implements Gate {
  readonly now: () => number;
  readonly redis: RedisConnection;
  private readonly work: WorkShare;
  /** This replica's name in the holds it takes (hold ids must be unique across replicas). */
  private readonly replica = randomAlphanumeric(10);
  private holds = 0;
  /**
   * Keys seen lately, as sent: their hash, and the key as the store held it at a version. Only
   * keys Redis knows are kept; the admission script sends a key's record again only when the
   * store has changed since that version.
   */
  private readonly known = new Map<string, CachedKey>();
  private readonly spentByPlan = new PlanTally();
  /** Milliseconds charged to work shares since the server started, by plan (for /metrics). */
  private readonly workByPlan = new PlanTally();
  /** The UTC month usage is counted in (MonthReached). */
  private readonly months: MonthReached;
  /** Whether this replica has seen the store hold a version (so keys once): one without it since has lost them. */
  private storeSeen = false;
  /** Since when (ms) the store has been found without its keys, while it is. */
  private storeLostSince: number | undefined;
  private readonly log: (line: string) => void;
  /**
   * What Redis may have run though the replica gave up on it (D194), until Redis has run its undoing: each admission
   * (UNADMIT: its request was answered 503, its hold would keep the quota's credits for a lease), and each 2xx's
   * settlement (UNSETTLE: its answer withheld).
   */
  private undo: { script: Script; args: string[] }[] = [];
  /** While the undoing runs: admissions wait for it, so that none finds a hold it gives back. */
  private undoing: Promise<void> | undefined;
  /** What waits for Redis to answer again (onceAnswering). */
  private readonly whenAnswering: (() => void)[] = [];

  constructor(options: RedisAccessOptions) {
    this.now = options.now ?? Date.now;
    this.months = new MonthReached(options.monotonic);
    this.log = options.log ?? ((line) => console.error(line));
    this.work = new WorkShare(options.keyMsPerSecond);
    this.redis = new RedisConnection(options.url, SCRIPTS, options.log);
    this.redis.onAnswering = () => {
      this.undoGivenUp();
      for (const work of this.whenAnswering.splice(0)) work();
    };
  }

  /** Runs `work` once, when Redis answers again after the outage it is in now (a replica started while it was down: D39). */
  onceAnswering(work: () => void): void {
    this.whenAnswering.push(work);
  }

  /** The dashboard's accounts, sessions and usage, in this replica's Redis. */
  accounts(): AccountStore {
    return redisAccountStore(this.redis, this.work);
  }

  /**
   * Connects (an unreachable Redis is an outage, probed until it answers, not an error), and
   * builds the dashboard's per-account index if the store predates it (once; otherwise the
   * dashboard's first read builds it).
   */
  async start(): Promise<void> {
    // The clock's first reading (MonthReached): a month entered from here on, before the first request, is entered.
    this.months.at(this.now());
    await this.redis.open();
    if (this.redis.outage) return;
    await this.redis.run(INDEX, []).catch(() => {});
    if (Number(await this.redis.command("EXISTS", ["tome:keys:version"]).catch(() => 0)) === 1) this.storeSeen = true;
  }

  stop(): void {
    this.redis.close();
  }

  /** How many keys Redis holds (for the start's announcement); undefined while it is unreachable. */
  async keyCount(): Promise<number | undefined> {
    return this.redis.command("HLEN", ["tome:keys"]).then(Number, () => undefined);
  }

  /**
   * Writes this replica's settings (name → value as said) to tome:settings, where the replica started before it wrote its
   * own, and returns how they differ from those (undefined when they cannot be read, or none were written): each replica
   * applies its own, so a replica started with others is told (D39). Rejects when Redis did not take them (unreachable:
   * the caller tries again once it answers, onceAnswering).
   */
  async shareSettings(settings: Record<string, string>): Promise<SettingsDiffer | undefined> {
    const mine = JSON.stringify({ at: new Date(this.now()).toISOString(), settings });
    const reply: unknown = await this.redis.command("SET", ["tome:settings", mine, "GET"]);
    const before = typeof reply === "string" ? reply : undefined;
    if (before === undefined) return undefined;
    let theirs: { at?: unknown; settings?: unknown };
    try {
      theirs = JSON.parse(before) as typeof theirs;
    } catch {
      return undefined;
    }
    const other = typeof theirs.settings === "object" && theirs.settings !== null ? theirs.settings : {};
    const differ: SettingsDiffer["differ"] = [];
    for (const [name, here] of Object.entries(settings)) {
      const there: unknown = (other as Record<string, unknown>)[name];
      if (typeof there === "string" && there !== here) differ.push({ name, here, there });
    }
    return { at: typeof theirs.at === "string" ? theirs.at : "", differ };
  }

  /** Whether Redis keeps the append-only file (INFO, which managed services allow where CONFIG may not be); undefined while it cannot say. */
  async appendOnly(): Promise<boolean | undefined> {
    const info = await this.redis.command("INFO", ["persistence"]).then(String, () => "");
    const enabled = /^aof_enabled:([01])/m.exec(info)?.[1];
    return enabled === undefined ? undefined : enabled === "1";
  }

  health(): Health {
    const outage = this.redis.outage;
    if (!outage && this.storeLostSince !== undefined)
      return {
        ok: false,
        problems: [
          `the shared store of keys and quotas (Redis) has lost its keys since ${new Date(this.storeLostSince).toISOString()} (flushed, or restarted empty): requests that need a key get 503 until the keys are imported again (keys import)`,
        ],
      };
    if (!outage) return { ok: true, problems: [] };
    return {
      ok: false,
      problems: [
        `the shared store of keys and quotas (Redis) cannot be reached since ${new Date(outage.since).toISOString()} (${outageSaid(outage.reason)}; the server's log has what was said): requests that need a key get 503 until it answers again`,
      ],
    };
  }

  admit(headers: Headers, cost: number, needs: Scope = "read"): Grant | Refusal | Promise<Grant | Refusal> {
    const text = readKey(headers);
    if (typeof text !== "string") return text;
    if (!KEY_SHAPE.test(text)) return invalidKey(undefined);
    if (this.redis.outage) return UNAVAILABLE;
    if (this.undoing) return this.undoing.then(() => this.admit(headers, cost, needs));
    const now = this.now();
    const month = this.months.at(now);
    // A clock stepped back over the 1st counts the request on the first day of the month it is charged to.
    const day = dayOf(countedAt(month, now));
    const known = this.known.get(text);
    const sha = known?.sha ?? hashKey(text);
    const holdId = `${this.replica}:${++this.holds}`;
    // Only a PDF costs more than one credit (D20), and only it may take minutes.
    const lease = cost > 1 ? HOLD_LEASE_MS : REQUEST_HOLD_LEASE_MS;
    const args = [
      sha,
      String(now),
      String(cost),
      needs === "full" ? "1" : "0",
      month.name,
      holdId,
      String(lease),
      known?.version ?? "",
      day,
    ];
    return this.redis.run(ADMIT, args).then(
      (reply: any[]) => this.answer(reply, { text, sha, known, now, cost, month, holdId, lease }),
      () => {
        // Sent (an outage found before is refused above), and given up on as Redis became unreachable: it may run it
        // still, or have run it, holding credits for a request answered 503. (A command Redis refused ran nothing.)
        if (this.redis.outage) this.givenUp(UNADMIT, [sha, month.name, holdId, String(cost), day]);
        return UNAVAILABLE;
      },
    );
  }

  private answer(
    reply: any[],
    r: {
      text: string;
      sha: string;
      known: CachedKey | undefined;
      now: number;
      cost: number;
      month: RedisGrant["month"];
      holdId: string;
      /** The hold's lease told to Redis (admit), ms. */
      lease: number;
    },
  ): Grant | Refusal {
    const status = Number(reply[0]);
    if (status === 0) {
      this.known.delete(r.text);
      if (Number(reply[1]) === 1) this.storeFound();
      else if (this.storeSeen) {
        this.storeLost();
        return STORE_EMPTY;
      }
      return invalidKey(undefined);
    }
    this.storeFound();
    const key = this.keyOf(r, String(reply[1]), String(reply[2]), String(reply[3]));
    if (status === 1) return invalidKey(key);
    const rateRemaining = Number(reply[4]);
    const id = key.record.id;
    const workWait = rateRemaining < 0 || status === 2 ? 0 : this.work.wait(id);
    const holdState = Number(reply[7]);
    let held: RedisHold | undefined;
    const lapsesAt = r.now + r.lease;
    if (holdState !== 0) held = { account: key.account, month: r.month.name, holdId: r.holdId, lapsesAt };
    const grant: RedisGrant = {
      key,
      cost: r.cost,
      rateRemaining,
      rateReset: Math.floor(r.now / 1000) + 1,
      held,
      workWait,
      spentThisMonth: Number(reply[5]),
      heldThisMonth: Number(reply[6]),
      month: r.month,
    };
    if (status === 2) return readScope(grant);
    // Over its share of this replica's time: refused (429), so its hold goes back; were this
    // lost, the hold would lapse by itself.
    if (workWait && held) {
      grant.heldThisMonth -= r.cost;
      void this.settle(grant, false);
    }
    return grant;
  }

  /** The key the script answered for: the one held since `version`, or built from the record and account it sent. */
  private keyOf(
    r: { text: string; sha: string; known: CachedKey | undefined },
    version: string,
    recordJson: string,
    accountJson: string,
  ): KnownKey {
    if (recordJson === "" && r.known) return r.known.key;
    const key = knownKey(JSON.parse(recordJson) as KeyRecord, JSON.parse(accountJson) as Account);
    if (this.known.size >= CACHE_LIMIT) this.known.clear();
    this.known.set(r.text, { sha: r.sha, version, key });
    return key;
  }

  /** Admission's work share check again, for a request whose work starts later (D162). */
  workWait(grant: Grant): number {
    return this.work.wait(grant.key.record.id);
  }

  spent(grant: Grant, ms: number): void {
    this.work.spend(grant.key.record.id, ms);
    this.workByPlan.add(grant.key.plan, ms);
  }

  /**
   * Resolves once Redis has the settlement: true when the answer may go out. A 2xx whose
   * spending Redis did not take resolves to why (the answer is withheld: no free traffic);
   * a refund that did not reach Redis is made good by the hold's lapse.
   */
  settle(grant: Grant, succeeded: boolean): void | Promise<true | Withheld> {
    const hold = grant.held as RedisHold | undefined;
    if (hold === undefined) return;
    grant.held = undefined;
    const g = grant as RedisGrant;
    const quota = Number.isFinite(g.key.limits.quota) ? String(g.key.limits.quota) : "-1";
    const args = [
      hold.month,
      hold.account,
      hold.holdId,
      String(g.cost),
      succeeded ? "1" : "0",
      quota,
      dayOf(withinMonth(g.month, this.now())), // the month its hold is of (hold.month is its name)
      g.key.record.id,
    ];
    return this.redis.run(SETTLE, args).then(
      (reply: any[]) => {
        if (Number(reply[0]) === -1) {
          // The store was flushed while the request ran: nothing is written for an account that is gone, and the answer is withheld.
          this.storeLost();
          return succeeded ? "keys lost" : true;
        }
        if (hold.month === g.month.name) [g.spentThisMonth, g.heldThisMonth] = [Number(reply[0]), Number(reply[1])];
        // Its hold lapsed (a body that took its time to arrive) and the quota was spent meanwhile (D181).
        if (succeeded && Number(reply[2]) === 0) return "quota spent";
        if (succeeded) this.spentByPlan.add(g.key.plan, g.cost);
        return true;
      },
      () => {
        if (!succeeded) return true;
        // Redis may have run it, or run it still: undone once Redis answers, so that the answer withheld costs nothing.
        if (this.redis.outage)
          this.givenUp(UNSETTLE, [...args.slice(0, 4), args[6]!, args[7]!, "", String(hold.lapsesAt)]);
        return "unreachable" as const;
      },
    );
  }

  private givenUp(script: Script, args: string[]): void {
    if (this.undo.length >= UNDO_LIMIT) this.undo.shift();
    this.undo.push({ script, args });
  }

  /**
   * Undoes what was given up on, as Redis answers again: sent all at once (the client pipelines them: admissions wait
   * for one round trip, not one a command). What Redis became unreachable with waits for the next time; what it
   * refused ran nothing and is dropped (as givenUp keeps only what an outage cut off).
   */
  private undoGivenUp(): void {
    if (this.undoing || this.undo.length === 0) return;
    const todo = this.undo;
    this.undo = [];
    this.undoing = (async () => {
      const sent = todo.map(({ script, args }) => {
        if (script === UNSETTLE) args[6] = String(this.now());
        return this.redis.run(script, args);
      });
      const results = await Promise.allSettled(sent);
      const cut = todo.filter((_, i) => results[i]!.status === "rejected");
      if (cut.length > 0 && this.redis.outage) this.undo = cut.concat(this.undo);
    })().finally(() => (this.undoing = undefined));
  }

  /** Logged once, when first found. */
  private storeLost(): void {
    if (this.storeLostSince !== undefined) return;
    this.storeLostSince = Date.now();
    this.log(
      `Redis at ${this.redis.address} has lost its keys (flushed, or restarted empty without its append-only file): requests that need a key get 503 until they are imported again (keys import).`,
    );
  }

  private storeFound(): void {
    this.storeSeen = true;
    if (this.storeLostSince === undefined) return;
    this.storeLostSince = undefined;
    this.log(`Redis at ${this.redis.address} holds its keys again: serving keyed requests.`);
  }

  creditsSpent(): ReadonlyMap<PlanName, number> {
    return this.spentByPlan.all;
  }

  workCharged(): ReadonlyMap<PlanName, number> {
    return this.workByPlan.all;
  }

  quotaOf(grant: Grant): QuotaState {
    const g = grant as RedisGrant;
    const limit = g.key.limits.quota;
    const used = g.spentThisMonth + g.heldThisMonth;
    return { limit, remaining: Math.max(0, limit - used), used, reset: g.month.end };
  }

  quotaTextsOf(grant: Grant): [remaining: string, reset: string] {
    const g = grant as RedisGrant;
    if (g.key.quotaText === UNLIMITED) return [UNLIMITED, g.month.endText];
    return [String(this.quotaOf(g).remaining), g.month.endText];
  }

  usageTime(now: number): number {
    return this.months.usageTime(now);
  }
}
