/**
 * Postings lists, block-compressed as Lucene and Tantivy keep them, so that a shard's
 * postings take about 2 bytes each instead of 5 and can be read from a mapped file.
 *
 * A list holds, for one (term, field), document numbers in increasing order, each with its
 * term frequency (1..255) and optionally its word positions. Documents go in blocks of 128:
 * each document is a varint of (gap − 1)·2 + (tf > 1), followed by a byte for tf when it is
 * more than 1 (most are 1). A list of 128 documents or more starts with skip data, one entry
 * per block in fixed-width arrays (so a document is found by binary search): the block's
 * last document, where its documents and positions start, and its largest tf (what a
 * block-max pruned search needs). A shorter list has no skip data.
 *
 *   list  := varint(df·2 + hasPositions) long | short
 *   short := [varint(docsLength) if hasPositions] docs positions
 *   long  := pad to 4 bytes | u32 docsLength | u32 lastDoc[B] | u32 docsStart[B]
 *            | [u32 positionsStart[B] if hasPositions] | u8 maxTf[B] | docs positions
 *
 * A document's positions (token indexes within the field, increasing) are varints of the
 * first index and then of each gap − 1, preceded by their count only when tf is 255 (tf is
 * capped there; below it, the count is tf).
 *
 * The bytes come in parts of less than 4 GiB (JavaScriptCore's ArrayBuffer limit); a list
 * never straddles two. A list's address is part · 2^32 + its offset in the part.
 */

export const BLOCK = 128;
const MAX_TF = 255;
const PART_BYTES = 2 ** 32;
/** Document numbers stay below 2^31, so that decoding is all 32-bit integer arithmetic. */
const MAX_DOC = 2 ** 31 - 1;
/** Parts are mapped 8-byte aligned: the skip arrays are read as Uint32 words. */
const ALIGN = 4;

/**
 * Receives the written bytes in order, part by part: bytes[0, length), only valid during the
 * call (a buffer and a length rather than a subarray, which would be an object per list).
 */
export type PostingsSink = (part: number, bytes: Uint8Array, length: number) => void;

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
    // Short runs byte by byte: a subarray is an object, and a build appends one per document.
    if (n <= 64) {
      const from = b.data;
      const to = this.data;
      for (let i = 0, at = this.length; i < n; i++) to[at + i] = from[i]!;
    } else this.data.set(b.data.subarray(0, n), this.length);
    this.length += n;
  }
}

