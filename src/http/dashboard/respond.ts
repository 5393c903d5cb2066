/**
 * Every dashboard answer's headers (D70: a Content-Security-Policy allowing nothing but this
 * origin's stylesheet and script, no framing, no caching, no CORS), redirects, and refusals: a
 * handler throws a Refused, and the step answers it with a page saying why.
 */
import { DASHBOARD_PATH } from "./cookies";
import { messagePage } from "./frame";
import type { Visit } from "./visit";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A request the dashboard does not act on: its status, a title and a sentence saying why and what to do. */
export class Refused extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

type Extra = Record<string, string> | [string, string][];

/** An HTML answer with the dashboard's headers; to a HEAD, none, but the length the GET's has (RFC 9110 9.3.2: not 0). */
export function respond(v: Pick<Visit, "request" | "secure">, status: number, body: string | null, extra: Extra = {}) {
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
  if (v.secure) headers.set("strict-transport-security", "max-age=31536000");
  if (v.request.method !== "HEAD") return new Response(body, { status, headers });
  if (body !== null) headers.set("content-length", String(Buffer.byteLength(body)));
  return new Response(null, { status, headers });
}

/** 303 See Other to `to` (after a form: a reload does not send it again), setting these cookies. */
export function redirect(v: Pick<Visit, "request" | "secure">, to: string, cookies: string[] = []): Response {
  return respond(v, 303, null, [["location", to], ...cookies.map((c): [string, string] => ["set-cookie", c])]);
}

/** A refusal's page; signed in, with the top bar's Sign out and who is signed in, as every other page has. */
export function refusedPage(v: Pick<Visit, "request" | "secure" | "signedIn">, refused: Refused): Response {
  const back = { href: DASHBOARD_PATH, label: "Back to the dashboard" };
  const session = v.signedIn?.session;
  const who = session && {
    label: session.account === "" ? "Operator" : `Account ${session.account}`,
    csrf: session.csrf,
  };
  return respond(v, refused.status, messagePage({ title: refused.title, message: refused.message, back, who }), {
    ...refused.headers,
  });
}

/** 429 with Retry-After: too many requests, or too much of the server's time, from this client. */
export function tooMany(why: string, seconds: number): Refused {
  return new Refused(429, "Too many requests", `${why} Try again in ${seconds} s.`, { "retry-after": String(seconds) });
}

export const notFound = () => new Refused(404, "Not found", "There is no such page in the dashboard.");
