/**
 * /dashboard (issue 46, D69–D71): account holders list, create and revoke their own keys and
 * see their usage; the operator (TOME_ADMIN_TOKEN) sees every account, changes plans and issues
 * sign-in tokens. A step of the pipeline that answers every /dashboard path itself, before the
 * API's methods and keys steps: it is HTML and forms, never under /v1, never in the OpenAPI
 * document, and never takes an API key, only its own session cookie.
 *
 * Security (D70): the session is a random cookie (HttpOnly, SameSite=Strict, Path=/dashboard,
 * Secure behind HTTPS) kept server-side by its hash, ending after SESSION_MS, at sign-out, or
 * when the account's token is replaced; every form carries a CSRF token (the session's, or a
 * sign-in cookie's before there is one) and a cross-origin Origin is refused; failed sign-ins
 * are limited per client address and per account; every answer has a Content-Security-Policy
 * allowing nothing but this origin's stylesheet and script, and is never cached.
 */
// Imported as text, so that the executable (bun run compile) carries them.
import dashboardCss from "./dashboard.css" with { type: "text" };
import dashboardJs from "./dashboard.js" with { type: "text" };
import iconSvg from "./icon.svg" with { type: "text" };
import { timingSafeEqual } from "node:crypto";
import {
  ACCOUNT_FAILURES,
  accountNameProblem,
  accountOfToken,
  ADDRESS_FAILURES,
  createAccountAccess,
  createKey,
  hashToken,
  isPlan,
  KEY_SHAPE,
  KeyStoreError,
  limitsOf,
  monthOf,
  PLAN_NAMES,
  replaceAccountToken,
  revokeKey,
  SESSION_MS,
  setPlan,
  SIGN_IN_WINDOW_MS,
  stateOf,
  type AccountStore,
  type KeyFile,
  type Session,
} from "../../access";
import type { Step } from "../pipeline";
import { accountPage, adminPage, ASSETS, messagePage, revokePage, signInPage, type AccountView } from "./pages";
import { accountSummaries, accountViewOf, monthAt, type Month } from "./views";
import { clientAddress, normalAddress } from "../client-address";

const DASHBOARD_PATH = "/dashboard";

export function isDashboard(path: string): boolean {
  return path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);
}

export interface DashboardOptions {
  accounts: AccountStore;
  /** TOME_ADMIN_TOKEN: signs in to the operator's view. */
  adminToken?: string;
  /** TOME_PUBLIC_URL: an https one makes every cookie Secure. */
  publicUrl?: string;
  /** TOME_TRUSTED_PROXIES: whose X-Forwarded-For tells the client's address (client-address.ts, D80). */
  trustedProxies?: string[];
  now?: () => number;
}

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** A form's body is a few fields; anything longer is not one of ours. */
const MAX_FORM_BYTES = 8192;
const SIGN_IN_COOKIE_SECONDS = 3600;

const STATIC: Record<string, { body: string; type: string }> = {
  [ASSETS.css]: { body: dashboardCss, type: "text/css; charset=utf-8" },
  [ASSETS.js]: { body: dashboardJs, type: "text/javascript; charset=utf-8" },
  [ASSETS.icon]: { body: iconSvg, type: "image/svg+xml" },
};

const randomToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookies(request: Request): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0) out.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return out;
}

class Refused extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function dashboard(o: DashboardOptions): Step {
  const store = o.accounts;
  const now = o.now ?? Date.now;
  const trusted = new Set((o.trustedProxies ?? []).map(normalAddress));
  const publicHttps = o.publicUrl?.startsWith("https://") ?? false;
  const adminHash = o.adminToken ? hashToken(o.adminToken) : undefined;
  const publicOrigin = o.publicUrl ? new URL(o.publicUrl).origin : undefined;

  /** Whether a form's Origin is this server: the host it was asked for, or TOME_PUBLIC_URL's (a proxy may pass another Host). */
  const sameOrigin = (origin: string, request: Request): boolean => {
    if (origin === publicOrigin) return true;
    const host = request.headers.get("host");
    return URL.canParse(origin) && host !== null && new URL(origin).host === host;
  };

