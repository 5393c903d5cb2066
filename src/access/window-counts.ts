/**
 * Counts by name in fixed windows of time, in memory and bounded (D82): failed dashboard sign-ins
 * per client address, dashboard requests per address and per session. A window holds at most
 * `maxNames` names; past that, a name not yet counted is counted under its wider block (`wider`: an address's /48 or
 * /24, widerBlock), up to as many blocks again, and past those under one shared name (OVERFLOW), so that a flood of
 * new addresses shares limits instead of growing the map. A new window starts a new map: nothing is ever scanned.
 */
const OVERFLOW = "(every other name)";

/**
 * The block a client address (as addressGroup gives it: IPv4 itself, IPv6 its /64) is counted in once the names are
 * full: an IPv6 /48 (one site's, RFC 6177, what a tunnel broker hands out free) or an IPv4 /24. Without it, whoever
 * filled the names from one /48 (10,000 of its /64s) made every other new client share one count, spent at once: 20
 * failed sign-ins more kept the dashboard's sign-in shut to everyone else for the window.
 */
export function widerBlock(group: string): string | undefined {
  const v6 = /^([0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}):[0-9a-f]{1,4}::\/64$/.exec(group);
  if (v6) return `${v6[1]}::/48`;
  const v4 = /^(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}$/.exec(group);
  return v4 ? `${v4[1]}.0/24` : undefined;
}

/** `wider` for names that are `prefix` and an address group: the same prefix and its widerBlock. */
export const blockAfter =
  (prefix: string) =>
  (name: string): string | undefined => {
    const block = name.startsWith(prefix) ? widerBlock(name.slice(prefix.length)) : undefined;
    return block && prefix + block;
  };

export class WindowCounts {
  private window = Number.NaN;
  private counts = new Map<string, number>();

  constructor(
    readonly windowMs: number,
    readonly maxNames: number,
    private readonly wider: (name: string) => string | undefined = () => undefined,
  ) {}

  /** The count of `name` in now's window, after adding `add` (0: only read it). */
  count(name: string, add: number, now: number): number {
    const window = Math.floor(now / this.windowMs);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const counted = this.counts.has(name) || this.counts.size < this.maxNames ? name : this.blockOf(name);
    const n = (this.counts.get(counted) ?? 0) + add;
    if (add) this.counts.set(counted, n);
    return n;
  }

  /** Where a name not counted is counted once the names are full: its block while blocks are left, else OVERFLOW. */
  private blockOf(name: string): string {
    const block = this.wider(name);
    return block !== undefined && (this.counts.has(block) || this.counts.size < 2 * this.maxNames) ? block : OVERFLOW;
  }

  /** Names counted in the current window (blocks and OVERFLOW included): at most 2 × maxNames + 1. */
  get size(): number {
    return this.counts.size;
  }

  /** Whole seconds until now's window ends. */
  secondsLeft(now: number): number {
    return secondsLeftIn(this.windowMs, now);
  }
}

/** Whole seconds (at least 1) until now's window of `windowMs` ends: a 429's Retry-After. */
export const secondsLeftIn = (windowMs: number, now: number): number =>
  Math.max(1, Math.ceil((windowMs - (now % windowMs)) / 1000));
