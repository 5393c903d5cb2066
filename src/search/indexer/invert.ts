/**
 * A shard built in memory from documents, as MiniSearch's add() indexes a document: each
 * field's tokens, each processed into its key; the term frequency is the key's count in the
 * field, the field length its number of distinct tokens. (MiniSearch's own add() inserts every
 * token into its radix tree, which at a vocabulary of 400,000 words made indexing a million
 * chunks take hours.) Large builds go through runs and a merge instead (build.ts).
 */
import { Growable } from "../../snapshot";
import { memoryPostings } from "../postings/postings-writer";
import { TermListsWriter } from "../postings/term-lists";
import type { ShardData, ShardOptions } from "../postings/shard-types";
import { TokenTable } from "../postings/token-table";
import { vocabularyOf } from "../postings/vocabulary";

/** Term frequencies are kept in a byte: BM25 has long saturated by then. */
const MAX_FREQ = 255;
const MAX_LENGTH = 65_535;

/**
 * Builds a shard from `count` documents (document i is docAt(i), a string per field).
 * `progress` is told how many documents are indexed so far.
 */
export function buildShard(
  count: number,
  docAt: (i: number) => Record<string, string>,
  options: ShardOptions,
  progress: (done: number) => void = () => {},
): ShardData {
  const inversion = new Inversion(options);
  for (let i = 0; i < count; i++) {
    inversion.add(docAt(i));
    if ((i + 1) % 10_000 === 0 || i + 1 === count) progress(i + 1);
  }
  return inversion.shard();
}

/** One field's value analysed: its distinct terms in order of appearance, their frequencies, and where each one's positions start. */
interface AnalysedField {
  value: string;
  terms: number[];
  freqs: number[];
  positionsAt: number[];
}

/**
 * Documents turned into postings in document order as they are added (a build inverts each
 * page as it arrives, Lucene's way), then into lists sorted by term.
 */
export class Inversion {
  private readonly fields: number;
  /** Documents added. */
  count = 0;
  /** token → term number, and key → term number (the term's key is processTerm(token)). */
  private readonly termOf = new TokenTable();
  private readonly termOfKey = new Map<string, number>();
  private readonly keys: string[] = [];
  /** Each document's field lengths, F a document. */
  private readonly fieldLengths = new Growable(Uint16Array);
  /** Postings in document order: (term * F + field, document, frequency). */
  private readonly postingKey = new Column();
  private readonly postingDoc = new Column();
  /** The term frequency, uncapped (it is also the number of positions). */
  private readonly postingFreq = new Column();
  /** Where in positionData the posting's positions start (fields that keep positions). */
  private readonly postingPositions = new Column();
  private readonly positionData = new Column();
  private readonly keepsPositions: boolean[];
  /** The terms of the field's tokens in order, and where each term's positions go. */
  private readonly sequence: number[] = [];
  private slot = new Uint32Array(1 << 16);
  private tf = new Uint32Array(1 << 16);
  /** A page's title (and a section's heading) repeats in each of its chunks: analysed once. */
  private readonly last: AnalysedField[];

  /** With `data` (taken from another inversion, perhaps in another thread), one whose documents are added: it is only to be shard()ed. */
  constructor(
    private readonly options: ShardOptions,
    data?: InvertedData,
  ) {
    this.fields = options.fields.length;
    this.keepsPositions = options.fields.map((f) => options.positionFields?.includes(f) ?? false);
    this.last = options.fields.map(() => ({ value: "\u0000", terms: [], freqs: [], positionsAt: [] }));
    if (!data) return;
    this.count = data.count;
    this.keys = data.keys;
    this.fieldLengths = Growable.of(Uint16Array, data.fieldLengths);
    this.postingKey = Column.of(data.postingKey);
    this.postingDoc = Column.of(data.postingDoc);
    this.postingFreq = Column.of(data.postingFreq);
    this.postingPositions = Column.of(data.postingPositions);
    this.positionData = Column.of(data.positionData);
  }

