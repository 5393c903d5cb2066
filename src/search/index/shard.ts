/**
 * A search shard: MiniSearch's index model, laid out flat in typed arrays.
 *
 * What MiniSearch keeps as term → field → document → frequency Maps is here, for each
 * (term, field), a postings list (postings.ts: document numbers in increasing order with
 * their term frequencies and, for the fields that keep them, word positions, in compressed
 * blocks), plus each document's field lengths. The vocabulary (vocabulary.ts) is sorted
 * keys in typed arrays, for exact, prefix and typo lookups. Queries are scored as
 * MiniSearch scores them (BM25+ with its parameters, its prefix and fuzzy weights, times
 * the number of query words matched), summed into accumulators indexed by document rather
 * than into a Map of result objects per document. At a million chunks that is the
 * difference between about 1 GB and more than 21 GB of heap, and between milliseconds and
 * seconds for a common word.
 */
import { PostingsReader, type PostingsCursor } from "./postings";
import { DENSE_SHARE, DenseLists, type DenseList } from "./dense";
import { Vocabulary, type VocabularyData } from "./vocabulary";
import { TermLists, type TermListsData } from "./term-lists";
import { bestEntries, kthLargest } from "../ranking/topk";

export { buildShard } from "../indexer/invert";

export interface ShardOptions {
  fields: string[];
  tokenize: (text: string) => string[];
  /** Maps a token to the key it is indexed under (many tokens may share a key). */
  processTerm: (term: string) => string;
  /** Fields whose word positions are kept (token indexes in tokenize()'s output). */
  positionFields?: string[];
}

/** A query word: its index key, and how it may also match. */
export interface WordSpec {
  key: string;
  prefix: boolean;
  /** Largest edit distance allowed; 0 for exact (and prefix) matches only. */
  fuzzy: number;
  /** Other forms of the word (its stem's): index keys that begin with a range's prefix, are at most its `longest` long, and that `accept` takes. */
  variants?: { ranges: { prefix: string; longest: number }[]; accept: (key: string) => boolean };
}

/** A term of the index matched by a query word. */
export interface Derived {
  word: number;
  term: number;
  weight: number;
  /** Another form of the word (same stem), not the word itself, a prefix's completion or a typo. */
  variant?: boolean;
}

/** The documents a query touched, each with its score and the query words it holds (bit i = word i). */
export interface Matches {
  count: number;
  /** Postings read to find them (the search's work, for /metrics). */
  postings: number;
  docs: Uint32Array;
  scores: Float64Array;
  masks: Uint32Array;
  derived: Derived[];
}

/** Where match() looks (fields and documents [from, to): all by default), and the buffer its result goes into. */
export interface MatchOptions {
  fields?: number[];
  from?: number;
  to?: number;
  into?: Matches;
}

/** A mask holds one bit per query word: words past this many are not matched. */
export const MAX_WORDS = 31;

/**
 * What one query word may expand to, as Meilisearch bounds its derivations: at most this many
 * index terms by prefix and this many by typo, the most frequent kept, so that a short prefix
 * or a long word with two typos costs the same small amount in any vocabulary. Each term is a
 * list per field to read; 10 gave the same relevance figures as 50 (D48).
 */
export const MAX_EXPANSIONS = 10;

/** MiniSearch's defaults. */
export const BM25 = { k: 1.2, b: 0.7, d: 0.5 };
/** MiniSearch's weights for prefix and typo expansions; a word's other forms (its stem's) weigh less than either. */
export const WEIGHTS = { fuzzy: 0.45, prefix: 0.375, variant: 0.3 };
/** How many keys of a variant prefix's range are looked at: a short stem's range can hold thousands of words. */
const VARIANT_SCAN = 512;
/** Terms a run of the vocabulary holds, whose greatest frequency is kept to find a prefix's most frequent terms (prefixExpansions). */
const FREQUENCY_RUN = 64;
/** How many of those keys, the most frequent, are stemmed to see whether they are forms of the word. */
const VARIANT_CHECKS = 16;

