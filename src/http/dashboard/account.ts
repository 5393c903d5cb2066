/**
 * An account holder's actions: their page (keys, plan, usage), creating a key within the plan's
 * count (D21), and revoking one of their own keys. Each reads that account and its keys only
 * (D81); a change is made under the store's guard, as the key tool makes it.
 */
import {
  createKey,
  KEY_NAME_MAX,
  keyIdFrom,
  KeyStoreError,
  keyNameProblem,
  keysHeld,
  monthOf,
  revokeKey,
  stateOf,
  type KeyRecord,
} from "../../access";
import { codePoints } from "../../scripts";
import { integerIn } from "../params";
import { accountPage, revokePage, type AccountView } from "./account-page";
import { DASHBOARD_PATH } from "./cookies";
import { readForm } from "./forms";
import { html } from "./html";
import { redirect, Refused, respond } from "./respond";
import { randomToken } from "./sessions";
import { accountViewOf, keyRowsOf, monthAt } from "./views";
import type { SignedIn, Visit } from "./visit";

/** The visit's session: an account's (the route table sends only those here). */
const holder = (v: Visit): SignedIn => v.signedIn!;

/**
 * The account's page as the store has it now, its keys from the offset'th (D82), with what the request adds (a new
 * key, a message, a refused form); `revoked`, a key the query says is revoked, is said to be if it is.
 */
async function viewOf(
  v: Visit,
  extra: Partial<AccountView> = {},
  list: { offset?: number; revoked?: string | null } = {},
): Promise<AccountView> {
  const { session, account } = holder(v);
  const name = session.account;
  const keys = await v.store.keysOf(name);
  const t = v.site.usageTime(v.now);
  const month = monthOf(t);
  const usage = await v.store.usage(
    month,
    name,
    keys.map((k) => k.id),
  );
  // The query is anyone's link: a key it names that is not revoked is not said to be.
  const revoked = list.revoked ? keys.find((k) => k.id === list.revoked && stateOf(k, v.now) === "revoked") : undefined;
  return {
    ...accountViewOf(name, account!, keys, monthAt(usage, t), list.offset),
    csrf: session.csrf,
    formId: randomToken(FORM_ID_BYTES),
    ...(revoked && {
      notice: html`The key “<bdi>${revoked.name}</bdi>” is revoked: every request with it is refused from now on.`,
    }),
    ...extra,
  };
}

/**
 * Keys an account may have made in the last 24 hours for the dashboard to make one more (D82), revoked ones and the
 * key tool's included: the plan's number of keys, at least KEYS_A_DAY and at most KEYS_A_DAY_MAX. Every key stays in the store, which each change reads and writes
 * whole (keys.json) and each account page lists: without it, creating and revoking in a loop grew them without end.
 */
export const KEYS_A_DAY = 10;
const KEYS_A_DAY_MAX = 100;
const DAY_MS = 86_400_000;

/** A create form's id: random bytes, base64url as randomToken writes them (16 bytes, 22 characters). */
const FORM_ID_BYTES = 16;
const FORM_ID = new RegExp(`^[A-Za-z0-9_-]{${Math.ceil((FORM_ID_BYTES * 4) / 3)}}$`);

/**
 * The id of the key a create form makes (D157): derived from the session's secret and the form's own random id,
 * so that the same form sent again (a reload, Back, a double click) names a key already made and makes no other.
 */
function keyIdOf(csrf: string, formId: string): string {
  return keyIdFrom(`${csrf}\n${formId}`);
}

/** The ?offset= of the account's page: digits only, as the API reads an offset (D3); absent, the first page. */
function offsetOf(query: URLSearchParams): number {
  const given = query.getAll("offset");
  if (!given.length) return 0;
  // One, as the API reads an offset (params.ts): given twice is refused there too.
  const offset = given.length === 1 ? integerIn(given[0]!) : undefined;
  if (offset === undefined) {
    throw new Refused(
      400,
      "No such page of keys",
      "The offset of a page of keys is the number of keys before it, in digits (offset=50), given once. The links under the list of keys give it.",
    );
  }
  return offset;
}

export async function showAccount(v: Visit): Promise<Response> {
  const query = new URL(v.request.url).searchParams;
  const view = await viewOf(v, {}, { offset: offsetOf(query), revoked: query.get("revoked") });
  return respond(v, 200, accountPage(view));
}

