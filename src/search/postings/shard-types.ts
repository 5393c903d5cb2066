/** What a query asks of a shard and what it answers, the shard's arrays as stored, and MiniSearch's scoring constants. */
import type { TermListsData } from "./term-lists";
import type { VocabularyData } from "./vocabulary";

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
  variants?: { ranges: { prefix: string; longest: number }[]; accept: (key: string) => boolean } | undefined;
}

/** A term of the index matched by a query word. */
export interface Derived {
  word: number;
  term: number;
  weight: number;
  /** Another form of the word (same stem), not the word itself, a prefix's completion or a typo. */
  variant?: boolean;
  /** A term within the word's typo distance: it counts only in the typo tiers. */
  typo?: boolean;
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

/** A field's length per document, and BM25's norm per length: a document's norm is table[lengths[d]]. */
export interface FieldNorms {
  lengths: Uint16Array;
  table: Float32Array;
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
  /** The most common lists' tfs, a byte a document (dense-lists.ts); absent in shards written without them. */
  dense?: { addresses: Float64Array; tfs: Uint8Array };
}

export function popcount(m: number): number {
  m -= (m >>> 1) & 0x55555555;
  m = (m & 0x33333333) + ((m >>> 2) & 0x33333333);
  return (((m + (m >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