  /**
   * The documents added, as what shard() needs in plain data that a worker can be sent, and
   * the buffers to move there rather than copy. This inversion is spent.
   */
  take(): { data: InvertedData; transfer: ArrayBuffer[] } {
    const data: InvertedData = {
      count: this.count,
      keys: this.keys,
      fieldLengths: this.fieldLengths.view(),
      postingKey: this.postingKey.data(),
      postingDoc: this.postingDoc.data(),
      postingFreq: this.postingFreq.data(),
      postingPositions: this.postingPositions.data(),
      positionData: this.positionData.data(),
    };
    const columns = [data.postingKey, data.postingDoc, data.postingFreq, data.postingPositions, data.positionData];
    return {
      data,
      transfer: [
        data.fieldLengths.buffer as ArrayBuffer,
        ...columns.flatMap((c) => c.blocks.map((b) => b.buffer as ArrayBuffer)),
      ],
    };
  }

  /** Adds the next document (number `count`). */
  add(doc: Record<string, string>): void {
    const F = this.fields;
    const i = this.count++;
    for (let f = 0; f < F; f++) {
      const value = doc[this.options.fields[f]!] ?? "";
      const field = this.last[f]!.value === value ? this.last[f]! : (this.last[f] = this.analyse(value, f));
      this.fieldLengths.push(Math.min(MAX_LENGTH, field.terms.length));
      for (let t = 0; t < field.terms.length; t++) {
        this.postingKey.push(field.terms[t]! * F + f);
        this.postingDoc.push(i);
        this.postingFreq.push(field.freqs[t]!);
        this.postingPositions.push(this.keepsPositions[f] ? field.positionsAt[t]! : 0);
      }
    }
  }

  /** A field's value: its distinct terms, their frequencies, and (fields that keep them) their positions, grouped by term. */
  private analyse(value: string, f: number): AnalysedField {
    const found: number[] = [];
    const sequence = this.sequence;
    sequence.length = 0;
    for (const token of this.options.tokenize(value)) {
      const term = this.termOfToken(token);
      if (this.tf[term]!++ === 0) found.push(term);
      if (this.keepsPositions[f]) sequence.push(term);
    }
    const tf = this.tf;
    const field: AnalysedField = { value, terms: found, freqs: found.map((t) => tf[t]!), positionsAt: [] };
    if (this.keepsPositions[f]) {
      // Each term's positions together, in the order of found.
      const slot = this.slot;
      const base = this.positionData.length;
      let at = 0;
      field.positionsAt = found.map((t) => {
        slot[t] = at;
        at += tf[t]!;
        return base + slot[t]!;
      });
      const grouped = new Uint32Array(sequence.length);
      for (const [position, t] of sequence.entries()) grouped[slot[t]!++] = position;
      for (const position of grouped) this.positionData.push(position);
    }
    for (const t of found) tf[t] = 0;
    return field;
  }

  /** A token's term number, a new one for a key not seen before. */
  private termOfToken(token: string): number {
    const known = this.termOf.get(token);
    if (known >= 0) return known;
    const key = this.options.processTerm(token);
    let term = this.termOfKey.get(key);
    if (term === undefined) {
      term = this.keys.length;
      this.keys.push(key);
      this.termOfKey.set(key, term);
    }
    this.termOf.add(token, term);
    if (term >= this.tf.length) {
      const grown = new Uint32Array(this.tf.length * 2);
      grown.set(this.tf);
      this.tf = grown;
      this.slot = new Uint32Array(grown.length);
    }
    return term;
  }

