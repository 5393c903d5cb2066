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
import { vocabularyOf } from "../postings/vocabulary";
import { type AnalysedField, type AnalysedPage, KEY_SEPARATOR, SAME_AS_BEFORE, TermNumbers } from "./analysis";

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

/**
 * Documents turned into postings in document order as they are added (a build inverts each
 * page as it arrives, Lucene's way), then into lists sorted by term.
 */
export class Inversion {
  private readonly fields: number;
  /** Documents added. */
  count = 0;
  /** Tokens and keys to term numbers; keys[term] is the term's key. */
  private readonly numbers: TermNumbers;
  private readonly keys: string[];
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
  /** A page's title (and a section's heading) repeats in each of its chunks: analysed once. */
  private readonly last: AnalysedField[];
  /** An analysed field's postings, by field: where the last one's start and how many (addAnalysed). */
  private readonly lastPosted: number[];
  private readonly lastCount: number[];
  /** By parsing worker, its numbering's generation (AnalysedPage) and its numbers' terms here (-1: not met yet). */
  private readonly remaps = new Map<string, { generation: number; terms: Int32Array }>();

  /** With `data` (taken from another inversion, perhaps in another thread), one whose documents are added: it is only to be shard()ed. */
  constructor(
    private readonly options: ShardOptions,
    data?: InvertedData,
  ) {
    this.fields = options.fields.length;
    this.keepsPositions = options.fields.map((f) => options.positionFields?.includes(f) ?? false);
    this.last = options.fields.map(() => ({ value: null, terms: [], freqs: [], positionsAt: [] }));
    this.lastPosted = options.fields.map(() => 0);
    this.lastCount = options.fields.map(() => 0);
    this.numbers = new TermNumbers(options);
    this.keys = data?.keys ?? this.numbers.keys;
    if (!data) return;
    this.count = data.count;
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
    const i = this.count++;
    for (let f = 0; f < this.fields; f++) {
      const value = doc[this.options.fields[f]!] ?? "";
      const last = this.last[f]!;
      const field =
        last.value === value
          ? last
          : (this.last[f] = this.numbers.analyse(value, this.keepsPositions[f] ? this.positionData : undefined));
      this.post(i, f, field);
    }
  }

  /**
   * Adds a page's chunks as documents, analysed where the page was parsed (PageAnalyser): its
   * keys numbered here, its postings and positions copied from its arrays. The same postings as
   * add() on each chunk.
   */
  addAnalysed(page: AnalysedPage): void {
    const F = this.fields;
    const { counts, terms, freqs, positions } = page;
    const termOf = this.termsOf(page);
    let term = 0;
    let position = 0;
    for (let c = 0; c < counts.length / F; c++) {
      const i = this.count++;
      for (let f = 0; f < F; f++) {
        const count = counts[c * F + f]!;
        if (count === SAME_AS_BEFORE) {
          this.repost(i, f);
          continue;
        }
        const keeps = this.keepsPositions[f]!;
        this.fieldLengths.push(Math.min(MAX_LENGTH, count));
        this.lastPosted[f] = this.postingKey.length;
        this.lastCount[f] = count;
        for (let end = term + count; term < end; term++) {
          const freq = freqs[term]!;
          this.postingKey.push(termOf[terms[term]!]! * F + f);
          this.postingDoc.push(i);
          this.postingFreq.push(freq);
          this.postingPositions.push(keeps ? this.positionData.length : 0);
          if (keeps) for (let p = 0; p < freq; p++) this.positionData.push(positions[position++]!);
        }
      }
    }
  }

  /** Each of an analysed page's terms' number here: through its numbering's map, a key looked up only when new to it. */
  private termsOf(page: AnalysedPage): Int32Array {
    const { ids } = page;
    let remap = this.remaps.get(page.worker);
    // A worker's numbering starts again in a new generation: the old one's map is let go.
    if (remap?.generation !== page.generation)
      this.remaps.set(page.worker, (remap = { generation: page.generation, terms: new Int32Array(1 << 12).fill(-1) }));
    const termOf = new Int32Array(ids.length);
    let keys: string[] | undefined;
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      if (id >= remap.terms.length) {
        const grown = new Int32Array(Math.max(id + 1, remap.terms.length * 2)).fill(-1);
        grown.set(remap.terms);
        remap.terms = grown;
      }
      let term = remap.terms[id]!;
      if (term < 0) term = remap.terms[id] = this.numbers.ofKey((keys ??= page.keys.split(KEY_SEPARATOR))[k]!);
      termOf[k] = term;
    }
    return termOf;
  }

  /** Document i's postings in field f: those of the document before (its value is the same: a title, a heading). */
  private repost(i: number, f: number): void {
    const from = this.lastPosted[f]!;
    const count = this.lastCount[f]!;
    this.fieldLengths.push(Math.min(MAX_LENGTH, count));
    for (let k = from; k < from + count; k++) {
      this.postingKey.push(this.postingKey.get(k));
      this.postingDoc.push(i);
      this.postingFreq.push(this.postingFreq.get(k));
      this.postingPositions.push(this.postingPositions.get(k));
    }
  }

  /** Document i's postings in field f. */
  private post(i: number, f: number, field: AnalysedField): void {
    const F = this.fields;
    this.fieldLengths.push(Math.min(MAX_LENGTH, field.terms.length));
    for (let t = 0; t < field.terms.length; t++) {
      this.postingKey.push(field.terms[t]! * F + f);
      this.postingDoc.push(i);
      this.postingFreq.push(field.freqs[t]!);
      this.postingPositions.push(this.keepsPositions[f] ? field.positionsAt[t]! : 0);
    }
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
