/**
 * The one text analysis used for indexing and for queries: Unicode word segmentation
 * (Intl.Segmenter for scripts written without spaces), case folding and accent folding
 * (é = e, ά = α), numbers kept.
 */

/** Bump when analysis changes: stored indexes built with another version are rebuilt. */
export const ANALYZER_VERSION = 1;

const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
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
    folded = token.normalize("NFKD").replace(DIACRITICS, "").toLowerCase().normalize("NFC");
    // Words are Zipf-distributed: a bounded cache catches most of them.
    if (cache.size >= CACHE_LIMIT) cache = new Map();
    cache.set(token, folded);
  }
  return folded;
}

export interface Token {
  /** Folded form, as indexed. */
  term: string;
  /** UTF-16 offsets of the original word in the text. */
  start: number;
  end: number;
}

const segmenters = new Map<string, Intl.Segmenter>();
function segmenter(lang: string): Intl.Segmenter {
  let s = segmenters.get(lang);
  if (!s) {
    s = new Intl.Segmenter(lang || undefined, { granularity: "word" });
    segmenters.set(lang, s);
  }
  return s;
}

/** Words of a text with their positions. */
export function tokens(text: string, lang = ""): Token[] {
  const out: Token[] = [];
  if (UNSPACED.test(text)) {
    for (const seg of segmenter(lang).segment(text)) {
      if (!seg.isWordLike) continue;
      const term = fold(seg.segment);
      if (term) out.push({ term, start: seg.index, end: seg.index + seg.segment.length });
    }
    return out;
  }
  for (const m of text.matchAll(WORD)) {
    const term = fold(m[0]);
    if (term) out.push({ term, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** Folded words of a text, for the index. */
export function terms(text: string, lang = ""): string[] {
  if (UNSPACED.test(text)) return tokens(text, lang).map((t) => t.term);
  if (ASCII.test(text)) return text.toLowerCase().match(ASCII_WORD) ?? [];
  const out: string[] = [];
  for (const m of text.matchAll(WORD)) out.push(fold(m[0]));
  return out;
}

/**
 * MiniSearch's radix tree scans a node's children one by one. Words of ideographic scripts
 * start with thousands of different characters, which makes that scan slow (25 s to index
 * 6,000 Japanese chunks). Two bucket characters in front, from the first character's code
 * point, keep every node small. Applied to index and query terms alike.
 */
const BUCKET_FROM = 0x2e80;
export function indexKey(term: string): string {
  const cp = term.codePointAt(0) ?? 0;
  if (cp < BUCKET_FROM) return term;
  return String.fromCharCode(0xe000 + (cp >> 10), 0xe800 + ((cp >> 5) & 31)) + term;
}

export function termOfKey(key: string): string {
  const b = key.charCodeAt(1);
  return b >= 0xe800 && b < 0xe820 && key.charCodeAt(0) >= 0xe000 ? key.slice(2) : key;
}
