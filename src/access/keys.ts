/**
 * The key store: accounts (plan, enterprise rate) and API keys, in TOME_DATA/keys.json.
 * Only a sha256 of each key is kept (keys are 190 bits of randomness, so a fast hash is
 * enough). The key tool writes the file (atomically, under a lock), then bumps a counter in
 * keys.gen in place; the server keeps keys.gen mapped in memory and reads the counter on
 * every request, so a change takes effect on the next request (D18) for the price of a
 * memory read. A hand edit of keys.json is noticed within a second (the server also looks
 * at the file's inode, mtime and size once a second).
 */
import { createHash, randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { atomicWrite } from "../files";
import { isPlan, limitsOf, PLANS, type Plan, type PlanName } from "./plans";

export const KEY_PREFIX = "wk_";
const KEY_BODY = 32;
const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** D18: the whole shape of a key. Anything else is refused before any lookup. */
export const KEY_SHAPE = /^wk_[A-Za-z0-9]{32}$/;

export type Scope = "read" | "full";
export const SCOPES: readonly Scope[] = ["read", "full"];

export interface Account {
  plan: PlanName;
  /** Enterprise only: requests per second per key. */
  rate?: number;
}

export interface KeyRecord {
  id: string;
  /** sha256 of the key, hex. */
  hash: string;
  name: string;
  account: string;
  scopes: Scope[];
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC; the key stops working at this instant. */
  expires_at: string | null;
  revoked_at: string | null;
}

export interface KeyFile {
  format: "tome-keys";
  version: 1;
  accounts: Record<string, Account>;
  keys: KeyRecord[];
}

export type KeyState = "active" | "revoked" | "expired";

/** A problem with the key store, said for the person at the terminal. */
export class KeyStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeyStoreError";
  }
}

export function keysPath(dataDir: string): string {
  return join(dataDir, "keys.json");
}

export function generationPath(dataDir: string): string {
  return join(dataDir, "keys.gen");
}

const GENERATION_BYTES = 8;

/** Creates keys.gen if it is missing (a zero counter). */
function ensureGeneration(path: string): void {
  if (!existsSync(path)) writeFileSync(path, new Uint8Array(GENERATION_BYTES), { mode: 0o600, flag: "wx" });
}

