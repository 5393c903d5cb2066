/**
 * HTTP caching (RFC 9110, 9111) of the keyed routes' answers: an ETag and Cache-Control on each
 * 200, and a 304 without a body for a GET or HEAD whose If-None-Match names the current ETag.
 *
 * A JSON answer's ETag is a hash of its very bytes, taken here on the way out: whatever makes
 * the body differ (the query string, a rebuilt snapshot, a new server version) changes the
 * ETag, and nothing else does. The route still runs for a 304; only the sending is saved. The
 * PDF route sets its own ETag before rendering and answers its 304 itself (pdfEtag), so that a
 * 304 renders nothing; this step leaves an answer that already has an ETag as it is.
 *
 * Cache-Control is `private, no-cache`: answers need a key and carry that key's X-RateLimit-*
 * and X-Quota-* headers, so no shared cache may keep them (one key's answer would reach
 * clients without a key), and a client's own cache asks the server each time it reuses one,
 * which checks the key, counts the request, and sends fresh limit headers with the 304.
 * Searches and lucky answers carry their processing time, so no two bodies are alike: they
 * get no ETag (only `If-None-Match: *` gives them a 304) and `no-store`, as do errors.
 *
 * It comes after the keys step: the keys step then settles a 304 like any answer that is not
 * a 2xx, which costs no credit (D20), while its request has counted against the rate limit.
 * POST /mcp's answers get neither an ETag nor a 304: they are `no-store`.
 */
import type { Exchange, Step } from "../pipeline";
import { needsKey } from "./keys";

export const REVALIDATE = "private, no-cache";
const NO_STORE = "no-store";
/** Routes whose 200s differ on every request (they report their processing time). */
const UNCACHED_PREFIXES = ["/v1/search", "/v1/lucky"];

/** A strong ETag for these bytes. */
function bodyEtag(bytes: Uint8Array): string {
  return `"${Bun.hash(bytes).toString(16).padStart(16, "0")}"`;
}

/**
 * Whether If-None-Match (a list of entity tags, or `*`) matches the ETag, by the weak
 * comparison RFC 9110 prescribes for it: W/ is ignored, the quoted tags must be equal. A
 * header that cannot be read matches nothing (the full answer is sent).
 */
export function noneMatchHits(header: string | null, etag: string): boolean {
  if (header === null) return false;
  const value = header.trim();
  if (value === "*") return true;
  const wanted = opaque(etag);
  const tag = /[\s,]*(?:W\/)?("[^"]*")\s*(?:,|$)/y;
  let at = 0;
  while (at < value.length) {
    tag.lastIndex = at;
    const m = tag.exec(value);
    if (!m) return false;
    if (m[1] === wanted) return true;
    at = tag.lastIndex;
  }
  return false;
}

const opaque = (etag: string) => (etag.startsWith("W/") ? etag.slice(2) : etag);

/** The 304 for an answer with this ETag: its validators and caching rules, no body. */
export function notModified(etag: string): Response {
  return new Response(null, { status: 304, headers: { etag, "cache-control": REVALIDATE } });
}

/** Whether the request asks for the answer only if its ETag is not among these (then a 304). */
export const wantsNotModified = (request: Request, etag: string): boolean =>
  noneMatchHits(request.headers.get("if-none-match"), etag);

async function withEtag(x: Exchange, response: Response): Promise<Response> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const etag = bodyEtag(bytes);
  if (wantsNotModified(x.request, etag)) return notModified(etag);
  const answer = new Response(bytes, response);
  answer.headers.set("etag", etag);
  answer.headers.set("cache-control", REVALIDATE);
  answer.headers.set("content-length", String(bytes.byteLength));
  return answer;
}

export const conditional: Step = {
  after(x, response) {
    if (!needsKey(x.path)) return response;
    const headers = response.headers;
    if (headers.has("cache-control")) return response;
    // POST /mcp: a 304 is for a GET or HEAD (RFC 9110 13.1.2), and by now the tool call has run: answered 304 it would
    // cost no credit (D148's search for nothing, over MCP). Its answer is the call's own, never stored.
    if (x.request.method !== "GET") {
      headers.set("cache-control", NO_STORE);
      return response;
    }
    const json = response.status === 200 && headers.get("content-type")?.startsWith("application/json");
    if (json && !UNCACHED_PREFIXES.some((p) => x.path.startsWith(p))) return withEtag(x, response);
    // Without an ETag only `*` can match: it asks for the answer only if there is none (RFC 9110 13.1.2).
    if (json && x.request.headers.get("if-none-match")?.trim() === "*")
      return new Response(null, { status: 304, headers: { "cache-control": NO_STORE } });
    headers.set("cache-control", NO_STORE);
    return response;
  },
};
