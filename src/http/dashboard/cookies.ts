/**
 * The dashboard's two cookies (D70): the session (8 hours) and the sign-in form's CSRF token (an
 * hour), both HttpOnly, SameSite=Strict, Path=/dashboard, and Secure with the `__Secure-` prefix
 * over https. Read and written with Bun's CookieMap and Cookie.
 */
import { SESSION_MS } from "../../access";

export const DASHBOARD_PATH = "/dashboard";
const SIGN_IN_COOKIE_SECONDS = 3600;

/**
 * D70's rule: cookies are Secure when TOME_PUBLIC_URL is https, or the request came over
 * https, or a proxy says it did (X-Forwarded-Proto: https). Trusting that header can only
 * make a cookie stricter: a browser on plain http then drops it, and signing in fails safe.
 */
export function secureOf(request: Request, publicHttps: boolean): boolean {
  return (
    publicHttps ||
    request.url.startsWith("https:") ||
    request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https"
  );
}

const nameOf = (cookie: "session" | "signIn", secure: boolean) =>
  `${secure ? "__Secure-" : ""}${cookie === "session" ? "tome_session" : "tome_sign_in"}`;

/** The value of one of the dashboard's cookies in the request, if it is there. */
export function readCookie(request: Request, cookie: "session" | "signIn", secure: boolean): string | undefined {
  const header = request.headers.get("cookie");
  if (!header) return undefined;
  return new Bun.CookieMap(header).get(nameOf(cookie, secure)) ?? undefined;
}

/** A Set-Cookie value: the cookie with `value`, or cleared (value "", at once expired). */
export function setCookie(cookie: "session" | "signIn", value: string, secure: boolean): string {
  const seconds = cookie === "session" ? Math.floor(SESSION_MS / 1000) : SIGN_IN_COOKIE_SECONDS;
  return new Bun.Cookie(nameOf(cookie, secure), value, {
    path: DASHBOARD_PATH,
    maxAge: value ? seconds : 0,
    httpOnly: true,
    sameSite: "strict",
    secure,
  }).serialize();
}
