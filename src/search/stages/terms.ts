/**
 * The query's terms: what each query word may match in the index. Function words are
 * optional in the all-words tiers; a word the index does not know may hold typos (up to a
 * distance set by its length); the last word is a prefix while it is being typed; a word
 * also matches its other forms (same stem, stem.ts).
 */
import stopwordsIso from "stopwords-iso/stopwords-iso.json";
import { fold, indexKey, termOfKey } from "../text/analyze";
import { codePoints } from "../../scripts";
import { GUARDS } from "../options";
import { type ParsedQuery, writtenForm } from "../text/query";
import type { Shard } from "../postings/shard";
import type { WordSpec } from "../postings/shard-types";
import { stemmerFor, variantRanges, type Stem } from "../text/stem";

/** Variants of a word are looked for when its stem's beginning has this many letters, and are at most VARIANT_SUFFIX longer. */
const MIN_STEM = 3;
const VARIANT_SUFFIX = 4;

/** A query's words, once analysed, and the specs each pass matches them with. */
export interface QueryTerms {
  /** At most GUARDS.maxWords words. */
  words: string[];
  /** One bit per word. */
  full: number;
  /** A bit for each word that is not a function word. */
  informative: number;
  /** The bits a chunk must hold to hold "every word": the informative ones, or all when none is. */
  required: number;
  /** With typo distances and other forms. */
  fuzzy: WordSpec[];
  /** The same without typos: the exact pass. */
  exact: WordSpec[];
  /** The words as written: no typos, no other forms (the titles). */
  title: WordSpec[];
  /** Whether some word may hold a typo. */
  typoable: boolean;
}

const functionWordSets = new Map<string, Set<string>>();

/**
 * A word holding a digit is no function word (D185): stopwords-iso lists "10" and "39" for English, 0 to 9 for Spanish,
 * Korean, Chinese and Persian, where no stop list of Lucene, Snowball or NLTK has a number. "Apollo 10" asks for 10.
 */
const NUMBER = /\p{N}/u;

/** A language's function words as its stopwords-iso list writes them, its numbers left out. */
function functionWordList(lang: string): string[] {
  const list = Object.hasOwn(stopwordsIso, lang) ? (stopwordsIso as Record<string, string[]>)[lang]! : [];
  return list.filter((w) => !NUMBER.test(w));
}

const writtenSets = new Map<string, Set<string>>();

/** A language's function words as written (writtenForm). */
function writtenFunctionWords(lang: string): Set<string> {
  let set = writtenSets.get(lang);
  if (!set) {
    set = new Set(functionWordList(lang).map(writtenForm));
    writtenSets.set(lang, set);
  }
  return set;
}

/** Languages whose marks tell words apart (Vietnamese tones), where folding makes one term of several words. */
const MARKS_TELL_WORDS_APART = new Set(["vi"]);

/**
 * Which of a query's words are function words (D197): in most languages those whose folded form is one, since a
 * word's marks there only mark it (είναι, ειναι and ΕΙΝΑΙ are one word). In Vietnamese the tones tell apart the words
 * that folding makes one (Nội of Hà Nội and nói, to say, are noi; Bắc, north, and bác are bac; Minh and mình are
 * minh): there a function word is one the list holds as the query writes it, in each of the forms it writes it.
 */
export function queryFunctionWords(query: Pick<ParsedQuery, "words" | "written">, lang: string): boolean[] {
  // A query typed with no marks at all (lich su cua viet nam) does not tell của from cua: the folded list decides. A
  // query that writes marks writes them all, and Nam or Minh, written so, have no tone mark to write.
  const unmarked = query.written.every((forms, i) => forms.every((form) => form === query.words[i]));
  if (!MARKS_TELL_WORDS_APART.has(lang) || unmarked) {
    const stop = functionWords(lang);
    return query.words.map((w) => stop.has(w));
  }
  const asWritten = writtenFunctionWords(lang);
  // A word written in several forms (năm and Nam) is a function word only when each of them is.
  return query.words.map((_w, i) => query.written[i]!.every((form) => asWritten.has(form)));
}

