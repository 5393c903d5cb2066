/**
 * The request's path, decided once for every later step and the router. Bun gives request.url
 * as a bare path when the Host header is missing or invalid ("", "a/", "a b"), and as
 * http://{host}{path} otherwise, however short the host ("api", "x:1"). A URL that is not the
 * latter is refused with a 400 before anything reads it, as are several Host lines and one holding a fragment (a request
 * target has none, RFC 9112 3.2), but a CONNECT (its target a host and port), left with no path for the methods step's 405;
 * otherwise the path starts at the first "/" after "http://",
 * which is where the router (Elysia with standardHostname off) reads it.
 *
 * Bun also makes an absolute URL of a Host no URL parser reads (a:99999, [::1, a%zz, 1.2.3.999): it then leaves the
 * path as sent, dot segments and all (/v1/./meta was no route with such a Host, a route with any other), and new URL()
 * of it throws (the dashboard's sign-in page answered 500). Such a Host is as unreadable as one Bun makes no URL of.
 */
import { errorResponse, ERRORS } from "../errors";
import type { Step } from "../pipeline";

const SCHEME = "http://";

/** Where the path starts in a request URL as Bun gives it, or -1 if the URL is not absolute http. */
function pathStartOf(url: string): number {
  return url.startsWith(SCHEME) ? url.indexOf("/", SCHEME.length) : -1;
}

export const target: Step = {
  before(x) {
    const url = x.request.url;
    const start = pathStartOf(url);
    // Several Host lines (RFC 9112 3.2: a 400) Bun joins into one value, "a, b", and makes the URL of the first: a proxy
    // before Tome may have read another. No host name holds a comma.
    if (x.request.headers.get("host")?.includes(",")) return errorResponse(ERRORS.badRequest, ["hosts"]);
    if (start < 0) {
      // A CONNECT's target is a host and port (RFC 9110 9.3.6), which Bun gives as the URL whatever the Host: no path,
      // and a method the API does not take, which the methods step refuses (D1's 405), not a Host it could not read.
      if (x.request.method === "CONNECT") return undefined;
      return errorResponse(ERRORS.badRequest, ["host"]);
    }
    // The origin alone is parsed (a few dozen characters): a path or a query never makes an http URL unparseable.
    if (!URL.canParse(url.slice(0, start))) return errorResponse(ERRORS.badRequest, ["host"]);
    // Bun keeps a raw client's "#…" in the URL: read as part of the path or the query, it named no route (404) or a wrong value.
    if (url.includes("#", start)) return errorResponse(ERRORS.badRequest, ["fragment"]);
    const query = url.indexOf("?", start);
    x.pathStart = start;
    x.path = query < 0 ? url.slice(start) : url.slice(start, query);
    return undefined;
  },
};
