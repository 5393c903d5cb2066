/**
 * Server time per key: limits count requests, but one search can cost a hundred times what a
 * chunk costs, so each key may also keep the server's thread busy for at most `msPerSecond`
 * milliseconds per second on average (a token bucket of time, one second deep). The share
 * only binds while another key is using the server too (one has in the last second): a key
 * alone may use the whole server, and a key past its share is refused so that the others are
 * not slowed by it.
 *
 * The debt has a floor while a key is alone (D57): what it spends then is owed only down to one
 * second's share, so when another key appears it waits at most about a second, however long it
 * had the server to itself. While others are there its debt is not floored: a request that
 * cost a second is paid for with ten seconds of waiting at a 100 ms share.
 */
export class WorkShare {
  /** Per key id: milliseconds it may still spend, as of `at` (ms since the epoch). */
  private readonly buckets = new Map<string, { left: number; at: number }>();
  /** The key of the last request and when it came, and when a key other than the last one was last seen. */
  private lastKey = "";
  private lastAt = -Infinity;
  private otherAt = -Infinity;

  /** msPerSecond 0 (or less): no limit. */
  constructor(readonly msPerSecond: number) {}

  /** 0 if the key may start a request now, else the whole seconds until it may. */
  wait(keyId: string, now: number): number {
    if (this.msPerSecond <= 0) return 0;
    if (keyId !== this.lastKey) {
      this.otherAt = this.lastAt;
      this.lastKey = keyId;
    }
    this.lastAt = now;
    const bucket = this.buckets.get(keyId);
    if (!bucket) return 0;
    const left = this.refilled(bucket, now);
    bucket.left = left;
    bucket.at = now;
    if (left > 0 || this.alone(keyId, now)) return 0;
    return Math.max(1, Math.ceil(-left / this.msPerSecond));
  }

  /** Takes what a request of the key cost from its bucket. */
  spend(keyId: string, ms: number, now: number): void {
    if (this.msPerSecond <= 0) return;
    let bucket = this.buckets.get(keyId);
    if (!bucket) this.buckets.set(keyId, (bucket = { left: this.msPerSecond, at: now }));
    const left = this.refilled(bucket, now) - ms;
    bucket.left = this.alone(keyId, now) ? Math.max(-this.msPerSecond, left) : left;
    bucket.at = now;
  }

  private refilled(bucket: { left: number; at: number }, now: number): number {
    return Math.min(this.msPerSecond, bucket.left + ((now - bucket.at) * this.msPerSecond) / 1000);
  }

  /** Whether no key but this one has made a request in the last second. */
  private alone(keyId: string, now: number): boolean {
    const otherAt = keyId === this.lastKey ? this.otherAt : this.lastAt;
    return now - otherAt >= 1000;
  }
}
