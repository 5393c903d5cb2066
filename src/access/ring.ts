/**
 * The server's view of keys.json: keys looked up by hash in memory, re-read when the key tool
 * says the store changed (keys.gen, on the next request: D18), or when the file itself did
 * (its inode, mtime and size, looked at once a second, catch a hand edit).
 *
 * While serving, a changed store over READ_ASIDE_BYTES (1 MB) is read and checked in a worker (store-reader.ts),
 * not on the request thread (a smaller one is, in some 10 ms: D24), and taken over in parts of a few thousand keys, each in a turn of its own; the keys
 * served change all at once when the last part is in. Until then refresh() answers the load under
 * way, which admission and the dashboard wait for (a key revoked is refused from the next request
 * after the key tool returns: D18), while anything else (/healthz) is answered at once (D24).
 *
 * A store damaged or removed while the server runs is never served from: the server keeps
 * the keys it last read, logs the problem once and reports it (problem), and takes the file
 * again as soon as it is whole.
 *
 * The dashboard reads it too (D81): an account by name, and the keys of one account, each one
 * lookup in memory, so that no dashboard request reads keys.json.
 */
import { statSync } from "node:fs";
import { KeyStoreError } from "./errors";
import type { ReaderPart } from "./store-reader";
import { workerUrl } from "../files";
import { GenerationCounter, generationPath } from "./generation";
import { hashKey, KEY_SHAPE } from "./key-text";
import { keysPath, parseKeyFile, readKeyText, type Account, type KeyRecord, type Scope } from "./store";
import { limitsOf, type Plan, type PlanName } from "./plans";
import { printableName } from "../printable";
import { KEY_STORE_READ_SECONDS } from "../request-time";

/**
 * A key of the store as the server holds it, whatever its state (active, revoked or expired:
 * endsAt says), with what each request needs of it worked out once.
 */
export interface KnownKey {
  record: KeyRecord;
  account: string;
  /** The account's plan. */
  plan: PlanName;
  limits: Plan;
  /** What the key may do: "full" if its scopes include it, else "read". */
  scope: Scope;
  /** When the key stops working (ms since the epoch): its expiry, or -Infinity once revoked; Infinity if neither. */
  endsAt: number;
  /** X-RateLimit-Limit and X-Quota-Limit, as sent. */
  rateText: string;
  quotaText: string;
}

/** The text of an unlimited quota in the X-Quota-* headers (D20). */
export const UNLIMITED = "unlimited";

export function knownKey(record: KeyRecord, account: Account): KnownKey {
  const limits = limitsOf(account.plan, account.rate);
  const endsAt = record.revoked_at ? -Infinity : record.expires_at ? Date.parse(record.expires_at) : Infinity;
  const quotaText = Number.isFinite(limits.quota) ? String(limits.quota) : UNLIMITED;
  const scope = record.scopes.includes("full") ? "full" : "read";
  return {
    record,
    account: record.account,
    plan: account.plan,
    limits,
    scope,
    endsAt,
    rateText: String(limits.rate),
    quotaText,
  };
}

/** Why keys.json cannot be served from, and since when (ms since the epoch). */
export interface StoreProblem {
  message: string;
  since: number;
}

/** What the ring serves from, made whole before it is served (a reload builds a new one beside the one served). */
interface Held {
  byHash: Map<string, KnownKey>;
  accounts: Map<string, Account>;
  keysByAccount: Map<string, KeyRecord[]>;
}

/** Adds accounts, then keys (each key's account among those added before it: checkKeyFile), to what will be served. */
function take(held: Held, accounts: readonly [string, Account][], keys: readonly KeyRecord[]): void {
  for (const [name, account] of accounts) held.accounts.set(name, account);
  for (const record of keys) {
    held.byHash.set(record.hash, knownKey(record, held.accounts.get(record.account)!));
    const mine = held.keysByAccount.get(record.account);
    if (mine) mine.push(record);
    else held.keysByAccount.set(record.account, [record]);
  }
}

/**
 * Above this size a changed keys.json is read in a worker; at or below it, on the request thread, in some 10 ms
 * (6–13 ms at 1.16 MB, 3,000 keys, a probe not kept: D24), less than a worker's start and read take (D24).
 */
