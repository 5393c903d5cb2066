/** Growable typed arrays and UTF-8 string columns: what a build appends to (ingest, snapshot), then writes out or reads whole. */
import { closeSync, openSync, readSync, rmSync } from "node:fs";
import { writeFully } from "./files";

type Typed = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;
type Ctor<T extends Typed> = { new (n: number): T };

/**
 * A column's next room: twice, then half as much again from a million values on, so that a column of English
 * Wikipedia's 18 million pages holds at most half again its values rather than twice, and grows by a third of that.
 */
export const grownLength = (length: number): number =>
  length < 1 << 20 ? Math.max(16, length * 2) : length + Math.ceil(length / 2);

export class Growable<T extends Typed> {
  private data: T;
  length = 0;
  constructor(
    private readonly make: Ctor<T>,
    initial = 1024,
  ) {
    this.data = new make(initial);
  }
  /** One holding `values` as they are (adopted, not copied). */
  static of<T extends Typed>(make: Ctor<T>, values: T): Growable<T> {
    const grown = new Growable(make, 0);
    grown.data = values;
    grown.length = values.length;
    return grown;
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const grown = new this.make(grownLength(this.data.length));
      grown.set(this.data as never);
      this.data = grown;
    }
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i]!;
  }
  /** Replaces value i (i < length). */
  set(i: number, v: number): void {
    this.data[i] = v;
  }
  /** Lets the room beyond the values go (a grown column holds up to twice its values): for one held long. */
  trim(): void {
    if (this.data.length > this.length) this.data = this.data.slice(0, this.length) as T;
  }
  /** The values so far (a view: valid until the next push). */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}

/** UTF-8 strings end to end, with their end offsets. */
export class StringColumn {
  private readonly encoder = new TextEncoder();
  private bytes: Uint8Array;
  private used = 0;
  readonly ends: Growable<Uint32Array>;
  /** Room for `bytes` bytes of `count` strings to begin with (a column sized exactly never grows). */
  constructor(bytes = 1 << 16, count = 1024) {
    this.bytes = new Uint8Array(bytes);
    this.ends = new Growable(Uint32Array, count);
  }
  push(s: string): void {
    this.reserve(s.length * 3);
    this.used += this.encoder.encodeInto(s, this.bytes.subarray(this.used)).written;
    this.ends.push(this.used);
  }
  /** A string already encoded (UTF-8 bytes, as push writes them). */
  pushBytes(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.used);
    this.used += bytes.length;
    this.ends.push(this.used);
  }
  get length(): number {
    return this.ends.length;
  }
  /** Empties the column, keeping its room (for the next batch). */
  clear(): void {
    this.used = 0;
    this.ends.length = 0;
  }
  /** Room for `bytes` more bytes. */
  private reserve(bytes: number): void {
    const need = this.used + bytes;
    if (need <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(need, grownLength(this.bytes.length)));
    grown.set(this.bytes.subarray(0, this.used));
    this.bytes = grown;
  }
  /** Lets the room beyond the strings go (as Growable.trim). */
  trim(): void {
    if (this.bytes.length > this.used) this.bytes = this.bytes.slice(0, this.used);
    this.ends.trim();
  }
  blob(): Uint8Array {
    return this.bytes.subarray(0, this.used);
  }
}

/** Bytes a StringFile buffers before writing them, and reads at once (a string longer is read alone). */
const STRING_FILE_WRITE_BYTES = 1 << 16;
const STRING_FILE_READ_BYTES = 4096;

/**
 * UTF-8 strings appended to a file, read back by index: only their ends are held (4 bytes a
 * string). Each read fills a small window of the file (pread): strings read in order cost a
 * read every 4 KB, a string read alone one read. For millions of strings a build needs a few
 * times each, some out of order (its redirects' titles and targets), which held in a column
 * were most of what it held per article at its end.
 */