/** A language's function words, folded (stopwords-iso, its numbers left out). */
export function functionWords(lang: string): Set<string> {
  let set = functionWordSets.get(lang);
  if (!set) {
    set = new Set(functionWordList(lang).map((w) => fold(w)));
    functionWordSets.set(lang, set);
  }
  return set;
}

/** A word the index does not know may hold one typo from this many letters, two from TWO_TYPOS_FROM. */
export const ONE_TYPO_FROM = 5;
const TWO_TYPOS_FROM = 9;

const typos = (term: string): number => {
  const n = codePoints(term);
  return n >= TWO_TYPOS_FROM ? 2 : n >= ONE_TYPO_FROM ? 1 : 0;
};

/** What the terms are looked up in: the text shard, and the language (its function words, its stemmer). */
export interface TermSource {
  readonly text: Shard;
  readonly lang: string;
}

/** The terms of a query with words (the words past GUARDS.maxWords left out). */
export function queryTerms(query: ParsedQuery, source: TermSource): QueryTerms {
  const words = query.words.slice(0, GUARDS.maxWords);
  const prefixLast = query.prefixLast && words.length === query.words.length;
  const full = 2 ** words.length - 1;
  const stop = queryFunctionWords(query, source.lang);
  let informative = 0;
  for (const i of words.keys()) if (!stop[i]) informative |= 1 << i;
  const fuzzy = wordSpecs(source, words, prefixLast, true, true);
  return {
    words,
    full,
    informative,
    required: informative ? informative >>> 0 : full,
    fuzzy,
    // Other forms of a word count as the word in every tier, weighed below it (shard.ts).
    exact: fuzzy.map((s) => (s.fuzzy ? { ...s, fuzzy: 0 } : s)),
    title: fuzzy.map(({ key, prefix }) => ({ key, prefix, fuzzy: 0 })),
    typoable: fuzzy.some((s) => s.fuzzy > 0),
  };
}

/**
 * Each word's spec: its index key; a prefix when it is the last word, `prefixLast`, and not a function word; its
 * typo distance when `fuzzy` (in at most GUARDS.typoWords words the index does not know);
 * its other forms when `variants` (not for function words).
 */
export function wordSpecs(
  source: TermSource,
  words: string[],
  prefixLast: boolean,
  fuzzy: boolean,
  variants: boolean,
): WordSpec[] {
  const { text } = source;
  // The language's stemmer, when it has one: a word also matches its other forms.
  const stem = stemmerFor(source.lang);
  const stop = functionWords(source.lang);
  const last = words.length - 1;
  let typoWords = 0;
  return words.map((w, i) => {
    const key = indexKey(w);
    // Typos are looked for only in words the index does not know, and in a few of them.
    const distance = fuzzy && typoWords < GUARDS.typoWords && !text.has(key) ? typos(w) : 0;
    if (distance) typoWords++;
    // A function word is a whole word, not the start of one (D79): "the" does not stand for "theory".
    const spec: WordSpec = { key, prefix: prefixLast && i === last && !stop.has(w), fuzzy: distance };
    if (variants && stem && !stop.has(w)) spec.variants = variantsOf(w, stem);
    return spec;
  });
}

/** The index keys of `word`'s other forms: same stem, sharing its beginning, at most a few letters longer. */
function variantsOf(word: string, stem: Stem): WordSpec["variants"] {
  const wanted = stem(word);
  const ranges = variantRanges(word, wanted, MIN_STEM, VARIANT_SUFFIX);
  if (!ranges.length) return undefined;
  // Index keys of non-Latin words begin with two bucket characters (analyze.ts).
  const extra = indexKey(word).length - word.length;
  return {
    ranges: ranges.map((r) => ({ prefix: indexKey(r.prefix), longest: r.longest + extra })),
    accept: (k) => stem(termOfKey(k)) === wanted,
  };
}