/**
 * One postings list a query reads: a derived term in one field, with the BM25 weight of its
 * postings (word weight × field boost × IDF) and the most one of its postings can add.
 */
export interface FieldNorms {
  lengths: Uint16Array;
  table: Float32Array;
}

export interface ScoredList {
  word: number;
  field: number;
  address: number;
  df: number;
  weight: number;
  /** The most one posting adds (0 until Shard.withBounds() reads it). */
  max: number;
}

/** The flat arrays a shard is made of, as stored. */
export interface ShardData {
  fields: string[];
  documentCount: number;
  /** Index keys, by term number, in sorted order. */
  vocabulary: VocabularyData;
  /** Postings lists (postings.ts), in parts of less than 4 GiB. */
  postings: Uint8Array[];
  /** Each term's lists: their addresses in postings and document counts (term-lists.ts). */
  lists: TermListsData;
  /** Unique terms per document, field after field (documentCount each). */
  fieldLengths: Uint16Array;
}

export class Shard {
  /** The arrays the shard reads. */
  readonly data: ShardData;
  readonly fields: string[];
  readonly documentCount: number;
  private readonly vocabulary: Vocabulary;
  private readonly lists: TermLists;
  /** One cursor over the postings, reused by every call (they are synchronous). */
  private readonly cursor: PostingsCursor;
  private readonly reader: PostingsReader;
  private readonly lengths: Uint16Array;
  /** BM25's length normalisation, k·(1 − b + b·length/average), per field and length. */
  private readonly normTables: Float32Array[];
  /** Per field, the smallest normalisation: what a posting's score is bounded with. */
  private readonly shortestNorms: number[];
  private readonly boosts: number[];
  private readonly scores: Float64Array;
  private readonly masks: Uint32Array;
  /** match()'s cursors, one a list it reads at once (made as needed). */
  private readonly listCursors: PostingsCursor[] = [];

  /** Documents a window of match() spans (MATCH_WINDOW; a test sets another). */
  private readonly matchWindow: number;

  constructor(data: ShardData, boosts: number[], options: { matchWindow?: number } = {}) {
    this.data = data;
    this.matchWindow = options.matchWindow ?? MATCH_WINDOW;
    this.fields = data.fields;
    this.documentCount = data.documentCount;
    this.boosts = boosts;
    this.lists = new TermLists(data.lists);
    this.reader = new PostingsReader(data.postings);
    this.cursor = this.reader.cursor();
    this.lengths = data.fieldLengths;
    this.vocabulary = new Vocabulary(data.vocabulary);
    const n = this.documentCount;
    const normOf = (length: number, average: number) => BM25.k * (1 - BM25.b + (BM25.b * length) / average);
    this.shortestNorms = [];
    this.normTables = this.fields.map((_f, f) => {
      const lengths = this.lengths.subarray(f * n, (f + 1) * n);
      let sum = 0;
      // A posting's document holds the term, so its field is at least one word long: the shortest such field bounds a posting's score.
      let shortest = Infinity;
      for (let d = 0; d < n; d++) {
        const length = lengths[d]!;
        sum += length;
        if (length > 0 && length < shortest) shortest = length;
      }
      const average = sum / n || 1;
      // By length, not by document: a length is 16 bits, so the table is 256 KB whatever the corpus (4 bytes a document saved per field).
      const table = new Float32Array(1 << 16);
      for (let length = 0; length < table.length; length++) table[length] = normOf(length, average);
      this.shortestNorms.push(Math.fround(normOf(Number.isFinite(shortest) ? shortest : 0, average)));
      return table;
    });
    this.scores = new Float64Array(n);
    this.masks = new Uint32Array(n);
  }

  /**
   * The postings lists of derived terms, in match()'s order (term after term, field after
   * field), each with its BM25 weight; their bounds are not read (withBounds()).
   */
  scoredLists(derived: Derived[], fields?: number[]): ScoredList[] {
    const N = this.documentCount;
    const out: ScoredList[] = [];
    for (const { word, term, weight } of derived) {
      for (const f of fields ?? this.fields.map((_f, i) => i)) {
        const list = this.lists.index(term, f);
        if (list < 0) continue;
        const df = this.lists.count(list);
        const w = weight * this.boosts[f]! * Math.log(1 + (N - df + 0.5) / (df + 0.5));
        out.push({ word, field: f, address: this.lists.address(list), df, weight: w, max: 0 });
      }
    }
    return out;
  }

