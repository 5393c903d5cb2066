/**
 * D19: requests per key per second, in fixed windows of one Unix second: at most `limit`
 * admitted in any second, however requests interleave (the server's one thread counts them).
 */
export interface RateDecision {
  admitted: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, { second: number; count: number }>();

  admit(key: string, limit: number, nowMs: number): RateDecision {
    const second = Math.floor(nowMs / 1000);
    let w = this.windows.get(key);
    if (!w || w.second !== second) {
      w = { second, count: 0 };
      this.windows.set(key, w);
      if (this.windows.size > 100_000) this.sweep(second);
    }
    const admitted = w.count < limit;
    if (admitted) w.count++;
    return { admitted, limit, remaining: Math.max(0, limit - w.count), reset: second + 1 };
  }

  /** Drops windows of past seconds (their keys start afresh anyway). */
  private sweep(second: number): void {
    for (const [k, w] of this.windows) if (w.second !== second) this.windows.delete(k);
  }
}
