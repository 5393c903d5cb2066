import { Bytes, writePacked, writeRun } from "./packed-runs";
import type { FieldNorms } from "./shard-types";
import {
  ALIGN,
  BLOCK,
  COARSE,
  MAX_DOC,
  MAX_POSITION,
  MAX_TF,
  PACKED_FROM,
  PART_BYTES,
  type PostingsSink,
  RUN,
  skipBytes,
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
  /** Each block's impact: the (tf, length) of its posting with the highest tf over its length's norm (Shard norms). */
  private readonly impactTfs = new Words();
  private readonly impactLengths = new Words();
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
  /** The block's impact so far: its tf, its length, and tf over the length's norm. */
  private blockTf = 0;
  private blockLength = 0;
  private blockRatio = -1;
  /** The field's lengths and norms of the list being written (none: impacts are its greatest tf at length 0, a looser bound). */
  private norms: FieldNorms | undefined;
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

  /**
   * Starts a list; `norms`: the lengths of its field's documents and their norms, which its
   * blocks' impacts are chosen by (without them, each impact is the block's greatest tf at
   * length 0: a bound, looser).
   */
  begin(positions: boolean, norms?: FieldNorms): void {
    if (this.open) throw new Error("postings: begin() before the previous list's end()");
    this.open = true;
    this.withPositions = positions;
    this.norms = norms;
    this.df = 0;
    this.previousDoc = -1;
    this.resetImpact();
    this.tf = 0;
    this.inBlock = 0;
    this.positionValues.length = this.overflows.length = 0;
    this.docsArea.length = this.positionsArea.length = 0;
    this.lastDocs.length = this.docStarts.length = this.positionStarts.length = 0;
    this.impactTfs.length = this.impactLengths.length = 0;
  }

  private resetImpact(): void {
    this.blockTf = 0;
    this.blockLength = 0;
    this.blockRatio = -1;
  }

  private noteImpact(doc: number, tf: number): void {
    const norms = this.norms;
    if (!norms) {
      if (tf > this.blockTf) this.blockTf = tf;
      return;
    }
    const length = norms.lengths[doc]!;
    const ratio = tf / norms.table[length]!;
    if (ratio > this.blockRatio) {
      this.blockRatio = ratio;
      this.blockTf = tf;
      this.blockLength = length;
    }
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
    this.noteImpact(doc, tf);
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
    const skips = df < BLOCK ? 0 : skipBytes(this.lastDocs.length, this.withPositions);
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
    const tfs = this.impactTfs.data;
    const lengths = this.impactLengths.data;
    if (df < BLOCK) {
      out.byte(tfs[0]!);
      out.u16(lengths[0]!);
    } else {
      while ((offset + out.length) % ALIGN) out.byte(0);
      const blocks = this.lastDocs.length;
      out.u32(this.docsArea.length);
      for (let b = 0; b < blocks; b++) out.u32(this.lastDocs.data[b]!);
      for (let b = 0; b < blocks; b++) out.u32(this.docStarts.data[b]!);
      if (hasPositions) for (let b = 0; b < blocks; b++) out.u32(this.positionStarts.data[b]!);
      for (let b = 0; b < blocks; b++) out.u16(lengths[b]!);
      // The coarse level: the best of each run of COARSE blocks, by the same ratio.
      const coarse = Math.ceil(blocks / COARSE);
      if (this.coarseBest.length < coarse) this.coarseBest = new Uint32Array(coarse * 2);
      const best = this.coarseBest;
      for (let c = 0; c < coarse; c++) {
        let at = c * COARSE;
        for (let b = at + 1; b < Math.min(blocks, (c + 1) * COARSE); b++) if (this.better(b, at)) at = b;
        best[c] = at;
      }
      for (let c = 0; c < coarse; c++) out.u16(lengths[best[c]!]!);
      for (let b = 0; b < blocks; b++) out.byte(tfs[b]!);
      for (let c = 0; c < coarse; c++) out.byte(tfs[best[c]!]!);
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

  /** Whether block a's impact is above block b's (by tf over the length's norm; without norms, by tf). */
  private better(a: number, b: number): boolean {
    const tfs = this.impactTfs.data;
    const lengths = this.impactLengths.data;
    const norms = this.norms;
    if (!norms) return tfs[a]! > tfs[b]!;
    return tfs[a]! / norms.table[lengths[a]!]! > tfs[b]! / norms.table[lengths[b]!]!;
  }
  private coarseBest = new Uint32Array(64);

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
    this.impactTfs.push(this.blockTf);
    this.impactLengths.push(this.blockLength);
    this.resetImpact();
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
