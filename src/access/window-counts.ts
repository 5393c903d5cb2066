/**
 * Counts by name in fixed windows of time, in memory and bounded (D82): failed dashboard sign-ins
 * per client address, dashboard requests per address and per session. A window holds at most
 * `maxNames` names; past that, a name not yet counted is counted under its wider block (`wider`: an address's /48 or
 * /24, address-blocks.ts), up to as many blocks again, and past those under one shared name (OVERFLOW), so that a flood of
 * new addresses shares limits instead of growing the map. A new window starts a new map: nothing is ever scanned.
 */
const OVERFLOW = "(every other name)";

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
