/**
 * What every response carries (D22): X-Request-Id (the client's own when it is a safe token,
 * else a new UUID), X-Snapshot (the content hash of the snapshot that answered: after a swap,
 * a client can tell which one an answer came from; not on an error to a request the key step did not admit), CORS headers (not on /dashboard), and `charset=utf-8` on JSON;
 * and `Cache-Control: no-store` on every error that has no Cache-Control of its own (D34): the key
 * check's 401, 403 and 429 and the methods step's 405 are answered before the conditional step.
 */
import { isDashboard } from "../dashboard";
import { EXPOSED_HEADERS } from "../docs";
import type { Step } from "../pipeline";
import { needsKey } from "./keys";

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const JSON_TYPE = "application/json; charset=utf-8";

export const responseHeaders: Step = {
  before(x) {
    const given = x.request.headers.get("x-request-id");
    x.id = given && CLIENT_ID.test(given) ? given : crypto.randomUUID();
    return undefined;
  },
  after(x, response) {
    const headers = response.headers;
    if (headers.get("content-type")?.startsWith("application/json")) headers.set("content-type", JSON_TYPE);
    if (response.status >= 400 && !headers.has("cache-control")) headers.set("cache-control", "no-store");
    // The dashboard is for its own pages only: no other origin may read it.
    if (!isDashboard(x.path)) {
      headers.set("access-control-allow-origin", "*");
      headers.set("access-control-expose-headers", EXPOSED_HEADERS);
    }
    headers.set("x-request-id", x.id);
    // D2: a request without a usable key learns nothing of the data, not even which snapshot would answer it.
    const refused = response.status >= 400 && !x.grant && needsKey(x.path);
    if (!refused) headers.set("x-snapshot", x.served.id);
    return response;
  },
};
