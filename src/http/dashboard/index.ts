/**
 * /dashboard (issue 46, D69–D72, D81–D83): account holders list, create and revoke their own
 * keys and see their usage; the operator (TOME_ADMIN_TOKEN) sees the accounts, changes plans and
 * issues sign-in tokens. A step of the pipeline that answers every /dashboard path itself,
 * before the API's methods and keys steps: it is HTML and forms, never under /v1, never in the
 * OpenAPI document, and never takes an API key, only its own session cookie.
 *
 * A request is counted against its client's limits (limits.ts), then routed by the table below
 * (method and path → who may ask → handler), its session looked up only for routes that need
 * one, and its time charged to the work share. One concern a file: cookies.ts, forms.ts (origin,
 * type, length, CSRF), sessions.ts (signing in and out), limits.ts, account.ts and operator.ts
 * (the actions), with the pages in frame.ts, account-page.ts and operator-page.ts.
 */
// Imported as text, so that the executable (bun run compile) carries them.
import dashboardCss from "./dashboard.css" with { type: "text" };
import dashboardJs from "./dashboard.js" with { type: "text" };
import iconSvg from "./icon.svg" with { type: "text" };
import { hashToken, KeyStoreError, KeyStoreUnwritable } from "../../access";
import { KEY_STORE_SOCKET_SECONDS } from "../../request-time";
import type { Step } from "../pipeline";
import { confirmRevoke, createOwnKey, revokeOwnKey, showAccount } from "./account";
import { DASHBOARD_PATH } from "./cookies";
import { ASSETS, messagePage } from "./frame";
import { charged, countRequest, countSessionRequest } from "./limits";
import { changePlan, issueToken, showAccounts } from "./operator";
import { notFound, redirect, Refused, refusedPage, respond } from "./respond";
import { sessionOf, showSignIn, signIn, signOut } from "./sessions";
import { siteOf, visitOf, type DashboardOptions, type Visit } from "./visit";

export function isDashboard(path: string): boolean {
  return path === DASHBOARD_PATH || path.startsWith(`${DASHBOARD_PATH}/`);
}

/** Who may take a route: anyone (no session is read), an account's holder, or the operator. */
type Who = "anyone" | "holder" | "operator";

interface Route {
  method: "GET" | "POST";
  /** The path, `:name(regex)` for a parameter. */
  pattern: RegExp;
  who: Who;
  handle: (v: Visit) => Response | Promise<Response>;
}

const route = (method: Route["method"], path: string, who: Who, handle: Route["handle"]): Route => ({
  method,
  pattern: new RegExp(`^${path.replace(/:(\w+)\(([^)]*)\)/g, "(?<$1>$2)")}$`),
  who,
  handle,
});

const asset = (body: string, type: string) => (v: Visit) => {
  const r = respond(v, 200, body);
  r.headers.set("content-type", type);
  r.headers.set("cache-control", "public, max-age=300");
  return r;
};

/** The dashboard's page: the account's, the operator's, or the sign-in form (303, as after a form). */
const toDashboard = (v: Visit) => redirect(v, DASHBOARD_PATH);

const KEY = ":id(key_[A-Za-z0-9]{1,64})";
const ACCOUNT = ":name([A-Za-z0-9._-]{1,64})";

const ROUTES: Route[] = [
  route("GET", ASSETS.css, "anyone", asset(dashboardCss, "text/css; charset=utf-8")),
  route("GET", ASSETS.js, "anyone", asset(dashboardJs, "text/javascript; charset=utf-8")),
  route("GET", ASSETS.icon, "anyone", asset(iconSvg, "image/svg+xml")),
  route("GET", "/dashboard/sign-in", "anyone", (v) => showSignIn(v)),
  route("POST", "/dashboard/sign-in", "anyone", signIn),
  route("POST", "/dashboard/sign-out", "anyone", signOut),
  route("GET", "/dashboard", "holder", showAccount),
  route("POST", "/dashboard/keys", "holder", createOwnKey),
  route("GET", `/dashboard/keys/${KEY}/revoke`, "holder", confirmRevoke),
  route("POST", `/dashboard/keys/${KEY}/revoke`, "holder", revokeOwnKey),
  route("GET", "/dashboard", "operator", showAccounts),
  route("POST", "/dashboard/accounts", "operator", issueToken),
  route("POST", `/dashboard/accounts/${ACCOUNT}/plan`, "operator", changePlan),
  // The addresses a form's answer leaves in the address bar (a new key or token shown, 201; a refusal, 4xx): opened
  // again (Enter there, a new tab, a bookmark), the dashboard, where they said "This page takes POST only" (405).
  route("GET", "/dashboard/keys", "anyone", toDashboard),
  route("GET", "/dashboard/accounts", "anyone", toDashboard),
  route("GET", `/dashboard/accounts/${ACCOUNT}/plan`, "anyone", toDashboard),
];

