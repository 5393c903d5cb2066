/**
 * Numbers appended to a temporary file through a small buffer, then copied into a snapshot
 * section: a merge's term tables (vocabulary, list addresses and sizes) grow with the
 * vocabulary, millions of terms, and a build's page table with the pages; both are only
 * needed once written.
 */
import { closeSync, openSync, readSync, rmSync } from "node:fs";
import { writeFully } from "../files";
import type { ContainerWriter } from "./container";

type Column = Float64Array | Uint32Array | Uint16Array | Uint8Array;

const COPY_BYTES = 4 << 20;

export class Spool<T extends Column> {
  private readonly fd: number;
  private readonly buffer: T;
  private used = 0;
  /** Bytes in the file so far. */
  private flushed = 0;
  /** Values appended. */
  length = 0;

  constructor(
    private readonly path: string,
    make: new (n: number) => T,
    bufferLength = 1 << 16,
  ) {
    this.fd = openSync(path, "w+");
    this.buffer = new make(bufferLength);
  }

  /** Appends every value of `values` (a whole array, such as a dense list, or a string's bytes). */
  pushAll(values: T): void {
    // A few values (a heading's bytes) go through the buffer: a write each would be millions of calls.
    if (values.length <= this.buffer.length - this.used) {
      this.buffer.set(values as never, this.used);
      this.used += values.length;
      this.length += values.length;
      return;
    }
    this.flush();
    const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    writeFully(this.fd, bytes, this.path, this.flushed);
    this.flushed += bytes.byteLength;
    this.length += values.length;
  }

  push(v: number): void {
    if (this.used === this.buffer.length) this.flush();
    this.buffer[this.used++] = v;
    this.length++;
  }

  /** Writes everything appended as the section `name` of out, and removes the file. */
  copyInto(out: ContainerWriter, name: string): void {
    this.flush();
    out.begin(name);
    const slice = new Uint8Array(COPY_BYTES);
    for (let at = 0; at < this.flushed; ) {
      const n = readSync(this.fd, slice, 0, Math.min(COPY_BYTES, this.flushed - at), at);
      if (n <= 0) throw new Error(`${this.path}: read ${at} of ${this.flushed} bytes`);
      out.write(slice.subarray(0, n));
      at += n;
    }
    out.end();
    this.close();
  }

  /** Reads the file's bytes from `at` into `into` (after flush()): how many were read, 0 at its end. */
  readAt(into: Uint8Array, at: number): number {
    return at >= this.flushed ? 0 : readSync(this.fd, into, 0, Math.min(into.length, this.flushed - at), at);
  }

  /** Closes and removes the file (also after a failure). */
  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    rmSync(this.path, { force: true });
  }

  /** Writes the buffered values to the file. */
  flush(): void {
    const bytes = new Uint8Array(this.buffer.buffer, this.buffer.byteOffset, this.used * this.buffer.BYTES_PER_ELEMENT);
    writeFully(this.fd, bytes, this.path, this.flushed);
    this.flushed += bytes.byteLength;
    this.used = 0;
  }
}
