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
    if (served.retired && served.inFlight === 0) this.free(served);
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

  /** Snapshots swapped out whose requests in flight are still being answered. */
  get retiringCount(): number {
    return this.retiring.size;
  }

  private free(served: Served<V>): void {
    if (!this.retiring.delete(served)) return;
    this.onFreed(served);
  }
}