  /**
   * The lists with an upper bound of what one posting adds: the list's largest term frequency
   * over the shortest document of the field. It costs a look at every block's skip data (0.16
   * ms for "a" at 5M chunks), so only the ranking that reads it asks.
   */
  withBounds(lists: ScoredList[]): ScoredList[] {
    const cursor = this.cursor;
    return lists.map((l) => {
      let maxTf = 0;
      for (let b = 0, blocks = cursor.open(l.address).blocks; b < blocks; b++) maxTf = Math.max(maxTf, cursor.maxTf(b));
      return {
        ...l,
        max: l.weight * (BM25.d + (maxTf * (BM25.k + 1)) / (maxTf + this.shortestNorms[l.field]!)) * (1 + 1e-9),
      };
    });
  }

  /** The smallest normalisation of a field's documents that hold a term: what bounds a posting's score. */
  shortestNorm(field: number): number {
    return this.shortestNorms[field]!;
  }

  /** The postings a pass over these terms reads, in every field (or in `fields`): from the list table, nothing decoded. */
  postingsOf(derived: Derived[], fields?: number[]): number {
    let postings = 0;
    for (const { term } of derived) {
      if (!fields) postings += this.lists.total(term);
      else {
        for (const f of fields) {
          const list = this.lists.index(term, f);
          if (list >= 0) postings += this.lists.count(list);
        }
      }
    }
    return postings;
  }

  /**
   * The per-document buffers match() accumulates in: all zero outside a match() call. A caller
   * that does not call match() on this shard meanwhile may use them, and must leave them zero.
   * (The pruned search does: one set of per-chunk buffers instead of two.)
   */
  accumulators(): { scores: Float64Array; masks: Uint32Array } {
    return { scores: this.scores, masks: this.masks };
  }

  /** A common list's frequencies, a byte a document (dense.ts), made on first use; undefined for the others. */
  dense(l: ScoredList): DenseList | undefined {
    if (l.df < DENSE_SHARE * this.documentCount) return undefined;
    return (this.denseLists ??= new DenseLists(this.documentCount, this.newCursor())).of(l.address);
  }

  /** Milliseconds spent so far making what every later search reuses (dense lists, the runs' frequencies): not a search's work. */
  get onceMakingMs(): number {
    return (this.denseLists?.makingMs ?? 0) + this.runMakingMs;
  }

  private denseLists: DenseLists | undefined;

  /** A field's length per document, and BM25's length normalisation per length: a document's is table[lengths[d]]. */
  norms(field: number): FieldNorms {
    const n = this.documentCount;
    return { lengths: this.lengths.subarray(field * n, (field + 1) * n), table: this.normTables[field]! };
  }

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

  /**
   * The index terms each query word matches, with MiniSearch's weights for prefix and fuzzy
   * matches; at most MAX_EXPANSIONS of each kind per word, the most frequent first. Without
   * `remember`, not kept for the next call (specs made for one look, which would push out a
   * search's own).
   */
  derive(words: WordSpec[], remember = true): Derived[] {
    // The pruned search and the exhaustive one after it derive the same specs, a query's exact
    // ones and its typo ones (a walk of the vocabulary): once each is enough.
    const [last, before] = this.derivedFor;
    if (words === last?.words) return last.derived;
    if (words === before?.words) return before.derived;
    const derived = this.deriveAnew(words);
    if (remember) this.derivedFor = [{ words, derived }, last];
    return derived;
  }

  /** The last two derive() calls' specs (arrays a search makes and never changes) and their terms, the last first. */
  private derivedFor: [
    last?: { words: WordSpec[]; derived: Derived[] },
    before?: { words: WordSpec[]; derived: Derived[] },
  ] = [];

