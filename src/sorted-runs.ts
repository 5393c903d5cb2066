/**
 * Records taken in any order and given back sorted, in bounded memory, as the index build
 * does with its postings: held in columns until a budget is reached, then sorted and written
 * to a temporary file as a run; at the end the runs are merged. A record is a few numbers and
 * a few UTF-8 strings; records are ordered by their first `keyFields` numbers, then (with
 * `stringKey`) by their first string in JS string order, then in the order they were pushed. A build's page rows go through one: held whole, they grew with the
 * pages (English Wikipedia has about 7 million) until the build's end.
 */
import { closeSync, openSync, readSync, rmSync } from "node:fs";
import { makeScratch, removeScratch, writeFully } from "./files";
import { join } from "node:path";
import { compareUtf8AsStrings, Growable, StoredStrings, StringColumn } from "./columns";

/** A record as drain() gives it: valid until the next one. */
export interface SortedRecord {
  readonly numbers: Float64Array;
  /** String k's UTF-8 bytes (a view). */
  string(k: number): Uint8Array;
}

export interface SortedRunsOptions {
  /** Where the runs' folder is made (beside the output: the same disk). */
  besides: string;
  numbers: number;
  strings: number;
  /** Records are ordered by their first keyFields numbers (then as pushed). */
  keyFields: number;
  /** Then by their first string, in JS string order (as `a < b` orders the strings). */
  stringKey?: boolean;
  /** Bytes the records held in memory may take before they are sorted and written as a run. */
  budgetBytes: number;
}

/** A run's write buffer, and each run's read buffer in the merge (grown for a longer record). */
const IO_BYTES = 1 << 20;
const READ_BYTES = 256 << 10;

let handled = 0;
/**
 * A young collection every 64K records pushed or read: each leaves a few views and arrays
 * behind, which the collector, left alone, let pile up to several hundred MB at a million
 * pages (more than the records held).
 */
function collectNow(): void {
  if ((++handled & 0xffff) === 0) Bun.gc(false);
}

export class SortedRuns {
  private readonly dir: string;
  private readonly runs: string[] = [];
  private readonly numbers = new Growable(Float64Array);
  private readonly strings = new StringColumn();
  private readonly encoder = new TextEncoder();
  private scratch = new Uint8Array(256);
  private count = 0;

  constructor(private readonly options: SortedRunsOptions) {
    this.dir = makeScratch(options.besides, "sorted");
  }

  /** Runs written so far. */
  get runCount(): number {
    return this.runs.length;
  }

  /** Adds a record: its numbers (options.numbers of them) and its strings (options.strings). */
  push(numbers: ArrayLike<number>, strings: readonly (string | Uint8Array)[]): void {
    for (let k = 0; k < this.options.numbers; k++) this.numbers.push(numbers[k]!);
    for (let k = 0; k < this.options.strings; k++) {
      const s = strings[k]!;
      this.strings.pushBytes(typeof s === "string" ? this.encode(s) : s);
    }
    this.count++;
    if (this.heldBytes() >= this.options.budgetBytes) this.spill();
    collectNow();
  }

  /**
   * Every record pushed, in order, once; the runs' files are removed at the end (also when
   * the loop is left early).
   */
  *drain(): Generator<SortedRecord> {
    try {
      if (this.runs.length) this.spill();
      const records = this.runs.length ? this.merged() : this.held();
      for (const record of records) {
        yield record;
        collectNow();
      }
    } finally {
      this.close();
    }
  }

  /** Removes the runs' files (after a failure, or once drained). */
  close(): void {
    removeScratch(this.dir);
  }

  private heldBytes(): number {
    return this.numbers.length * 8 + this.strings.blob().length + this.strings.length * 4 + this.count * 4;
  }

  private encode(s: string): Uint8Array {
    if (this.scratch.length < s.length * 3) this.scratch = new Uint8Array(s.length * 3);
    return this.scratch.subarray(0, this.encoder.encodeInto(s, this.scratch).written);
  }

