/**
 * Word stems (Snowball, through snowball-stemmers; English through porter2), for the languages that have a kept
 * stemmer: a query word also finds the index's words of the same stem ("founded" finds
 * "founding", "countries" finds "country"), weighed below the word itself (shard.ts).
 * The index is not stemmed: the variants are looked up at query time among the
 * vocabulary's words that share the stem's beginning.
 */
import { stem as porter2 } from "porter2";
import { newStemmer } from "snowball-stemmers";

/** Wiki language code → Snowball algorithm. */
const ALGORITHMS: Record<string, string> = {
  ar: "arabic",
  ca: "catalan",
  cs: "czech",
  da: "danish",
  de: "german",
  en: "english",
  es: "spanish",
  eu: "basque",
  fi: "finnish",
  fr: "french",
  ga: "irish",
  hu: "hungarian",
  hy: "armenian",
  it: "italian",
  nl: "dutch",
  no: "norwegian",
  pt: "portuguese",
  ro: "romanian",
  ru: "russian",
  simple: "english",
  sl: "slovene",
  sv: "swedish",
  ta: "tamil",
  tr: "turkish",
};

/** Stems kept per language: a word's stem costs microseconds, and the same words come back query after query. */
const MEMO_SIZE = 50_000;

export type Stem = (word: string) => string;

const stemmers = new Map<string, Stem | undefined>();

/** The language's stemmer of folded words, or undefined when it has none. */
export function stemmerFor(lang: string): Stem | undefined {
  if (stemmers.has(lang)) return stemmers.get(lang);
  const algorithm = Object.hasOwn(ALGORITHMS, lang) ? ALGORITHMS[lang] : undefined;
  let stem: Stem | undefined;
  if (algorithm) {
    // English by porter2 (D137): Snowball's English algorithm at about 8 times snowball-stemmers' speed, the same stems for
    // every word of the vocabularies tried (bench/search/stemmers.ts). A new query word's forms are checked by
    // stemming up to 16 of the index's words each (term-expansion.ts): about a millisecond a query before.
    const stemmer = algorithm === "english" ? { stem: porter2 } : newStemmer(algorithm);
    const memo = new Map<string, string>();
    stem = (word) => {
      let s = memo.get(word);
      if (s === undefined) {
        s = stemmer.stem(word);
        if (memo.size >= MEMO_SIZE) memo.clear();
        memo.set(word, s);
      }
      return s;
    };
  }
  stemmers.set(lang, stem);
  return stem;
}

/**
 * Where `word`'s other forms are, in index order: Snowball changes only endings, so they begin
 * with the word's common prefix with its stem (at most `suffix` letters longer); and as the stem
 * may have rewritten its last letter ("armies" and "army" are both "armi"), the words as long
 * as that prefix that differ from it in the last letter alone. None when the prefix is shorter than `shortest`.
 */
export function variantRanges(
  word: string,
  stem: string,
  shortest: number,
  suffix: number,
): { prefix: string; longest: number }[] {
  let i = 0;
  while (i < word.length && i < stem.length && word.charCodeAt(i) === stem.charCodeAt(i)) i++;
  if (i < shortest) return [];
  const common = { prefix: word.slice(0, i), longest: i + suffix };
  return i - 1 >= shortest ? [common, { prefix: word.slice(0, i - 1), longest: i }] : [common];
}