  private deriveAnew(words: WordSpec[]): Derived[] {
    const out: Derived[] = [];
    const vocabulary = this.vocabulary;
    const n = Math.min(words.length, MAX_WORDS);
    for (let word = 0; word < n; word++) {
      const w = words[word]!;
      const exact = vocabulary.get(w.key);
      if (exact !== undefined) out.push({ word, term: exact, weight: 1 });
      // Prefix expansions are the terms [from, to) longer than the key: often thousands for a
      // short word, so they are gathered as term numbers and made objects only once chosen.
      let from = 0;
      let to = 0;
      if (w.prefix) {
        [from, to] = vocabulary.prefixRange(w.key);
        const kept = this.mostFrequent(this.prefixExpansions(from, to, exact));
        for (let i = 0; i < kept; i++) {
          const term = this.expansions[i]!;
          const length = vocabulary.keyLength(term);
          const distance = length - w.key.length;
          out.push({ word, term, weight: (WEIGHTS.prefix * length) / (length + 0.3 * distance) });
        }
      }
      const variantsFrom = out.length;
      if (w.variants) {
        const { ranges, accept } = w.variants;
        let found = 0;
        let seenFrom = 0;
        let seenTo = 0;
        for (const { prefix, longest } of ranges) {
          const [start, end] = vocabulary.prefixRange(prefix);
          for (let term = start; term < end && term < start + VARIANT_SCAN; term++) {
            if (
              term === exact ||
              (term >= from && term < to) ||
              (term >= seenFrom && term < seenTo) ||
              vocabulary.keyLength(term) > longest
            )
              continue;
            this.expansion(found++, term);
          }
          seenFrom = start;
          seenTo = Math.min(end, start + VARIANT_SCAN);
        }
        // Stemming a word costs microseconds: only the most frequent candidates are asked.
        const checked = this.mostFrequent(found, VARIANT_CHECKS);
        let kept = 0;
        for (let i = 0; i < checked; i++) {
          const term = this.expansions[i]!;
          if (accept(vocabulary.keyOf(term))) this.expansions[kept++] = term;
        }
        for (let i = 0; i < kept; i++)
          out.push({ word, term: this.expansions[i]!, weight: WEIGHTS.variant, variant: true });
      }
      const variantsTo = out.length;
      if (w.fuzzy > 0) {
        let found = 0;
        const keyLength = w.key.length;
        vocabulary.typoTerms(w.key, w.fuzzy, (term, distance) => {
          // Not the key itself, nor a term its prefix expansions or its variants hold.
          if (!distance || (term >= from && term < to && vocabulary.keyLength(term) !== keyLength)) return;
          for (let i = variantsFrom; i < variantsTo; i++) if (out[i]!.term === term) return;
          this.expansionDistances[found] = distance;
          this.expansion(found++, term);
        });
        const kept = this.mostFrequent(found);
        for (let i = 0; i < kept; i++) {
          const term = this.expansions[i]!;
          const length = vocabulary.keyLength(term);
          out.push({ word, term, weight: (WEIGHTS.fuzzy * length) / (length + this.expansionDistances[i]!) });
        }
      }
    }
    return out;
  }

  /**
   * The expansions of a prefix, the terms [from, to) but the key itself (`exact`), into
   * `expansions`; returns their number. Few: all of them, last key first (the order
   * MiniSearch's atPrefix gave them in, which sets the order scores are summed in when they
   * are no more than MAX_EXPANSIONS). Many ("in" typed on has 58,000 at 5M chunks: 0.9 ms a
   * search): only those as frequent as the (MAX_EXPANSIONS + 2)th most frequent term of a
   * whole run of FREQUENCY_RUN terms in the range, found from each run's most frequent (those
   * runs' best are that many terms at least as frequent, one of them perhaps the key): the
   * most frequent are among them, and more than MAX_EXPANSIONS are, so they are chosen and
   * ordered by frequency, as from all.
   */
  private prefixExpansions(from: number, to: number, exact: number | undefined): number {
    let found = 0;
    const firstRun = Math.ceil(from / FREQUENCY_RUN);
    const endRun = Math.floor(to / FREQUENCY_RUN);
    if (endRun - firstRun < MAX_EXPANSIONS + 2) {
      for (let term = to - 1; term >= from; term--) if (term !== exact) this.expansion(found++, term);
      return found;
    }
    const runMost = this.runMostFrequent();
    const floor = kthLargest(runMost.subarray(firstRun, endRun), MAX_EXPANSIONS + 2);
    const gather = (start: number, end: number) => {
      for (let term = start; term < end; term++)
        if (term !== exact && this.frequency(term) >= floor) this.expansion(found++, term);
    };
    gather(from, firstRun * FREQUENCY_RUN);
    for (let run = firstRun; run < endRun; run++)
      if (runMost[run]! >= floor) gather(run * FREQUENCY_RUN, (run + 1) * FREQUENCY_RUN);
    gather(endRun * FREQUENCY_RUN, to);
    return found;
  }

