/**
 * The index keys of a shard, held in two typed arrays and nothing else, so that a vocabulary of
 * millions of keys costs a few bytes per key and can be used straight from a mapped file.
 *
 * Keys are stored sorted in JS string order (UTF-16 code unit order), their code units one after
 * another (`chars`), with where each key starts (`starts`). A key's term number is its rank.
 * Exact lookups are binary searches; the keys starting with a prefix are a contiguous run of
 * term numbers; typo lookups walk the trie that the sorted keys imply (a node is a run of keys
 * sharing their first `depth` code units, its children the sub-runs split by the next code
 * unit), computing the same banded rows of the optimal string alignment distance as a walk of
 * MiniSearch's radix tree did, so that they find the same keys at the same distances.
 */
import { keyShares, runSkips, TOP_LEVELS, type TrieTop, trieTop } from "./trie-runs";
import { MASKS_UP_TO, type TrieKeys, walkByMasks, walkByRows } from "./typo-walk";

export interface VocabularyData {
  /** Every key's UTF-16 code units, key after key in sorted order. */
  chars: Uint16Array;
  /** Key t is chars[starts[t]] up to chars[starts[t + 1]]: one entry more than there are keys. */
  starts: Uint32Array;
}

export type VocabularyArrays = Record<string, Uint8Array | Uint16Array | Uint32Array>;

export class Vocabulary {
  readonly size: number;
  private readonly chars: Uint16Array;
  private readonly starts: Uint32Array;

  constructor(data: VocabularyData) {
    this.chars = data.chars;
    this.starts = data.starts;
    this.size = data.starts.length - 1;
  }

  /** The term number of a key, or undefined when the vocabulary does not hold it. */
  get(key: string): number | undefined {
    const t = this.lowerBound(key);
    return t < this.size && this.compare(t, key) === 0 ? t : undefined;
  }

  /** The code units of every key, key after key (keyStart() says where each starts). */
  get codes(): Uint16Array {
    return this.chars;
  }

  /** Where term's key starts in codes (and term + 1's, where it ends). */
  keyStart(term: number): number {
    return this.starts[term]!;
  }

  keyOf(term: number): string {
    return decode(this.chars, this.starts[term]!, this.starts[term + 1]!);
  }

  /**
   * How term's key compares with other's key u (negative, 0, positive), in JS string order,
   * without making either string: a merge compares millions of keys.
   */
  compareWith(term: number, other: Vocabulary, u: number): number {
    const a = this.chars;
    const b = other.chars;
    let i = this.starts[term]!;
    const iEnd = this.starts[term + 1]!;
    let j = other.starts[u]!;
    const jEnd = other.starts[u + 1]!;
    for (; i < iEnd && j < jEnd; i++, j++) {
      const d = a[i]! - b[j]!;
      if (d) return d;
    }
    return iEnd - i - (jEnd - j);
  }

  /** Length of a term's key in UTF-16 code units (what key.length would be, without making the key). */
  keyLength(term: number): number {
    return this.starts[term + 1]! - this.starts[term]!;
  }

