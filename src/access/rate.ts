/**
 * D19: requests per key per second, in fixed windows of one Unix second: at most `limit`
 * admitted in any second, however requests interleave (the server's one thread counts them).
 */
export class RateLimiter {
  /**
   * One window per key id, reused from second to second. Only keys that authenticated get
   * one, so there are never more than the store has keys.
   */
  private readonly windows = new Map<string, { second: number; count: number }>();

  /** Counts a request in its key's window: how many more the second allows after it, or -1 if it is over the limit. */
  admit(keyId: string, limit: number, second: number): number {
    let w = this.windows.get(keyId);
    if (!w) this.windows.set(keyId, (w = { second, count: 0 }));
    else if (w.second !== second) {
      w.second = second;
      w.count = 0;
    }
    if (w.count >= limit) return -1;
    return limit - ++w.count;
  }

  /** How many more requests the key's window allows this second, counting none. */
  remaining(keyId: string, limit: number, second: number): number {
    const w = this.windows.get(keyId);
    return Math.max(0, limit - (w?.second === second ? w.count : 0));
  }
}