  /** Each run of FREQUENCY_RUN terms' greatest frequency, made on first use (a pass over the vocabulary: 4.26M terms and 28.5 ms at 5M chunks). */
  private runMostFrequent(): Float64Array {
    if (this.runMost) return this.runMost;
    const started = performance.now();
    const size = this.vocabulary.size;
    const runMost = new Float64Array(Math.ceil(size / FREQUENCY_RUN));
    for (let term = 0; term < size; term++) {
      const f = this.frequency(term);
      const run = (term / FREQUENCY_RUN) | 0;
      if (f > runMost[run]!) runMost[run] = f;
    }
    this.runMost = runMost;
    this.runMakingMs = performance.now() - started;
    return runMost;
  }

  private runMost: Float64Array | undefined;
  private runMakingMs = 0;

  /** A word's expansions while derive() chooses among them: term numbers, and (typos) their distances. */
  private expansions = new Uint32Array(1024);
  private expansionDistances = new Uint8Array(1024);
  /** The expansions' frequencies while the most frequent are chosen (a short prefix can have thousands), and their one class for bestEntries. */
  private expansionFrequency = new Float64Array(1024);
  private expansionClass = new Uint8Array(1024);
  private readonly keptTerms = new Uint32Array(Math.max(MAX_EXPANSIONS, VARIANT_CHECKS));
  private readonly keptDistances = new Uint8Array(Math.max(MAX_EXPANSIONS, VARIANT_CHECKS));

  private expansion(i: number, term: number): void {
    if (i >= this.expansions.length) {
      const terms = new Uint32Array(this.expansions.length * 2);
      terms.set(this.expansions);
      this.expansions = terms;
      const distances = new Uint8Array(terms.length);
      distances.set(this.expansionDistances);
      this.expansionDistances = distances;
      this.expansionFrequency = new Float64Array(terms.length);
      this.expansionClass = new Uint8Array(terms.length);
    }
    this.expansions[i] = term;
  }

  /**
   * Keeps the MAX_EXPANSIONS most frequent of the first `found` expansions, in that order
   * (ties: the lower term number, for a stable order), or all of them in their order when
   * they are no more: their number, the kept ones first in expansions and expansionDistances.
   */
  private mostFrequent(found: number, keep = MAX_EXPANSIONS): number {
    if (found <= keep) return found;
    const terms = this.expansions;
    const distances = this.expansionDistances;
    const frequency = this.expansionFrequency;
    for (let i = 0; i < found; i++) frequency[i] = this.frequency(terms[i]!);
    // Selected, not sorted: "the" typed on has tens of thousands of expansions at 5M chunks.
    const chosen = bestEntries(this.expansionClass, frequency, found, keep, terms);
    // Gathered before writing back: the chosen positions are read from the lists being rewritten.
    const { keptTerms, keptDistances } = this;
    for (let i = 0; i < keep; i++) {
      keptTerms[i] = terms[chosen[i]!]!;
      keptDistances[i] = distances[chosen[i]!]!;
    }
    terms.set(keptTerms.subarray(0, keep));
    distances.set(keptDistances.subarray(0, keep));
    return keep;
  }

