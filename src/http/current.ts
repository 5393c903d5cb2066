/**
 * The snapshot the server serves, and the swap to a newer one (issue 17). A request takes the
 * served snapshot once, as it arrives (acquire), and keeps it until its answer is made
 * (release): a swap changes what later requests get, never what a request in flight reads, so
 * an answer comes whole from one snapshot. The snapshot swapped out is let go once the last
 * request still on it has answered (they are counted here), so that its mappings and indexes
 * can be collected.
 */

/** One loaded snapshot, as the server serves it (`view`: what the app made of it). */
export interface Served<V> {
  readonly view: V;
  /** What identifies its data: the snapshot's content hash. */
  readonly id: string;
  readonly path: string;
  /** Requests that took it and have not been answered yet. */
  inFlight: number;
  /** Swapped out: freed when inFlight reaches 0. */
  retired: boolean;
  /** Told when inFlight reaches 0 (drained()). */
  idle?: (() => void)[];
}

export class CurrentSnapshot<V> {
  private served: Served<V>;
  private readonly retiring = new Set<Served<V>>();

  /** `onFreed` is told of a swapped-out snapshot once no request holds it any more (the swap may call it at once). */
  constructor(
    first: { view: V; id: string; path: string },
    private readonly onFreed: (freed: Served<V>) => void = () => {},
  ) {
    this.served = { ...first, inFlight: 0, retired: false };
  }

  /** The snapshot served now; the request that calls this must call release() with it once answered. */
  acquire(): Served<V> {
    const served = this.served;
    served.inFlight++;
    return served;
  }

  release(served: Served<V>): void {
    served.inFlight--;
    if (served.inFlight !== 0) return;
    for (const told of served.idle?.splice(0) ?? []) told();
    if (served.retired) this.free(served);
  }

  /**
   * Resolves once every request that took a snapshot whose view `of` matches, until now, is
   * answered. A request arriving later takes the same snapshot afresh, and is not waited for:
   * the app answers it without reading the snapshot (503 while suspended, D84).
   */
  drained(of: (view: V) => boolean): Promise<void> {
    const held = [...this.retiring].filter((s) => of(s.view) && s.inFlight > 0);
    if (of(this.served.view)) {
      const before = this.served;
      this.served = { ...before, inFlight: 0, idle: undefined };
      if (before.inFlight > 0) held.push(before);
    }
    return Promise.all(held.map((s) => new Promise<void>((told) => (s.idle ??= []).push(told)))).then(() => {});
  }

  /** Serves `next` from now on; the snapshot it replaces is freed after its requests in flight. Returns the one replaced. */
  swap(next: { view: V; id: string; path: string }): Served<V> {
    const old = this.served;
    this.served = { ...next, inFlight: 0, retired: false };
    old.retired = true;
    this.retiring.add(old);
    if (old.inFlight === 0) this.free(old);
    return old;
  }

  /** The snapshot served now (for what is not a request: logs, /metrics). */
  get now(): Served<V> {
    return this.served;
  }

  /** Every snapshot held: the one served, and those swapped out still answering requests. */
  get all(): Served<V>[] {
    return [this.served, ...this.retiring];
  }

  /** Snapshots swapped out whose requests in flight are still being answered. */
  get retiringCount(): number {
    return this.retiring.size;
  }

  private free(served: Served<V>): void {
    if (!this.retiring.delete(served)) return;
    this.onFreed(served);
  }
}
