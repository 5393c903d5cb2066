/** A page impact (D133, postings-format.ts) per block of the list a PostingsWriter is writing: (tf, length) and tf over the length's norm; 0 where none is known yet. */
export class PageImpacts {
  private tfs = new Uint32Array(64);
  private lengths = new Uint32Array(64);
  private ratios = new Float64Array(64);
  private count = 0;

  clear(): void {
    this.tfs.fill(0, 0, this.count);
    this.lengths.fill(0, 0, this.count);
    this.ratios.fill(0, 0, this.count);
    this.count = 0;
  }

  raise(b: number, tf: number, length: number, ratio: number): void {
    if (b >= this.ratios.length) {
      const size = Math.max(b + 1, this.ratios.length * 2);
      const grow = <T extends Uint32Array | Float64Array>(a: T, make: new (n: number) => T): T => {
        const grown = new make(size);
        grown.set(a);
        return grown;
      };
      this.tfs = grow(this.tfs, Uint32Array);
      this.lengths = grow(this.lengths, Uint32Array);
      this.ratios = grow(this.ratios, Float64Array);
    }
    this.count = Math.max(this.count, b + 1);
    if (ratio <= this.ratios[b]!) return;
    this.ratios[b] = ratio;
    this.tfs[b] = tf;
    this.lengths[b] = length;
  }

  tf(b: number): number {
    return b < this.count ? this.tfs[b]! : 0;
  }
  length(b: number): number {
    return b < this.count ? this.lengths[b]! : 0;
  }
  ratio(b: number): number {
    return b < this.count ? this.ratios[b]! : 0;
  }
}