/** Tells running servers that keys.json changed: the counter in keys.gen, written in place. */
function bumpGeneration(path: string): void {
  ensureGeneration(path);
  const fd = openSync(path, "r+");
  try {
    const bytes = new Uint8Array(4);
    readSync(fd, bytes, 0, 4, 0);
    const view = new DataView(bytes.buffer);
    view.setUint32(0, (view.getUint32(0, true) + 1) >>> 0, true);
    writeSync(fd, bytes, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
}

export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Uniform random characters from [A-Za-z0-9], by rejection sampling of crypto bytes. */
export function randomAlphanumeric(n: number): string {
  let out = "";
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248) out += ALPHANUMERIC[b % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

export function newKey(): string {
  return KEY_PREFIX + randomAlphanumeric(KEY_BODY);
}

export function stateOf(key: KeyRecord, now: number): KeyState {
  if (key.revoked_at) return "revoked";
  if (key.expires_at && Date.parse(key.expires_at) <= now) return "expired";
  return "active";
}

const EMPTY: KeyFile = { format: "tome-keys", version: 1, accounts: {}, keys: [] };

/** Reads and checks keys.json; a missing file is an empty store. */
export function readKeyFile(path: string): KeyFile {
  if (!existsSync(path)) return structuredClone(EMPTY);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new KeyStoreError(`${path} is not valid JSON (${(err as Error).message}). Restore it from a backup; nothing was changed.`);
  }
  const problem = checkKeyFile(data);
  if (problem) throw new KeyStoreError(`${path} is damaged: ${problem}. Restore it from a backup; nothing was changed.`);
  return data as KeyFile;
}

function checkKeyFile(data: unknown): string | undefined {
  const f = data as KeyFile;
  if (!f || typeof f !== "object" || f.format !== "tome-keys") return "it is not a Tome key store";
  if (f.version !== 1) return `its version ${String(f.version)} is not one this Tome reads`;
  if (!f.accounts || typeof f.accounts !== "object" || !Array.isArray(f.keys)) return "accounts or keys are missing";
  for (const [id, a] of Object.entries(f.accounts)) {
    if (!a || !isPlan(a.plan)) return `account ${id} has no valid plan`;
    if (a.rate !== undefined && !(Number.isInteger(a.rate) && a.rate > 0)) return `account ${id} has an invalid rate`;
  }
  for (const k of f.keys) {
    if (!k || typeof k.id !== "string" || !/^[0-9a-f]{64}$/.test(k.hash) || typeof k.account !== "string" || !f.accounts[k.account]) {
      return `key ${String(k?.id)} is incomplete or names an unknown account`;
    }
  }
  return undefined;
}

export function writeKeyFile(path: string, file: KeyFile): void {
  atomicWrite(path, JSON.stringify(file, null, 2) + "\n", { mode: 0o600 });
}

/**
 * Runs `change` on the store under an exclusive lock, and writes the result: two key
 * commands at once never lose each other's change.
 */
export function updateKeyFile<T>(dataDir: string, change: (file: KeyFile) => T): T {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = keysPath(dataDir);
  const lock = `${path}.lock`;
  const deadline = Date.now() + 10_000;
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = openSync(lock, "wx", 0o600);
      writeSync(fd, String(process.pid));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      if (staleLock(lock)) rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw new KeyStoreError(`${lock} is held by another key command. If none is running, delete the lock file.`);
      else Bun.sleepSync(20);
    }
  }
  try {
    const file = readKeyFile(path);
    const result = change(file);
    writeKeyFile(path, file);
    bumpGeneration(generationPath(dataDir));
    return result;
  } finally {
    closeSync(fd);
    rmSync(lock, { force: true });
  }
}

function staleLock(lock: string): boolean {
  try {
    const pid = Number(readFileSync(lock, "utf8"));
    if (!pid) return Date.now() - statSync(lock).mtimeMs > 10_000;
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH" || (err as NodeJS.ErrnoException).code === "ENOENT";
  }
}

export interface CreateKeyOptions {
  name: string;
  account: string;
  /** Only for a new account (default free); an existing account keeps its plan. */
  plan?: PlanName;
  scope: Scope;
  expiresAt?: string;
  now: number;
}

/** Adds a key (D21: within the plan's number of keys). Returns the key, shown only now. */
export function createKey(file: KeyFile, o: CreateKeyOptions): { key: string; record: KeyRecord; account: Account } {
  const existing = file.accounts[o.account];
  if (existing && o.plan && o.plan !== existing.plan) {
    throw new KeyStoreError(`account ${o.account} is on the ${existing.plan} plan. Change it with: bun run keys plan --account ${o.account} --plan ${o.plan}`);
  }
  const account = existing ?? { plan: o.plan ?? "free" };
  const limit = PLANS[account.plan].keys;
  const held = file.keys.filter((k) => k.account === o.account && stateOf(k, o.now) === "active").length;
  if (held >= limit) {
    throw new KeyStoreError(
      `account ${o.account} already holds ${held} active keys, the most its ${account.plan} plan allows (D21). ` +
        `Revoke one (bun run keys revoke ID) or move the account to a larger plan (bun run keys plan --account ${o.account} --plan PLAN).`,
    );
  }
  file.accounts[o.account] = account;
  const key = newKey();
  const record: KeyRecord = {
    id: `key_${randomAlphanumeric(12)}`,
    hash: hashKey(key),
    name: o.name,
    account: o.account,
    scopes: [o.scope],
    created_at: new Date(o.now).toISOString(),
    expires_at: o.expiresAt ?? null,
    revoked_at: null,
  };
  file.keys.push(record);
  return { key, record, account };
}

export function revokeKey(file: KeyFile, id: string, now: number): KeyRecord {
  const record = file.keys.find((k) => k.id === id);
  if (!record) throw new KeyStoreError(`there is no key ${id}. See the ids with: bun run keys list`);
  record.revoked_at ??= new Date(now).toISOString();
  return record;
}