export class StringFile {
  private readonly decoder = new TextDecoder();
  private readonly fd: number;
  private readonly ends = new Growable(Uint32Array);
  private readonly pending = new Uint8Array(STRING_FILE_WRITE_BYTES);
  private buffered = 0;
  /** Bytes in the file. */
  private flushed = 0;
  private window = new Uint8Array(STRING_FILE_READ_BYTES);
  /** The file's bytes [windowAt, windowAt + windowLength) are in window. */
  private windowAt = 0;
  private windowLength = 0;
  private closed = false;

  /** `path`: the file (made, and removed by close()). */
  constructor(private readonly path: string) {
    this.fd = openSync(path, "w+");
  }

  get length(): number {
    return this.ends.length;
  }

  pushBytes(bytes: Uint8Array): void {
    const end = this.flushed + this.buffered + bytes.length;
    if (end > 0xffffffff) throw new Error(`${this.path}: more than 4 GiB of strings`);
    if (bytes.length > this.pending.length - this.buffered) {
      this.flush();
      if (bytes.length > this.pending.length) this.write(bytes);
      else {
        this.pending.set(bytes);
        this.buffered = bytes.length;
      }
    } else {
      this.pending.set(bytes, this.buffered);
      this.buffered += bytes.length;
    }
    this.ends.push(end);
  }

  /** Once every string is pushed: the last ones go to the file, and the room the ends grew by goes (they are held while the strings are read). */
  trim(): void {
    this.flush();
    this.ends.trim();
  }

  at(i: number): string {
    return this.decoder.decode(this.bytesAt(i));
  }

  /** String i's UTF-8 bytes: a view, valid until the next read. */
  bytesAt(i: number): Uint8Array {
    if (this.closed) throw new Error(`${this.path}: read after it was closed`);
    const start = i ? this.ends.get(i - 1) : 0;
    const end = this.ends.get(i);
    if (start >= this.windowAt && end <= this.windowAt + this.windowLength)
      return this.window.subarray(start - this.windowAt, end - this.windowAt);
    this.flush();
    if (end - start > this.window.length) this.window = new Uint8Array(end - start);
    const want = Math.min(this.window.length, this.flushed - start);
    let got = 0;
    while (got < want) {
      const n = readSync(this.fd, this.window, got, want - got, start + got);
      if (n <= 0) throw new Error(`${this.path}: read ${got} of ${want} bytes at ${start}`);
      got += n;
    }
    this.windowAt = start;
    this.windowLength = got;
    return this.window.subarray(0, end - start);
  }

  /** Closes and removes the file (again and again: closed is fine). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    rmSync(this.path, { force: true });
  }

  private flush(): void {
    if (!this.buffered) return;
    this.write(this.pending.subarray(0, this.buffered));
    this.buffered = 0;
  }

  private write(bytes: Uint8Array): void {
    writeFully(this.fd, bytes, this.path, this.flushed);
    this.flushed += bytes.length;
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
    return this.decoder.decode(this.bytesAt(i));
  }

  /** String i's UTF-8 bytes (a view). */
  bytesAt(i: number): Uint8Array {
    return this.blob.subarray(i ? this.ends[i - 1]! : 0, this.ends[i]!);
  }

  /** Strings i and j in UTF-8 byte order (code point order, not JS order): for grouping equal strings. */
  compareAt(i: number, j: number): number {
    const blob = this.blob;
    let a = i ? this.ends[i - 1]! : 0;
    let b = j ? this.ends[j - 1]! : 0;
    const aEnd = this.ends[i]!;
    const bEnd = this.ends[j]!;
    for (; a < aEnd && b < bEnd; a++, b++) if (blob[a] !== blob[b]) return blob[a]! - blob[b]!;
    return aEnd - a - (bEnd - b);
  }

  /**
   * Strings i and j (of `other`, default this) in JS string order (UTF-16 code units), as
   * `at(i) < other.at(j)` orders them, without making either string: a build sorts millions
   * of stored titles this way.
   */
  compareAsStrings(i: number, j: number, other: StoredStrings = this): number {
    return compareUtf8Spans(
      this.blob,
      this.textStart(i),
      this.ends[i]!,
      other.blob,
      other.textStart(j),
      other.ends[j]!,
    );
  }