  /**
   * Scores every document holding any of the query words, in the given fields (all by
   * default) and documents [from, to) (all by default). The result goes `into` a buffer
   * from matchBuffer() when one is given (grown first if its lists could overflow it), else
   * into new arrays.
   */
  match(words: WordSpec[], options: MatchOptions = {}): Matches {
    return this.matchTerms(this.derive(words), options);
  }

  /** match() of terms already derived (weighed as the caller chooses). */
  matchTerms(derived: Derived[], options: MatchOptions = {}): Matches {
    const fields = options.fields ?? this.fields.map((_f, i) => i);
    const from = options.from ?? 0;
    const to = options.to ?? this.documentCount;
    // The documents reached go straight into the buffer, grown first if the lists could overflow it.
    const room = Math.min(to - from, this.postingsOf(derived, options.fields));
    const out = options.into ?? matchBuffer(room);
    ensureRoom(out, room);
    this.addLists(this.openLists(derived, fields, from), from, to, out);
    out.derived = derived;
    return out;
  }

  /** The (term, field) lists of a pass, in match()'s order, each on a cursor of its own at the block holding `from`. */
  private openLists(derived: Derived[], fields: number[], from: number): OpenList[] {
    const { lists } = this;
    const N = this.documentCount;
    const open: OpenList[] = [];
    for (const { word, term, weight } of derived) {
      for (const f of fields) {
        const list = lists.index(term, f);
        if (list < 0) continue;
        const df = lists.count(list);
        const cursor = (this.listCursors[open.length] ??= this.reader.cursor());
        cursor.open(lists.address(list));
        const { lengths, table } = this.norms(f);
        const w = weight * this.boosts[f]! * Math.log(1 + (N - df + 0.5) / (df + 0.5));
        open.push({
          cursor,
          bit: (1 << word) >>> 0,
          weight: w,
          lengths,
          table,
          block: from > 0 ? cursor.blockOf(from) : 0,
          at: 0,
          size: 0,
        });
      }
    }
    return open;
  }

