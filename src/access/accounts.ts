/**
 * Account holders' access to the dashboard (issue 46, D69): the sign-in token an operator
 * issues (`bun run keys account create|token`), kept only as its sha256 like a key; the
 * sessions made by signing in with it; and the failed sign-ins counted per client address and
 * per account. An AccountStore keeps them: a single server's files and memory
 * (FileAccountStore), or Redis for replicas (redis/accounts.ts), where any replica serves any
 * session and all count the same failures.
 */
import { KeyStoreError } from "./errors";
import { hashKey, randomAlphanumeric } from "./key-text";
import { checkAccountName } from "./names";
import type { PlanName } from "./plans";
import { keysPath, readKeyFile, updateKeyFile, type Account, type KeyFile } from "./store";
import type { UsageData } from "./usage";
import { commandLine } from "../invocation";

/**
 * A sign-in token: `wd_`, 32 letters or digits (190 bits), a dot and the account's name. The
 * name lets failed sign-ins be counted per account; the prefix tells it from an API key (wk_),
 * which is never taken as one.
 */
const DASHBOARD_TOKEN_SHAPE = /^wd_[A-Za-z0-9]{32}\.([A-Za-z0-9._-]{1,64})$/;

/** How long a dashboard session lasts from its sign-in (then the holder signs in again). */
export const SESSION_MS = 8 * 3600_000;
/** Failed sign-ins are counted in windows this long. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** Failed sign-ins a client address may make in a window; then every sign-in from it is refused until the next. */
export const ADDRESS_FAILURES = 20;
/** Failed sign-ins naming one account in a window (from any address): a guess at one account's token. */
export const ACCOUNT_FAILURES = 10;

/** The account a token names, or undefined for anything that is not a sign-in token. */
export function accountOfToken(token: string): string | undefined {
  return DASHBOARD_TOKEN_SHAPE.exec(token)?.[1];
}

export const hashToken = hashKey;

/**
 * `keys account create`: makes the account if it is new (on `plan`, default free) and issues
 * its first sign-in token, shown only now. An account that has one already is refused (its
 * holder may be using it): `keys account token` replaces it.
 */
export function createAccountAccess(
  file: KeyFile,
  name: string,
  plan: PlanName | undefined,
): { token: string; account: Account; created: boolean } {
  checkAccountName(name);
  const existing = file.accounts[name];
  if (existing && plan && plan !== existing.plan) {
    throw new KeyStoreError(
      `account ${name} is on the ${existing.plan} plan. Change it with: ${commandLine(`keys plan --account ${name} --plan ${plan}`)}`,
    );
  }
  if (existing?.dashboard_token) {
    throw new KeyStoreError(
      `account ${name} has a dashboard sign-in token already; nothing was changed. To replace it (the old one stops working): ${commandLine(`keys account token --account ${name}`)}`,
    );
  }
  const account = existing ?? { plan: plan ?? "free" };
  file.accounts[name] = account;
  return { token: issue(account, name), account, created: !existing };
}

/** `keys account token`: a new sign-in token for an account; the old one, and every session made with it, stop working. */
export function replaceAccountToken(file: KeyFile, name: string): { token: string; account: Account } {
  checkAccountName(name);
  const account = file.accounts[name];
  if (!account)
    throw new KeyStoreError(
      `there is no account ${name}. Give it dashboard access with: ${commandLine(`keys account create --account ${name} --plan PLAN`)}`,
    );
  return { token: issue(account, name), account };
}

function issue(account: Account, name: string): string {
  const token = `wd_${randomAlphanumeric(32)}.${name}`;
  account.dashboard_token = hashToken(token);
  return token;
}

/** A signed-in dashboard: who, with what, its form token, and until when. */
export interface Session {
  /** The account signed in; "" for the operator (TOME_ADMIN_TOKEN). */
  account: string;
  /** sha256 of the token signed in with: once the account's token is replaced, the session is over. */
  tokenHash: string;
  /** The CSRF token every form of this session carries. */
  csrf: string;
  /** When it ends (ms since the epoch). */
  expires: number;
}

/** Where the dashboard keeps accounts, keys, usage, sessions and failed sign-ins. */
export interface AccountStore {
  /** The key store as it is now. */
  read(): Promise<KeyFile>;
  /** A change to the key store, under its guard (as the key tool makes it): running servers see it on their next request. */
  update<T>(change: (file: KeyFile) => T): Promise<T>;
  /** The month's usage: credits per account, each key's requests and credits by day (key_days), last uses. */
  usage(month: string): Promise<UsageData>;
  putSession(hash: string, session: Session): Promise<void>;
  /** The session kept under this hash, if it has not ended. */
  session(hash: string, now: number): Promise<Session | undefined>;
  dropSession(hash: string): Promise<void>;
  /** Failed sign-ins counted under `name` in now's window, after adding one if `fail`. */
  failures(name: string, fail: boolean, now: number): Promise<number>;
}

/** Sessions and failed sign-ins kept in memory: what one server without Redis needs (a restart signs everyone out). */
class MemorySessions {
  private readonly sessions = new Map<string, Session>();
  private readonly failed = new Map<string, { window: number; count: number }>();

  put(hash: string, session: Session): void {
    const now = Date.now();
    for (const [h, s] of this.sessions) if (s.expires <= now) this.sessions.delete(h);
    this.sessions.set(hash, session);
  }

  get(hash: string, now: number): Session | undefined {
    const s = this.sessions.get(hash);
    return s && s.expires > now ? s : undefined;
  }

  drop(hash: string): void {
    this.sessions.delete(hash);
  }

  failures(name: string, fail: boolean, now: number): number {
    const window = Math.floor(now / SIGN_IN_WINDOW_MS);
    let f = this.failed.get(name);
    if (!f || f.window !== window) {
      if (this.failed.size > 10_000)
        for (const [n, old] of this.failed) if (old.window !== window) this.failed.delete(n);
      f = { window, count: 0 };
      if (fail) this.failed.set(name, f);
    }
    if (fail) f.count++;
    return f.count;
  }
}

/** The file store's (keys.json, under its lock) with the running server's own usage counts. */
export function fileAccountStore(dataDir: string, usage: (month: string) => UsageData): AccountStore {
  const memory = new MemorySessions();
  return {
    read: async () => readKeyFile(keysPath(dataDir)),
    update: async (change) => updateKeyFile(dataDir, change),
    usage: async (month) => usage(month),
    putSession: async (hash, session) => memory.put(hash, session),
    session: async (hash, now) => memory.get(hash, now),
    dropSession: async (hash) => memory.drop(hash),
    failures: async (name, fail, now) => memory.failures(name, fail, now),
  };
}
