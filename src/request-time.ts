/**
 * The bounds on how long a request may last, which the server and its pool enforce (http) and Redis's holds on the
 * quota must outlast (access: src/access/redis/scripts.ts), so that a request answered in time is never found lapsed
 * at its settlement (D181). And the server's time a key may use per second unless told otherwise (D25).
 */

/**
 * Bun's idle timeout for the server's sockets (its default, set explicitly): a request whose body is not whole this
 * long after it came, or whose answer has not begun this long after its body was whole, is closed unanswered. Bun
 * checks it every few seconds, so the close comes up to that much later (12 s for 10 s: `bun bench/http/idle-close.ts`).
 */
export const SOCKET_IDLE_SECONDS = 10;

/**
 * The longest time limit a search may be given (TOME_SEARCH_TIMEOUT_MS, D91): two fifths of the idle timeout, so that a
 * search sent to a worker behind another (two are sent to each: the pool's SENT_PER_WORKER), each within its limit, has
 * its answer begun before the socket is closed. A longer limit would only let a search work on for an answer no client
 * would receive.
 */
export const MAX_SEARCH_TIMEOUT_MS = (SOCKET_IDLE_SECONDS * 1000 * 2) / 5;

/**
 * How long a search may work unless told otherwise (GUARDS.budgetMs; TOME_SEARCH_TIMEOUT_MS's default, D91): past it, it
 * answers with the best it has found. Here rather than in search, so that the settings (src/cli/config.ts) say it
 * without loading the engine.
 */
export const SEARCH_BUDGET_MS = 100;

/** How long a search worker holding requests may answer none before it is taken for stuck, replaced, and they are answered 503. */
export const WORKER_STUCK_MS = 30_000;

/**
 * How long a keyed request's connection may stay silent while its admission waits for a changed keys.json read in a
 * worker (D24, R9): at 500,000 keys on a loaded 2-core machine the read passed Bun's 10 s, which closed the request's
 * connection unanswered (bench/http/dashboard-sign-in.ts --stall).
 */
export const KEY_STORE_SOCKET_SECONDS = 60;

/**
 * How long the key store's reader (a worker) may take to read a changed keys.json before it is taken for stuck, stopped,
 * and the store read on the request thread instead (D24): under KEY_STORE_SOCKET_SECONDS, so that the requests waiting
 * for it are still answered.
 */
export const KEY_STORE_READ_SECONDS = 45;

/** How long a PDF request's connection may stay silent (Bun's idle timeout raised for it): the render queue's wait plus a render's time limit. */
export const PDF_SOCKET_SECONDS = 180;

/**
 * A tenth of the server's thread per key while others use it too (TOME_KEY_MS_PER_SECOND's default, D25): measured
 * (bench/load/fairness.ts), a key sending the costliest searches then leaves another key's p99 within 3× its idle p99.
 * Here rather than in access, which applies it, so that the settings (src/cli/config.ts) say it without loading the key
 * store.
 */
export const DEFAULT_KEY_MS_PER_SECOND = 100;