  /** The term numbers [from, to) of the keys starting with prefix (the prefix itself included when it is a key). */
  prefixRange(prefix: string): [from: number, to: number] {
    const from = this.lowerBound(prefix);
    let lo = from;
    let hi = this.size;
    // Keys from `from` on start with the prefix up to some point, and never after it.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.startsWith(mid, prefix)) lo = mid + 1;
      else hi = mid;
    }
    return [from, lo];
  }

  /** Every key starting with prefix, with its term number, in sorted order. */
  *atPrefix(prefix: string): IterableIterator<[key: string, term: number]> {
    const [from, to] = this.prefixRange(prefix);
    for (let t = from; t < to; t++) yield [this.keyOf(t), t];
  }

  /**
   * The keys within `max` edits of `query`, with their term numbers and distances, in sorted
   * order, where an edit is a letter inserted, deleted or replaced, or two adjacent letters
   * swapped ("einstien"): the optimal string alignment distance, as Meilisearch counts typos.
   */
  typoNeighbours(query: string, max: number): [key: string, term: number, distance: number][] {
    const out: [string, number, number][] = [];
    this.typoTerms(query, max, (term, distance) => out.push([this.keyOf(term), term, distance]));
    return out;
  }

  /**
   * typoNeighbours without making the keys: `found` is called with each term number and
   * distance, in term order. One walk of the implied trie, one row of the distance matrix per
   * key letter (its band within max of the diagonal, as MiniSearch's fuzzy search computes), a
   * branch left as soon as its row exceeds its limit.
   *
   * Meilisearch's first-letter rule (compute_derivations.rs): a key whose first letter is not
   * the query's is one typo away at most, and that counts as two; so a query allowed one typo
   * matches only keys with its own first letter, and one allowed two may change its first
   * letter only if nothing else changes (D98). Most of the vocabulary is left at the root.
   */
  typoTerms(query: string, max: number, found: (term: number, distance: number) => void): void {
    // No key is within max typos of a longer query; walked, a word of 100,000 letters (a program's query) ran out of memory.
    if (query.length > this.longestKey() + max) return;
    if (query.length <= MASKS_UP_TO && max <= 2) this.typoTermsByMasks(query, max, found);
    else this.typoTermsByRows(query, max, found);
  }

  /** typoTerms() by bit masks (D125): a query of at most MASKS_UP_TO code units, 2 typos at most. */
  typoTermsByMasks(query: string, max: number, found: (term: number, distance: number) => void): void {
    this.letterMasks ??= new Int32Array(65536);
    walkByMasks(this.trieKeys(), this.letterMasks, query, max, found);
  }

  /** typoTerms() by rows of the distance matrix, cell by cell: any length, any number of typos. */
  typoTermsByRows(query: string, max: number, found: (term: number, distance: number) => void): void {
    walkByRows(this.trieKeys(), (k, n) => this.scratch(k, n), query, max, found);
  }

  private trieKeys(): TrieKeys {
    this.typoRuns();
    return { chars: this.chars, starts: this.starts, size: this.size, skips: this.runSkips!, top: this.top! };
  }

  /** The longest key's length, in code units (found once). */
  private longestKey(): number {
    if (this.longest === undefined) {
      let longest = 0;
      for (let t = 0; t < this.size; t++) longest = Math.max(longest, this.starts[t + 1]! - this.starts[t]!);
      this.longest = longest;
    }
    return this.longest;
  }
  private longest: number | undefined;

  /** Each code unit's bit mask of where the query being walked holds it (typoTermsByMasks): zero between walks. */
  private letterMasks: Int32Array | undefined;

  /**
   * What a typo walk steps with, runSkips() of the keys and the trie's top levels (trieTop()): made
   * once (prepared at boot, TermExpansion.prepare()); at 5M chunks 8.5 and 9.3 MB.
   */
  typoRuns(): void {
    if (this.runSkips && this.top) return;
    const shares = keyShares(this.chars, this.starts);
    this.runSkips ??= runSkips(this.chars, this.starts, shares);
    this.top ??= trieTop(this.chars, this.starts, TOP_LEVELS, shares);
  }
  private runSkips: Uint16Array | undefined;
  private top: TrieTop | undefined;

  private readonly scratches = [new Uint16Array(256), new Uint16Array(64), new Uint16Array(64)];

  /** Scratch array k, at least n long, its first n zeroed. */
  private scratch(k: number, n: number): Uint16Array {
    let a = this.scratches[k]!;
    if (a.length < n) a = this.scratches[k] = new Uint16Array(Math.max(n, a.length * 2));
    else a.fill(0, 0, n);
    return a;
  }

  /** The first term whose key is not below `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(mid, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Term's key against `key`, in JS string order: negative, 0 or positive. */
  private compare(term: number, key: string): number {
    const { chars } = this;
    const s = this.starts[term]!;
    const n = this.starts[term + 1]! - s;
    const common = Math.min(n, key.length);
    for (let i = 0; i < common; i++) {
      const d = chars[s + i]! - key.charCodeAt(i);
      if (d) return d;
    }
    return n - key.length;
  }

  private startsWith(term: number, prefix: string): boolean {
    const s = this.starts[term]!;
    if (this.starts[term + 1]! - s < prefix.length) return false;
    for (let i = 0; i < prefix.length; i++) if (this.chars[s + i] !== prefix.charCodeAt(i)) return false;
    return true;
  }
}

function decode(chars: Uint16Array, from: number, to: number): string {
  // fromCharCode keeps every code unit as it is (TextDecoder would replace lone surrogates).
  if (to - from <= 64) return String.fromCharCode.apply(null, chars.subarray(from, to) as unknown as number[]);
  let s = "";
  for (let at = from; at < to; at += 4096)
    s += String.fromCharCode.apply(null, chars.subarray(at, Math.min(to, at + 4096)) as unknown as number[]);
  return s;
}

