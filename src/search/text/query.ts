/** A search query, analysed: its words, its quoted phrases, and whether the last word is a prefix. */
import { codePoints, UNSPACED, withoutSoftHyphens } from "../../scripts";
import { fold, foldUncached, JOINERS, terms, words as wordsOf } from "./analyze";

export interface ParsedQuery {
  /** Every folded word, phrases' words included, first occurrence order. */
  words: string[];
  /**
   * Each word's forms as the query writes them (writtenForm), each once (D197): whether it is a function word is asked
   * of these, as Bắc (north) is not bác (a function word) though both fold to bac; "năm 1945 Việt Nam" writes nam
   * twice, once as a function word (năm) and once not (Nam).
   */
  written: string[][];
  /** Quoted phrases, as folded word sequences of two words or more, each once. */
  phrases: string[][];
  /** The last word is still being typed: match it as a prefix. */
  prefixLast: boolean;
  /** The query as a title: folded, `_` as space, single spaces. */
  asTitle: string;
  /**
   * Words written without spaces between them (unspaced script) that the segmenter split into
   * several, as folded word sequences: "にほん" is に and ほん. Highlighted as one (D95).
   */
  joined: string[][];
}

const QUOTED = /["“”„«»]([^"“”„«»]*)["“”„«»]/g;
const QUOTES = /["“”„«»]/g;
const INVISIBLE = /^[\s\p{Cf}]$/u;
/** The last query word is typed on (a prefix) when it has this many letters or more. */
export const MIN_PREFIX = 2;

export function parseQuery(query: string, lang: string): ParsedQuery {
  // As the text it was copied from was indexed (D153).
  const q = withoutSoftHyphens(query);
  const phrases: string[][] = [];
  const words: string[] = [];
  const written: string[][] = [];
  const seen = new Map<string, number>();
  const quoted = new Set<string>();
  // The text split once (words() caches the segmenter's splits), each word folded and as written.
  const addAll = (text: string): string[] => {
    const ws = wordsOf(text, lang);
    const folded = ws.map((w) => fold(w));
    for (const [k, term] of folded.entries()) {
      const form = writtenForm(ws[k]!);
      const i = seen.get(term);
      if (i === undefined) {
        seen.set(term, words.length);
        words.push(term);
        written.push([form]);
      } else if (!written[i]!.includes(form)) written[i]!.push(form);
    }
    return folded;
  };
  const rest = q.replace(QUOTED, (_m, inner: string) => {
    const ws = addAll(inner);
    // A phrase written again asks nothing more: each copy was checked, and looked for, on its own.
    const key = ws.join(" ");
    if (ws.length > 1 && !quoted.has(key)) {
      quoted.add(key);
      phrases.push(ws);
    }
    return " ";
  });
  // An unbalanced quote is plain text.
  const unquoted = rest.replace(QUOTES, " ");
  const free = addAll(unquoted);
  // Invisible format characters after the last letter leave the word being typed, as spaces do (D120, UAX #29 WB4):
  // a joiner (रत्‍ goes on as रत्‍नागिरी), a direction mark an RTL keyboard adds, a zero-width space.
  const trimmed = withoutTrailingInvisible(q);
  const endsInWord = /[\p{L}\p{N}\p{M}]$/u.test(trimmed) && !QUOTES.test(trimmed.slice(-1));
  QUOTES.lastIndex = 0;
  const last = free.at(-1);
  const prefixLast = endsInWord && last !== undefined && last === words.at(-1) && codePoints(last) >= MIN_PREFIX;
  return { words, written, phrases, prefixLast, asTitle: titleKey(q), joined: joinedWords(q, lang) };
}

/** A Vietnamese tone mark (decomposed): grave, acute, tilde, hook above, dot below. */
const TONE = "[\u0300\u0301\u0303\u0309\u0323]";
/** oa, oe and uy ending a syllable, the tone on their first vowel (the older placement: tòa, khỏe, thủy). */
const TONE_ON_FIRST = new RegExp(`(?:(o)(${TONE})([ae])|(u)(${TONE})(y))$`, "u");

/**
 * A word as written, compared with a function-word list's entries as written (D197): lowercased, NFC, no joiners, and
 * a Vietnamese tone on oa, oe or uy ending the word put on its second vowel, as the newer spelling puts it (toà, the
 * list's, is tòa, the older, as Vietnamese Wikipedia writes both).
 */
export function writtenForm(word: string): string {
  const w = word.toLowerCase().normalize("NFD").replace(JOINERS, "");
  return w
    .replace(TONE_ON_FIRST, (_m, o?: string, ot?: string, ae?: string, u?: string, ut?: string) =>
      o ? `${o}${ae}${ot}` : `${u}y${ut}`,
    )
    .normalize("NFC");
}

/**
 * `q` without the spaces and format characters at its end, read back from the end: a pattern anchored at the end
 * (/[\s\p{Cf}]+$/) is tried from every space of a run, quadratic in a run of spaces before the words (40,000 of them
 * took 5 s; the library's q is not trimmed before it is parsed, its leading spaces not counted in its 500 characters).
 */
function withoutTrailingInvisible(q: string): string {
  let end = q.length;
  while (end > 0) {
    const low = q.charCodeAt(end - 1);
    const width = low >= 0xdc00 && low <= 0xdfff && end > 1 ? 2 : 1;
    if (!INVISIBLE.test(q.slice(end - width, end))) break;
    end -= width;
  }
  return q.slice(0, end);
}

const RUN = /[\p{L}\p{M}\p{N}]+/gu;

/** The runs of word characters holding unspaced script that the segmenter splits into several words. */
function joinedWords(q: string, lang: string): string[][] {
  if (!UNSPACED.test(q)) return [];
  const out: string[][] = [];
  for (const run of q.match(RUN) ?? []) {
    if (!UNSPACED.test(run)) continue;
    const ws = terms(run, lang);
    if (ws.length > 1) out.push(ws);
  }
  return out;
}

/**
 * Direction marks, embeddings, overrides and isolates: MediaWiki drops the first three from every title, as they slip
 * into titles copied from an RTL page (D179), so a title key drops them all.
 */
const BIDI_CONTROLS = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** How titles are compared: case- and accent-insensitive, `_` = space, direction marks left out (D179). */
export function titleKey(title: string): string {
  return foldUncached(title.replace(BIDI_CONTROLS, "").replace(/_/g, " ").replace(/\s+/g, " ").trim());
}
