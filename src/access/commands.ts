/**
 * The key tool's changes to a store (src/cli/keys.ts applies them under updateKeyFile, or in
 * Redis): create a key within its plan's count (D21), find one by id or text, revoke it, and
 * change an account's plan.
 */
import { KeyStoreError } from "./errors";
import { hashKey, KEY_BODY, KEY_PREFIX, KEY_SHAPE, newKey, randomAlphanumeric } from "./key-text";
import { checkAccountName, checkKeyName } from "./names";
import { printableName } from "../printable";
import type { PlanName } from "./plans";
import { keysHeld, type Account, type KeyFile, type KeyRecord, type Scope } from "./store";
import { commandLine } from "../invocation";

export interface CreateKeyOptions {
  name: string;
  account: string;
  /** Only for a new account (default free); an existing account keeps its plan. */
  plan?: PlanName;
  scope: Scope;
  expiresAt?: string;
  now: number;
  /** The new key's id (key_ and 12 letters or digits), when the caller derives it (the dashboard's form, D157); else random. */
  id?: string;
}

/** Adds a key (D21: within the plan's number of keys). Returns the key, shown only now. */
export function createKey(file: KeyFile, o: CreateKeyOptions): { key: string; record: KeyRecord; account: Account } {
  checkAccountName(o.account);
  checkKeyName(o.name);
  const existing = file.accounts[o.account];
  if (existing && o.plan && o.plan !== existing.plan) {
    throw new KeyStoreError(
      `account ${o.account} is on the ${existing.plan} plan. Change it with: ${commandLine(`keys plan --account ${o.account} --plan ${o.plan}`)}`,
    );
  }
  const account = existing ?? { plan: o.plan ?? "free" };
  const { active: held, limit } = keysHeld(file.keys, o.account, account, o.now);
  if (held >= limit) {
    throw new KeyStoreError(
      // More than the plan's number after a move to a smaller plan, which keeps the keys held.
      `account ${o.account} already holds ${held} active keys, ${held > limit ? `more than the ${limit}` : "the most"} its ${account.plan} plan allows (D21). ` +
        `Revoke ${held > limit ? held - limit + 1 : "one"} (${commandLine("keys revoke ID")}) or move the account to a larger plan (${commandLine(`keys plan --account ${o.account} --plan PLAN`)}).`,
    );
  }
  file.accounts[o.account] = account;
  const key = newKey();
  const record: KeyRecord = {
    id: o.id ?? `key_${randomAlphanumeric(12)}`,
    hash: hashKey(key),
    prefix: key.slice(0, KEY_PREFIX.length + 4),
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
    if (!record)
      throw new KeyStoreError(
        `there is no key ${printableName(idOrKey)}. See the ids with: ${commandLine("keys list")}`,
      );
    return record;
  }
  if (!KEY_SHAPE.test(idOrKey))
    throw new KeyStoreError(
      `the key given is not a whole key (${KEY_PREFIX} and ${KEY_BODY} letters or digits). Give the key's text or its id (see ${commandLine("keys list")}).`,
    );
  const hash = hashKey(idOrKey);
  const record = file.keys.find((k) => k.hash === hash);
  if (!record)
    throw new KeyStoreError(
      `the key given is not in this store (TOME_DATA). See the ids with: ${commandLine("keys list")}`,
    );
  return record;
}

/**
 * Revokes a key named by its id or its text (findKey). One already revoked is refused, nothing
 * changed: whoever revokes means to stop a key that works, and may have named the wrong one.
 */
export function revokeKey(file: KeyFile, idOrKey: string, now: number): KeyRecord {
  const record = findKey(file, idOrKey);
  if (record.revoked_at) {
    throw new KeyStoreError(
      `${printableName(record.id)} ("${printableName(record.name)}", account ${printableName(record.account)}) was already revoked at ${record.revoked_at}; nothing was changed. ` +
        `To stop a key that still works, find its id with: ${commandLine("keys list")}`,
    );
  }
  record.revoked_at = new Date(now).toISOString();
  return record;
}

export function setPlan(file: KeyFile, account: string, plan: PlanName, rate?: number): Account {
  checkAccountName(account);
  const a = file.accounts[account];
  if (!a)
    throw new KeyStoreError(
      `there is no account ${account}. Accounts are made with their first key: ${commandLine(`keys create --account ${account} --name NAME`)}`,
    );
  if (rate !== undefined && plan !== "enterprise")
    throw new KeyStoreError(
      "--rate is for the enterprise plan only; the other plans' rates are fixed (api.md section 8).",
    );
  a.plan = plan;
  if (plan === "enterprise") {
    if (rate !== undefined) a.rate = rate;
  } else delete a.rate;
  return a;
}
