/**
 * Signing in and out (D69, D70, D81). A sign-in token is hashed and looked up by the account it
 * names, one lookup, before anything else is read; the operator's is compared by its hash. A
 * session is a random cookie kept server-side by its hash, which ends after SESSION_MS, at
 * sign-out, when its account's token is replaced, or when the account makes too many others.
 */
import { accountOfToken, hashToken, KEY_SHAPE, SESSION_MS, type Session } from "../../access";
import { DASHBOARD_PATH, readCookie, setCookie } from "./cookies";
import { checkOrigin, FormExpired, readForm, sameText } from "./forms";
import { signInPage } from "./frame";
import { operatorSignedIn, signInFailed, signInRefusal, signInRetryMinutes } from "./limits";
import { redirect, respond } from "./respond";
import type { SignedIn, Visit } from "./visit";

const SIGNED_OUT = "signed-out";
const EXPIRED =
  "This sign-in form had expired (it is good for an hour), so nothing was sent: paste your token and sign in again.";
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** `bytes` random bytes in base64url: a session's cookie, a CSRF token (32), a create form's id (16, D157). */
export const randomToken = (bytes = 32) =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");

/** The session of the visit's cookie, if it is live and its token is still its account's (else it is dropped). */
export async function sessionOf(v: Visit): Promise<SignedIn | undefined> {
  const value = readCookie(v.request, "session", v.secure);
  if (!value || !COOKIE_VALUE.test(value)) return undefined;
  const hash = hashToken(value);
  const session = await v.store.session(hash, v.now);
  if (!session) return undefined;
  const account = session.account === "" ? undefined : await v.store.account(session.account);
  const token = session.account === "" ? v.site.adminHash : account?.dashboard_token;
  if (token === session.tokenHash) return { session, hash, account };
  await v.store.dropSession(hash, session.account);
  return undefined;
}

/** The sign-in form, with its CSRF cookie: the one the browser holds, so that a form another tab loaded before stays good, or a fresh one. */
export function showSignIn(v: Visit, status = 200, error?: string, headers: Record<string, string> = {}): Response {
  const held = readCookie(v.request, "signIn", v.secure);
  const csrf = held && COOKIE_VALUE.test(held) ? held : randomToken();
  const notice = !error && new URL(v.request.url).searchParams.has(SIGNED_OUT) ? "You are signed out." : undefined;
  return respond(v, status, signInPage({ csrf, error, notice }), [
    ["set-cookie", setCookie("signIn", csrf, v.secure)],
    ...Object.entries(headers),
  ]);
}

/** The session a token opens, if it is an account's token or the operator's: found by the token's hash. */
async function sessionFor(v: Visit, token: string, account: string | undefined): Promise<Session | undefined> {
  const tokenHash = hashToken(token);
  const made = (name: string) => ({ account: name, tokenHash, csrf: randomToken(), expires: v.now + SESSION_MS });
  if (account === undefined) return v.site.adminHash && sameText(tokenHash, v.site.adminHash) ? made("") : undefined;
  const found = await v.store.account(account);
  return found?.dashboard_token && sameText(tokenHash, found.dashboard_token) ? made(account) : undefined;
}

export async function signIn(v: Visit): Promise<Response> {
  let form: URLSearchParams;
  try {
    form = await readForm(v, readCookie(v.request, "signIn", v.secure));
  } catch (err) {
    // The form's cookie ends after an hour (D70): the sign-in form again, with a token of its own, not a page that sends
    // the person back to a form they must reload. Nothing is read of the token sent, nor counted as a failure.
    if (err instanceof FormExpired) return showSignIn(v, 403, EXPIRED);
    throw err;
  }
  const token = (form.get("token") ?? "").trim();
  const account = accountOfToken(token);
  // Only the operator signs in with a token that is not an account's.
  const operatorGuess = account === undefined && v.site.adminHash !== undefined;
  const refusal = await signInRefusal(v, operatorGuess);
  if (refusal) {
    const retry = signInRetryMinutes(v.now);
    const error = `${refusal} Try again in ${retry} minute${retry === 1 ? "" : "s"}.`;
    return showSignIn(v, 429, error, { "retry-after": String(retry * 60) });
  }
  const session = await sessionFor(v, token, account);
  if (!session) {
    await signInFailed(v, operatorGuess);
    const why = KEY_SHAPE.test(token)
      ? "That is an API key. API keys never sign in here: use the dashboard sign-in token (wd_…) your operator gave you."
      : "That sign-in token is not valid. Check it and try again, or ask your operator for a new one.";
    return showSignIn(v, 401, why);
  }
  const id = randomToken();
  await v.store.putSession(hashToken(id), session, v.now);
  if (session.account === "") await operatorSignedIn(v);
  return redirect(v, DASHBOARD_PATH, [setCookie("session", id, v.secure), setCookie("signIn", "", v.secure)]);
}

/** Ends the visit's session (its form's CSRF token checked), and says so on the sign-in page. */
export async function signOut(v: Visit): Promise<Response> {
  // Without a session cookie (SameSite keeps it from another site's form) there is no CSRF token to check, but the cookie would still be cleared.
  checkOrigin(v);
  const signedIn = await sessionOf(v);
  if (signedIn) {
    await readForm(v, signedIn.session.csrf);
    await v.store.dropSession(signedIn.hash, signedIn.session.account);
  }
  return redirect(v, `${DASHBOARD_PATH}/sign-in?${SIGNED_OUT}`, [setCookie("session", "", v.secure)]);
}