  /** Where string i's text starts: past a leading BOM, which at() drops. */
  private textStart(i: number): number {
    return textStart(this.blob, i ? this.ends[i - 1]! : 0, this.ends[i]!);
  }

  /**
   * String i against `key` in JS string order (UTF-16 code units), as `at(i) < key` and
   * `at(i) === key` compare them, without making the string: negative, 0 or positive. The
   * strings were written by TextEncoder (valid UTF-8); a leading BOM is skipped, as at() drops it.
   */
  compare(i: number, key: string): number {
    const blob = this.blob;
    let at = this.textStart(i);
    const end = this.ends[i]!;
    let k = 0;
    while (at < end) {
      let cp = codePointAt(blob, at);
      at += utf8Length(cp);
      if (cp >= 0x10000) {
        if (k >= key.length) return 1;
        const d = firstUnit(cp) - key.charCodeAt(k++);
        if (d) return d;
        cp = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      }
      if (k >= key.length) return 1;
      const d = cp - key.charCodeAt(k++);
      if (d) return d;
    }
    return k - key.length;
  }
}

/**
 * Two strings' UTF-8 bytes in JS string order (UTF-16 code units), as `a < b` orders the
 * strings (a leading BOM skipped, as StoredStrings.compareAsStrings does): negative, 0 or positive.
 */
export function compareUtf8AsStrings(a: Uint8Array, b: Uint8Array): number {
  return compareUtf8Spans(a, textStart(a, 0, a.length), a.length, b, textStart(b, 0, b.length), b.length);
}

/** Where a string's text starts within blob[at, end): past a leading BOM, which decoding drops. */
function textStart(blob: Uint8Array, at: number, end: number): number {
  return end - at >= 3 && blob[at] === 0xef && blob[at + 1] === 0xbb && blob[at + 2] === 0xbf ? at + 3 : at;
}

function compareUtf8Spans(
  blob: Uint8Array,
  a: number,
  aEnd: number,
  otherBlob: Uint8Array,
  b: number,
  bEnd: number,
): number {
  while (a < aEnd && b < bEnd) {
    if (blob[a] === otherBlob[b] && blob[a]! < 0x80) {
      a++;
      b++;
      continue;
    }
    const x = codePointAt(blob, a);
    const y = codePointAt(otherBlob, b);
    if (x !== y) return firstUnit(x) - firstUnit(y) || x - y;
    a += utf8Length(x);
    b += utf8Length(y);
  }
  return (a < aEnd ? 1 : 0) - (b < bEnd ? 1 : 0);
}

/** The code point whose UTF-8 encoding starts at blob[at] (valid UTF-8, as TextEncoder writes it). */
function codePointAt(blob: Uint8Array, at: number): number {
  const b = blob[at]!;
  if (b < 0x80) return b;
  if (b < 0xe0) return ((b & 0x1f) << 6) | (blob[at + 1]! & 0x3f);
  if (b < 0xf0) return ((b & 0x0f) << 12) | ((blob[at + 1]! & 0x3f) << 6) | (blob[at + 2]! & 0x3f);
  return ((b & 0x07) << 18) | ((blob[at + 1]! & 0x3f) << 12) | ((blob[at + 2]! & 0x3f) << 6) | (blob[at + 3]! & 0x3f);
}

const utf8Length = (cp: number) => (cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);

/** A code point's first UTF-16 unit: its high surrogate when it needs two. */
const firstUnit = (cp: number) => (cp < 0x10000 ? cp : 0xd800 + ((cp - 0x10000) >> 10));

/** A typed-array view of a mapped section (sections are 8-byte aligned). */
export function viewOf<T extends Typed>(
  make: { new (b: ArrayBufferLike, o: number, n: number): T; BYTES_PER_ELEMENT: number },
  bytes: Uint8Array,
): T {
  return new make(bytes.buffer, bytes.byteOffset, bytes.byteLength / make.BYTES_PER_ELEMENT);
}

/** The first index of `sorted` (ascending) whose value is not below `value`; its length when none is. */
export function lowerBound(sorted: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
