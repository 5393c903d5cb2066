/**
 * Answers given without a key end their connection before a client can pipeline hundreds of them on it (D188), as D183
 * ends it at a refusal of the key: the CORS preflight (OPTIONS), the liveness check (/healthz), GET /, the API's
 * description, the dashboard's pages and /metrics are answered to anyone, each cheaply, and a client that writes
 * hundreds of them at once on a connection had the one request thread answer them all, back to back, while other keys'
 * requests waited.
 *
 * - A keyless answer that tells the client of its own mistake (a 4xx: the methods step's 405, the target step's 400, a
 *   sign-in refused) ends its connection at once, as D183's refusals do: nothing a client does right comes behind it.
 * - Any other keyless answer (a 2xx, 3xx or 5xx) is counted for its connection, told by the client's address and port
 *   (Bun's `server.requestIP`); the KEYLESS_PER_CONNECTION-th of a window of KEYLESS_WINDOW_MS ends it. A browser's
 *   preflights and a load balancer's health checks come a few a second at most, and are not pipelined: should one of
 *   them reach the bound, its answer is delivered whole, and the client opens a new connection for the next.
 *
 * The counts are of one window, all dropped when it ends, and of KEYLESS_CONNECTIONS_HELD connections at most: past
 * that, a keyless answer on a connection not counted yet ends its connection (only a flood of connections fills them).
 * A request admitted with a key (x.grant) is not counted: its key's rate and work share bound it.
 */
import type { Exchange, Step } from "../pipeline";

/** The keyless answers one connection is given in a window; the last of them ends it. */
export const KEYLESS_PER_CONNECTION = 100;
/** The window the counts are kept for: dropped, all, when it ends. */
const KEYLESS_WINDOW_MS = 10_000;
/** The connections counted at once, at most (some 100 bytes each). */
const KEYLESS_CONNECTIONS_HELD = 10_000;

/** Ends the connection once this answer is sent: Bun drops unread the requests pipelined behind it. */
function closing(response: Response): Response {
  response.headers.set("connection", "close");
  return response;
}

export function keyless(): Step {
  /** Keyless answers a connection ("port address") has been given in this window. */
  const counts = new Map<string, number>();
  let windowEnds = 0;

  /** Whether this keyless answer is the last its connection is given. */
  const last = (x: Exchange): boolean => {
    // A request handed to the app outside a server (no connection), or whose connection is already gone.
    const socket = x.server?.requestIP(x.request);
    if (!socket) return false;
    const now = performance.now();
    if (now >= windowEnds) {
      counts.clear();
      windowEnds = now + KEYLESS_WINDOW_MS;
    }
    const connection = `${socket.port} ${socket.address}`;
    const count = (counts.get(connection) ?? 0) + 1;
    if (count === 1 && counts.size >= KEYLESS_CONNECTIONS_HELD) return true;
    counts.set(connection, count);
    return count >= KEYLESS_PER_CONNECTION;
  };

  return {
    after(x, response) {
      if (x.grant) return response;
      const status = response.status;
      if ((status >= 400 && status < 500) || last(x)) return closing(response);
      return response;
    },
  };
}
