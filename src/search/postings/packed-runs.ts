/** Packed runs (the layout in postings-format.ts): values bit-packed at one width with exceptions patched in, written and read. */
import { EXCEPTIONS, PACKED_FROM } from "./postings-format";

/** Bits needed for v (0 for 0). */
function widthOf(v: number): number {
  return 32 - Math.clz32(v);
}

/** A byte buffer that grows by doubling, reused from list to list. */
export class Bytes {
  data = new Uint8Array(1 << 12);
  length = 0;
  private room(n: number): void {
    if (this.length + n <= this.data.length) return;
    let size = this.data.length * 2;
    while (size < this.length + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.data.subarray(0, this.length));
    this.data = grown;
  }
  byte(v: number): void {
    this.room(1);
    this.data[this.length++] = v;
  }
  varint(v: number): void {
    this.room(8);
    const d = this.data;
    while (v >= 128) {
      d[this.length++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    d[this.length++] = v;
  }
  u16(v: number): void {
    this.room(2);
    const d = this.data;
    d[this.length++] = v & 255;
    d[this.length++] = (v >>> 8) & 255;
  }
  u32(v: number): void {
    this.room(4);
    const d = this.data;
    d[this.length++] = v & 255;
    d[this.length++] = (v >>> 8) & 255;
    d[this.length++] = (v >>> 16) & 255;
    d[this.length++] = v >>> 24;
  }
  append(b: Bytes): void {
    const n = b.length;
    this.room(n);
    // Short runs byte by byte: a subarray is an object, and a build appends two per list, most of them short.
    if (n <= 64) {
      const from = b.data;
      const to = this.data;
      for (let i = 0, at = this.length; i < n; i++) to[at + i] = from[i]!;
    } else this.data.set(b.data.subarray(0, n), this.length);
    this.length += n;
  }
}

/** How many values of each width a run has (0..32): the width is chosen from it alone. */
const widthCounts = new Int32Array(33);

/** Writes values[from, from + m) as a packed run (see the layout above), at the width that takes the fewest bytes. */
export function writePacked(out: Bytes, values: Uint32Array, from: number, m: number): void {
  widthCounts.fill(0);
  let widest = 0;
  for (let i = from; i < from + m; i++) {
    const w = widthOf(values[i]!);
    widthCounts[w]!++;
    if (w > widest) widest = w;
  }
  let width = widest;
  let best = (m * widest + 7) >>> 3;
  for (let b = widest - 1; b >= 0; b--) {
    let exceptions = 0;
    let extra = 0;
    for (let w = b + 1; w <= widest; w++) {
      const count = widthCounts[w]!;
      exceptions += count;
      extra += count * (1 + Math.ceil((w - b) / 7));
    }
    if (exceptions > EXCEPTIONS) break;
    const cost = ((m * b + 7) >>> 3) + 1 + extra;
    if (cost < best) {
      best = cost;
      width = b;
    }
  }
  let exceptions = 0;
  for (let w = width + 1; w <= widest; w++) exceptions += widthCounts[w]!;
  out.byte(width | (exceptions ? 128 : 0));
  const mask = width === 32 ? -1 : (1 << width) - 1;
  // Up to 39 bits pending: kept in a double, exact below 2^53.
  let pending = 0;
  let bits = 0;
  for (let i = from; i < from + m; i++) {
    pending += ((values[i]! & mask) >>> 0) * 2 ** bits;
    bits += width;
    while (bits >= 8) {
      out.byte(pending % 256);
      pending = Math.floor(pending / 256);
      bits -= 8;
    }
  }
  if (bits > 0) out.byte(pending);
  if (!exceptions) return;
  out.byte(exceptions);
  for (let i = from; i < from + m; i++) {
    const v = values[i]!;
    if (widthOf(v) <= width) continue;
    out.byte(i - from);
    out.varint(width === 0 ? v : Math.floor(v / 2 ** width));
  }
}

/** Writes values[from, from + m) as a run of positions: varints when short, else packed. */
export function writeRun(out: Bytes, values: Uint32Array, from: number, m: number): void {
  if (m >= PACKED_FROM) writePacked(out, values, from, m);
  else for (let i = from; i < from + m; i++) out.varint(values[i]!);
}

/**
 * Unpacks a packed run of m values (its token at `at`) into out[to, to + m), exceptions
 * patched in: where the run ends.
 */
export function unpack(bytes: Uint8Array, at: number, m: number, out: Uint32Array, to: number): number {
  const token = bytes[at++]!;
  const width = token & 63;
  const end = at + ((m * width + 7) >>> 3);
  if (width === 0) out.fill(0, to, to + m);
  else if (width <= 24) {
    // Bits taken from an accumulator filled a byte at a time (at most 23 + 8 bits held): only the run's bytes are read.
    const mask = (1 << width) - 1;
    let held = 0;
    let bits = 0;
    for (let i = 0; i < m; i++) {
      while (bits < width) {
        held |= bytes[at++]! << bits;
        bits += 8;
      }
      out[to + i] = held & mask;
      held >>>= width;
      bits -= width;
    }
  } else {
    const mask = width === 32 ? -1 : (1 << width) - 1;
    for (let i = 0, bit = 0; i < m; i++, bit += width) {
      const k = at + (bit >>> 3);
      const shift = bit & 7;
      // Up to five bytes a value. Past a part's end (the last value's spare bytes), undefined reads as 0.
      let v = (bytes[k]! | (bytes[k + 1]! << 8) | (bytes[k + 2]! << 16) | (bytes[k + 3]! << 24)) >>> shift;
      if (shift + width > 32) v |= bytes[k + 4]! << (32 - shift);
      out[to + i] = v & mask;
    }
  }
  if (!(token & 128)) return end;
  return patch(bytes, end, width, out, to);
}

/**
 * Adds the exceptions' high bits (at `at`) to out[to + index − first], for the indexes in [first, first + count) (all
 * of a run's by default): where they end. Exceptions are written in index order (writePacked): a part's read stops at
 * the first past it (-1; a document's first position is mostly one, so reading on scanned those of every document of
 * the run). An index past a whole run's values is damage, skipped.
 */
function patch(
  bytes: Uint8Array,
  at: number,
  width: number,
  out: Uint32Array,
  to: number,
  first = 0,
  count = EXCEPTIONS,
): number {
  const exceptions = bytes[at++]!;
  for (let e = 0; e < exceptions; e++) {
    const index = bytes[at++]! - first;
    if (index >= count && count < EXCEPTIONS) return -1;
    let c = bytes[at++]!;
    if (index < 0 || index >= count) {
      while (c & 128) c = bytes[at++]!;
      continue;
    }
    let high = c & 127;
    let scale = 128;
    while (c & 128) {
      c = bytes[at++]!;
      high += (c & 127) * scale;
      scale *= 128;
    }
    out[to + index] = out[to + index]! + high * 2 ** width;
  }
  return at;
}

/** Where a packed run of m values (its token at `at`) ends. */
function skipPacked(bytes: Uint8Array, at: number, m: number): number {
  const token = bytes[at++]!;
  at += (m * (token & 63) + 7) >>> 3;
  if (!(token & 128)) return at;
  const count = bytes[at++]!;
  for (let e = 0; e < count; e++) {
    at++;
    while (bytes[at++]! & 128);
  }
  return at;
}

/** Reads a run of m position values (varints or packed) into out[to, to + m): where it ends. */
export function readRun(bytes: Uint8Array, at: number, m: number, out: Uint32Array, to: number): number {
  if (m >= PACKED_FROM) return unpack(bytes, at, m, out, to);
  for (let i = 0; i < m; i++) {
    let c = bytes[at++]!;
    let v = c & 127;
    let scale = 128;
    while (c & 128) {
      c = bytes[at++]!;
      v += (c & 127) * scale;
      scale *= 128;
    }
    out[to + i] = v;
  }
  return at;
}

/**
 * Reads values [first, first + count) of a run of m position values (varints or packed, at
 * `at`) into out[to, to + count): a packed run's values straight from their bits, its
 * exceptions' high bits added from its list, so a document's few positions cost no more than
 * their own bits (Tantivy's PositionReader reads a bit-packed block the same way).
 */
export function readRunPart(
  bytes: Uint8Array,
  at: number,
  m: number,
  first: number,
  count: number,
  out: Uint32Array,
  to: number,
): void {
  if (m < PACKED_FROM) {
    for (let i = 0; i < first; i++) while (bytes[at++]! & 128);
    readRun(bytes, at, count, out, to);
    return;
  }
  const token = bytes[at++]!;
  const width = token & 63;
  if (width === 0) out.fill(0, to, to + count);
  else {
    const mask = width === 32 ? -1 : (1 << width) - 1;
    for (let i = 0, bit = first * width; i < count; i++, bit += width) {
      const k = at + (bit >>> 3);
      const shift = bit & 7;
      // As unpack()'s wide case: up to five bytes a value, past the part's end undefined reads as 0.
      let v = (bytes[k]! | (bytes[k + 1]! << 8) | (bytes[k + 2]! << 16) | (bytes[k + 3]! << 24)) >>> shift;
      if (shift + width > 32) v |= bytes[k + 4]! << (32 - shift);
      out[to + i] = v & mask;
    }
  }
  if (token & 128) patch(bytes, at + ((m * width + 7) >>> 3), width, out, to, first, count);
}

/** Where a run of m position values ends. */
export function skipRun(bytes: Uint8Array, at: number, m: number): number {
  if (m >= PACKED_FROM) return skipPacked(bytes, at, m);
  while (m > 0) if (!(bytes[at++]! & 128)) m--;
  return at;
}
