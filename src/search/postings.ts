/**
 * Postings lists, block-compressed as Lucene and Tantivy keep them (bit-packed blocks with
 * exceptions, PFOR), so that a shard's postings take about 1.1 bytes each with their term
 * frequencies (1.5 as varints, codec 1) and can be read from a mapped file.
 *
 * A list holds, for one (term, field), document numbers in increasing order, each with its
 * term frequency (1..255) and optionally its word positions. Documents go in blocks of 128
 * (the last block of a list may be shorter). A list of 128 documents or more starts with skip
 * data, one entry per block in fixed-width arrays (so a document is found by binary search):
 * the block's last document, where its documents and positions start, and its largest tf
 * (what a block-max pruned search needs). A shorter list has no skip data.
 *
 *   list  := varint(df·2 + hasPositions) (long | short)
 *   short := docs(block 0) positions(block 0)           (positions start where docs end)
 *   long  := pad to 4 bytes | u32 docsLength | u32 lastDoc[B] | u32 docsStart[B]
 *            | [u32 positionsStart[B] if hasPositions] | u8 maxTf[B] | docs[B] | positions[B]
 * (docsStart from the first block's documents, positionsStart from the first block's positions).
 *
 * A block of n documents, each gap the distance from the previous document (the list's
 * first from −1):
 *   n < 4:  per document varint((gap − 1)·2 + (tf > 1)), then a byte for tf when tf > 1
 *   n ≥ 4:  packed(gap − 1 for each document) packed(tf − 1 for each document)
 * A block's positions (token indexes within the field, increasing per document): first, for
 * each document whose tf is 255 (tf is capped there), varint(its number of positions − 255);
 * then the values of all its documents in a row (each document's first position, then each
 * gap − 1 to its next), in runs of 128 values (the last run shorter): a run of fewer than 4
 * values as varints, else packed.
 *
 *   packed(m values) := u8 token = width | (128 if exceptions) | ⌈m·width/8⌉ bytes: each value's
 *                       low `width` bits, least significant bit first
 *                       | [u8 e | e × (u8 index, varint(value >>> width)) if exceptions]
 * The width (0..32) is chosen per packed run for the fewest bytes: values wider than it are
 * exceptions, their high bits patched in. A width of 0 with no exceptions (all tfs 1) costs
 * the token alone.
 *
 * The codec is part of the index layout recorded in each shard's meta (indexLayout,
 * store.ts: 1 was varints only): a file of another layout is refused with how to rebuild
 * it, never misread.
 *
 * The bytes come in parts of less than 4 GiB (JavaScriptCore's ArrayBuffer limit); a list
 * never straddles two. A list's address is part · 2^32 + its offset in the part.
 */

export const BLOCK = 128;
const MAX_TF = 255;
const PART_BYTES = 2 ** 32;
/** Document numbers stay below 2^31, so that decoding is all 32-bit integer arithmetic. */
const MAX_DOC = 2 ** 31 - 1;
/** Positions are held in Uint32Arrays. */
const MAX_POSITION = 2 ** 32 - 1;
/** Parts are mapped 8-byte aligned: the skip arrays are read as Uint32 words. */
const ALIGN = 4;
/** Blocks and position runs of fewer values are varints: a packed run's token costs more than it saves there. */
const PACKED_FROM = 4;
/** Positions per packed run (an exception's index fits a byte). */
const RUN = 128;
const EXCEPTIONS = 128;

/**
 * Receives the written bytes in order, part by part: bytes[0, length), only valid during the
 * call (a buffer and a length rather than a subarray, which would be an object per list).
 */
export type PostingsSink = (part: number, bytes: Uint8Array, length: number) => void;

/** Bits needed for v (0 for 0). */
function widthOf(v: number): number {
  return 32 - Math.clz32(v);
}

/** A byte buffer that grows by doubling, reused from list to list. */
class Bytes {
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

/** A growable Uint32 column (skip entries and block values of the list being written). */
class Words {
  data = new Uint32Array(64);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const grown = new Uint32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = v;
  }
}

/** How many values of each width a run has (0..32): the width is chosen from it alone. */
const widthCounts = new Int32Array(33);