/** A growable Uint32 column (skip entries of the list being written). */
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
  private readonly docPositions = new Bytes();
  private readonly out = new Bytes();
  private readonly lastDocs = new Words();
  private readonly docStarts = new Words();
  private readonly positionStarts = new Words();
  private readonly maxTfs = new Words();
  private open = false;
  private withPositions = false;
  private df = 0;
  private previousDoc = -1;
  private blockBase = -1;
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
    this.blockBase = -1;
    this.blockMaxTf = 0;
    this.tf = 0;
    this.docsArea.length = this.positionsArea.length = 0;
    this.lastDocs.length = this.docStarts.length = this.positionStarts.length = this.maxTfs.length = 0;
  }

  add(doc: number, tf: number): void {
    if (!this.open) throw new Error("postings: add() outside begin()/end()");
    if (!(doc > this.previousDoc && doc <= MAX_DOC && Number.isInteger(doc))) throw new Error(`postings: document ${doc} after ${this.previousDoc}`);
    if (!(tf >= 1 && tf <= MAX_TF && Number.isInteger(tf))) throw new Error(`postings: term frequency ${tf} is not in 1..${MAX_TF}`);
    this.closeDoc();
    if (this.df % BLOCK === 0) {
      this.docStarts.push(this.docsArea.length);
      this.positionStarts.push(this.positionsArea.length);
    }
    const gap = doc - this.blockBase - 1;
    this.docsArea.varint(gap * 2 + (tf > 1 ? 1 : 0));
    if (tf > 1) this.docsArea.byte(tf);
    if (tf > this.blockMaxTf) this.blockMaxTf = tf;
    this.previousDoc = doc;
    this.blockBase = doc;
    this.tf = tf;
    this.positionCount = 0;
    this.previousPosition = -1;
    this.docPositions.length = 0;
    this.df++;
    if (this.df % BLOCK === 0) this.closeBlock();
  }

  /** The next position of the document last added. */
  position(p: number): void {
    if (!this.withPositions || this.df === 0) throw new Error("postings: position() without a document in a list with positions");
    if (!(p > this.previousPosition && Number.isInteger(p))) throw new Error(`postings: position ${p} after ${this.previousPosition}`);
    this.docPositions.varint(p - this.previousPosition - 1);
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
    if (df % BLOCK !== 0) this.closeBlock();
    let address = this.layOut(this.partSize);
    if (this.partSize > 0 && this.partSize + this.out.length > this.partLimit) {
      this.part++;
      this.partSize = 0;
      address = this.layOut(0);
    }
    if (this.out.length > this.partLimit) throw new Error(`postings: a list of ${this.out.length} bytes does not fit a part`);
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
    if (df < BLOCK) {
      if (hasPositions) out.varint(this.docsArea.length);
    } else {
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
      throw new Error(`postings: document ${this.previousDoc} has ${this.positionCount} positions for a term frequency of ${this.tf}`);
    }
    if (this.tf === MAX_TF) this.positionsArea.varint(this.positionCount);
    this.positionsArea.append(this.docPositions);
    this.docPositions.length = 0;
    this.positionCount = 0;
    this.tf = 0;
  }

  private closeBlock(): void {
    this.lastDocs.push(this.previousDoc);
    this.maxTfs.push(this.blockMaxTf);
    this.blockMaxTf = 0;
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
  private positionScratch = new Uint32Array(64);

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
    if (df < BLOCK) {
      let docsLength = 0;
      if (this.hasPositions) {
        docsLength = this.varint32(bytes, at) >>> 0;
        at = this.next;
      }
      this.docsAt = at;
      this.positionsAt = at + docsLength;
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
    return [skips, this.docsAt, this.positionsAt];
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
      // tf without a branch (it is unpredictable in common words' lists): the next byte when
      // the flag is set, else 1 (past a part's end the read is undefined, which also gives 1).
      const more = v & 1;
      tfs[i] = 1 + ((bytes[at]! - 1) & -more);
      at += more;
    }
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
   */
  positionsInto(doc: number): number {
    if (!this.hasPositions) return -1;
    const b = this.blockOf(doc);
    if (b >= this.blocks) return -1;
    const index = this.indexIn(b, doc);
    if (index < 0) return -1;
    const bytes = this.bytes;
    let at = this.positionsAt + (this.df < BLOCK ? 0 : this.words[this.skip + 2 * this.blocks + b]!);
    const tfs = this.tfs;
    for (let i = 0; i < index; i++) {
      let count = tfs[i]!;
      if (count === MAX_TF) {
        count = this.varint(bytes, at);
        at = this.next;
      }
      // Skip count varints: one final byte (high bit clear) each.
      while (count > 0) if (!(bytes[at++]! & 128)) count--;
    }
    let count = tfs[index]!;
    if (count === MAX_TF) {
      count = this.varint(bytes, at);
      at = this.next;
    }
    if (count > this.positionScratch.length) this.positionScratch = new Uint32Array(Math.max(count, this.positionScratch.length * 2));
    const out = this.positionScratch;
    let p = -1;
    for (let i = 0; i < count; i++) {
      p += this.varint(bytes, at) + 1;
      at = this.next;
      out[i] = p;
    }
    return count;
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
    let at = this.positionsAt + (this.df < BLOCK ? 0 : this.words[this.skip + 2 * this.blocks + b]!);
    let k = 0;
    for (let i = 0; i < n; i++) {
      let count = this.tfs[i]!;
      if (count === MAX_TF) {
        count = this.varint(bytes, at);
        at = this.next;
      }
      if (k + count > this.positionValues.length) {
        const grown = new Uint32Array(Math.max(k + count, this.positionValues.length * 2));
        grown.set(this.positionValues.subarray(0, k));
        this.positionValues = grown;
      }
      this.positionStarts[i] = k;
      let p = -1;
      for (let j = 0; j < count; j++) {
        p += this.varint(bytes, at) + 1;
        at = this.next;
        this.positionValues[k++] = p;
      }
    }
    this.positionStarts[n] = k;
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
