/**
 * Server time per key: limits count requests, but one search can cost a hundred times what a
 * chunk costs, so each key may also keep the server's thread busy for at most `msPerSecond`
 * milliseconds per second on average (a token bucket of time, one second deep). A key past
 * its share is refused until the bucket fills again; the others are not slowed by it.
 */
export class WorkShare {
  /** Per key id: milliseconds it may still spend, as of `at` (ms since the epoch). */
  private readonly buckets = new Map<string, { left: number; at: number }>();

  /** msPerSecond 0 (or less): no limit. */
  constructor(readonly msPerSecond: number) {}

  /** 0 if the key may start a request now, else the whole seconds until it may. */
  wait(keyId: string, now: number): number {
    if (this.msPerSecond <= 0) return 0;
    const bucket = this.buckets.get(keyId);
    if (!bucket) return 0;
    const left = Math.min(this.msPerSecond, bucket.left + ((now - bucket.at) * this.msPerSecond) / 1000);
    bucket.left = left;
    bucket.at = now;
    return left > 0 ? 0 : Math.max(1, Math.ceil(-left / this.msPerSecond));
  }

  /** Takes what a request of the key cost from its bucket. */
  spend(keyId: string, ms: number, now: number): void {
    if (this.msPerSecond <= 0) return;
    let bucket = this.buckets.get(keyId);
    if (!bucket) this.buckets.set(keyId, (bucket = { left: this.msPerSecond, at: now }));
    bucket.left = Math.min(this.msPerSecond, bucket.left + ((now - bucket.at) * this.msPerSecond) / 1000) - ms;
    bucket.at = now;
  }
}
