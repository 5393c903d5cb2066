import { Bytes, writePacked, writeRun } from "./packed-runs";
import {
  ALIGN,
  BLOCK,
  MAX_DOC,
  MAX_POSITION,
  MAX_TF,
  PACKED_FROM,
  PART_BYTES,
  type PostingsSink,
  RUN,
} from "./postings-format";

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
