/**
 * Counts by name in fixed windows of time, in memory and bounded (D82): failed dashboard sign-ins
 * per client address, dashboard requests per address and per session. A window holds at most
 * `maxNames` names; past that, a name not yet counted is counted under one shared name
 * (OVERFLOW), so that a flood of new addresses shares one limit instead of growing the map. A
 * new window starts a new map: nothing is ever scanned.
 */
const OVERFLOW = "(every other name)";

export class WindowCounts {
  private window = Number.NaN;
  private counts = new Map<string, number>();

  constructor(
    readonly windowMs: number,
    readonly maxNames: number,
  ) {}

  /** The count of `name` in now's window, after adding `add` (0: only read it). */
  count(name: string, add: number, now: number): number {
    const window = Math.floor(now / this.windowMs);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const counted = this.counts.has(name) || this.counts.size < this.maxNames ? name : OVERFLOW;
    const n = (this.counts.get(counted) ?? 0) + add;
    if (add) this.counts.set(counted, n);
    return n;
  }

  /** Names counted in the current window (OVERFLOW included): at most maxNames + 1. */
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