/** Create a key: name, scope, optional expiry, within the plan's count (D21). */
export async function createOwnKey(v: Visit): Promise<Response> {
  const { session } = holder(v);
  const form = await readForm(v, session.csrf);
  const name = (form.get("name") ?? "").trim();
  const scope = form.get("scope") ?? "read";
  const expires = (form.get("expires") ?? "").trim();
  const formId = form.get("form") ?? "";
  const id = FORM_ID.test(formId) ? keyIdOf(session.csrf, formId) : undefined;
  const refuse = async (error: string, status = 400) =>
    respond(v, status, accountPage(await viewOf(v, { error, form: { name, scope, expires } })));
  if (!name || codePoints(name) > KEY_NAME_MAX)
    return refuse(`Give the key a name of 1 to ${KEY_NAME_MAX} characters.`);
  const unshown = keyNameProblem(name);
  if (unshown) return refuse(`A key's name ${unshown}.`);
  if (scope !== "read" && scope !== "full") return refuse("Choose the key's scope: read or full.");
  let expiresAt: string | undefined;
  if (expires) {
    const ms = /^\d{4}-\d{2}-\d{2}$/.test(expires) ? Date.parse(`${expires}T00:00:00Z`) : Number.NaN;
    if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== expires)
      return refuse("The expiry must be a date (YYYY-MM-DD), or empty.");
    if (ms <= v.now)
      return refuse("The expiry must be a day after today: the key stops working at 00:00 UTC that day.");
    expiresAt = new Date(ms).toISOString();
  }
  const account = session.account;
  try {
    const made = await v.store.update(account, (f) => {
      const a = f.accounts[account];
      if (!a) throw new KeyStoreError(`There is no account ${account} any more: no key was created.`);
      const made = id === undefined ? undefined : f.keys.find((k) => k.id === id);
      if (made) {
        throw new KeyStoreError(
          `This form was sent before, and made the key “${made.name}” then: no other key was created, and a key's text is shown only once. If you did not copy it, revoke it and create another.`,
        );
      }
      const { active, limit } = keysHeld(f.keys, account, a, v.now);
      if (active >= limit) {
        throw new KeyStoreError(
          `Your ${a.plan} plan allows ${limit} active keys, and you have ${active}: no key was created. Revoke a key to create another, or ask your operator for a larger plan.`,
        );
      }
      // Every key made in the last 24 hours counts, the key tool's too: a key's record does not say what made it.
      const lately = f.keys
        .filter((k) => k.account === account && Date.parse(k.created_at) > v.now - DAY_MS)
        .map((k) => Date.parse(k.created_at))
        .sort((a, b) => a - b);
      const most = Math.min(KEYS_A_DAY_MAX, Math.max(KEYS_A_DAY, limit));
      if (lately.length >= most) {
        // The window rolls: one more may be made once all but most - 1 of them are 24 hours old.
        const from = new Date(Math.ceil((lately[lately.length - most]! + DAY_MS) / 60_000) * 60_000).toISOString();
        throw new KeyStoreError(
          `Your account has made ${lately.length} keys in the last 24 hours (those your operator made included), the most the dashboard allows in 24 hours: no key was created. You may create one from ${from.slice(0, 10)} ${from.slice(11, 16)} UTC, or ask your operator.`,
        );
      }
      return createKey(f, { name, account, scope, expiresAt, now: v.now, id });
    });
    return respond(v, 201, accountPage(await viewOf(v, { created: { key: made.key, name: made.record.name } })));
  } catch (err) {
    // A refusal of the change (or a store that cannot be reached: the page then cannot be read either, and says so).
    if (err instanceof KeyStoreError) return refuse(err.message, 409);
    throw err;
  }
}

/** One of the account's own keys, by the route's id; any other id is no such key. */
async function ownKey(v: Visit): Promise<KeyRecord> {
  const id = v.params.id!;
  const own = (await v.store.keysOf(holder(v).session.account)).find((k) => k.id === id);
  if (!own) throw new Refused(404, "No such key", "There is no such key in your account.");
  return own;
}

export async function confirmRevoke(v: Visit): Promise<Response> {
  const own = await ownKey(v);
  const t = v.site.usageTime(v.now);
  const usage = await v.store.usage(monthOf(t), own.account, [own.id]);
  const key = keyRowsOf([own], monthAt(usage, t))[0]!;
  return respond(v, 200, revokePage({ account: own.account, csrf: holder(v).session.csrf, key }));
}

export async function revokeOwnKey(v: Visit): Promise<Response> {
  const { session } = holder(v);
  await readForm(v, session.csrf);
  const own = await ownKey(v);
  if (!own.revoked_at) {
    await v.store.update(session.account, (f) => {
      const k = f.keys.find((k) => k.id === own.id && k.account === session.account);
      if (k && !k.revoked_at) revokeKey(f, own.id, v.now);
    });
  }
  return redirect(v, `${DASHBOARD_PATH}?revoked=${encodeURIComponent(own.id)}`);
}
