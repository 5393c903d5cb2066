import { firstAtLeast } from "./first-at-least";
import { unpack } from "./packed-runs";
import { ALIGN, BLOCK, COARSE, MAX_DOC, PACKED_FROM, PART_BYTES, skipBytes } from "./postings-format";

/**
 * Bytes read as a list that cannot be one (D163): a count past the shard's documents, a block whose documents do not
 * rise within them to its skip data's last one, or that runs out of its list. Only a damaged snapshot holds such a
 * list; the engine answers it as a SnapshotError naming snapshot:verify.
 */
export class DamagedPostings extends Error {
  override name = "DamagedPostings";
}

/** What a cursor reads: the shard's parts of postings, and its documents, which every list's lie within. */
interface PostingsParts {
  readonly parts: Uint8Array[];
  readonly words: Uint32Array[];
  /** The shard's documents (MAX_DOC + 1 when not known: a build's runs). */
  readonly documents: number;
}

/** A cursor's reading of one list's skip data and document blocks (postings.ts adds the positions). */
export class BlockCursor {
  /** The decoded block's documents and term frequencies. */
  readonly docs = new Uint32Array(BLOCK);
  readonly tfs = new Uint8Array(BLOCK);
  /** Documents in the list. */
  df = 0;
  /** Postings decoded by this cursor so far (a search's work, read by its meter). */
  decodedPostings = 0;
  blocks = 0;
  hasPositions = false;
  protected bytes: Uint8Array = new Uint8Array(0);
  protected words: Uint32Array = new Uint32Array(0);
  /** Word index of lastDoc[0] (long lists). */
  protected skip = 0;
  protected docsAt = 0;
  protected positionsAt = 0;
  /** Where the impacts' lengths (u16, blocks then coarse runs) and tfs (u8, the same) start; a short list's one impact. */
  protected impactAt = 0;
  protected coarse = 0;
  private shortTf = 0;
  private shortLength = 0;
  protected decoded = -1;
  protected decodedCount = 0;
  /** Where the decoded block's documents end: a short list's positions start there. */
  protected docsEnd = 0;
  /** positionsInto()'s block (postings.ts), forgotten when another list is opened. */
  protected positionBlock = -1;

  /** The shard's documents: a decoded document, a block's last, a list's count past them is damage. */
  private readonly documents: number;
  /** The open list's address, for what damage says. */
  private address = 0;

  constructor(private readonly reader: PostingsParts) {
    this.documents = Math.min(reader.documents, MAX_DOC + 1);
  }