/** The path without the slashes it ends with (a loop: /\/+$/ takes time quadratic in a run of slashes not at the end). */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === "/") end--;
  return path.slice(0, end);
}

/**
 * A page's address with a slash at its end (/dashboard/, as a person types it or a link gives it) is sent
 * to the page's own, when it takes the method: 308, which keeps the method and body, and the query.
 */
function withoutSlash(v: Visit, method: string): Response | undefined {
  const bare = withoutTrailingSlashes(v.path);
  if (bare === v.path || !ROUTES.some((r) => r.method === method && r.pattern.test(bare))) return undefined;
  const url = v.request.url;
  const query = url.indexOf("?");
  return respond(v, 308, null, { location: query < 0 ? bare : bare + url.slice(query) });
}

/**
 * The session of a visit refused before its route was known (no such page, another method), so that the refusal's page
 * offers Sign out to someone signed in, as every page does: it had none. A store out of reach leaves it out.
 */
async function refusingTo(v: Visit): Promise<void> {
  v.signedIn = await sessionOf(v).catch((err) => {
    if (err instanceof KeyStoreError || err instanceof KeyStoreUnwritable) return undefined;
    throw err;
  });
}

/** The visit's route (its parameters set on the visit, its session looked up if it needs one), or the refusal. */
async function routeOf(v: Visit): Promise<Route | Response> {
  const method = v.request.method === "HEAD" ? "GET" : v.request.method;
  const matched = ROUTES.flatMap((r) => {
    const m = r.pattern.exec(v.path);
    return m ? [{ r, params: { ...m.groups } }] : [];
  });
  if (!matched.length) {
    const moved = withoutSlash(v, method);
    if (moved) return moved;
    await refusingTo(v);
    throw notFound();
  }
  const forMethod = matched.filter(({ r }) => r.method === method);
  if (!forMethod.length) {
    await refusingTo(v);
    const allow = [...new Set(matched.map(({ r }) => (r.method === "GET" ? "GET, HEAD" : r.method)))].join(", ");
    throw new Refused(405, "Not allowed", `This page takes ${allow} only.`, { allow });
  }
  v.params = forMethod[0]!.params;
  if (forMethod.some(({ r }) => r.who === "anyone")) return forMethod[0]!.r;
  v.signedIn = await sessionOf(v);
  if (!v.signedIn) {
    if (method === "GET") return redirect(v, `${DASHBOARD_PATH}/sign-in`);
    throw new Refused(401, "Signed out", "Your session has ended, so nothing was done. Sign in again.");
  }
  const who: Who = v.signedIn.session.account === "" ? "operator" : "holder";
  const taken = forMethod.find(({ r }) => r.who === who);
  if (!taken) throw notFound();
  return taken.r;
}

async function answer(v: Visit): Promise<Response> {
  countRequest(v);
  const found = await routeOf(v);
  if (found instanceof Response) return found;
  countSessionRequest(v);
  return charged(v, async () => found.handle(v));
}

const unreachable = (v: Visit) =>
  respond(
    v,
    503,
    messagePage({
      title: "Try again shortly",
      message: "The dashboard cannot reach its store of keys right now; nothing was changed. Try again in a moment.",
    }),
    { "retry-after": "5" },
  );

export function dashboard(o: DashboardOptions): Step {
  const site = siteOf(o, o.adminToken ? hashToken(o.adminToken) : undefined);
  return {
    before(x) {
      if (!isDashboard(x.path)) return undefined;
      // Its pages wait for a changed keys.json being read, and its changes for the read of the store they wrote (D24):
      // past Bun's 10 s idle timeout at a large store, which closed the request unanswered. A keyed request's socket
      // has as long while it waits (the keys step); this step answers before that one is reached.
      if (x.server) x.server.timeout(x.request, KEY_STORE_SOCKET_SECONDS);
      const v = visitOf(site, x);
      return answer(v).catch((err) => {
        if (err instanceof Refused) return refusedPage(v, err);
        if (err instanceof KeyStoreError || err instanceof KeyStoreUnwritable) return unreachable(v);
        throw err;
      });
    },
  };
}
