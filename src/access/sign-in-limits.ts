/**
 * D83's limits on guessing a sign-in token, over the counts of one store: the dashboard's sign-ins and /metrics'
 * bearer (D147) count into the same ones. An AccountStore keeps them (in Redis with replicas, where every replica
 * counts the same failures); without one, a server's memory.
 */
import { ADDRESS, addressBlockFor } from "./address-blocks";
import { secondsLeftIn, WindowCounts } from "./window-counts";

/** Failed sign-ins are counted in windows this long. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** Failed sign-ins a client address (an IPv6 one's /64) may make in a window; then every sign-in from it is refused until the next (D70, D83). */
export const ADDRESS_FAILURES = 20;
/**
 * Failed sign-ins with anything but an account's token (wd_…), from all addresses together, in a
 * window: past it the operator's token (TOME_ADMIN_TOKEN, chosen by a person, 16 characters at
 * least) is refused but from addresses it signed in from before (D83).
 */
export const OPERATOR_FAILURES = 100;
/** How long an address the operator signed in from is remembered (then it is a stranger's again). */
export const KNOWN_ADDRESS_MS = 30 * 86_400_000;
/** Names (client addresses) whose failed sign-ins are counted apart in a window, in memory (D82). */
export const MAX_COUNTED_ADDRESSES = 10_000;

/** Failed sign-ins by name in windows of SIGN_IN_WINDOW_MS, and the addresses the operator signed in from. */
export interface SignInCounts {
  /** Failed sign-ins counted under `name` in now's window, after adding one if `fail`. */
  failures(name: string, fail: boolean, now: number): Promise<number>;
  /** Remembers `name` (the address the operator signed in from) for KNOWN_ADDRESS_MS. */
  remember(name: string, now: number): Promise<void>;
  known(name: string, now: number): Promise<boolean>;
}

/** The counts in one server's memory, bounded (D82): MAX_COUNTED_ADDRESSES names a window. */
export class MemorySignIns implements SignInCounts {
  private readonly failed = new WindowCounts(SIGN_IN_WINDOW_MS, MAX_COUNTED_ADDRESSES, addressBlockFor);
  private readonly remembered = new Map<string, number>();

  async failures(name: string, fail: boolean, now: number): Promise<number> {
    return this.failed.count(name, fail ? 1 : 0, now);
  }

  async remember(name: string, now: number): Promise<void> {
    // Few: the addresses one operator signs in from. Bounded all the same.
    if (this.remembered.size >= MAX_COUNTED_ADDRESSES) this.remembered.clear();
    this.remembered.set(name, now + KNOWN_ADDRESS_MS);
  }

  async known(name: string, now: number): Promise<boolean> {
    return (this.remembered.get(name) ?? 0) > now;
  }
}

/**
 * Which limit refuses a sign-in from `address` now, if one does: "address" past ADDRESS_FAILURES from it in the
 * window; "operator", for a guess at the operator's token (`operatorGuess`), past OPERATOR_FAILURES from all
 * addresses unless the operator signed in from this one before.
 */
export async function signInRefusal(
  counts: SignInCounts,
  address: string,
  now: number,
  operatorGuess: boolean,
): Promise<"address" | "operator" | undefined> {
  if ((await counts.failures(`${ADDRESS}${address}`, false, now)) >= ADDRESS_FAILURES) return "address";
  if (
    operatorGuess &&
    (await counts.failures("operator", false, now)) >= OPERATOR_FAILURES &&
    !(await counts.known(`operator:${address}`, now))
  )
    return "operator";
  return undefined;
}

export async function signInFailed(
  counts: SignInCounts,
  address: string,
  now: number,
  operatorGuess: boolean,
): Promise<void> {
  await counts.failures(`${ADDRESS}${address}`, true, now);
  if (operatorGuess) await counts.failures("operator", true, now);
}

/** The operator signed in from this address: its later sign-ins pass the operator's limit. */
export async function operatorSignedIn(counts: SignInCounts, address: string, now: number): Promise<void> {
  await counts.remember(`operator:${address}`, now);
}

/** Seconds until the sign-in window ends, for a 429's Retry-After. */
export const signInRetrySeconds = (now: number): number => secondsLeftIn(SIGN_IN_WINDOW_MS, now);
