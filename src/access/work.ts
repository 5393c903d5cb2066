/**
 * Below this many buckets none is dropped: a server's API keys are usually far fewer, so it rarely sweeps, and 1,024
 * buckets take a few hundred KB at most. Past it the sweeps' cost is what bounds them (each walks the map once, for at least as many new
 * buckets as it leaves): the number only keeps a small map from being walked every few requests.
 */
const MIN_SWEEP = 1024;

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
  /**
   * Per key id (or dashboard client, D82): milliseconds it may still spend, as of `at` (the monotonic clock's ms). A bucket
   * grown back full is as none, and is dropped when the map reaches `sweepAt`: a dashboard's clients are addresses,
   * as many as there are clients, which kept a bucket each for good.
   */
  private readonly buckets = new Map<string, { left: number; at: number }>();
  private sweepAt = MIN_SWEEP;
  /** The key of the last request and when it came, and when a key other than the last one was last seen. */
  private lastKey = "";
  private lastAt = -Infinity;
  private otherAt = -Infinity;

  /**
   * msPerSecond 0 (or less): no limit. Its times are the monotonic clock's (performance.now()), never the wall clock's:
   * they measure durations, and a wall clock stepped back 10 minutes (NTP, a VM resumed) made a key owe 10 minutes.
   */
  constructor(readonly msPerSecond: number) {}

  /** 0 if the key may start a request now (ms, the monotonic clock's), else the whole seconds until it may. */
  wait(keyId: string, now = performance.now()): number {
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
  spend(keyId: string, ms: number, now = performance.now()): void {
    if (this.msPerSecond <= 0) return;
    let bucket = this.buckets.get(keyId);
    if (!bucket) {
      if (this.buckets.size >= this.sweepAt) this.sweep(now);
      this.buckets.set(keyId, (bucket = { left: this.msPerSecond, at: now }));
    }
    const left = this.refilled(bucket, now) - ms;
    bucket.left = this.alone(keyId, now) ? Math.max(-this.msPerSecond, left) : left;
    bucket.at = now;
  }

  /** Drops the buckets grown back full; the next sweep comes when the map has twice what is left (each costs its size, once). */
  private sweep(now: number): void {
    for (const [id, bucket] of this.buckets)
      if (this.refilled(bucket, now) >= this.msPerSecond) this.buckets.delete(id);
    this.sweepAt = Math.max(MIN_SWEEP, 2 * this.buckets.size);
  }

  /** How many keys and clients hold a bucket: for the test of the bound (test/work-share.test.ts). */
  get size(): number {
    return this.buckets.size;
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
