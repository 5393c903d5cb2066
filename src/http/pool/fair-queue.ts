/**
 * Where searches wait for a search worker (D106): one lane a key, and the next request sent to a worker is from the
 * lane that has had the least of the workers' time since it came (the worker's time on each of its requests, as the
 * work share charges it, D102), among equals the lane served longest ago. One key's burst waits behind itself, and
 * another key's lone search waits for what the workers already hold, not for the burst (start-time fair queueing, as
 * Linux's CFS orders threads by their run time: a request's cost is known only once answered, so a lane is charged
 * then, and until its charges come in the lanes take turns).
 *
 * A lane coming (or coming back after it had nothing waiting) starts at the time of the lane served last: having waited
 * for nothing earns no credit to spend in a burst later. A lane is dropped once it holds nothing, so the lanes are
 * those of the requests in the pool.
 */
/** A lane's cost is a moving mean: each request answered moves it by this fraction of the way to its own charge. */
const COST_WEIGHT = 4;

interface Lane<T> {
  readonly waiting: T[];
  /** The workers' milliseconds charged to it, counted from the time it came in at. */
  used: number;
  /** When it was last served, as a count of servings. */
  served: number;
  /** Its requests sent to a worker and not yet answered. */
  running: number;
  /** What its recent requests cost a worker, in ms (a moving mean of their charges); NaN until one is answered. */
  cost: number;
}

export class FairQueue<T> {
  /** By key id; requests with no key (authentication off) share one lane. */
  private readonly lanes = new Map<string | undefined, Lane<T>>();
  /** `used` of the lane served last: where a lane coming starts. */
  private now = 0;
  private servings = 0;
  private count = 0;

  /** Requests waiting, in every lane. */
  get waiting(): number {
    return this.count;
  }

  /** Requests of one key waiting or sent to a worker and not yet answered. */
  held(key: string | undefined): number {
    const lane = this.lanes.get(key);
    return lane ? lane.waiting.length + lane.running : 0;
  }

  push(key: string | undefined, item: T): void {
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { waiting: [], used: this.now, served: 0, running: 0, cost: Number.NaN }));
    else if (!lane.waiting.length) lane.used = Math.max(lane.used, this.now);
    lane.waiting.push(item);
    this.count++;
  }

  /** Takes a waiting request out (its client has gone); false if it is not waiting (sent, or taken out already). */
  remove(key: string | undefined, item: T): boolean {
    const lane = this.lanes.get(key);
    const at = lane ? lane.waiting.indexOf(item) : -1;
    if (!lane || at < 0) return false;
    lane.waiting.splice(at, 1);
    this.count--;
    if (!lane.running && !lane.waiting.length) this.lanes.delete(key);
    return true;
  }

  /**
   * The next request to send to a worker, with what its lane's recent requests cost (`cost`, NaN if none answered
   * yet); done() says what it cost once answered. Given `costing`, only if its lane's recent requests cost at most
   * that many ms each: otherwise nothing is taken (D166).
   */
  next(costing = Number.POSITIVE_INFINITY): { key: string | undefined; item: T; cost: number } | undefined {
    let chosen: Lane<T> | undefined;
    let chosenKey: string | undefined;
    for (const [key, lane] of this.lanes) {
      if (!lane.waiting.length) continue;
      if (!chosen || lane.used < chosen.used || (lane.used === chosen.used && lane.served < chosen.served)) {
        chosen = lane;
        chosenKey = key;
      }
    }
    if (!chosen || (costing < Number.POSITIVE_INFINITY && !(chosen.cost <= costing))) return undefined;
    this.now = chosen.used;
    chosen.served = ++this.servings;
    chosen.running++;
    this.count--;
    return { key: chosenKey, item: chosen.waiting.shift()!, cost: chosen.cost };
  }

  /**
   * A request sent has been answered (or failed): its lane is charged what it cost, in the workers' milliseconds. A
   * request that failed (`answered` false: its worker died) says nothing of what its lane's requests cost.
   */
  done(key: string | undefined, ms: number, answered = true): void {
    const lane = this.lanes.get(key);
    if (!lane) return;
    lane.used += ms;
    if (answered) lane.cost = Number.isNaN(lane.cost) ? ms : lane.cost + (ms - lane.cost) / COST_WEIGHT;
    lane.running--;
    if (!lane.running && !lane.waiting.length) this.lanes.delete(key);
  }

  /** Takes every waiting request out (the pool is stopping). */
  drain(): T[] {
    const all: T[] = [];
    for (const [key, lane] of this.lanes) {
      all.push(...lane.waiting.splice(0));
      if (!lane.running) this.lanes.delete(key);
    }
    this.count = 0;
    return all;
  }
}