  /**
   * D70's rule: cookies are Secure when TOME_PUBLIC_URL is https, or the request came over
   * https, or a proxy says it did (X-Forwarded-Proto: https). Trusting that header can only
   * make a cookie stricter: a browser on plain http then drops it, and signing in fails safe.
   */
  const secureOf = (request: Request) =>
    publicHttps ||
    request.url.startsWith("https:") ||
    request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https";
  const names = (secure: boolean) =>
    secure
      ? { session: "__Secure-tome_session", signIn: "__Secure-tome_sign_in" }
      : { session: "tome_session", signIn: "tome_sign_in" };
  const cookie = (name: string, value: string, maxAge: number, secure: boolean) =>
    `${name}=${value}; Path=${DASHBOARD_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;

  const respond = (
    request: Request,
    status: number,
    body: string | null,
    extra: Record<string, string> | [string, string][] = {},
  ): Response => {
    const headers = new Headers(extra);
    headers.set("content-type", "text/html; charset=utf-8");
    headers.set("content-security-policy", CSP);
    headers.set("cache-control", "no-store");
    headers.set("x-content-type-options", "nosniff");
    headers.set("x-frame-options", "DENY");
    // same-origin, not no-referrer: with no-referrer Chromium sends its forms with `Origin: null`, which the origin check refuses.
    headers.set("referrer-policy", "same-origin");
    headers.set("cross-origin-opener-policy", "same-origin");
    headers.set("cross-origin-resource-policy", "same-origin");
    if (secureOf(request)) headers.set("strict-transport-security", "max-age=31536000");
    return new Response(request.method === "HEAD" ? null : body, { status, headers });
  };
  const redirect = (request: Request, to: string, setCookies: string[] = []) =>
    respond(request, 303, null, [["location", to], ...setCookies.map((c): [string, string] => ["set-cookie", c])]);

  /** The session of this request's cookie, if it is live and its token is still the account's. */
  const sessionOf = async (
    request: Request,
  ): Promise<{ session: Session; hash: string; file: KeyFile } | undefined> => {
    const value = cookies(request).get(names(secureOf(request)).session);
    if (!value || !/^[A-Za-z0-9_-]{43}$/.test(value)) return undefined;
    const hash = hashToken(value);
    const session = await store.session(hash, now());
    if (!session) return undefined;
    const file = await store.read();
    const live =
      session.account === ""
        ? session.tokenHash === adminHash
        : file.accounts[session.account]?.dashboard_token === session.tokenHash;
    if (!live) {
      await store.dropSession(hash);
      return undefined;
    }
    return { session, hash, file };
  };

  /** The fields of a form POST, after its CSRF token is checked against `expected`. */
  const formOf = async (request: Request, expected: string | undefined): Promise<URLSearchParams> => {
    const origin = request.headers.get("origin");
    if (origin !== null && !sameOrigin(origin, request))
      throw new Refused(403, "Refused", "This form was sent from another site, so it was not acted on.");
    const type = request.headers.get("content-type") ?? "";
    if (!type.startsWith("application/x-www-form-urlencoded"))
      throw new Refused(
        415,
        "Not a form",
        "The dashboard takes its own forms only (application/x-www-form-urlencoded).",
      );
    const length = Number(request.headers.get("content-length") ?? "0");
    if (length > MAX_FORM_BYTES) throw new Refused(413, "Too long", "That form is longer than any of the dashboard's.");
    const text = await request.text();
    if (text.length > MAX_FORM_BYTES)
      throw new Refused(413, "Too long", "That form is longer than any of the dashboard's.");
    const form = new URLSearchParams(text);
    const csrf = form.get("csrf") ?? "";
    if (!expected || !csrf || !sameText(csrf, expected)) {
      throw new Refused(
        403,
        "Form expired",
        "This form could not be checked (its security token is missing or old), so nothing was done. Go back, reload the page and try again.",
      );
    }
    return form;
  };

  const signInForm = (request: Request, status = 200, error?: string, headers: Record<string, string> = {}) => {
    const secure = secureOf(request);
    const csrf = randomToken();
    return respond(request, status, signInPage({ csrf, error }), [
      ["set-cookie", cookie(names(secure).signIn, csrf, SIGN_IN_COOKIE_SECONDS, secure)],
      ...Object.entries(headers),
    ]);
  };

  const signIn = async (request: Request, address: string): Promise<Response> => {
    const secure = secureOf(request);
    const form = await formOf(request, cookies(request).get(names(secure).signIn));
    const token = (form.get("token") ?? "").trim();
    const t = now();
    const account = accountOfToken(token);
    const tooMany = (who: string) => {
      const retry = Math.ceil((SIGN_IN_WINDOW_MS - (t % SIGN_IN_WINDOW_MS)) / 60_000);
      return signInForm(
        request,
        429,
        `Too many failed sign-ins ${who}. Try again in ${retry} minute${retry === 1 ? "" : "s"}.`,
        { "retry-after": String(retry * 60) },
      );
    };
    if ((await store.failures(`address:${address}`, false, t)) >= ADDRESS_FAILURES) return tooMany("from your address");
    if (account && (await store.failures(`account:${account}`, false, t)) >= ACCOUNT_FAILURES)
      return tooMany("for this account");
    let session: Session | undefined;
    if (adminHash && o.adminToken && sameText(token, o.adminToken))
      session = { account: "", tokenHash: adminHash, csrf: randomToken(), expires: t + SESSION_MS };
    else if (account) {
      const file = await store.read();
      const hash = hashToken(token);
      if (file.accounts[account]?.dashboard_token === hash)
        session = { account, tokenHash: hash, csrf: randomToken(), expires: t + SESSION_MS };
    }
    if (!session) {
      await store.failures(`address:${address}`, true, t);
      if (account) await store.failures(`account:${account}`, true, t);
      const why = KEY_SHAPE.test(token)
        ? "That is an API key. API keys never sign in here: use the dashboard sign-in token (wd_…) your operator gave you."
        : "That sign-in token is not valid. Check it and try again, or ask your operator for a new one.";
      return signInForm(request, 401, why);
    }
    const id = randomToken();
    await store.putSession(hashToken(id), session);
    return redirect(request, DASHBOARD_PATH, [
      cookie(names(secure).session, id, Math.floor(SESSION_MS / 1000), secure),
      cookie(names(secure).signIn, "", 0, secure),
    ]);
  };

  /** This month's usage, as the store has it now. */
  const thisMonth = async (): Promise<Month> => {
    const t = now();
    return monthAt(await store.usage(monthOf(t)), t);
  };
  const accountView = async (
    file: KeyFile,
    session: Session,
    extra: Partial<AccountView> = {},
  ): Promise<AccountView> => ({
    ...accountViewOf(file, session.account, await thisMonth()),
    csrf: session.csrf,
    ...extra,
  });
  const adminView = async (
    file: KeyFile,
    session: Session,
    extra: { notice?: string; error?: string; issued?: { account: string; token: string } } = {},
  ) => {
    const m = await thisMonth();
    return adminPage({
      csrf: session.csrf,
      accounts: accountSummaries(file, m),
      plans: PLAN_NAMES,
      monthName: m.monthName,
      ...extra,
    });
  };

  /** Create a key: name, scope, optional expiry, within the plan's count (D21). */
  const createOwnKey = async (
    request: Request,
    file: KeyFile,
    session: Session,
    form: URLSearchParams,
  ): Promise<Response> => {
    const name = (form.get("name") ?? "").trim();
    const scope = form.get("scope") ?? "read";
    const expires = (form.get("expires") ?? "").trim();
    const kept = { name, scope, expires };
    const refuse = async (error: string, status = 400) =>
      respond(request, status, accountPage(await accountView(file, session, { error, form: kept })));
    if (!name || name.length > 100) return refuse("Give the key a name of 1 to 100 characters.");
    if (scope !== "read" && scope !== "full") return refuse("Choose the key's scope: read or full.");
    let expiresAt: string | undefined;
    if (expires) {
      const ms = /^\d{4}-\d{2}-\d{2}$/.test(expires) ? Date.parse(`${expires}T00:00:00Z`) : NaN;
      if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== expires)
        return refuse("The expiry must be a date (YYYY-MM-DD), or empty.");
      if (ms <= now())
        return refuse("The expiry must be a day after today: the key stops working at 00:00 UTC that day.");
      expiresAt = new Date(ms).toISOString();
    }
    try {
      const made = await store.update((f) => {
        const a = f.accounts[session.account]!;
        const limit = limitsOf(a.plan, a.rate).keys;
        const active = f.keys.filter((k) => k.account === session.account && stateOf(k, now()) === "active").length;
        if (active >= limit) {
          throw new KeyStoreError(
            `Your ${a.plan} plan allows ${limit} active keys, and you have ${active}: no key was created. Revoke a key to create another, or ask your operator for a larger plan.`,
          );
        }
        return createKey(f, { name, account: session.account, scope, expiresAt, now: now() });
      });
      const fresh = await store.read();
      return respond(
        request,
        201,
        accountPage(await accountView(fresh, session, { created: { key: made.key, name: made.record.name } })),
      );
    } catch (err) {
      if (err instanceof KeyStoreError) return refuse(err.message, 409);
      throw err;
    }
  };

  const revokeOwnKey = async (request: Request, file: KeyFile, session: Session, id: string): Promise<Response> => {
    const own = file.keys.find((k) => k.id === id && k.account === session.account);
    if (!own) throw new Refused(404, "No such key", "There is no such key in your account.");
    if (own.revoked_at) return redirect(request, `${DASHBOARD_PATH}?revoked=${encodeURIComponent(id)}`);
    await store.update((f) => revokeKey(f, id, now()));
    return redirect(request, `${DASHBOARD_PATH}?revoked=${encodeURIComponent(id)}`);
  };

  const operatorAction = async (
    request: Request,
    path: string,
    file: KeyFile,
    session: Session,
    form: URLSearchParams,
  ): Promise<Response> => {
    if (path === `${DASHBOARD_PATH}/accounts`) {
      const name = (form.get("account") ?? "").trim();
      const plan = form.get("plan") ?? "free";
      const wrong = accountNameProblem(name);
      if (wrong) return respond(request, 400, await adminView(file, session, { error: `An account's name ${wrong}.` }));
      if (!isPlan(plan))
        return respond(
          request,
          400,
          await adminView(file, session, { error: `The plan must be one of ${PLAN_NAMES.join(", ")}.` }),
        );
      const issued = await store.update((f) =>
        f.accounts[name] ? replaceAccountToken(f, name) : createAccountAccess(f, name, plan),
      );
      return respond(
        request,
        201,
        await adminView(await store.read(), session, { issued: { account: name, token: issued.token } }),
      );
    }
    const m = /^\/dashboard\/accounts\/([A-Za-z0-9._-]{1,64})\/plan$/.exec(path);
    if (!m) throw new Refused(404, "Not found", "There is no such page in the dashboard.");
    const plan = form.get("plan") ?? "";
    if (!isPlan(plan))
      return respond(
        request,
        400,
        await adminView(file, session, { error: `The plan must be one of ${PLAN_NAMES.join(", ")}.` }),
      );
    try {
      await store.update((f) => setPlan(f, m[1]!, plan));
    } catch (err) {
      if (err instanceof KeyStoreError)
        return respond(request, 404, await adminView(file, session, { error: err.message }));
      throw err;
    }
    return respond(
      request,
      200,
      await adminView(await store.read(), session, { notice: `Account ${m[1]} is now on the ${plan} plan.` }),
    );
  };

  const handle = async (request: Request, path: string, address: string): Promise<Response> => {
    const method = request.method;
    const asset = STATIC[path];
    if (asset) {
      if (method !== "GET" && method !== "HEAD")
        throw new Refused(405, "Not allowed", "Use GET.", { allow: "GET, HEAD" });
      const r = respond(request, 200, asset.body);
      r.headers.set("content-type", asset.type);
      r.headers.set("cache-control", "public, max-age=300");
      return r;
    }
    const read = method === "GET" || method === "HEAD";
    if (!read && method !== "POST")
      throw new Refused(405, "Not allowed", "The dashboard takes GET and its forms' POST only.", {
        allow: "GET, HEAD, POST",
      });
    if (path === `${DASHBOARD_PATH}/sign-in`) return read ? signInForm(request) : signIn(request, address);
    const signedIn = await sessionOf(request);
    if (path === `${DASHBOARD_PATH}/sign-out` && !read) {
      const secure = secureOf(request);
      if (signedIn) {
        await formOf(request, signedIn.session.csrf);
        await store.dropSession(signedIn.hash);
      }
      return redirect(request, `${DASHBOARD_PATH}/sign-in`, [cookie(names(secure).session, "", 0, secure)]);
    }
    if (!signedIn) {
      if (read) return redirect(request, `${DASHBOARD_PATH}/sign-in`);
      throw new Refused(401, "Signed out", "Your session has ended, so nothing was done. Sign in again.");
    }
    const { session, file } = signedIn;
    if (session.account === "") {
      if (read && path === DASHBOARD_PATH) return respond(request, 200, await adminView(file, session));
      if (!read) return operatorAction(request, path, file, session, await formOf(request, session.csrf));
      throw new Refused(404, "Not found", "There is no such page in the dashboard.");
    }
    if (read && path === DASHBOARD_PATH) {
      const revoked = new URL(request.url).searchParams.get("revoked");
      const key = revoked ? file.keys.find((k) => k.id === revoked && k.account === session.account) : undefined;
      const notice = key
        ? `The key “${key.name}” is revoked: every request with it is refused from now on.`
        : undefined;
      return respond(request, 200, accountPage(await accountView(file, session, { notice })));
    }
    if (path === `${DASHBOARD_PATH}/keys` && !read)
      return createOwnKey(request, file, session, await formOf(request, session.csrf));
    const revoke = /^\/dashboard\/keys\/(key_[A-Za-z0-9]{1,64})\/revoke$/.exec(path);
    if (revoke) {
      const id = revoke[1]!;
      if (!read) {
        await formOf(request, session.csrf);
        return revokeOwnKey(request, file, session, id);
      }
      const view = await accountView(file, session);
      const key = view.keys.find((k) => k.id === id);
      if (!key) throw new Refused(404, "No such key", "There is no such key in your account.");
      return respond(request, 200, revokePage({ account: session.account, csrf: session.csrf, key }));
    }
    throw new Refused(404, "Not found", "There is no such page in the dashboard.");
  };

  return {
    before(x) {
      if (!isDashboard(x.path)) return undefined;
      const socket = x.server?.requestIP(x.request)?.address ?? "unknown";
      const address = clientAddress(socket, x.request.headers.get("x-forwarded-for"), trusted);
      return handle(x.request, x.path, address).catch((err) => {
        if (err instanceof Refused)
          return respond(
            x.request,
            err.status,
            messagePage({
              title: err.title,
              message: err.message,
              back: { href: DASHBOARD_PATH, label: "Back to the dashboard" },
            }),
            err.headers,
          );
        if (err instanceof KeyStoreError) {
          return respond(
            x.request,
            503,
            messagePage({
              title: "Try again shortly",
              message:
                "The dashboard cannot reach its store of keys right now; nothing was changed. Try again in a moment.",
            }),
            {
              "retry-after": "5",
            },
          );
        }
        throw err;
      });
    },
  };
}
