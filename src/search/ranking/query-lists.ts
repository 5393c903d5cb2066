/**
 * A query's words as the lists they are scored from (D81): for each word, every postings list
 * that stands for it (the word, its other forms, a prefix's completions, its typo terms, each in
 * every field), with the list's BM25 weight; and the buckets a search ranks in, best first:
 * every required word, then one required word fewer at a time, the most frequent dropped first
 * (Meilisearch's "frequency" words rule), then any word. A bucket is searched exactly, then
 * allowing typos: the tier of a chunk is 2 × its bucket + 1 with typos (rules.ts).
 */
import type { Shard } from "../index/shard";
import type { Derived } from "../index/shard-types";
import { idf } from "./rules";

/** One (term, field) postings list of a query word. */
export interface WordList {
  word: number;
  term: number;
  field: number;
  address: number;
  df: number;
  /** The word's weight for this term (1, a form's, a prefix's, a typo's) × the field's boost × IDF. */
  weight: number;
  /** A typo term: the word is held through it only in a typo tier. */
  typo: boolean;
}

/** How a bucket of fewer words is made: the most frequent required word dropped first, or the last word of the query first. */
export type DropOrder = "frequency" | "last";

export interface QueryListsInput {
  /** The words' terms, with typos (derive() of the query's fuzzy specs). */
  derived: Derived[];
  words: number;
  /** Words a chunk must hold to hold "every word" (the informative ones, or all). */
  required: number;
  /** Words in quoted phrases: required in every bucket. */
  phraseWords: number;
  drop?: DropOrder;
}

export class QueryLists {
  readonly words: number;
  /** Every list, word after word, a word's exact lists before its typo lists. */
  readonly lists: WordList[];
  /** Each word's lists. */
  readonly byWord: WordList[][];
  /** Each word's postings, in its exact lists and in all of them. */
  readonly exactPostings: number[];
  readonly allPostings: number[];
  /** Whether some word has typo lists: the typo tiers can hold chunks. */
  readonly typoable: boolean;
  /** Bit masks of the words each bucket requires, best first; the last is "any word" (the phrase words alone, or 0). */
  readonly buckets: number[];
  /** The derived terms a chunk of an exact tier, and of a typo tier, was scored with (highlighting, passages). */
  readonly derivedExact: Derived[];
  readonly derivedAll: Derived[];

  constructor(text: Shard, input: QueryListsInput) {
    this.words = input.words;
    this.byWord = Array.from({ length: input.words }, () => []);
    const N = text.documentCount;
    for (const d of input.derived) {
      for (const l of text.termLists(d.term)) {
        this.byWord[d.word]!.push({
          word: d.word,
          term: d.term,
          field: l.field,
          address: l.address,
          df: l.df,
          weight: d.weight * text.boost(l.field) * idf(N, l.df),
          typo: d.typo === true,
        });
      }
    }
    for (const lists of this.byWord) lists.sort((a, b) => Number(a.typo) - Number(b.typo));
    this.lists = this.byWord.flat();
    this.exactPostings = this.byWord.map((ls) => ls.reduce((n, l) => n + (l.typo ? 0 : l.df), 0));
    this.allPostings = this.byWord.map((ls) => ls.reduce((n, l) => n + l.df, 0));
    this.typoable = this.lists.some((l) => l.typo);
    this.derivedAll = input.derived;
    this.derivedExact = input.derived.filter((d) => !d.typo);
    this.buckets = bucketsOf(this, input);
  }

  /** The index of the "any word" bucket (the last). */
  get anyBucket(): number {
    return this.buckets.length - 1;
  }
}

/**
 * The buckets: all required words; then, while more than the phrase words remain required,
 * one fewer, dropping first the words no list holds, then the most frequent (or the last);
 * then any word (the phrase words still required).
 */
function bucketsOf(q: QueryLists, input: QueryListsInput): number[] {
  const { required, phraseWords } = input;
  const droppable: number[] = [];
  for (let w = 0; w < q.words; w++) if (required & (1 << w) && !(phraseWords & (1 << w))) droppable.push(w);
  const held = (w: number) => (q.allPostings[w]! > 0 ? 1 : 0);
  if (process.env.TOME_X_BUCKETS === "last") input.drop = "last";
  if ((input.drop ?? "frequency") === "frequency")
    droppable.sort((a, b) => held(a) - held(b) || q.allPostings[b]! - q.allPostings[a]! || b - a);
  else droppable.sort((a, b) => held(a) - held(b) || b - a);
  const buckets = [(required | phraseWords) >>> 0];
  if (process.env.TOME_X_BUCKETS === "one") {
    if (buckets[0] !== phraseWords >>> 0) buckets.push(phraseWords >>> 0);
    return buckets;
  }
  if (process.env.TOME_X_BUCKETS === "last") input.drop = "last";
  let mask = buckets[0]!;
  for (const w of droppable.slice(0, -1)) {
    mask = (mask & ~(1 << w)) >>> 0;
    buckets.push(mask);
  }
  if (mask !== phraseWords >>> 0) buckets.push(phraseWords >>> 0);
  return buckets;
}
