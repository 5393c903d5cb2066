/**
 * A query's words as the lists they are scored from (D90). A word stands for several index
 * terms, its forms: the word itself, its other forms (its stem's), a prefix's completions, and
 * its typo terms (those count only in the typo tiers). A form is scored by BM25F over the text
 * shard's fields (rules.ts bm25f): its term frequency in each field, weighted by the field's
 * boost and normalised by the field's length, summed, then saturated once, times the form's
 * weight and IDF; a word adds its best form. Each form has a postings list per field that holds it.
 *
 * The tiers a chunk can stand in (rules.ts): holding every required word (the informative ones,
 * and every quoted phrase's), exactly or with typos; then any word (the phrase words still
 * required), exactly or with typos.
 */
import type { Shard } from "../postings/shard";
import type { Derived } from "../postings/shard-types";
import { BM25 } from "../postings/shard-types";
import { bm25fMost, idf } from "./rules";

/** A form's postings list in one field. */
export interface FieldList {
  field: number;
  address: number;
  df: number;
  /** What a posting adds to the form's combined frequency, over its length's norm: field boost × k. */
  unit: number;
}

/** One form of a query word: an index term, its lists, and what its saturated frequency is multiplied by. */
export interface Form {
  word: number;
  term: number;
  /** A typo term: the word is held through it only in a typo tier. */
  typo: boolean;
  /**
   * What its saturated frequency is multiplied by: the form's weight (1 for the word itself; a
   * prefix's, a typo's, another form's less) × BM25's IDF, of its most frequent field's list (as
   * Lucene's CombinedFieldQuery takes it). The weight stands outside the saturation, as
   * MiniSearch's: a rare completion of a prefix never outweighs the word.
   */
  idf: number;
  /** The form's weight alone, and the document frequency of its most frequent field's list (its idf's). */
  weight: number;
  df: number;
  lists: FieldList[];
  /** Postings in all its lists. */
  postings: number;
}

export interface QueryListsInput {
  /** The words' terms, with typos (derive() of the query's fuzzy specs). */
  derived: Derived[];
  words: number;
  /** Words a chunk must hold to hold "every word" (the informative ones, or all). */
  required: number;
  /** Words in quoted phrases: required in every tier. */
  phraseWords: number;
  /** Only these fields' lists (all by default). */
  fields?: number[];
}

export class QueryLists {
  readonly words: number;
  /** Every form, word after word, a word's exact forms before its typo terms. */
  readonly forms: Form[];
  readonly byWord: Form[][];
  /** Each word's postings, in its exact forms' lists and in all of them. */
  readonly exactPostings: number[];
  readonly allPostings: number[];
  /** Whether some word has typo terms: the typo tiers can hold chunks. */
  readonly typoable: boolean;
  /** The words each bucket requires: every required word, then any word (the phrase words); one bucket when they are the same. */
  readonly buckets: number[];
  /** The derived terms a chunk of an exact tier, and of a typo tier, was scored with (highlighting, passages). */
  readonly derivedExact: Derived[];
  readonly derivedAll: Derived[];
  /** The ideal chunk's score: every word held by its best form, saturated (ranking-score.ts). */
  readonly ideal: number;

  constructor(text: Shard, input: QueryListsInput) {
    this.words = input.words;
    this.byWord = Array.from({ length: input.words }, () => []);
    const N = text.documentCount;
    for (const d of input.derived) {
      const lists = text
        .termLists(d.term)
        .filter((l) => !input.fields || input.fields.includes(l.field))
        .map((l) => ({
          field: l.field,
          address: l.address,
          df: l.df,
          unit: text.boost(l.field) * BM25.k,
        }));
      if (!lists.length) continue;
      const df = Math.max(...lists.map((l) => l.df));
      this.byWord[d.word]!.push({
        word: d.word,
        term: d.term,
        typo: d.typo === true,
        idf: d.weight * idf(N, df),
        weight: d.weight,
        df,
        lists,
        postings: lists.reduce((n, l) => n + l.df, 0),
      });
    }
    for (const forms of this.byWord) forms.sort((a, b) => Number(a.typo) - Number(b.typo));
    this.forms = this.byWord.flat();
    this.exactPostings = this.byWord.map((fs) => fs.reduce((n, f) => n + (f.typo ? 0 : f.postings), 0));
    this.allPostings = this.byWord.map((fs) => fs.reduce((n, f) => n + f.postings, 0));
    this.typoable = this.forms.some((f) => f.typo);
    this.derivedAll = input.derived;
    this.derivedExact = input.derived.filter((d) => !d.typo);
    this.ideal = this.byWord.reduce((sum, fs) => sum + Math.max(0, ...fs.map((f) => bm25fMost(f.idf))), 0);
    const every = (input.required | input.phraseWords) >>> 0;
    const any = input.phraseWords >>> 0;
    // One word: a chunk holding any word holds every word.
    this.buckets = every === any || input.words === 1 ? [every] : [every, any];
  }
}
