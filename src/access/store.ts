/**
 * The key store's file: accounts (plan, enterprise rate) and API keys (their sha256 only), in
 * TOME_DATA/keys.json; its format, its checks, and its one writer, updateKeyFile (atomically,
 * under a lock; updateKeyFileAsync in a running server), which then bumps the counter in
 * keys.gen (generation.ts) that running servers watch (ring.ts). A store that is empty,
 * damaged or gone is refused, never silently replaced (checkKeyStore).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  atomicWrite,
  clearDeadWrites,
  DATA_FILE_LIMIT,
  leadsNowhere,
  linkToNothing,
  LOCK_FREES_ITSELF,
  type LockPolicy,
  lockHolderShown,
  readWholeText,
  takeLock,
  takeLockAsync,
} from "../files";
import { KeyStoreError, KeyStoreLocked } from "./errors";
import { bumpGeneration, checkGeneration, generationPath, readGeneration } from "./generation";
import { usagePath } from "./usage";
import { journalFiles } from "./usage-journal";
import { isPlan, limitsOf, type PlanName } from "./plans";
import { isReservedName, nameTable } from "./names";
import { printableName } from "../printable";
import { commandLine } from "../invocation";

export type Scope = "read" | "full";
export const SCOPES: readonly Scope[] = ["read", "full"];

export interface Account {
  plan: PlanName;
  /** Enterprise only: requests per second per key. */
  rate?: number;
  /** sha256 (hex) of the account holder's dashboard sign-in token (accounts.ts), if one was issued. */
  dashboard_token?: string;
}

export interface KeyRecord {
  id: string;
  /** sha256 of the key, hex. */
  hash: string;
  /** The key's first characters (wk_ and 4 of its 32), for people to tell keys apart; absent on keys made before they were kept. */
  prefix?: string;
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
  /** By name: a nameTable (names.ts), never a plain object. */
  accounts: Record<string, Account>;
  keys: KeyRecord[];
}

export type KeyState = "active" | "revoked" | "expired";

export function keysPath(dataDir: string): string {
  return join(dataDir, "keys.json");
}

export function stateOf(key: KeyRecord, now: number): KeyState {
  if (key.revoked_at) return "revoked";
  if (key.expires_at && Date.parse(key.expires_at) <= now) return "expired";
  return "active";
}

/** An account's active keys and the number its plan allows (D21): the one count the key tool, the dashboard and the operator show and refuse by. */
export function keysHeld(
  keys: readonly KeyRecord[],
  name: string,
  account: Account,
  now: number,
): { active: number; limit: number } {
  const active = keys.filter((k) => k.account === name && stateOf(k, now) === "active").length;
  return { active, limit: limitsOf(account.plan, account.rate).keys };
}

/** A store without accounts or keys. */
export function emptyKeyFile(): KeyFile {
  return { format: "tome-keys", version: 1, accounts: nameTable(), keys: [] };
}

/** Reads and checks keys.json; a missing file is an empty store (for the key tool, which makes it). */
export function readKeyFile(path: string): KeyFile {
  if (!existsSync(path)) return emptyKeyFile();
  return parseKeyFile(path, readKeyText(path));
}

/** The text of keys.json; a path that cannot be read (a directory, no permission) throws a KeyStoreError saying so, not the system's error. */
export function readKeyText(path: string): string {
  let read: ReturnType<typeof readWholeText>;
  try {
    read = readWholeText(path, DATA_FILE_LIMIT);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new KeyStoreError(
      `${printableName(path)} cannot be read (${code ?? (err as Error).message}). Make it a file this user can read; nothing was changed.`,
    );
  }
  // A device or a pipe was read to its end, never reached: a start, or a running server's request thread, hung (D190).
  if (!("text" in read))
    throw new KeyStoreError(
      `${printableName(path)} is ${"not" in read ? `${read.not}, not the key store's file` : `${read.size}: no key store Tome writes is so large`}. Move it away and restore keys.json from a backup; nothing was changed.`,
    );
  return read.text;
}