  /** The records held, in order: their numbers in place, their strings as views. */
  private *held(): Generator<SortedRecord> {
    const { numbers: n, strings: s } = this.options;
    const values = this.numbers.view();
    const blob = this.strings.blob();
    const ends = this.strings.ends.view();
    const record = {
      numbers: new Float64Array(n),
      at: 0,
      string(k: number): Uint8Array {
        const i = this.at * s + k;
        return blob.subarray(i ? ends[i - 1]! : 0, ends[i]!);
      },
    };
    for (const i of this.order()) {
      for (let k = 0; k < n; k++) record.numbers[k] = values[i * n + k]!;
      record.at = i;
      yield record;
    }
  }

  /** The records held, their indexes sorted by key, then as pushed. */
  private order(): Uint32Array {
    const { numbers: n, strings: s, keyFields, stringKey } = this.options;
    const values = this.numbers.view();
    const keys = stringKey ? new StoredStrings(this.strings.blob(), this.strings.ends.view()) : undefined;
    return Uint32Array.from({ length: this.count }, (_, i) => i).sort((a, b) => {
      for (let k = 0; k < keyFields; k++) {
        const d = values[a * n + k]! - values[b * n + k]!;
        if (d) return d;
      }
      return keys?.compareAsStrings(a * s, b * s) || a - b;
    });
  }

  /** The records held, sorted and written as the next run; memory starts afresh. */
  private spill(): void {
    if (!this.count) return;
    const path = join(this.dir, `run-${this.runs.length}`);
    const out = new RunWriter(path);
    const { numbers: n, strings: s } = this.options;
    const values = this.numbers.view();
    const blob = this.strings.blob();
    const ends = this.strings.ends.view();
    // Copied from the columns by offset: a view a record (several a record, millions of records) would be garbage to collect.
    for (const i of this.order()) {
      out.numbers(values, i * n, n);
      for (let j = i * s; j < i * s + s; j++) out.bytes(blob, j ? ends[j - 1]! : 0, ends[j]!);
    }
    out.close();
    this.runs.push(path);
    // The room is kept for the next run: new columns each run left the old ones to a full collection.
    this.numbers.length = 0;
    this.strings.clear();
    this.count = 0;
  }

  /** The runs merged: at each step the least record of any run's head (of equal keys, the earlier run's). */
  private *merged(): Generator<SortedRecord> {
    const { numbers: n, strings: s, keyFields, stringKey } = this.options;
    const heads = this.runs.map((path, rank) => new RunReader(path, rank, n, s));
    const less = (a: RunReader, b: RunReader): boolean => {
      for (let k = 0; k < keyFields; k++) if (a.numbers[k] !== b.numbers[k]) return a.numbers[k]! < b.numbers[k]!;
      const d = stringKey ? compareUtf8AsStrings(a.string(0), b.string(0)) : 0;
      return d ? d < 0 : a.rank < b.rank;
    };
    try {
      const heap = heads.filter((h) => h.next());
      const down = (i: number) => {
        for (;;) {
          const l = 2 * i + 1;
          if (l >= heap.length) return;
          const c = l + 1 < heap.length && less(heap[l + 1]!, heap[l]!) ? l + 1 : l;
          if (!less(heap[c]!, heap[i]!)) return;
          [heap[c], heap[i]] = [heap[i]!, heap[c]!];
          i = c;
        }
      };
      for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
      while (heap.length) {
        const head = heap[0]!;
        yield head;
        if (!head.next()) {
          const last = heap.pop()!;
          if (!heap.length) break;
          heap[0] = last;
        }
        down(0);
      }
    } finally {
      for (const h of heads) h.close();
    }
  }
}

