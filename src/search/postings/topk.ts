/**
 * Top-k selection: the best `need` entries by class (lower first), then score (higher
 * first), then a tie-breaker (lower first), without sorting them all.
 */

/**
 * The indexes of the best `need` entries of [0, n), in order. Entries of the classes that all
 * fit are taken whole; only the class where the cut falls is selected by score, with a
 * bounded heap. Equal scores go by `tie` (the entry's page or chunk), so that the order never
 * depends on the order entries were found in.
 */
export function bestEntries(
  klass: Uint8Array,
  score: Float64Array,
  n: number,
  need: number,
  tie: ArrayLike<number>,
): number[] {
  const perClass = new Uint32Array(256);
  for (let e = 0; e < n; e++) perClass[klass[e]!]!++;
  let cut = 255;
  let before = 0;
  for (let c = 0; c < 256; c++) {
    if (before + perClass[c]! >= need) {
      cut = c;
      break;
    }
    before += perClass[c]!;
  }
  const chosen: number[] = [];
  const heap = new Heap(score, tie, need - before);
  for (let e = 0; e < n; e++) {
    const c = klass[e]!;
    if (c < cut) chosen.push(e);
    else if (c === cut) heap.offer(e);
  }
  chosen.push(...heap.items());
  return chosen.sort((a, b) => klass[a]! - klass[b]! || score[b]! - score[a]! || tie[a]! - tie[b]!);
}

/** The `room` best entries seen (higher score, then lower tie), as a heap whose root is the worst kept. */
class Heap {
  private readonly kept: number[] = [];
  constructor(
    private readonly score: Float64Array,
    private readonly tie: ArrayLike<number>,
    private readonly room: number,
  ) {}
  /** Whether entry a ranks below entry b. */
  private worse(a: number, b: number): boolean {
    const s = this.score;
    return s[a]! < s[b]! || (s[a] === s[b] && this.tie[a]! > this.tie[b]!);
  }
  offer(e: number): void {
    const h = this.kept;
    if (this.room <= 0) return;
    if (h.length < this.room) {
      h.push(e);
      let i = h.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(h[i]!, h[parent]!)) break;
        // Swapped through a local: a destructuring swap makes an array each time.
        const t = h[parent]!;
        h[parent] = h[i]!;
        h[i] = t;
        i = parent;
      }
      return;
    }
    if (!this.worse(h[0]!, e)) return;
    h[0] = e;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.worse(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.worse(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      const t = h[m]!;
      h[m] = h[i]!;
      h[i] = t;
      i = m;
    }
  }
  items(): number[] {
    return this.kept;
  }
}

/** The `room` highest scores offered, as a min-heap. */
class TopScores {
  private readonly heap: Float64Array;
  private size = 0;
  constructor(room: number) {
    this.heap = new Float64Array(room);
  }
  full(): boolean {
    return this.size === this.heap.length;
  }
  least(): number {
    return this.heap[0]!;
  }
  /** Whether the score was kept. */
  offer(score: number): boolean {
    const h = this.heap;
    if (this.size < h.length) {
      let i = this.size++;
      h[i] = score;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (h[parent]! <= h[i]!) break;
        const t = h[parent]!;
        h[parent] = h[i]!;
        h[i] = t;
        i = parent;
      }
      return true;
    }
    if (score <= h[0]!) return false;
    h[0] = score;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l]! < h[m]!) m = l;
      if (r < h.length && h[r]! < h[m]!) m = r;
      if (m === i) break;
      const t = h[m]!;
      h[m] = h[i]!;
      h[i] = t;
      i = m;
    }
    return true;
  }
}

/** The k-th largest value (k ≤ values.length). */
export function kthLargest(values: Float64Array, k: number): number {
  const top = new TopScores(k);
  for (const v of values) top.offer(v);
  return top.least();
}
