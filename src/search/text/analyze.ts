/**
 * The one text analysis used for indexing and for queries: Unicode word segmentation
 * (Intl.Segmenter for scripts written without spaces), case folding and accent folding
 * (é = e, ά = α), numbers kept. One word in every form a reader may type it (D120).
 */
import { escapeRegExp, UNSPACED, wordLocale } from "../../scripts";

/** Bump when analysis changes: stored indexes built with another version are rebuilt. */
export const ANALYZER_VERSION = 5;

/**
 * A word: a letter or digit, then letters, marks and digits (a mark after no letter goes with the character before it,
 * as in UAX #29's WB4, and begins no word: the overline of a formula's z̅ ̅+̅ ̅w̅), and what ICU's word boundaries (UAX #29) keep in a word (D120): zero-width
 * joiners and non-joiners after its characters (WB4; Bengali and Marathi write them inside words, and after a final
 * virama), and an apostrophe
 * between two Cyrillic letters (WB6, WB7: Ukrainian п'ять). Latin words stay split at an apostrophe, as charabia splits
 * them (the possessive 's).
 */
const WORD =
  /[\p{L}\p{N}](?:[\p{L}\p{M}\p{N}]|\u200c|\u200d|(?<=\p{Script=Cyrillic}\p{M}*)['\u2019](?=\p{Script=Cyrillic}))*/gu;
/** WORD for the texts without a joiner or an apostrophe: most, and faster. */
const PLAIN_WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;
const JOINING = /\u200c|\u200d|['\u2019]/;
const wordPattern = (text: string) => (JOINING.test(text) ? WORD : PLAIN_WORD);

/**
 * Where the word going on before `i` goes on after the joiner or apostrophe at `i`, as WORD reads it; `i` if it ends there.
 * For highlight.ts, which reads the words of a text without WORD.
 */
export function joinedUntil(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x200c || c === 0x200d) return i + 1;
  if ((c !== 0x27 && c !== 0x2019) || !CYRILLIC.test(text[i + 1] ?? "")) return i;
  for (let b = i - 1; b >= 0; b--) {
    if (CYRILLIC.test(text[b]!)) return i + 1;
    if (!MARK.test(text[b]!)) break;
  }
  return i;
}
const MARK = /\p{M}/u;
const CYRILLIC = /\p{Script=Cyrillic}/u;
/** Combining diacritics of Latin, Greek and Cyrillic (and Vietnamese tones) — not the vowel signs of Indic scripts. */
const DIACRITICS = /[\u0300-\u036f]/g;

const ASCII = /^[\x00-\x7f]*$/;
const ASCII_WORD = /[a-z0-9]+/g;
const CACHE_LIMIT = 500_000;
let cache = new Map<string, string>();

export function fold(token: string): string {
  if (ASCII.test(token)) return token.toLowerCase();
  let folded = cache.get(token);
  if (folded === undefined) {
    folded = foldUncached(token);
    // Words are Zipf-distributed: a bounded cache catches most of them.
    if (cache.size >= CACHE_LIMIT) cache = new Map();
    cache.set(token, folded);
  }
  return folded;
}

/** fold() without its cache, and a whole text folded as fold() folds each word: for whole titles, which would crowd the words out of it (and hold one entry a title at the end of a build). */
export function foldUncached(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase();
  let folded = text.normalize("NFKD").replace(DIACRITICS, "").toLowerCase();
  if (FOLDED.test(folded)) folded = folded.replace(JOINERS, "").replace(IN_WORD_APOSTROPHE, "\u02bc");
  if (ONE_LETTER.test(folded)) folded = folded.replace(ONE_LETTERS, (c) => AS_TYPED[c]!);
  return folded.normalize("NFC");
}

/**
 * Letters folded into another as accents are (D120): the Greek final sigma into σ (Lucene's GreekLowerCaseFilter), so
 * that a word typed in capitals or cut short as a prefix (ΠΑΣ, lowercased πας) is the word's beginning; the Vietnamese
 * đ into d (charabia's VietnameseNormalizer), which no decomposition strips, so that Dien Bien Phu is Điện Biên Phủ;
 * ß (and ẞ, lowercased) into ss, as Unicode's full case folding writes it, so that Anschluß is Anschluss; the ligatures
 * æ and œ into ae and oe, and the Turkish dotless ı into i, as Lucene's ASCIIFoldingFilter writes them, so that
 * Encyclopaedia is Encyclopædia and Kibris is Kıbrıs (the dotted İ is I with a dot above, stripped as an accent).
 */
const ONE_LETTER = /[ςđßæœı]/;
const ONE_LETTERS = /[ςđßæœı]/g;
const AS_TYPED: Record<string, string> = { ς: "σ", đ: "d", ß: "ss", æ: "ae", œ: "oe", ı: "i" };

/**
 * What folding drops or makes one (D120): zero-width joiners and non-joiners (invisible, typed or not: রত্‍ন = রত্ন),
 * and the apostrophes of a Cyrillic word (' ’ ʼ: об'єкт = об’єкт = обʼєкт, as Lucene's Ukrainian analyzer makes them one).
 */
const FOLDED = /\u200c|\u200d|['\u2019]/;
/** Zero-width joiners and non-joiners, which folding (and writtenForm, D197) leaves out. */
export const JOINERS = /\u200c|\u200d/g;
const IN_WORD_APOSTROPHE = /(?<=\p{Script=Cyrillic}\p{M}*)['\u2019](?=\p{Script=Cyrillic})/gu;

interface Token {
  /** Folded form, as indexed. */
  term: string;
  /** UTF-16 offsets of the original word in the text. */
  start: number;
  end: number;
}

const segmenters = new Map<string, Intl.Segmenter>();
export function segmenter(lang: string): Intl.Segmenter {
  let s = segmenters.get(lang);
  if (!s) {
    s = new Intl.Segmenter(wordLocale(lang), { granularity: "word" });
    segmenters.set(lang, s);
  }
  return s;
}

/** Words of a text with their positions. Runs of unspaced script are split by Intl.Segmenter. */
export function tokens(text: string, lang = ""): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(wordPattern(text))) {
    const run = m[0];
    if (!UNSPACED.test(run)) {
      out.push({ term: fold(run), start: m.index, end: m.index + run.length });
      continue;
    }
    for (const seg of segmenter(lang).segment(run)) {
      if (!seg.isWordLike) continue;
      const term = fold(seg.segment);
      if (term) out.push({ term, start: m.index + seg.index, end: m.index + seg.index + seg.segment.length });
    }
  }
  return out;
}

/** Folded words of a text, for the index. */
export function terms(text: string, lang = ""): string[] {
  if (ASCII.test(text)) return text.toLowerCase().match(ASCII_WORD) ?? [];
  return words(text, lang).map(fold);
}

/** Runs of unspaced script seen lately, split into words: short runs recur. */
let segmented = new Map<string, string[]>();
const SEGMENTED_LIMIT = 100_000;

/** The words of a text as written (terms() before folding). */
export function words(text: string, lang = ""): string[] {
  const runs = text.match(wordPattern(text)) ?? [];
  if (!UNSPACED.test(text)) return runs;
  const out: string[] = [];
  for (const run of runs) {
    if (!UNSPACED.test(run)) {
      out.push(run);
      continue;
    }
    const cacheKey = `${lang}\u0001${run}`;
    let split = segmented.get(cacheKey);
    if (!split) {
      split = [];
      for (const seg of segmenter(lang).segment(run)) if (seg.isWordLike) split.push(seg.segment);
      if (run.length <= 32) {
        if (segmented.size >= SEGMENTED_LIMIT) segmented = new Map();
        segmented.set(cacheKey, split);
      }
    }
    for (const w of split) out.push(w);
  }
  return out;
}

/**
 * A test for texts holding a phrase (folded words) as consecutive words. Without unspaced
 * script in the phrase, a pattern over the folded text, which spares splitting and folding
 * every word: the phrase's words, apart from any word character outside unspaced scripts
 * (those are split off as words of their own), with no letter or digit between.
 */
export function phraseTest(phrase: string[], lang = ""): (text: string) => boolean {
  if (phrase.some((w) => UNSPACED.test(w))) return (text) => containsSequence(terms(text, lang), phrase);
  const spaced = `(?:(?!${UNSPACED.source})[\\p{L}\\p{M}\\p{N}])`;
  // Not within a word before (a letter or digit of spaced script, and any marks after it); between the words, no letter
  // or digit (marks that begin no word may stand there).
  const spacedStart = `(?:(?!${UNSPACED.source})[\\p{L}\\p{N}])`;
  const pattern = new RegExp(
    `(?<!${spacedStart}[\\p{M}]*)${phrase.map(escapeRegExp).join("[^\\p{L}\\p{M}\\p{N}][^\\p{L}\\p{N}]*")}(?!${spaced})`,
    "u",
  );
  return (text) => pattern.test(foldUncached(text));
}

function containsSequence(words: string[], seq: string[]): boolean {
  outer: for (let i = 0; i + seq.length <= words.length; i++) {
    for (let j = 0; j < seq.length; j++) if (words[i + j] !== seq[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * MiniSearch's radix tree scans a node's children one by one. Words of scripts with many
 * letters (ideographs above all, but also a vocabulary mixing Greek, Cyrillic, Bengali…)
 * give the root thousands of children, which makes every insertion and lookup slow (25 s
 * to index 6,000 Japanese chunks). Two bucket characters in front of every non-ASCII word,
 * from its first code point, keep each node small. Applied to index and query terms alike;
 * a typo in the first letter of such a word costs more than one edit.
 */
const BUCKET_FROM = 0x80;
export function indexKey(term: string): string {
  const cp = term.codePointAt(0) ?? 0;
  if (cp < BUCKET_FROM) return term;
  return String.fromCharCode(0xe000 + (cp >> 10), 0xe800 + ((cp >> 5) & 31)) + term;
}

export function termOfKey(key: string): string {
  const b = key.charCodeAt(1);
  return b >= 0xe800 && b < 0xe820 && key.charCodeAt(0) >= 0xe000 ? key.slice(2) : key;
}
