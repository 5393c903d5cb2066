/**
 * Account holders' access to the dashboard (issue 46, D69): the sign-in token an operator
 * issues (`bun run keys account create|token`), kept only as its sha256 like a key; the
 * sessions made by signing in with it; and the failed sign-ins counted per client address and
 * for the operator's token (D83). An AccountStore keeps them: a single server's files and memory
 * (file-accounts.ts), or Redis for replicas (redis/accounts.ts), where any replica serves any
 * session and all count the same failures.
 */
import { KeyStoreError } from "./errors";
import { hashKey, randomAlphanumeric } from "./key-text";
import { checkAccountName } from "./names";
import type { PlanName } from "./plans";
import type { Account, KeyFile, KeyRecord } from "./store";
import type { UsageData } from "./usage";
import type { WorkShare } from "./work";
import type { SignInCounts } from "./sign-in-limits";
import { commandLine } from "../invocation";

/**
 * A sign-in token: `wd_`, 32 letters or digits (190 bits), a dot and the account's name. The
 * name finds the account in one lookup, whose token's hash is then compared (D81); the prefix
 * tells it from an API key (wk_), which is never taken as one.
 */
const DASHBOARD_TOKEN_SHAPE = /^wd_[A-Za-z0-9]{32}\.([A-Za-z0-9._-]{1,64})$/;

/** How long a dashboard session lasts from its sign-in (then the holder signs in again). */
export const SESSION_MS = 8 * 3600_000;
/** Sessions an account (or the operator) may hold at once: a new one ends its oldest (D82). */
export const SESSIONS_PER_ACCOUNT = 10;
/** Sessions one server keeps in memory at once (without Redis): a new one past it ends the oldest. */
export const MAX_SESSIONS = 10_000;

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

/** A page of accounts in name order (the operator's), and whether more follow it. */
interface AccountsPage {
  accounts: [name: string, account: Account][];
  more: boolean;
}

/**
 * Where the dashboard keeps accounts, keys, usage, sessions and failed sign-ins (D81): each read
 * is of one account, or of one page of accounts, never of the whole key store.
 */
export interface AccountStore extends SignInCounts {
  /** The account of this name (its plan, its sign-in token's hash): one lookup. */
  account(name: string): Promise<Account | undefined>;
  /** The keys of one account, whatever their state. */
  keysOf(account: string): Promise<readonly KeyRecord[]>;
  /** At most `limit` accounts in code-unit order of their names, after `after` ("" for the first). */
  accountsAfter(after: string, limit: number): Promise<AccountsPage>;
  /**
   * A change to one account and its keys, under the store's guard (as the key tool makes it):
   * `file` holds that account, if it exists, and all of its keys (it may hold others). Running
   * servers see it on their next request.
   */
  update<T>(account: string, change: (file: KeyFile) => T): Promise<T>;
  /** One account's usage in a month: its credits, and the keys named's requests and credits by day and last uses. */
  usage(month: string, account: string, keyIds: readonly string[]): Promise<UsageData>;
  /** Credits each account named has spent in the month, in order. */
  spent(month: string, accounts: readonly string[]): Promise<number[]>;
  /** Keeps a session made at `now` (at most SESSIONS_PER_ACCOUNT per account: a new one ends the oldest). */
  putSession(hash: string, session: Session, now: number): Promise<void>;
  /** The session kept under this hash, if it has not ended. */
  session(hash: string, now: number): Promise<Session | undefined>;
  dropSession(hash: string, account: string): Promise<void>;
  /** The server's thread shared out (D25): the dashboard's requests are charged to it too (D82). */
  readonly work: WorkShare;
}