  /** Damage found in the open list (D163): thrown, never read on. */
  protected damaged(what: string): DamagedPostings {
    const part = Math.floor(this.address / PART_BYTES);
    return new DamagedPostings(`the postings list at byte ${this.address - part * PART_BYTES} of part ${part} ${what}`);
  }

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
    this.address = address;
    if (df > this.documents) throw this.damaged(`counts ${df} documents of ${this.documents}`);
    this.df = df;
    this.hasPositions = (v & 1) === 1;
    this.blocks = df < BLOCK ? 1 : ((df + BLOCK - 1) / BLOCK) | 0;
    this.decoded = -1;
    this.positionBlock = -1;
    this.lastBlock = 0;
    if (df < BLOCK) {
      this.shortTf = bytes[at]!;
      this.shortLength = bytes[at + 1]! | (bytes[at + 2]! << 8);
      this.coarse = 1;
      this.docsAt = at + 3;
      this.positionsAt = -1;
    } else {
      at = (at + ALIGN - 1) & ~(ALIGN - 1);
      const w = at >>> 2;
      const blocks = this.blocks;
      const docsLength = this.words[w]!;
      this.skip = w + 1;
      this.coarse = Math.ceil(blocks / COARSE);
      this.impactAt = at + 4 * (1 + blocks * (this.hasPositions ? 3 : 2));
      this.docsAt = this.impactAt + 3 * (blocks + this.coarse);
      this.positionsAt = this.docsAt + docsLength;
      // Read as sizes and places: past the part, or a last document past the shard's, the skip data is not a list's.
      if (!(this.positionsAt <= bytes.length) || !(this.words[this.skip + blocks - 1]! < this.documents))
        throw this.damaged(`runs past its part's ${bytes.length} bytes or its ${this.documents} documents`);
    }
    return this;
  }

  /** Where the open list's skip data, documents and positions take up bytes in its part: [skip bytes, documents' first byte, positions' first byte]. */
  regions(): [skips: number, docsAt: number, positionsAt: number] {
    const skips = this.df < BLOCK ? 0 : skipBytes(this.blocks, this.hasPositions);
    return [skips, this.docsAt, this.positionsOf(0)];
  }

  /** Where block b's positions start (the block is decoded for a short list, whose positions follow its documents). */
  protected positionsOf(b: number): number {
    if (this.df >= BLOCK)
      return this.positionsAt + (this.hasPositions ? this.words[this.skip + 2 * this.blocks + b]! : 0);
    this.decode(0);
    return this.docsEnd;
  }

  /** Whether block b is the one decoded: reading it costs nothing. */
  isDecoded(b: number): boolean {
    return this.decoded === b;
  }

  /** The last document of block b. */
  lastDoc(b: number): number {
    if (this.df >= BLOCK) {
      const last = this.words[this.skip + b]!;
      // A block's place is told from it without decoding the block: a window beyond the documents would never end.
      if (!(last < this.documents)) throw this.damaged(`has block ${b} end at document ${last} of ${this.documents}`);
      return last;
    }
    const n = this.decode(0);
    return this.docs[n - 1]!;
  }

  /** Block b's impact (postings-format.ts): the tf of its posting with the highest tf over its length's norm. */
  impactTf(b: number): number {
    if (this.df < BLOCK) return this.shortTf;
    return this.bytes[this.impactAt + 2 * (this.blocks + this.coarse) + b]!;
  }

  /** Block b's impact: that posting's field length. */
  impactLength(b: number): number {
    if (this.df < BLOCK) return this.shortLength;
    const at = this.impactAt + 2 * b;
    return this.bytes[at]! | (this.bytes[at + 1]! << 8);
  }

  /** The impact of the run of COARSE blocks c·COARSE…: its tf (a short list: its one block's). */
  coarseTf(c: number): number {
    if (this.df < BLOCK) return this.shortTf;
    return this.bytes[this.impactAt + 3 * this.blocks + 2 * this.coarse + c]!;
  }

  coarseLength(c: number): number {
    if (this.df < BLOCK) return this.shortLength;
    const at = this.impactAt + 2 * (this.blocks + c);
    return this.bytes[at]! | (this.bytes[at + 1]! << 8);
  }

  /**
   * The first block whose last document is doc or after (blocks when none is). Searched from
   * the last answer forward, galloping: a conjunction or a phrase check asks in document order.
   */
  blockOf(doc: number): number {
    if (this.df < BLOCK) return this.df > 0 && this.lastDoc(0) >= doc ? 0 : this.blocks;
    const b = firstAtLeast(this.words, this.skip, this.blocks, this.lastBlock, doc);
    if (b < this.blocks) {
      if (!(this.words[this.skip + b]! < this.documents))
        throw this.damaged(`has block ${b} end at document ${this.words[this.skip + b]} of ${this.documents}`);
      this.lastBlock = b;
    } else this.lastBlock = this.blocks - 1;
    return b;
  }
  /** blockOf()'s last answer (a block of the open list). */
  protected lastBlock = 0;

  /** Decodes block b into docs and tfs: its number of documents. */
  decode(b: number): number {
    if (this.decoded === b) return this.decodedCount;
    const bytes = this.bytes;
    const docs = this.docs;
    const tfs = this.tfs;
    const documents = this.documents;
    const long = this.df >= BLOCK;
    let at: number;
    let doc: number;
    /** Where the block's documents must end: the list's positions (a long list), else its part. */
    let end: number;
    if (!long) {
      at = this.docsAt;
      doc = -1;
      end = bytes.length;
    } else {
      at = this.docsAt + this.words[this.skip + this.blocks + b]!;
      doc = b > 0 ? this.words[this.skip + b - 1]! | 0 : -1;
      end = this.positionsAt;
    }
    // Gaps are at least 1, so from a start of -1 or more the documents rise; they stay below `documents` when the
    // last does and no sum wrapped. Checked once a block, after it (D163): a damaged list never sends a reader
    // past the documents (a window beyond them never ended) nor back.
    const start = doc;
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
        // Exceptions make gaps of up to 2^32: summed as doubles, exact, so that no wrap hides a document past the last.
        let sum = doc;
        for (let i = 0; i < n; i++) {
          sum += docs[i]! + 1;
          docs[i] = sum;
        }
        doc = sum < documents ? sum | 0 : -2;
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
      // Gaps of up to 2^31: summed as doubles, as unpack()'s.
      let sum = doc;
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
        sum += (v >>> 1) + 1;
        docs[i] = sum;
        const more = v & 1;
        tfs[i] = 1 + ((bytes[at]! - 1) & -more);
        at += more;
      }
      doc = sum < documents ? sum | 0 : -2;
    }
    // A negative last document (-2: a sum past them) is past the documents as an unsigned one.
    if (n > 0 && (doc >>> 0 >= documents || start < -1 || at > end || (long && doc !== this.words[this.skip + b])))
      throw this.damaged(
        `has a block (${b}) whose documents do not rise within the ${documents} there are to the last its skip data holds, within its bytes`,
      );
    this.docsEnd = at;
    this.decoded = b;
    this.decodedCount = n;
    this.decodedPostings += n;
    this.lastIndex = 0;
    return n;
  }

  /** The index of doc in the decoded block b, or -1: searched from the last answer in the block, as blockOf(). */
  protected indexIn(b: number, doc: number): number {
    const i = this.firstIndexIn(b, doc);
    return i < this.decodedCount && this.docs[i] === doc ? i : -1;
  }

  /** The index of the first document at or after doc in block b, decoded (its count when none): as indexIn() searches. */
  firstIndexIn(b: number, doc: number): number {
    const n = this.decode(b);
    const i = firstAtLeast(this.docs, 0, n, this.lastIndex, doc);
    this.lastIndex = i < n ? i : n - 1;
    return i;
  }
  /** indexIn()'s last answer in the decoded block. */
  protected lastIndex = 0;

  /** Whether the list holds doc: a search of the skip data (none when doc lies within the decoded block) and one block decoded. */
  holds(doc: number): boolean {
    const b = this.blockHolding(doc);
    return b < this.blocks && this.indexIn(b, doc) >= 0;
  }

  /** blockOf(doc), found without reading the skip data when doc lies within the decoded block. */
  protected blockHolding(doc: number): number {
    const n = this.decodedCount;
    if (this.decoded >= 0 && n > 0 && doc <= this.docs[n - 1]! && doc >= this.docs[0]!) return this.decoded;
    return this.blockOf(doc);
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

  /** A varint of at most 32 bits, as an int32 (read it with >>> 0 when it may reach 2^31). */
  protected varint32(bytes: Uint8Array, at: number): number {
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
  protected next = 0;

  protected varint(bytes: Uint8Array, at: number): number {
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
