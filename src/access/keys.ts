/**
 * The key store: accounts (plan, enterprise rate) and API keys, in TOME_DATA/keys.json.
 * Only a sha256 of each key is kept (keys are 190 bits of randomness, so a fast hash is
 * enough). The key tool writes the file (atomically, under a lock), then bumps the counter in
 * keys.gen (generation.ts) that running servers watch (ring.ts). A store that is empty,
 * damaged or gone is refused, never silently replaced (checkKeyStore).
 */
import { createHash, randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { atomicWrite } from "../files";
import { KeyStoreError } from "./errors";
import { bumpGeneration, checkGeneration, generationPath, readGeneration } from "./generation";
import { usagePath } from "./usage";
import { isPlan, PLANS, type PlanName } from "./plans";

export { KeyStoreError };

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

export function keysPath(dataDir: string): string {
  return join(dataDir, "keys.json");
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

/** Reads and checks keys.json; a missing file is an empty store (for the key tool, which makes it). */
export function readKeyFile(path: string): KeyFile {
  if (!existsSync(path)) return structuredClone(EMPTY);
  return parseKeyFile(path, readFileSync(path, "utf8"));
}

/** Checks the text of keys.json, read from path; anything but a whole store throws, saying what is wrong. */
export function parseKeyFile(path: string, text: string): KeyFile {
  const restore = "Restore it from a backup; nothing was changed.";
  if (!text.trim()) throw new KeyStoreError(`${path} is empty (a crash or a full disk may have cut it short). ${restore}`);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new KeyStoreError(`${path} is not valid JSON (${(err as Error).message}). ${restore}`);
  }
  const problem = checkKeyFile(data);
  if (problem) throw new KeyStoreError(`${path} is damaged: ${problem}. ${restore}`);
  return data as KeyFile;
}

/** What a server finds under its data directory: no key store yet, or one to serve (see checkKeyStore). */
export type KeyStoreState = "fresh" | "present";

/**
 * Whether a server may start on dataDir, read before it touches anything there. "fresh": no
 * store at all (no keys.json, no usage.json, keys.gen never bumped): a first start, which
 * creates the first key. "present": keys.json is a whole store with at least one key.
 * Anything else throws a KeyStoreError saying what is wrong and what to do — an empty or
 * damaged keys.json, or a missing one where an earlier store leaves traces — since starting
 * anew there would silently turn every earlier key away.
 */
export function checkKeyStore(dataDir: string): KeyStoreState {
  const path = keysPath(dataDir);
  const generation = generationPath(dataDir);
  checkGeneration(generation);
  if (!existsSync(path)) {
    const traces = [readGeneration(generation) > 0 && generation, existsSync(usagePath(dataDir)) && usagePath(dataDir)].filter(Boolean);
    if (!traces.length) return "fresh";
    throw new KeyStoreError(
      `${path} is missing, but ${traces.join(" and ")} show${traces.length > 1 ? "" : "s"} that a key store was kept here: ` +
        `starting without it would refuse every earlier key. Restore keys.json from a backup. To start a new store instead ` +
        `(every earlier key stays refused), create its first key: bun run keys create --name NAME --scope full`,
    );
  }
  if (!readKeyFile(path).keys.length) {
    throw new KeyStoreError(`${path} holds no key, so every request would be refused. Create one: bun run keys create --name NAME --scope full`);
  }
  return "present";
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
    if (!Array.isArray(k.scopes) || !k.scopes.length || !k.scopes.every((s) => SCOPES.includes(s))) return `key ${k.id} has no valid scopes`;
    // An expiry that does not parse would never end.
    if (k.expires_at !== null && !(typeof k.expires_at === "string" && !Number.isNaN(Date.parse(k.expires_at)))) return `key ${k.id} has an invalid expires_at`;
    if (k.revoked_at !== null && typeof k.revoked_at !== "string") return `key ${k.id} has an invalid revoked_at`;
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
    // Checked before anything is written: a change the servers cannot be told of is not made.
    checkGeneration(generationPath(dataDir));
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

/**
 * The record of a key named by its id, or by the key's own text (matched by its hash). The
 * text is never repeated in a message: it may be a live key.
 */
export function findKey(file: KeyFile, idOrKey: string): KeyRecord {
  if (!idOrKey.startsWith(KEY_PREFIX)) {
    const record = file.keys.find((k) => k.id === idOrKey);
    if (!record) throw new KeyStoreError(`there is no key ${idOrKey}. See the ids with: bun run keys list`);
    return record;
  }
  if (!KEY_SHAPE.test(idOrKey)) throw new KeyStoreError(`the key given is not a whole key (${KEY_PREFIX} and ${KEY_BODY} letters or digits). Give the key's text or its id (see bun run keys list).`);
  const hash = hashKey(idOrKey);
  const record = file.keys.find((k) => k.hash === hash);
  if (!record) throw new KeyStoreError("the key given is not in this store (TOME_DATA). See the ids with: bun run keys list");
  return record;
}

/** Revokes a key named by its id or its text (findKey). */
export function revokeKey(file: KeyFile, idOrKey: string, now: number): KeyRecord {
  const record = findKey(file, idOrKey);
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
