/**
 * What a dashboard client may ask of the server (D82, D83).
 *
 * - Requests: at most ADDRESS_REQUESTS per client address (an IPv6 one's /64) and, signed in,
 *   SESSION_REQUESTS per session, in windows of REQUEST_WINDOW_MS (visit.ts); then 429 with Retry-After.
 * - Work: each request's time on the server's thread is charged to the work share (D25, D57)
 *   the API's keys are charged to, as one more client: the account signed in (all its sessions
 *   together), or else the client's address. Past its share while others use the server: 429.
 * - Failed sign-ins: ADDRESS_FAILURES per address a window; and OPERATOR_FAILURES for every
 *   token that is not an account's (a guess at TOME_ADMIN_TOKEN, from any address), past which
 *   the operator's token is refused but from addresses it signed in from before. No limit per
 *   account: an account's token is 190 bits, and a stranger naming it must not lock its holder
 *   out (D83, amending D70's).
 */
import {
  ADDRESS,
  operatorSignedIn as signedIn,
  signInFailed as failed,
  signInRefusal as refusalOf,
  SIGN_IN_WINDOW_MS,
} from "../../access";
import { tooMany } from "./respond";
import type { Visit } from "./visit";

/** A page is at most 4 requests (the page, its stylesheet, script and icon); a person loads a few a second at most. */
const ADDRESS_REQUESTS = 100;
const SESSION_REQUESTS = 60;

/** Counts the visit against its address's requests; refuses it past them. */
export function countRequest(v: Visit): void {
  const requests = v.site.requests;
  if (requests.count(`${ADDRESS}${v.address}`, 1, v.now) > ADDRESS_REQUESTS)
    throw tooMany("Too many requests from your address.", requests.secondsLeft(v.now));
}

/** Counts a signed-in visit against its session's requests too; refuses it past them. */
export function countSessionRequest(v: Visit): void {
  const requests = v.site.requests;
  if (v.signedIn && requests.count(`session ${v.signedIn.hash}`, 1, v.now) > SESSION_REQUESTS)
    throw tooMany("Too many requests in this session.", requests.secondsLeft(v.now));
}

/** Who the visit's work is charged to: the account signed in, or the client's address. */
const workerOf = (v: Visit) =>
  v.signedIn ? `dashboard account ${v.signedIn.session.account || "(operator)"}` : `dashboard address ${v.address}`;

/** Runs the visit's handler if its share of the server's time allows, and charges what it took. */
export async function charged(v: Visit, handle: () => Promise<Response>): Promise<Response> {
  const work = v.site.store.work;
  const worker = workerOf(v);
  const wait = work.wait(worker);
  if (wait)
    throw tooMany(
      "Your requests have used their share of the server's time while others are using it too (a large account's pages count for more).",
      wait,
    );
  try {
    return await handle();
  } finally {
    work.spend(worker, v.worked());
  }
}

const REFUSALS = {
  address: "Too many failed sign-ins from your address.",
  operator: "Too many failed sign-ins with the operator's token from new addresses.",
};

/** What makes sign-ins from this visit refused now (429), if anything: `operatorGuess` for a token that is not an account's. */
export async function signInRefusal(v: Visit, operatorGuess: boolean): Promise<string | undefined> {
  const refused = await refusalOf(v.store, v.address, v.now, operatorGuess);
  return refused && REFUSALS[refused];
}

/** Minutes until the sign-in window ends, for the 429's text and Retry-After. */
export const signInRetryMinutes = (now: number) => Math.ceil((SIGN_IN_WINDOW_MS - (now % SIGN_IN_WINDOW_MS)) / 60_000);

export const signInFailed = (v: Visit, operatorGuess: boolean): Promise<void> =>
  failed(v.store, v.address, v.now, operatorGuess);

/** The operator signed in from this address: its later sign-ins pass the operator's limit. */
export const operatorSignedIn = (v: Visit): Promise<void> => signedIn(v.store, v.address, v.now);