/** Checks the text of keys.json, read from path; anything but a whole store throws, saying what is wrong. */
export function parseKeyFile(path: string, text: string): KeyFile {
  const restore = "Restore it from a backup; nothing was changed.";
  if (!text.trim())
    throw new KeyStoreError(
      `${printableName(path)} is empty (a crash or a full disk may have cut it short). ${restore}`,
    );
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new KeyStoreError(`${printableName(path)} is not valid JSON (${(err as Error).message}). ${restore}`);
  }
  const problem = checkKeyFile(data);
  if (problem) throw new KeyStoreError(`${printableName(path)} is damaged: ${problem}. ${restore}`);
  const file = data as KeyFile;
  // JSON.parse makes every name an own key, "__proto__" too; the table keeps them so.
  file.accounts = nameTable(Object.entries(file.accounts));
  // Every key's account is one of these (checkKeyFile).
  const reserved = Object.keys(file.accounts).find(isReservedName);
  if (reserved !== undefined) {
    throw new KeyStoreError(
      `${printableName(path)} is damaged: it holds an account named "${reserved}", a name no account may have (D89: the members every JavaScript object has, such as __proto__ and constructor, prototype, "." and ".."). ` +
        `Rename the account in keys.json (its entry under "accounts" and the "account" of each of its keys) to another of letters, digits, '.', '_' or '-', then try again; nothing was changed.`,
    );
  }
  return file;
}

/** What a server finds under its data directory: no key store yet, or one to serve (see checkKeyStore). */
export type KeyStoreState = "fresh" | "present";

/**
 * Whether a server may start on dataDir, read before it touches anything there. "fresh": no
 * store at all (no keys.json, no usage.json or journal of it, keys.gen never bumped): a first start, which
 * creates the first key. "present": keys.json is a whole store with at least one key, or an
 * account given the dashboard (where its holder makes keys).
 * Anything else throws a KeyStoreError saying what is wrong and what to do — an empty or
 * damaged keys.json, or a missing one where an earlier store leaves traces — since starting
 * anew there would silently turn every earlier key away.
 */
export function checkKeyStore(dataDir: string): KeyStoreState {
  const path = keysPath(dataDir);
  const generation = generationPath(dataDir);
  checkGeneration(generation);
  if (!existsSync(path)) {
    const nowhere = linkToNothing(path);
    // Not a new store: an operator's link to one, on a volume not mounted (a first key would be made below the mount).
    if (nowhere !== undefined)
      throw new KeyStoreError(
        `${leadsNowhere(path, nowhere)}, so its keys cannot be read. Mount what it leads to (or restore keys.json there) and start again; nothing was changed.`,
      );
    const traces = [
      readGeneration(generation) > 0 && generation,
      existsSync(usagePath(dataDir)) && usagePath(dataDir),
      // usage.json's journal (D20) alone holds a store's credits, which a new store would count for its accounts.
      !existsSync(usagePath(dataDir)) && journalFiles(usagePath(dataDir))[0],
    ].filter(Boolean);
    if (!traces.length) return "fresh";
    throw new KeyStoreError(
      `${printableName(path)} is missing, but ${traces.join(" and ")} show${traces.length > 1 ? "" : "s"} that a key store was kept here: ` +
        `starting without it would refuse every earlier key. Restore keys.json from a backup. To start a new store instead ` +
        `(every earlier key stays refused), create its first key: ${commandLine("keys create --name NAME --scope full")}`,
    );
  }
  const file = readKeyFile(path);
  // Accounts given the dashboard make their own keys there.
  if (!file.keys.length && !Object.values(file.accounts).some((a) => a.dashboard_token)) {
    throw new KeyStoreError(
      `${printableName(path)} holds no key, so every request would be refused. Create one: ${commandLine("keys create --name NAME --scope full")}`,
    );
  }
  return "present";
}

