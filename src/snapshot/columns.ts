/** Growable typed arrays for the build: appended to, then written out whole. */
type Typed = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;
type Ctor<T extends Typed> = { new (n: number): T };

export class Growable<T extends Typed> {
  private data: T;
  length = 0;
  constructor(
    private readonly make: Ctor<T>,
    initial = 1024,
  ) {
    this.data = new make(initial);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const grown = new this.make(this.data.length * 2);
      grown.set(this.data as never);
      this.data = grown;
    }
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i]!;
  }
  /** The values so far (a view: valid until the next push). */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}

/** UTF-8 strings end to end, with their end offsets. */
export class StringColumn {
  private readonly encoder = new TextEncoder();
  private bytes = new Uint8Array(1 << 16);
  private used = 0;
  readonly ends = new Growable(Uint32Array);
  push(s: string): void {
    const need = this.used + s.length * 3;
    if (need > this.bytes.length) {
      const grown = new Uint8Array(Math.max(need, this.bytes.length * 2));
      grown.set(this.bytes.subarray(0, this.used));
      this.bytes = grown;
    }
    this.used += this.encoder.encodeInto(s, this.bytes.subarray(this.used)).written;
    this.ends.push(this.used);
  }
  get length(): number {
    return this.ends.length;
  }
  blob(): Uint8Array {
    return this.bytes.subarray(0, this.used);
  }
}

/** Reads strings stored as a UTF-8 blob and end offsets. */
export class StoredStrings {
  private readonly decoder = new TextDecoder();
  constructor(
    private readonly blob: Uint8Array,
    private readonly ends: Uint32Array,
  ) {}
  get length(): number {
    return this.ends.length;
  }
  at(i: number): string {
    return this.decoder.decode(this.blob.subarray(i ? this.ends[i - 1]! : 0, this.ends[i]!));
  }
}

/** A typed-array view of a mapped section (sections are 8-byte aligned). */
export function viewOf<T extends Typed>(make: { new (b: ArrayBufferLike, o: number, n: number): T; BYTES_PER_ELEMENT: number }, bytes: Uint8Array): T {
  return new make(bytes.buffer, bytes.byteOffset, bytes.byteLength / make.BYTES_PER_ELEMENT);
}