/** Writes values[from, from + m) as a packed run (see the layout above), at the width that takes the fewest bytes. */
function writePacked(out: Bytes, values: Uint32Array, from: number, m: number): void {
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
function writeRun(out: Bytes, values: Uint32Array, from: number, m: number): void {
  if (m >= PACKED_FROM) writePacked(out, values, from, m);
  else for (let i = from; i < from + m; i++) out.varint(values[i]!);
}

/**
 * Writes lists one at a time: begin(), then add(doc, tf) for each document in increasing
 * order (each followed by its positions, if the list has them), then end() for its address.
 * Only the list being written is held in memory; each finished list goes to the sink.
 */
export class PostingsWriter {
  private part = 0;
  private partSize = 0;
  private readonly docsArea = new Bytes();
  private readonly positionsArea = new Bytes();
  private readonly out = new Bytes();
  private readonly lastDocs = new Words();
  private readonly docStarts = new Words();
  private readonly positionStarts = new Words();
  private readonly maxTfs = new Words();
  /** The block being filled: gap − 1 and tf − 1 of each document, its position values, and counts past 255. */
  private readonly gaps = new Uint32Array(BLOCK);
  private readonly tfs = new Uint32Array(BLOCK);
  private readonly positionValues = new Words();
  private readonly overflows = new Words();
  private inBlock = 0;
  private open = false;
  private withPositions = false;
  private df = 0;
  private previousDoc = -1;
  private blockMaxTf = 0;
  private tf = 0;
  private positionCount = 0;
  private previousPosition = -1;
  /** Bytes written, all parts together. */
  bytes = 0;
  /** What the bytes written are made of (headers include the alignment padding). */
  readonly breakdown = { headers: 0, skips: 0, docs: 0, positions: 0 };

  constructor(
    private readonly sink: PostingsSink,
    private readonly partLimit = PART_BYTES - 8,
  ) {}

  begin(positions: boolean): void {
    if (this.open) throw new Error("postings: begin() before the previous list's end()");
    this.open = true;
    this.withPositions = positions;
    this.df = 0;
    this.previousDoc = -1;
    this.blockMaxTf = 0;
    this.tf = 0;
    this.inBlock = 0;
    this.positionValues.length = this.overflows.length = 0;
    this.docsArea.length = this.positionsArea.length = 0;
    this.lastDocs.length = this.docStarts.length = this.positionStarts.length = this.maxTfs.length = 0;
  }

  add(doc: number, tf: number): void {
    if (!this.open) throw new Error("postings: add() outside begin()/end()");
    if (!(doc > this.previousDoc && doc <= MAX_DOC && Number.isInteger(doc)))
      throw new Error(`postings: document ${doc} after ${this.previousDoc}`);
    if (!(tf >= 1 && tf <= MAX_TF && Number.isInteger(tf)))
      throw new Error(`postings: term frequency ${tf} is not in 1..${MAX_TF}`);
    this.closeDoc();
    if (this.inBlock === BLOCK) this.closeBlock();
    this.gaps[this.inBlock] = doc - this.previousDoc - 1;
    this.tfs[this.inBlock++] = tf - 1;
    if (tf > this.blockMaxTf) this.blockMaxTf = tf;
    this.previousDoc = doc;
    this.tf = tf;
    this.positionCount = 0;
    this.previousPosition = -1;
    this.df++;
  }

  /** The next position of the document last added. */
  position(p: number): void {
    if (!this.withPositions || this.df === 0)
      throw new Error("postings: position() without a document in a list with positions");
    if (!(p > this.previousPosition && p <= MAX_POSITION && Number.isInteger(p)))
      throw new Error(`postings: position ${p} after ${this.previousPosition}`);
    this.positionValues.push(p - this.previousPosition - 1);
    this.previousPosition = p;
    this.positionCount++;
  }

  /** Ends the list: its address (part · 2^32 + offset), or -1 for an empty list (nothing is written). */
  end(): number {
    if (!this.open) throw new Error("postings: end() without begin()");
    this.open = false;
    this.closeDoc();
    const df = this.df;
    if (df === 0) return -1;
    this.closeBlock();
    let address = this.layOut(this.partSize);
    if (this.partSize > 0 && this.partSize + this.out.length > this.partLimit) {
      this.part++;
      this.partSize = 0;
      address = this.layOut(0);
    }
    if (this.out.length > this.partLimit)
      throw new Error(`postings: a list of ${this.out.length} bytes does not fit a part`);
    this.sink(this.part, this.out.data, this.out.length);
    this.partSize += this.out.length;
    this.bytes += this.out.length;
    const skips = df < BLOCK ? 0 : this.lastDocs.length * (this.withPositions ? 13 : 9);
    this.breakdown.skips += skips;
    this.breakdown.docs += this.docsArea.length;
    this.breakdown.positions += this.positionsArea.length;
    this.breakdown.headers += this.out.length - skips - this.docsArea.length - this.positionsArea.length;
    return address;
  }

  /** Writes the finished list into `out` as it will sit at `offset` in the current part. */
  private layOut(offset: number): number {
    const out = this.out;
    out.length = 0;
    const df = this.df;
    const hasPositions = this.withPositions ? 1 : 0;
    out.varint(df * 2 + hasPositions);
    if (df >= BLOCK) {
      while ((offset + out.length) % ALIGN) out.byte(0);
      const blocks = this.lastDocs.length;
      out.u32(this.docsArea.length);
      for (let b = 0; b < blocks; b++) out.u32(this.lastDocs.data[b]!);
      for (let b = 0; b < blocks; b++) out.u32(this.docStarts.data[b]!);
      if (hasPositions) for (let b = 0; b < blocks; b++) out.u32(this.positionStarts.data[b]!);
      for (let b = 0; b < blocks; b++) out.byte(this.maxTfs.data[b]!);
    }
    out.append(this.docsArea);
    out.append(this.positionsArea);
    return this.part * PART_BYTES + offset;
  }

  private closeDoc(): void {
    if (!this.withPositions || this.df === 0 || this.tf === 0) return;
    if (this.tf < MAX_TF ? this.positionCount !== this.tf : this.positionCount < MAX_TF) {
      throw new Error(
        `postings: document ${this.previousDoc} has ${this.positionCount} positions for a term frequency of ${this.tf}`,
      );
    }
    if (this.tf === MAX_TF) this.overflows.push(this.positionCount - MAX_TF);
    this.positionCount = 0;
    this.tf = 0;
  }

  /** Encodes the block being filled into the documents' and positions' areas. */
  private closeBlock(): void {
    const n = this.inBlock;
    this.docStarts.push(this.docsArea.length);
    this.positionStarts.push(this.positionsArea.length);
    const docs = this.docsArea;
    if (n >= PACKED_FROM) {
      writePacked(docs, this.gaps, 0, n);
      writePacked(docs, this.tfs, 0, n);
    } else {
      for (let i = 0; i < n; i++) {
        const more = this.tfs[i]! > 0;
        docs.varint(this.gaps[i]! * 2 + (more ? 1 : 0));
        if (more) docs.byte(this.tfs[i]! + 1);
      }
    }
    if (this.withPositions) {
      const positions = this.positionsArea;
      for (let i = 0; i < this.overflows.length; i++) positions.varint(this.overflows.data[i]!);
      const values = this.positionValues;
      for (let r = 0; r < values.length; r += RUN)
        writeRun(positions, values.data, r, Math.min(RUN, values.length - r));
    }
    this.lastDocs.push(this.previousDoc);
    this.maxTfs.push(this.blockMaxTf);
    this.blockMaxTf = 0;
    this.inBlock = 0;
    this.positionValues.length = this.overflows.length = 0;
  }
}

/** Writes lists into memory, for a shard built at once: the parts as Uint8Arrays. */
export function memoryPostings(partLimit?: number): { writer: PostingsWriter; parts: () => Uint8Array[] } {
  const chunks: Uint8Array[][] = [];
  const writer = new PostingsWriter((part, bytes, length) => {
    while (chunks.length <= part) chunks.push([]);
    chunks[part]!.push(bytes.slice(0, length));
  }, partLimit);
  const parts = () =>
    chunks.map((list) => {
      const size = list.reduce((s, c) => s + c.byteLength, 0);
      // Whole 8-byte words, so that a Uint32 view over the part can be made.
      const part = new Uint8Array(size + ((8 - (size % 8)) % 8));
      let at = 0;
      for (const c of list) {
        part.set(c, at);
        at += c.byteLength;
      }
      return part;
    });
  return { writer, parts };
}

/**
 * Reads lists from their parts (typed-array views of a mapped file, or memory). Each part
 * must start at a multiple of 4 bytes in its buffer.
 */
export class PostingsReader {
  readonly parts: Uint8Array[];
  readonly words: Uint32Array[];

  constructor(parts: Uint8Array[]) {
    this.parts = parts;
    this.words = parts.map((p) => {
      if (p.byteOffset % ALIGN) throw new Error("postings: a part must start at a multiple of 4 bytes");
      return new Uint32Array(p.buffer, p.byteOffset, p.byteLength >>> 2);
    });
  }

  /** A cursor with its own scratch arrays: one per concurrent reader, reused for list after list. */
  cursor(): PostingsCursor {
    return new PostingsCursor(this);
  }
}

/**
 * Unpacks a packed run of m values (its token at `at`) into out[to, to + m), exceptions
 * patched in: where the run ends.
 */
function unpack(bytes: Uint8Array, at: number, m: number, out: Uint32Array, to: number): number {
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

/** Adds the exceptions' high bits (at `at`) to out[to + index]: where they end. */
function patch(bytes: Uint8Array, at: number, width: number, out: Uint32Array, to: number): number {
  const count = bytes[at++]!;
  for (let e = 0; e < count; e++) {
    const index = bytes[at++]!;
    let c = bytes[at++]!;
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
function readRun(bytes: Uint8Array, at: number, m: number, out: Uint32Array, to: number): number {
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

/** Where a run of m position values ends. */
function skipRun(bytes: Uint8Array, at: number, m: number): number {
  if (m >= PACKED_FROM) return skipPacked(bytes, at, m);
  while (m > 0) if (!(bytes[at++]! & 128)) m--;
  return at;
}

/**
 * One list at a time: open(address), then its blocks decoded into `docs` and `tfs` (reused,
 * valid until the next decode), its skip data, lookups of a document and its positions.
 */
export class PostingsCursor {
  /** The decoded block's documents and term frequencies. */
  readonly docs = new Uint32Array(BLOCK);
  readonly tfs = new Uint8Array(BLOCK);
  /** Documents in the list. */
  df = 0;
  blocks = 0;
  hasPositions = false;
  private bytes: Uint8Array = new Uint8Array(0);
  private words: Uint32Array = new Uint32Array(0);
  /** Word index of lastDoc[0] (long lists). */
  private skip = 0;
  private docsAt = 0;
  private positionsAt = 0;
  private decoded = -1;
  private decodedCount = 0;
  /** Where the decoded block's documents end: a short list's positions start there. */
  private docsEnd = 0;
  private positionScratch = new Uint32Array(64);
  /**
   * positionsInto()'s block, read as far as asked: where each document's position values start
   * (tf sums), where each run starts (located up to runsLocated), and the runs unpacked so far
   * into blockValues. Checking a phrase asks for document after document of a block: each run
   * is unpacked once, not once for every document it holds.
   */
  private positionBlock = -1;
  private readonly valueStarts = new Uint32Array(BLOCK + 1);
  private runAt = new Int32Array(8);
  private runUnpacked = new Uint8Array(8);
  private runsLocated = 0;
  private blockValues = new Uint32Array(1024);
  private blockValueCount = 0;

  constructor(private readonly reader: PostingsReader) {}

  open(address: number): this {
    // Opened for every (term, field) a query touches, most of them short lists: kept to integer arithmetic.
    let part = 0;
    let at = address;
    if (address >= PART_BYTES) {
      part = Math.floor(address / PART_BYTES);
      at = address - part * PART_BYTES;
    }
    const bytes = this.reader.parts[part];
    if (!bytes) throw new Error(`postings: no part ${part}`);
    this.bytes = bytes;
    this.words = this.reader.words[part]!;
    const v = this.varint32(bytes, at);
    at = this.next;
    const df = v >>> 1;
    this.df = df;
    this.hasPositions = (v & 1) === 1;
    this.blocks = df < BLOCK ? 1 : ((df + BLOCK - 1) / BLOCK) | 0;
    this.decoded = -1;
    this.positionBlock = -1;
    if (df < BLOCK) {
      this.docsAt = at;
      this.positionsAt = -1;
    } else {
      at = (at + ALIGN - 1) & ~(ALIGN - 1);
      const w = at >>> 2;
      const blocks = this.blocks;
      const docsLength = this.words[w]!;
      this.skip = w + 1;
      this.docsAt = at + 4 * (1 + blocks * (this.hasPositions ? 3 : 2)) + blocks;
      this.positionsAt = this.docsAt + docsLength;
    }
    return this;
  }

  /** Where the open list's skip data, documents and positions take up bytes in its part: [skip bytes, documents' first byte, positions' first byte]. */
  regions(): [skips: number, docsAt: number, positionsAt: number] {
    const skips = this.df < BLOCK ? 0 : this.blocks * (this.hasPositions ? 13 : 9);
    return [skips, this.docsAt, this.positionsOf(0)];
  }

  /** Where block b's positions start (the block is decoded for a short list, whose positions follow its documents). */
  private positionsOf(b: number): number {
    if (this.df >= BLOCK)
      return this.positionsAt + (this.hasPositions ? this.words[this.skip + 2 * this.blocks + b]! : 0);
    this.decode(0);
    return this.docsEnd;
  }

  /** The last document of block b. */
  lastDoc(b: number): number {
    if (this.df >= BLOCK) return this.words[this.skip + b]!;
    const n = this.decode(0);
    return this.docs[n - 1]!;
  }

  /** The largest term frequency in block b. */
  maxTf(b: number): number {
    if (this.df >= BLOCK) return this.bytes[this.docsAt - this.blocks + b]!;
    const n = this.decode(0);
    let max = 0;
    for (let i = 0; i < n; i++) if (this.tfs[i]! > max) max = this.tfs[i]!;
    return max;
  }

  /** The first block whose last document is doc or after (blocks when none is). */
  blockOf(doc: number): number {
    if (this.df < BLOCK) return this.df > 0 && this.lastDoc(0) >= doc ? 0 : this.blocks;
    const words = this.words;
    const skip = this.skip;
    let lo = 0;
    let hi = this.blocks;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (words[skip + mid]! < doc) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Decodes block b into docs and tfs: its number of documents. */
  decode(b: number): number {
    if (this.decoded === b) return this.decodedCount;
    const bytes = this.bytes;
    const docs = this.docs;
    const tfs = this.tfs;
    let at: number;
    let doc: number;
    if (this.df < BLOCK) {
      at = this.docsAt;
      doc = -1;
    } else {
      at = this.docsAt + this.words[this.skip + this.blocks + b]!;
      doc = b > 0 ? this.words[this.skip + b - 1]! | 0 : -1;
    }
    const n = b < this.blocks - 1 ? BLOCK : this.df - BLOCK * (this.blocks - 1);
    if (n >= PACKED_FROM) {
      const token = bytes[at]!;
      const width = token & 63;
      if (token === width && width <= 24) {
        // The common case, unpacked and summed in one loop: no exceptions, gaps of at most 24 bits (see unpack()).
        const mask = (1 << width) - 1;
        let held = 0;
        let bits = 0;
        at++;
        for (let i = 0; i < n; i++) {
          while (bits < width) {
            held |= bytes[at++]! << bits;
            bits += 8;
          }
          doc = (doc + (held & mask) + 1) | 0;
          held >>>= width;
          bits -= width;
          docs[i] = doc;
        }
      } else {
        at = unpack(bytes, at, n, docs, 0);
        for (let i = 0; i < n; i++) {
          doc = (doc + docs[i]! + 1) | 0;
          docs[i] = doc;
        }
      }
      if (bytes[at] === 0) {
        // Every tf is 1: the token alone.
        tfs.fill(1, 0, n);
        at++;
      } else {
        // tf − 1 is below 255: at most 8 bits, straight into tfs, and exceptions' high bits (a byte) added after.
        const token = bytes[at++]!;
        const width = token & 63;
        const mask = (1 << width) - 1;
        let held = 0;
        let bits = 0;
        for (let i = 0; i < n; i++) {
          while (bits < width) {
            held |= bytes[at++]! << bits;
            bits += 8;
          }
          tfs[i] = (held & mask) + 1;
          held >>>= width;
          bits -= width;
        }
        if (token & 128) {
          for (let e = bytes[at++]!; e > 0; e--) {
            const index = bytes[at++]!;
            // A varint of at most 8 bits: one or two bytes.
            let high = bytes[at++]!;
            if (high & 128) high = (high & 127) | (bytes[at++]! << 7);
            tfs[index] = tfs[index]! + (high << width);
          }
        }
      }
    } else {
      for (let i = 0; i < n; i++) {
        // v = (gap − 1)·2 + (tf > 1) < 2^32: its top bits may make it a negative int32, which >>> reads right.
        let c = bytes[at++]!;
        let v = c & 127;
        if (c & 128) {
          c = bytes[at++]!;
          v |= (c & 127) << 7;
          if (c & 128) {
            c = bytes[at++]!;
            v |= (c & 127) << 14;
            if (c & 128) {
              c = bytes[at++]!;
              v |= (c & 127) << 21;
              if (c & 128) v |= bytes[at++]! << 28;
            }
          }
        }
        doc = (doc + (v >>> 1) + 1) | 0;
        docs[i] = doc;
        const more = v & 1;
        tfs[i] = 1 + ((bytes[at]! - 1) & -more);
        at += more;
      }
    }
    this.docsEnd = at;
    this.decoded = b;
    this.decodedCount = n;
    return n;
  }

  /** The index of doc in the decoded block b, or -1. */
  private indexIn(b: number, doc: number): number {
    const n = this.decode(b);
    const docs = this.docs;
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (docs[mid]! < doc) lo = mid + 1;
      else hi = mid;
    }
    return lo < n && docs[lo] === doc ? lo : -1;
  }

  /** Whether the list holds doc: a search of the skip data and one block decoded. */
  holds(doc: number): boolean {
    const b = this.blockOf(doc);
    return b < this.blocks && this.indexIn(b, doc) >= 0;
  }

  /** The term frequency of doc in the list, 0 when it is not there. */
  tf(doc: number): number {
    const b = this.blockOf(doc);
    if (b >= this.blocks) return 0;
    const i = this.indexIn(b, doc);
    return i < 0 ? 0 : this.tfs[i]!;
  }

  /** Calls visit(doc, tf) for each document of the list in [from, to). */
  forEach(visit: (doc: number, tf: number) => void, from = 0, to = PART_BYTES): void {
    const last = to > 0 ? this.blockOf(to - 1) : 0;
    const end = last < this.blocks ? last + 1 : this.blocks;
    for (let b = this.blockOf(from); b < end; b++) {
      const n = this.decode(b);
      for (let i = 0; i < n; i++) {
        const d = this.docs[i]!;
        if (d < from) continue;
        if (d >= to) return;
        visit(d, this.tfs[i]!);
      }
    }
  }

  /**
   * The positions of doc in the list, in a scratch array valid until the next call (a view:
   * copy it to keep it), or undefined when the list does not hold doc or has no positions.
   */
  positions(doc: number): Uint32Array | undefined {
    const count = this.positionsInto(doc);
    return count < 0 ? undefined : this.positionScratch.subarray(0, count);
  }

  /**
   * positions() without the view: the number of positions of doc (-1 when the list does not
   * hold doc or has no positions), decoded into scratchPositions, valid until the next call.
   * Only the runs holding doc's positions are unpacked, each once while the block stays the same; those before are skipped.
   */
  positionsInto(doc: number): number {
    if (!this.hasPositions) return -1;
    const b = this.blockOf(doc);
    if (b >= this.blocks) return -1;
    const index = this.indexIn(b, doc);
    if (index < 0) return -1;
    if (this.positionBlock !== b) this.openPositions(b);
    const first = this.valueStarts[index]!;
    const count = this.valueStarts[index + 1]! - first;
    for (let r = (first / RUN) | 0, last = ((first + count - 1) / RUN) | 0; r <= last; r++)
      if (!this.runUnpacked[r]) this.unpackRun(r);
    if (count > this.positionScratch.length)
      this.positionScratch = new Uint32Array(Math.max(count, this.positionScratch.length * 2));
    const out = this.positionScratch;
    const values = this.blockValues;
    let p = -1;
    for (let i = 0; i < count; i++) {
      p += values[first + i]! + 1;
      out[i] = p;
    }
    return count;
  }

  /** Starts positionsInto()'s reading of decoded block b: each document's first value (the tf sums, past MAX_TF read from the row), no run unpacked. */
  private openPositions(b: number): void {
    const n = this.decodedCount;
    const tfs = this.tfs;
    const bytes = this.bytes;
    const starts = this.valueStarts;
    let at = this.positionsOf(b);
    let total = 0;
    for (let i = 0; i < n; i++) {
      let c = tfs[i]!;
      if (c === MAX_TF) {
        c += this.varint(bytes, at);
        at = this.next;
      }
      starts[i] = total;
      total += c;
    }
    starts[n] = total;
    const runs = Math.ceil(total / RUN);
    if (this.runAt.length <= runs) {
      this.runAt = new Int32Array(runs * 2 + 1);
      this.runUnpacked = new Uint8Array(runs * 2 + 1);
    } else this.runUnpacked.fill(0, 0, runs);
    if (this.blockValues.length < total)
      this.blockValues = new Uint32Array(Math.max(total, this.blockValues.length * 2));
    this.runAt[0] = at;
    this.runsLocated = 1;
    this.blockValueCount = total;
    this.positionBlock = b;
  }

  /** Unpacks run r of positionsInto()'s block into blockValues, locating the runs before it first (skipped, not unpacked). */
  private unpackRun(r: number): void {
    const bytes = this.bytes;
    const total = this.blockValueCount;
    const runAt = this.runAt;
    while (this.runsLocated <= r) {
      const k = this.runsLocated - 1;
      runAt[this.runsLocated++] = skipRun(bytes, runAt[k]!, Math.min(RUN, total - k * RUN));
    }
    const end = readRun(bytes, runAt[r]!, Math.min(RUN, total - r * RUN), this.blockValues, r * RUN);
    if (r + 1 === this.runsLocated) runAt[this.runsLocated++] = end;
    this.runUnpacked[r] = 1;
  }

  /** Where positionsInto() leaves its positions. */
  get scratchPositions(): Uint32Array {
    return this.positionScratch;
  }

  /** After decodePositions(b): document i of the block has positionValues[positionStarts[i]] up to positionValues[positionStarts[i + 1]]. */
  readonly positionStarts = new Uint32Array(BLOCK + 1);
  positionValues = new Uint32Array(1024);

  /** Decodes block b with the positions of all its documents (a merge reads lists through, in order). */
  decodePositions(b: number): number {
    const n = this.decode(b);
    if (!this.hasPositions) {
      this.positionStarts.fill(0, 0, n + 1);
      return n;
    }
    const bytes = this.bytes;
    let at = this.positionsOf(b);
    const starts = this.positionStarts;
    let total = 0;
    for (let i = 0; i < n; i++) {
      let c = this.tfs[i]!;
      if (c === MAX_TF) {
        c += this.varint(bytes, at);
        at = this.next;
      }
      starts[i] = total;
      total += c;
    }
    starts[n] = total;
    if (total > this.positionValues.length)
      this.positionValues = new Uint32Array(Math.max(total, this.positionValues.length * 2));
    const values = this.positionValues;
    for (let r = 0; r < total; r += RUN) at = readRun(bytes, at, Math.min(RUN, total - r), values, r);
    for (let i = 0; i < n; i++) {
      let p = -1;
      for (let j = starts[i]!, end = starts[i + 1]!; j < end; j++) {
        p += values[j]! + 1;
        values[j] = p;
      }
    }
    return n;
  }

  /** A varint of at most 32 bits, as an int32 (read it with >>> 0 when it may reach 2^31). */
  private varint32(bytes: Uint8Array, at: number): number {
    let c = bytes[at++]!;
    let v = c & 127;
    if (c & 128) {
      c = bytes[at++]!;
      v |= (c & 127) << 7;
      if (c & 128) {
        c = bytes[at++]!;
        v |= (c & 127) << 14;
        if (c & 128) {
          c = bytes[at++]!;
          v |= (c & 127) << 21;
          if (c & 128) v |= bytes[at++]! << 28;
        }
      }
    }
    this.next = at;
    return v;
  }

  /** Where the last varint() ended. */
  private next = 0;

  private varint(bytes: Uint8Array, at: number): number {
    let v = 0;
    let scale = 1;
    let b: number;
    do {
      b = bytes[at++]!;
      v += (b & 127) * scale;
      scale *= 128;
    } while (b & 128);
    this.next = at;
    return v;
  }
}