function checkKeyFile(data: unknown): string | undefined {
  const f = data as KeyFile;
  if (!f || typeof f !== "object" || f.format !== "tome-keys") return "it is not a Tome key store";
  if (f.version !== 1) return `its version ${String(f.version)} is not one this Tome reads`;
  if (!f.accounts || typeof f.accounts !== "object" || !Array.isArray(f.keys)) return "accounts or keys are missing";
  for (const [id, a] of Object.entries(f.accounts)) {
    if (!a || !isPlan(a.plan)) return `account ${printableName(id)} has no valid plan`;
    if (a.rate !== undefined && !(Number.isInteger(a.rate) && a.rate > 0))
      return `account ${printableName(id)} has an invalid rate`;
    if (a.dashboard_token !== undefined && !/^[0-9a-f]{64}$/.test(a.dashboard_token))
      return `account ${printableName(id)} has an invalid dashboard_token`;
  }
  const ids = new Set<string>();
  for (const k of f.keys) {
    if (
      !k ||
      typeof k.id !== "string" ||
      !/^[0-9a-f]{64}$/.test(k.hash) ||
      typeof k.account !== "string" ||
      !Object.hasOwn(f.accounts, k.account)
    ) {
      return `key ${printableName(String(k?.id))} is incomplete or names an unknown account`;
    }
    if (!Array.isArray(k.scopes) || !k.scopes.length || !k.scopes.every((s) => SCOPES.includes(s)))
      return `key ${printableName(k.id)} has no valid scopes`;
    // What the key tool and the dashboard print of every key; a revoke by id takes the first of two keys with it.
    if (ids.has(k.id)) return `two keys have the id ${printableName(k.id)}`;
    ids.add(k.id);
    if (typeof k.name !== "string") return `key ${printableName(k.id)} has no name`;
    if (!(typeof k.created_at === "string" && !Number.isNaN(Date.parse(k.created_at))))
      return `key ${printableName(k.id)} has an invalid created_at`;
    // An expiry that does not parse would never end.
    if (k.expires_at !== null && !(typeof k.expires_at === "string" && !Number.isNaN(Date.parse(k.expires_at))))
      return `key ${printableName(k.id)} has an invalid expires_at`;
    if (k.revoked_at !== null && typeof k.revoked_at !== "string")
      return `key ${printableName(k.id)} has an invalid revoked_at`;
    if (k.prefix !== undefined && !/^wk_[A-Za-z0-9]{4}$/.test(k.prefix))
      return `key ${printableName(k.id)} has an invalid prefix`;
  }
  return undefined;
}

function writeKeyFile(path: string, file: KeyFile): void {
  atomicWrite(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
}

/**
 * Runs `change` on the store under an exclusive lock, and writes the result: two key
 * commands at once never lose each other's change. Waits for the lock on this thread: for the
 * key tool; a running server waits with updateKeyFileAsync.
 */
export function updateKeyFile<T>(dataDir: string, change: (file: KeyFile) => T): T {
  const lock = lockPath(dataDir);
  return changeLocked(dataDir, takeLock(lock, keysLock(lock)), change);
}

/** updateKeyFile for a running server: while the lock is held, its other requests are answered. */
export async function updateKeyFileAsync<T>(dataDir: string, change: (file: KeyFile) => T): Promise<T> {
  const lock = lockPath(dataDir);
  return changeLocked(dataDir, await takeLockAsync(lock, keysLock(lock)), change);
}

function lockPath(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return `${keysPath(dataDir)}.lock`;
}

/** keys.json's lock: a key command waits its turn (a holder there after 10 s is refused), as does each change of a running server's dashboard. */
function keysLock(lock: string): LockPolicy {
  return {
    patience: 10_000,
    waitForThisProcess: true,
    held: (pid, elsewhere) =>
      new KeyStoreLocked(
        elsewhere
          ? `${printableName(lock)} is held by a key command or a server's dashboard ${lockHolderShown(pid, elsewhere)}. Try again soon; do not delete it: ${LOCK_FREES_ITSELF}.`
          : `${printableName(lock)} is held by another key command. If none is running, delete the lock file.`,
      ),
    unwritable: (err) => err,
  };
}

function changeLocked<T>(dataDir: string, release: () => void, change: (file: KeyFile) => T): T {
  const path = keysPath(dataDir);
  try {
    // A writer killed between writing its temporary file and renaming it left that file (under this lock, only a gone
    // writer's can be there; clearDeadWrites leaves a live process's all the same).
    clearDeadWrites(path);
    clearDeadWrites(generationPath(dataDir));
    // Checked before anything is written: a change the servers cannot be told of is not made.
    checkGeneration(generationPath(dataDir));
    const file = readKeyFile(path);
    const result = change(file);
    writeKeyFile(path, file);
    bumpGeneration(generationPath(dataDir));
    return result;
  } finally {
    release();
  }
}