/** A run's records written through a buffer: each one's numbers (f64), then each string's length (u32) and bytes. */
class RunWriter {
  private readonly fd: number;
  private readonly buffer = new Uint8Array(IO_BYTES);
  private readonly view = new DataView(this.buffer.buffer);
  private used = 0;
  constructor(private readonly path: string) {
    this.fd = openSync(path, "w");
  }
  /** Values[from, from + n). */
  numbers(values: Float64Array, from: number, n: number): void {
    this.room(n * 8);
    for (let k = from; k < from + n; k++) {
      this.view.setFloat64(this.used, values[k]!, true);
      this.used += 8;
    }
  }
  /** A string's bytes, blob[start, end). */
  bytes(blob: Uint8Array, start: number, end: number): void {
    this.room(4);
    this.view.setUint32(this.used, end - start, true);
    this.used += 4;
    if (end - start > this.buffer.length - this.used) {
      this.flush();
      this.write(blob.subarray(start, end));
      return;
    }
    const buffer = this.buffer;
    for (let at = start; at < end; at++) buffer[this.used++] = blob[at]!;
  }
  close(): void {
    this.flush();
    closeSync(this.fd);
  }
  private room(n: number): void {
    if (this.used + n > this.buffer.length) this.flush();
  }
  private flush(): void {
    this.write(this.buffer.subarray(0, this.used));
    this.used = 0;
  }
  private write(bytes: Uint8Array): void {
    writeFully(this.fd, bytes, this.path);
  }
}

/** A run read back a record at a time through a buffer: the merge's view of it. */
class RunReader implements SortedRecord {
  readonly numbers: Float64Array;
  private readonly fd: number;
  private buffer = new Uint8Array(READ_BYTES);
  private view = new DataView(this.buffer.buffer);
  /** Bytes of the buffer read from the file; where reading goes on; where the current record starts. */
  private filled = 0;
  private at = 0;
  private recordStart = 0;
  private readonly starts: number[];
  private readonly lengths: number[];
  constructor(
    private readonly path: string,
    readonly rank: number,
    numbers: number,
    strings: number,
  ) {
    this.fd = openSync(path, "r");
    this.numbers = new Float64Array(numbers);
    this.starts = new Array(strings).fill(0);
    this.lengths = new Array(strings).fill(0);
  }
  string(k: number): Uint8Array {
    return this.buffer.subarray(this.starts[k]!, this.starts[k]! + this.lengths[k]!);
  }
  /** Reads the next record; false at the run's end. */
  next(): boolean {
    this.recordStart = this.at;
    if (!this.ensure(this.numbers.length * 8)) return false;
    for (let k = 0; k < this.numbers.length; k++) {
      this.numbers[k] = this.view.getFloat64(this.at, true);
      this.at += 8;
    }
    for (let k = 0; k < this.starts.length; k++) {
      if (!this.ensure(4)) throw new Error(`${this.path}: a record cut short`);
      const length = this.view.getUint32(this.at, true);
      this.at += 4;
      if (!this.ensure(length)) throw new Error(`${this.path}: a record cut short`);
      this.starts[k] = this.at;
      this.lengths[k] = length;
      this.at += length;
    }
    return true;
  }
  close(): void {
    closeSync(this.fd);
    rmSync(this.path, { force: true });
  }
  /**
   * Whether n bytes from `at` are in the buffer, reading more when not: the current record's
   * bytes move to the buffer's start (and the places of its strings with them). False when
   * the file ends first.
   */
  private ensure(n: number): boolean {
    if (this.at + n <= this.filled) return true;
    const shift = this.recordStart;
    const need = this.at - shift + n;
    if (need > this.buffer.length) {
      const grown = new Uint8Array(Math.max(need, this.buffer.length * 2));
      grown.set(this.buffer.subarray(shift, this.filled));
      this.buffer = grown;
      this.view = new DataView(grown.buffer);
    } else this.buffer.copyWithin(0, shift, this.filled);
    this.filled -= shift;
    this.at -= shift;
    this.recordStart = 0;
    for (let k = 0; k < this.starts.length; k++) this.starts[k]! -= shift;
    while (this.filled < this.at + n) {
      const got = readSync(this.fd, this.buffer, this.filled, this.buffer.length - this.filled, null);
      if (got <= 0) return false;
      this.filled += got;
    }
    return true;
  }
}

/** A record's bytes kept past the next record (whose reading reuses the views): copied into room of its own, grown as needed. */
export class KeptBytes {
  private room = new Uint8Array(256);

  keep(bytes: Uint8Array): Uint8Array {
    if (bytes.length > this.room.length) this.room = new Uint8Array(bytes.length * 2);
    this.room.set(bytes);
    return this.room.subarray(0, bytes.length);
  }
}