export function setPlan(file: KeyFile, account: string, plan: PlanName, rate?: number): Account {
  const a = file.accounts[account];
  if (!a) throw new KeyStoreError(`there is no account ${account}. Accounts are made with their first key: bun run keys create --account ${account} --name NAME`);
  if (rate !== undefined && plan !== "enterprise") throw new KeyStoreError("--rate is for the enterprise plan only; the other plans' rates are fixed (api.md section 8).");
  a.plan = plan;
  if (plan === "enterprise") {
    if (rate !== undefined) a.rate = rate;
  } else delete a.rate;
  return a;
}

/** A key as the server holds it, with what each request needs of it worked out once. */
export interface ActiveKey {
  record: KeyRecord;
  account: string;
  limits: Plan;
  /** When the key stops working (ms since the epoch): its expiry, or -Infinity once revoked; Infinity if neither. */
  endsAt: number;
  /** X-RateLimit-Limit and X-Quota-Limit, as sent. */
  rateText: string;
  quotaText: string;
}

/** The text of an unlimited quota in the X-Quota-* headers (D20). */
export const UNLIMITED = "unlimited";

function activeKey(record: KeyRecord, account: Account): ActiveKey {
  const limits = limitsOf(account.plan, account.rate);
  const endsAt = record.revoked_at ? -Infinity : record.expires_at ? Date.parse(record.expires_at) : Infinity;
  const quotaText = Number.isFinite(limits.quota) ? String(limits.quota) : UNLIMITED;
  return { record, account: record.account, limits, endsAt, rateText: String(limits.rate), quotaText };
}

/**
 * The server's view of keys.json: looked up by hash in memory, re-read when the key tool
 * says it changed (keys.gen), or when the file itself did (looked at once a second).
 */
export class KeyRing {
  private byHash = new Map<string, ActiveKey>();
  /** Keys seen lately, as sent, to save hashing them on every request; emptied when the store is re-read. */
  private readonly seen = new Map<string, ActiveKey>();
  private readonly path: string;
  private readonly generation: DataView;
  private seenGeneration = -1;
  private lastStat = 0;
  private ino = -1;
  private mtimeMs = 0;
  private size = 0;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    this.path = keysPath(dataDir);
    const gen = generationPath(dataDir);
    ensureGeneration(gen);
    const mapped = Bun.mmap(gen, { shared: true });
    this.generation = new DataView(mapped.buffer, mapped.byteOffset, GENERATION_BYTES);
    this.refresh();
  }

  /** Whether the store holds any key at all. */
  get empty(): boolean {
    this.refresh();
    return this.byHash.size === 0;
  }

  /** Re-reads the file if it changed; a damaged file throws (the caller fails closed). */
  refresh(): void {
    const generation = this.generation.getUint32(0, true);
    const now = performance.now();
    if (generation === this.seenGeneration && now - this.lastStat < 1000) return;
    this.lastStat = now;
    // The tool replaces the file by a rename (a new inode); mtime and size catch an edit in place.
    const s = statSync(this.path, { throwIfNoEntry: false });
    const [ino, mtimeMs, size] = s ? [s.ino, s.mtimeMs, s.size] : [-1, 0, 0];
    if (generation === this.seenGeneration && ino === this.ino && mtimeMs === this.mtimeMs && size === this.size) return;
    const file = readKeyFile(this.path);
    this.byHash = new Map(file.keys.map((record) => [record.hash, activeKey(record, file.accounts[record.account]!)]));
    this.seen.clear();
    [this.ino, this.mtimeMs, this.size, this.seenGeneration] = [ino, mtimeMs, size, generation];
  }

  /** The key, if it exists (whatever its state). */
  find(key: string): ActiveKey | undefined {
    this.refresh();
    const seen = this.seen.get(key);
    if (seen || !KEY_SHAPE.test(key)) return seen;
    const found = this.byHash.get(hashKey(key));
    // Only keys of the store get in, so it never holds more than the store has.
    if (found) this.seen.set(key, found);
    return found;
  }
}