export const READ_ASIDE_BYTES = 1 << 20;

const emptyHeld = (): Held => ({ byHash: new Map(), accounts: new Map(), keysByAccount: new Map() });

export class KeyRing {
  private held = emptyHeld();
  /** The read of a changed store under way (a worker's), resolved once its keys are served or it is refused. */
  private loading: Promise<void> | undefined;
  /** The accounts' names in code-unit order (the operator's pages), sorted when first asked for after a reload. */
  private names: string[] | undefined;
  /** Keys seen lately, as sent, to save hashing them on every request; emptied when the store is re-read. */
  private readonly seen = new Map<string, KnownKey>();
  private readonly path: string;
  private readonly generation: GenerationCounter;
  private seenGeneration = -1;
  private lastStat = 0;
  private ino = -1;
  private mtimeMs = 0;
  private size = 0;
  /** Whether a store was ever read: from then on a missing keys.json is a problem, not "no key yet". */
  private loaded = false;
  /** Set while the keys served are not the file's (it is damaged or gone). */
  problem: StoreProblem | undefined;

  /** Reads the store (a missing one is no key yet); a damaged one throws, for the server to refuse to start. */
  constructor(
    dataDir: string,
    private readonly log: (line: string) => void,
  ) {
    this.path = keysPath(dataDir);
    this.generation = new GenerationCounter(generationPath(dataDir));
    this.lastStat = performance.now();
    this.reload(this.generation.read(), false);
  }

  /** Whether the store holds any key at all. */
  get empty(): boolean {
    this.refresh();
    return this.held.byHash.size === 0;
  }

  /**
   * Starts reading the file if it changed: in a worker if it is over READ_ASIDE_BYTES, unless `now` (before serving: start, its first key). A damaged
   * or missing one leaves the keys as they were, and sets problem. Answers the read under way, if any: what is
   * served changes when it resolves (and the file may have changed again meanwhile: ask again then).
   */
  refresh(now = false): Promise<void> | undefined {
    if (this.loading) return this.loading;
    const generation = this.generation.read();
    const at = performance.now();
    if (generation === this.seenGeneration && at - this.lastStat < 1000) return undefined;
    this.lastStat = at;
    this.generation.follow();
    try {
      this.reload(generation, !now);
    } catch (err) {
      this.refused(err);
    }
    return this.loading;
  }

  /** Whether a changed store is being read (in a worker). */
  get reading(): boolean {
    return this.loading !== undefined;
  }

  /** Waits for any read under way, and for the reads of changes made meanwhile, until the keys served are the file's as last looked at. */
  async ready(): Promise<void> {
    for (let loading = this.refresh(); loading; loading = this.refresh()) await loading;
  }

  private refused(err: unknown): void {
    const message =
      err instanceof KeyStoreError
        ? err.message
        : `cannot read ${printableName(this.path)}: ${(err as Error).message}.`;
    this.problem ??= { message, since: Date.now() };
    this.problem.message = message;
    this.log(
      `${message} Until it is whole again, the server keeps the ${this.held.byHash.size} key(s) it last read: new keys, revocations and plan changes wait for it.`,
    );
  }

  /**
   * Reads keys.json if it changed since it was last looked at (in a worker if `aside` and over READ_ASIDE_BYTES: this.loading); throws if it is
   * damaged, or gone after a store was read.
   */
  private reload(generation: number, aside: boolean): void {
    const s = statSync(this.path, { throwIfNoEntry: false });
    // The tool replaces the file by a rename (a new inode); mtime and size catch an edit in place.
    const [ino, mtimeMs, size] = s ? [s.ino, s.mtimeMs, s.size] : [-1, 0, 0];
    if (generation === this.seenGeneration && ino === this.ino && mtimeMs === this.mtimeMs && size === this.size)
      return;
    // Each version of the file is read once, whole or not: a damaged one is reported once, not every second.
    [this.ino, this.mtimeMs, this.size, this.seenGeneration] = [ino, mtimeMs, size, generation];
    if (!s && !this.loaded) return;
    if (!s) throw new KeyStoreError(`${printableName(this.path)} is missing. Restore it from a backup.`);
    if (aside && size > READ_ASIDE_BYTES) {
      this.loading = this.readAside().finally(() => (this.loading = undefined));
      return;
    }
    this.readHere();
  }