  /** The shard's arrays: terms renumbered in key order (the vocabulary is stored sorted, vocabulary.ts), one list per (term, field). */
  shard(): ShardData {
    const { keys, fields: F } = this;
    const byKey = keys.map((_k, t) => t).sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
    const renumber = new Uint32Array(keys.length);
    for (const [rank, t] of byKey.entries()) renumber[t] = rank;
    const { offsets, order } = this.sortedByList((k) => renumber[Math.floor(k / F)]! * F + (k % F));
    const columns = {
      first: new Growable(Uint32Array),
      fields: new Growable(Uint8Array),
      at: new Growable(Float64Array),
      df: new Growable(Uint32Array),
    };
    const lists = new TermListsWriter(columns);
    const termAt = new Float64Array(F);
    const termDf = new Uint32Array(F);
    const { writer, parts } = memoryPostings();
    for (let term = 0; term < keys.length; term++) {
      for (let f = 0; f < F; f++) {
        const list = term * F + f;
        const lo = offsets[list]!;
        const hi = offsets[list + 1]!;
        termDf[f] = hi - lo;
        if (lo === hi) continue;
        const positions = this.keepsPositions[f]!;
        writer.begin(positions);
        for (let p = lo; p < hi; p++) {
          const i = order[p]!;
          const freq = this.postingFreq.get(i);
          writer.add(this.postingDoc.get(i), Math.min(MAX_FREQ, freq));
          if (positions)
            for (let at = this.postingPositions.get(i), end = at + freq; at < end; at++)
              writer.position(this.positionData.get(at));
        }
        termAt[f] = writer.end();
      }
      lists.add(termAt, termDf);
    }
    return {
      fields: this.options.fields,
      documentCount: this.count,
      vocabulary: vocabularyOf(byKey.map((t) => keys[t]!)),
      postings: parts(),
      lists: {
        first: columns.first.view(),
        fields: columns.fields.view(),
        at: columns.at.view(),
        df: columns.df.view(),
      },
      fieldLengths: this.fieldLengthsByField(),
    };
  }

  /** The field lengths as a shard keeps them: field by field (f * count + document). */
  private fieldLengthsByField(): Uint16Array {
    const { count, fields: F } = this;
    const byDoc = this.fieldLengths.view();
    const byField = new Uint16Array(F * count);
    for (let i = 0; i < count; i++) for (let f = 0; f < F; f++) byField[f * count + i] = byDoc[i * F + f]!;
    return byField;
  }

  /** The postings in (term, field) order by a counting sort (stable: each list keeps its documents in increasing order), and where each list starts. */
  private sortedByList(listOf: (key: number) => number): { offsets: Uint32Array; order: Uint32Array } {
    const total = this.postingKey.length;
    const offsets = new Uint32Array(this.keys.length * this.fields + 1);
    for (let i = 0; i < total; i++) offsets[listOf(this.postingKey.get(i)) + 1]!++;
    for (let i = 1; i < offsets.length; i++) offsets[i]! += offsets[i - 1]!;
    const next = offsets.slice(0, -1);
    const order = new Uint32Array(total);
    for (let i = 0; i < total; i++) order[next[listOf(this.postingKey.get(i))]!++] = i;
    return { offsets, order };
  }
}

/** An inversion's documents as plain data (Inversion.take()). */
export interface InvertedData {
  count: number;
  keys: string[];
  fieldLengths: Uint16Array<ArrayBuffer>;
  postingKey: ColumnData;
  postingDoc: ColumnData;
  postingFreq: ColumnData;
  postingPositions: ColumnData;
  positionData: ColumnData;
}

interface ColumnData {
  blocks: Uint32Array[];
  length: number;
}

/** A growable run of unsigned integers, kept in fixed blocks so growth never copies. */
class Column {
  private static readonly SHIFT = 22;
  private blocks: Uint32Array[] = [];
  length = 0;
  static of(data: ColumnData): Column {
    const column = new Column();
    column.blocks = data.blocks;
    column.length = data.length;
    return column;
  }
  data(): ColumnData {
    return { blocks: this.blocks, length: this.length };
  }
  push(v: number): void {
    const at = this.length & ((1 << Column.SHIFT) - 1);
    if (at === 0) this.blocks.push(new Uint32Array(1 << Column.SHIFT));
    this.blocks[this.blocks.length - 1]![at] = v;
    this.length++;
  }
  get(i: number): number {
    return this.blocks[i >>> Column.SHIFT]![i & ((1 << Column.SHIFT) - 1)]!;
  }
}