  /**
   * Adds the lists' postings in documents [from, to) into out, window by window of documents
   * when there are several lists (Lucene's BooleanScorer): every list adds its postings in a
   * window before the next window starts. A document's sum is made in the same order as list
   * after list, so its score is the same number; but the accumulators written stay in a window
   * (a few hundred KB, in the core's cache) instead of scattered over all the shard's documents
   * (60 MB at 5M chunks: a miss a posting). Each window's sums are moved into out at its end.
   */
  private addLists(open: OpenList[], from: number, to: number, out: Matches): void {
    const { scores, masks } = this;
    const touched = out.docs;
    const k1 = BM25.k + 1;
    const window = open.length > 1 ? this.matchWindow : Infinity;
    let count = 0;
    let collected = 0;
    let postings = 0;
    for (let lo = from; lo < to; lo += window) {
      const hi = Math.min(to, lo + window);
      for (const l of open) {
        const { cursor, bit, weight: w, lengths, table } = l;
        const docs = cursor.docs;
        const freqs = cursor.tfs;
        let p = l.at;
        let n = l.size;
        for (;;) {
          if (p === n) {
            if (l.block === cursor.blocks) break;
            n = cursor.decode(l.block++);
            p = 0;
            while (p < n && docs[p]! < from) p++;
          }
          // Most blocks end inside the window; the one crossing its end stops at it.
          let end = n;
          if (docs[n - 1]! >= hi) for (end = p; end < n && docs[end]! < hi; ) end++;
          postings += end - p;
          for (; p < end; p++) {
            const d = docs[p]!;
            const tf = freqs[p]!;
            if (masks[d] === 0) touched[count++] = d;
            scores[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
            masks[d] = (masks[d]! | bit) >>> 0;
          }
          if (p < n) break;
        }
        l.at = p;
        l.size = n;
      }
      this.collect(out, collected, count);
      collected = count;
    }
    out.count = count;
    out.postings = postings;
  }

  /** Moves the sums of out.docs[from, to) from the accumulators (left zero) into out. */
  private collect(out: Matches, from: number, to: number): void {
    const { scores, masks } = this;
    const { docs, masks: outMasks, scores: outScores } = out;
    for (let i = from; i < to; i++) {
      const d = docs[i]!;
      const m = masks[d]!;
      outMasks[i] = m;
      // MiniSearch multiplies a document's score by the number of query words it holds.
      outScores[i] = scores[d]! * popcount(m);
      scores[d] = 0;
      masks[d] = 0;
    }
  }

  /** Whether a document holds an index term, in any field. */
  holds(term: number, doc: number): boolean {
    const F = this.fields.length;
    for (let f = 0; f < F; f++) {
      const list = this.lists.index(term, f);
      if (list >= 0 && this.cursor.open(this.lists.address(list)).holds(doc)) return true;
    }
    return false;
  }

  /**
   * A term's word positions in a document's field (token indexes in the field's tokenize()
   * output), for the fields that keep them; undefined when the field does not hold the term
   * there. A view of scratch memory, valid until the next call on this shard: copy it to keep it.
   */
  positions(term: number, field: number, doc: number): Uint32Array | undefined {
    const list = this.lists.index(term, field);
    return list < 0 ? undefined : this.cursor.open(this.lists.address(list)).positions(doc);
  }

  /** The term number of an index key, if the index holds it. */
  termOf(key: string): number | undefined {
    return this.vocabulary.get(key);
  }

  /** A term's positions in a document's field into the cursor's scratch (positionsInto()): their number, -1 when none. */
  private positionsInto(term: number, field: number, doc: number): number {
    const list = this.lists.index(term, field);
    return list < 0 ? -1 : this.cursor.open(this.lists.address(list)).positionsInto(doc);
  }

  /**
   * Whether a document's field holds the terms as consecutive words (a quoted phrase). Each
   * list is read on a cursor of its own, kept open across calls: documents asked in order
   * mostly fall in the block that cursor decoded last (one shared cursor decoded it anew for
   * every term of every document: 70% of a phrase search's time).
   */
  holdsSequence(terms: number[], field: number, doc: number): boolean {
    const firstCursor = this.sequenceCursor(terms[0]!, field);
    const firstCount = firstCursor ? firstCursor.positionsInto(doc) : -1;
    if (firstCount < 0) return false;
    // Start positions still possible, narrowed word by word.
    if (this.sequenceScratch.length < firstCount) this.sequenceScratch = new Uint32Array(firstCount * 2);
    const starts = this.sequenceScratch;
    const first = firstCursor!.scratchPositions;
    for (let i = 0; i < firstCount; i++) starts[i] = first[i]!;
    let n = firstCount;
    for (let w = 1; w < terms.length && n > 0; w++) {
      const cursor = this.sequenceCursor(terms[w]!, field);
      const count = cursor ? cursor.positionsInto(doc) : -1;
      if (count < 0) return false;
      const at = cursor!.scratchPositions;
      let kept = 0;
      let j = 0;
      for (let i = 0; i < n; i++) {
        const want = starts[i]! + w;
        while (j < count && at[j]! < want) j++;
        if (j < count && at[j] === want) starts[kept++] = starts[i]!;
      }
      n = kept;
    }
    return n > 0;
  }
  private sequenceScratch = new Uint32Array(64);
  /** holdsSequence()'s cursors, by list address: a few phrases' lists, dropped all at once past SEQUENCE_CURSORS. */
  private readonly sequenceCursors = new Map<number, PostingsCursor>();

  /** The cursor holdsSequence() reads a (term, field) list on, open on it; undefined when the field does not hold the term. */
  private sequenceCursor(term: number, field: number): PostingsCursor | undefined {
    const list = this.lists.index(term, field);
    if (list < 0) return undefined;
    const address = this.lists.address(list);
    let cursor = this.sequenceCursors.get(address);
    if (!cursor) {
      if (this.sequenceCursors.size >= SEQUENCE_CURSORS) this.sequenceCursors.clear();
      cursor = this.reader.cursor().open(address);
      this.sequenceCursors.set(address, cursor);
    }
    return cursor;
  }
  /** smallestSpan's lists, one after another in spanValues from spanStarts[k] to spanStarts[k + 1], and its cursor into each. */
  private spanValues = new Uint32Array(256);
  private spanStarts = new Uint32Array(MAX_WORDS * 4 + 1);
  private spanNext = new Uint32Array(MAX_WORDS * 4);
  /** How many of its groups the document held, in the last smallestSpan() call. */
  spanGroups = 0;

  /**
   * The fewest consecutive words of a document's field holding one term of every group that
   * it holds a term of (0 when it holds terms of fewer than two groups), from the positions.
   * A group is a word's forms: the word, its other forms, its typos.
   */
  smallestSpan(groups: number[][], field: number, doc: number): number {
    this.spanGroups = 0;
    if (groups.length + 1 > this.spanStarts.length) {
      this.spanStarts = new Uint32Array(groups.length + 1);
      this.spanNext = new Uint32Array(groups.length);
    }
    const starts = this.spanStarts;
    let lists = 0;
    let used = 0;
    for (const group of groups) {
      const start = used;
      for (const t of group) {
        const count = this.positionsInto(t, field, doc);
        if (count < 0) continue;
        if (used + count > this.spanValues.length) {
          const grown = new Uint32Array(Math.max(used + count, this.spanValues.length * 2));
          grown.set(this.spanValues.subarray(0, used));
          this.spanValues = grown;
        }
        const from = this.cursor.scratchPositions;
        const values = this.spanValues;
        for (let i = 0; i < count; i++) values[used + i] = from[i]!;
        used += count;
      }
      if (used === start) continue;
      if (group.length > 1) this.spanValues.subarray(start, used).sort();
      starts[lists++] = start;
    }
    starts[lists] = used;
    this.spanGroups = lists;
    if (lists < 2) return 0;
    const values = this.spanValues;
    // A window over the merged positions: advance the list whose current position is lowest.
    const next = this.spanNext;
    for (let k = 0; k < lists; k++) next[k] = starts[k]!;
    let best = Infinity;
    for (;;) {
      let lo = 0;
      let hi = 0;
      for (let k = 0; k < lists; k++) {
        const p = values[next[k]!]!;
        if (p < values[next[lo]!]!) lo = k;
        if (p > values[next[hi]!]!) hi = k;
      }
      const span = values[next[hi]!]! - values[next[lo]!]! + 1;
      if (span < best) best = span;
      if (++next[lo]! >= starts[lo + 1]!) break;
    }
    return best;
  }
}

/** How many lists holdsSequence() keeps a cursor open on. */
const SEQUENCE_CURSORS = 64;

/** Documents a window of match() spans over several lists: their sums, 12 bytes a document, fit a core's L2 cache. */
const MATCH_WINDOW = 1 << 15;

/** One list match() reads: its own cursor, its weight, and how far it has been read. */
interface OpenList {
  cursor: PostingsCursor;
  bit: number;
  weight: number;
  lengths: Uint16Array;
  table: Float32Array;
  /** The next block to decode, and the position in the decoded one and its size. */
  block: number;
  at: number;
  size: number;
}

/** Room for the matches of up to n documents. */
export function matchBuffer(n: number): Matches {
  return {
    count: 0,
    postings: 0,
    docs: new Uint32Array(n),
    scores: new Float64Array(n),
    masks: new Uint32Array(n),
    derived: [],
  };
}

/**
 * Grows a buffer to hold n matches (its contents are not kept). A buffer sized for the
 * rare passes (typos) stays small, instead of 16 bytes a document held from the start.
 */
export function ensureRoom(m: Matches, n: number): void {
  if (m.docs.length >= n) return;
  const size = Math.max(n, Math.floor(m.docs.length * 1.5));
  m.docs = new Uint32Array(size);
  m.scores = new Float64Array(size);
  m.masks = new Uint32Array(size);
}

export function popcount(m: number): number {
  m -= (m >>> 1) & 0x55555555;
  m = (m & 0x33333333) + ((m >>> 2) & 0x33333333);
  return (((m + (m >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
