/**
 * Request bodies, bounded before anything waits on them (D28). Bun's own limit is off
 * (server.ts): past it Bun answered a bare 413, without D1's body or an X-Request-Id. A body
 * declared longer than MAX_BODY_BYTES gets D1's 413 here, except on /mcp and the dashboard,
 * which read their bodies themselves, counted as they arrive, and refuse in their own formats
 * (D54, D82). A body nobody reads is read and dropped by Bun after the answer, to its end,
 * however long it is declared or chunked: so after a body declared too long, or chunked (its
 * length unknown, and a GET's cannot be read here), the connection is closed instead.
 */
import { MAX_BODY_BYTES } from "../body";
import { isDashboard } from "../dashboard";
import { errorResponse, ERRORS } from "../errors";
import type { Step } from "../pipeline";
import { isMcpPath } from "./methods";

/** Bun has checked that a Content-Length is digits, and that it is not sent beside Transfer-Encoding. */
const declaredOver = (headers: Headers): boolean => Number(headers.get("content-length") ?? 0) > MAX_BODY_BYTES;

export const bodies: Step = {
  before(x) {
    if (!declaredOver(x.request.headers) || isMcpPath(x.path) || isDashboard(x.path)) return undefined;
    return errorResponse(ERRORS.contentTooLarge, [MAX_BODY_BYTES], { headers: { connection: "close" } });
  },
  after(x, response) {
    const headers = x.request.headers;
    if (declaredOver(headers) || headers.has("transfer-encoding")) response.headers.set("connection", "close");
    return response;
  },
};
