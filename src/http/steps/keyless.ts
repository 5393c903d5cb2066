/**
 * Answers given without a key end their connection before a client can have hundreds of them answered back to back
 * (D188), as D183 ends it at a refusal of the key: the CORS preflight (OPTIONS), the liveness check (/healthz), GET /,
 * the API's description, the dashboard's pages and /metrics are answered to anyone, each cheaply, and a client that
 * writes hundreds of them at once on a connection had the one request thread answer them all while other keys'
 * requests waited.
 *
 * - A keyless answer that tells the client of its own mistake (a 4xx: the methods step's 405, the target step's 400, a
 *   sign-in refused) ends its connection at once, as D183's refusals do: nothing a client does right comes behind it.
 * - Any other keyless answer (a 2xx, 3xx or 5xx) is counted for its client's address (D80's, an IPv6 one by its /64),
 *   and from the KEYLESS_PER_ADDRESS-th of a window of KEYLESS_WINDOW_MS on, each ends its connection: the client then
 *   pays a new connection for every answer, as after a refusal. Counted by connection instead, a client would simply
 *   open another when one closes, at no cost worth the name (measured: D188). A browser's preflights and a load
 *   balancer's health checks come a few a second at most, one at a time: should one reach the bound, its answer is
 *   delivered whole, and the client opens a new connection for the next.
 *
 * The counts are of one window, all dropped when it ends, and of KEYLESS_ADDRESSES_HELD addresses at most: past that, a
 * keyless answer to an address not counted yet ends its connection (only a flood from many addresses fills them). A
 * request admitted with a key (x.grant) is not counted: its key's rate and work share bound it.
 */
import { addressGroup } from "../../access";
import { clientAddress, normalAddress } from "../client-address";
import type { Exchange, Step } from "../pipeline";

/** The keyless answers an address is given in a window on connections kept open; the last of them ends its connection, as every one after it does. */
export const KEYLESS_PER_ADDRESS = 100;
/** The window the counts are kept for: dropped, all, when it ends. */
const KEYLESS_WINDOW_MS = 10_000;
/** The addresses counted at once, at most (some 100 bytes each). */
const KEYLESS_ADDRESSES_HELD = 10_000;

/** Ends the connection once this answer is sent: Bun drops unread the requests pipelined behind it. */
function closing(response: Response): Response {
  response.headers.set("connection", "close");
  return response;
}

export function keyless(options: { trustedProxies?: string[] } = {}): Step {
  const trusted = new Set((options.trustedProxies ?? []).map(normalAddress));
  /** Keyless answers each client address has been given in this window. */
  const counts = new Map<string, number>();
  let windowEnds = 0;

  /** Whether this keyless answer ends its connection: its address has had its share of the window. */
  const past = (x: Exchange): boolean => {
    // A request handed to the app outside a server (no connection), or whose connection is already gone.
    const socket = x.server?.requestIP(x.received);
    if (!socket) return false;
    const now = performance.now();
    if (now >= windowEnds) {
      counts.clear();
      windowEnds = now + KEYLESS_WINDOW_MS;
    }
    const address = addressGroup(clientAddress(socket.address, x.request.headers.get("x-forwarded-for"), trusted));
    const count = (counts.get(address) ?? 0) + 1;
    if (count === 1 && counts.size >= KEYLESS_ADDRESSES_HELD) return true;
    counts.set(address, count);
    return count >= KEYLESS_PER_ADDRESS;
  };

  return {
    after(x, response) {
      if (x.grant) return response;
      const status = response.status;
      if ((status >= 400 && status < 500) || past(x)) return closing(response);
      return response;
    },
  };
}