  /** Reads, checks and serves the store on this thread; throws if it is damaged. */
  private readHere(): void {
    const file = parseKeyFile(this.path, readKeyText(this.path));
    const held = emptyHeld();
    take(held, Object.entries(file.accounts), file.keys);
    this.serve(held);
  }

  /**
   * The worker failed, not the file (it could not start, crashed, or stopped before it was done): the store is read
   * here instead, so that a revocation is not held back, nor a whole file reported as unreadable (D24).
   */
  private readHereInstead(why: unknown): void {
    this.log(
      `The key store's reader (a worker) failed: ${(why as Error).message}. ${printableName(this.path)} is read on the request thread instead.`,
    );
    try {
      this.readHere();
    } catch (err) {
      this.refused(err);
    }
  }

  /** Serves a store read whole. */
  private serve(held: Held): void {
    this.held = held;
    this.names = undefined;
    this.seen.clear();
    this.loaded = true;
    if (this.problem) {
      this.log(`${printableName(this.path)} is whole again: serving its ${held.byHash.size} key(s).`);
      this.problem = undefined;
    }
  }

  /** Reads the store in a worker and takes it a part a turn; resolves once it is served, or refused (problem). */
  private readAside(): Promise<void> {
    let worker: Worker;
    try {
      worker = new Worker(workerUrl(new URL("./store-reader.ts", import.meta.url), "access/store-reader.ts"));
    } catch (err) {
      this.readHereInstead(err);
      return Promise.resolve();
    }
    const held = emptyHeld();
    return new Promise<void>((resolve) => {
      let ended = false;
      /** Ends the read, once: `refusal` is the reader's own of the file (served: problem), `failure` the worker's. */
      const end = (refusal?: unknown, failure?: unknown) => {
        if (ended) return;
        ended = true;
        clearTimeout(deadline);
        worker.terminate();
        if (refusal !== undefined) this.refused(refusal);
        if (failure !== undefined) this.readHereInstead(failure);
        resolve();
      };
      // Without these the read would never end, and every keyed request would wait for it forever.
      const deadline = setTimeout(
        () => end(undefined, new Error(`it had not finished after ${KEY_STORE_READ_SECONDS} s`)),
        KEY_STORE_READ_SECONDS * 1000,
      );
      worker.addEventListener("close", () => end(undefined, new Error("it stopped before it was done")));
      worker.onmessage = (event: MessageEvent<ReaderPart>) => {
        try {
          const part = event.data;
          if ("error" in part) return end(part.keyStore ? new KeyStoreError(part.error) : new Error(part.error));
          // The next part is asked for first: the worker makes it while this one is taken.
          if (!part.done) worker.postMessage({ next: true });
          take(held, part.accounts, part.keys);
          if (!part.done) return;
          this.serve(held);
          end();
        } catch (err) {
          end(undefined, err);
        }
      };
      worker.onerror = (event) => end(undefined, new Error(event.message));
      worker.postMessage({ path: this.path });
    });
  }

  /** The account of this name, as the store has it now. */
  account(name: string): Account | undefined {
    this.refresh();
    return this.held.accounts.get(name);
  }

  /** The keys of one account (whatever their state), in the store's order. */
  keysOf(account: string): readonly KeyRecord[] {
    this.refresh();
    return this.held.keysByAccount.get(account) ?? [];
  }

  /** Every account's name, in code-unit order. */
  accountNames(): readonly string[] {
    this.refresh();
    this.names ??= [...this.held.accounts.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return this.names;
  }

  /** The key, if it exists (whatever its state), in the store as served now: admission waits for refresh() first. */
  find(key: string): KnownKey | undefined {
    const seen = this.seen.get(key);
    if (seen || !KEY_SHAPE.test(key)) return seen;
    const found = this.held.byHash.get(hashKey(key));
    // Only keys of the store get in, so it never holds more than the store has.
    if (found) this.seen.set(key, found);
    return found;
  }
}