/**
 * Writes a vocabulary key by key, in strictly increasing order, so that a build can stream
 * millions of keys into it without holding them as strings. add() returns the key's term number.
 */
export class VocabularyWriter {
  private chars = new Uint16Array(1 << 12);
  private starts = new Uint32Array(1 << 10);
  private count = 0;
  private used = 0;

  add(key: string): number {
    if (this.count && !this.follows(key)) {
      const previous = decode(this.chars, this.starts[this.count - 1]!, this.used);
      throw new RangeError(
        `vocabulary keys must be added in strictly increasing order: ${JSON.stringify(key)} after ${JSON.stringify(previous)}`,
      );
    }
    if (this.used + key.length > this.chars.length) this.chars = grown(this.chars, this.used + key.length);
    if (this.count + 2 > this.starts.length) this.starts = grown(this.starts, this.count + 2);
    this.starts[this.count] = this.used;
    for (let i = 0; i < key.length; i++) this.chars[this.used + i] = key.charCodeAt(i);
    this.used += key.length;
    return this.count++;
  }

  /** Adds the key of `term` in `from` (copying its code units, without making a string). */
  addFrom(from: Vocabulary, term: number): number {
    const codes = from.codes;
    const start = from.keyStart(term);
    const end = from.keyStart(term + 1);
    const n = end - start;
    if (this.count && this.compareLast(codes, start, end) <= 0) {
      return this.add(from.keyOf(term)); // throws, naming both keys
    }
    if (this.used + n > this.chars.length) this.chars = grown(this.chars, this.used + n);
    if (this.count + 2 > this.starts.length) this.starts = grown(this.starts, this.count + 2);
    this.starts[this.count] = this.used;
    for (let i = 0; i < n; i++) this.chars[this.used + i] = codes[start + i]!;
    this.used += n;
    return this.count++;
  }

  /** How codes[start, end) compares with the last key added. */
  private compareLast(codes: Uint16Array, start: number, end: number): number {
    const s = this.starts[this.count - 1]!;
    const n = this.used - s;
    const m = end - start;
    const common = Math.min(n, m);
    for (let i = 0; i < common; i++) {
      const d = codes[start + i]! - this.chars[s + i]!;
      if (d) return d;
    }
    return m - n;
  }

  /** The vocabulary written (in arrays of exactly its size); the writer is not to be used after. */
  finish(): VocabularyData {
    this.starts[this.count] = this.used;
    return { chars: this.chars.slice(0, this.used), starts: this.starts.slice(0, this.count + 1) };
  }

  /** Whether key sorts after the last key added. */
  private follows(key: string): boolean {
    const s = this.starts[this.count - 1]!;
    const n = this.used - s;
    const common = Math.min(n, key.length);
    for (let i = 0; i < common; i++) {
      const d = key.charCodeAt(i) - this.chars[s + i]!;
      if (d) return d > 0;
    }
    return key.length > n;
  }
}

function grown<T extends Uint16Array | Uint32Array>(a: T, needed: number): T {
  let n = a.length * 2;
  while (n < needed) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

/** The vocabulary of keys already sorted in JS string order, without duplicates. */
export function vocabularyOf(sortedKeys: string[]): VocabularyData {
  const writer = new VocabularyWriter();
  for (const key of sortedKeys) writer.add(key);
  return writer.finish();
}

/** The typed arrays to store, by name, so the file layer can place each aligned and map it back. */
export function vocabularyArrays(data: VocabularyData): VocabularyArrays {
  return { chars: data.chars, starts: data.starts };
}

/** A vocabulary from its stored arrays; throws when they are not a vocabulary's (a damaged or foreign file). */
export function vocabularyFromArrays(arrays: VocabularyArrays): VocabularyData {
  const { chars, starts } = arrays;
  if (!(chars instanceof Uint16Array) || !(starts instanceof Uint32Array) || starts.length < 1) {
    throw new Error("not a vocabulary: expected chars (Uint16Array) and starts (Uint32Array)");
  }
  if (starts[0] !== 0 || starts[starts.length - 1] !== chars.length) {
    throw new Error(
      `not a vocabulary: its starts run from ${starts[0]} to ${starts[starts.length - 1]} over ${chars.length} code units`,
    );
  }
  return { chars, starts };
}
