/** A shard's arrays opened for reading: its vocabulary, term lists, postings and field lengths, with BM25's length norms. */
import { PostingsReader, type PostingsCursor } from "./postings";
import { DenseLists } from "./dense-lists";
import { normTable } from "./norms";
import type { FieldNorms, ShardData } from "./shard-types";
import { TermLists } from "./term-lists";
import { Vocabulary } from "./vocabulary";

/** Documents a window of match() spans over several lists: their sums, 12 bytes a document, fit a core's L2 cache. */
const MATCH_WINDOW = 1 << 15;

export class ShardReader {
  /** The arrays the shard reads. */
  readonly data: ShardData;
  readonly fields: string[];
  readonly documentCount: number;
  protected readonly vocabulary: Vocabulary;
  protected readonly lists: TermLists;
  /** One cursor over the postings, reused by every call (they are synchronous). */
  protected readonly cursor: PostingsCursor;
  protected readonly reader: PostingsReader;
  protected readonly lengths: Uint16Array;
  /** BM25's length normalisation, k·(1 − b + b·length/average), per field and length. */
  protected readonly normTables: Float32Array[];
  protected readonly boosts: number[];
  protected readonly scores: Float64Array;
  protected readonly masks: Uint32Array;
  /** match()'s cursors, one a list it reads at once (made as needed). */
  protected readonly listCursors: PostingsCursor[] = [];

  /** Documents a window of match() spans (MATCH_WINDOW; a test sets another). */
  protected readonly matchWindow: number;

  constructor(data: ShardData, boosts: number[], options: { matchWindow?: number } = {}) {
    this.data = data;
    this.matchWindow = options.matchWindow ?? MATCH_WINDOW;
    this.fields = data.fields;
    this.documentCount = data.documentCount;
    this.boosts = boosts;
    this.lists = new TermLists(data.lists);
    this.reader = new PostingsReader(data.postings, data.documentCount);
    this.cursor = this.reader.cursor();
    this.lengths = data.fieldLengths;
    this.vocabulary = new Vocabulary(data.vocabulary);
    this.denseLists = data.dense && new DenseLists(data.dense.addresses, data.dense.tfs, data.documentCount);
    const n = this.documentCount;
    this.normTables = this.fields.map((_f, f) => normTable(this.lengths.subarray(f * n, (f + 1) * n)).table);
    this.scores = new Float64Array(n);
    this.masks = new Uint32Array(n);
  }

  /** A field's length per document, and BM25's length normalisation per length: a document's is table[lengths[d]]. */
  norms(field: number): FieldNorms {
    // Asked for at every list a search reads: made once a field, not a subarray each time.
    const n = this.documentCount;
    return (this.fieldNorms[field] ??= {
      lengths: this.lengths.subarray(field * n, (field + 1) * n),
      table: this.normTables[field]!,
    });
  }
  private readonly fieldNorms: FieldNorms[] = [];

  /** A cursor of its own over the shard's postings, for a reader that keeps lists open while the shard reads others. */
  newCursor(): PostingsCursor {
    return this.reader.cursor();
  }

  /** Whether the index holds this key. */
  /** Calls `visit` with every term's index key, its lists' postings, and those of every term it begins (itself included), in key order. */
  eachTerm(visit: (key: string, postings: number, withLonger: number) => void): void {
    const size = this.vocabulary.size;
    const upTo = new Float64Array(size + 1);
    for (let term = 0; term < size; term++) upTo[term + 1] = upTo[term]! + this.lists.total(term);
    for (let term = 0; term < size; term++) {
      const key = this.vocabulary.keyOf(term);
      const [, to] = this.vocabulary.prefixRange(key);
      visit(key, this.lists.total(term), upTo[to]! - upTo[term]!);
    }
  }

  has(key: string): boolean {
    return this.vocabulary.get(key) !== undefined;
  }

  /** A term's postings lists, field by field: where each is and how many documents it holds. */
  termLists(term: number): { field: number; address: number; df: number }[] {
    const out: { field: number; address: number; df: number }[] = [];
    for (let f = 0; f < this.fields.length; f++) {
      const list = this.lists.index(term, f);
      if (list >= 0) out.push({ field: f, address: this.lists.address(list), df: this.lists.count(list) });
    }
    return out;
  }

  /** A list's tfs a document, when it is one of the most common (dense-lists.ts). */
  dense(address: number): Uint8Array | undefined {
    return this.denseLists?.of(address);
  }
  private readonly denseLists: DenseLists | undefined;

  /** A field's boost: what its lists' weights are multiplied by. */
  boost(field: number): number {
    return this.boosts[field]!;
  }

  /** The index key of a term number. */
  keyOf(term: number): string {
    return this.vocabulary.keyOf(term);
  }

  /** Unique terms of a document's field. */
  fieldLength(field: number, doc: number): number {
    return this.lengths[field * this.documentCount + doc]!;
  }

  /**
   * How informative a key is in one field: BM25's inverse document frequency, as match()
   * weighs it (0 for a key the index does not hold).
   */
  idf(key: string, field: number): number {
    const term = this.vocabulary.get(key);
    if (term === undefined) return 0;
    const df = this.lists.df(term, field);
    return df ? Math.log(1 + (this.documentCount - df + 0.5) / (df + 0.5)) : 0;
  }

  /** Documents holding a term, in any field (postings counted twice where two fields hold it). */
  frequency(term: number): number {
    return this.lists.total(term);
  }

  /** The term number of an index key, if the index holds it. */
  termOf(key: string): number | undefined {
    return this.vocabulary.get(key);
  }
}
