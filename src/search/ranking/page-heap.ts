/**
 * The best pages a pass of the executor has found, at most `room` of them, by score (higher
 * first) then page (lower first): a heap whose root is the worst kept, so that its score is
 * the bar a window or a page must beat to matter, once the heap is full.
 */
export class PageHeap {
  private room = 0;
  size = 0;
  private page = new Int32Array(16);
  private score = new Float64Array(16);
  private chunk = new Int32Array(16);
  private tier = new Uint8Array(16);
  /** Heap of slots, the worst kept at 0. */
  private heap = new Int32Array(16);

  reset(room: number): void {
    this.room = room;
    this.size = 0;
  }

  get full(): boolean {
    return this.size >= this.room;
  }

  /** The score a page must reach to enter (-Infinity until the heap is full). */
  get bar(): number {
    if (this.room <= 0) return Infinity;
    return this.size < this.room ? -Infinity : this.score[this.heap[0]!]!;
  }

  /** Slot a ranks below slot b. */
  private worse(a: number, b: number): boolean {
    const s = this.score;
    return s[a]! < s[b]! || (s[a] === s[b] && this.page[a]! > this.page[b]!);
  }

  offer(page: number, score: number, chunk: number, tier: number): void {
    if (this.room <= 0) return;
    if (this.size < this.room) {
      if (this.size === this.page.length) this.grow();
      const slot = this.size;
      this.set(slot, page, score, chunk, tier);
      this.heap[this.size++] = slot;
      this.up(this.size - 1);
      return;
    }
    const root = this.heap[0]!;
    const s = this.score[root]!;
    if (score < s || (score === s && page > this.page[root]!)) return;
    this.set(root, page, score, chunk, tier);
    this.down(0);
  }

  /** Calls visit with every page kept, in no order. */
  forEach(visit: (page: number, score: number, chunk: number, tier: number) => void): void {
    for (let i = 0; i < this.size; i++) {
      const slot = this.heap[i]!;
      visit(this.page[slot]!, this.score[slot]!, this.chunk[slot]!, this.tier[slot]!);
    }
  }

  private set(slot: number, page: number, score: number, chunk: number, tier: number): void {
    this.page[slot] = page;
    this.score[slot] = score;
    this.chunk[slot] = chunk;
    this.tier[slot] = tier;
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.worse(h[i]!, h[parent]!)) break;
      const t = h[parent]!;
      h[parent] = h[i]!;
      h[i] = t;
      i = parent;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    const n = this.size;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.worse(h[l]!, h[m]!)) m = l;
      if (r < n && this.worse(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      const t = h[m]!;
      h[m] = h[i]!;
      h[i] = t;
      i = m;
    }
  }

  private grow(): void {
    const size = this.page.length * 2;
    const grown = <T extends Int32Array | Float64Array | Uint8Array>(a: T, make: new (n: number) => T): T => {
      const b = new make(size);
      b.set(a);
      return b;
    };
    this.page = grown(this.page, Int32Array);
    this.score = grown(this.score, Float64Array);
    this.chunk = grown(this.chunk, Int32Array);
    this.tier = grown(this.tier, Uint8Array);
    this.heap = grown(this.heap, Int32Array);
  }
}
