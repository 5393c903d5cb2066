/**
 * Writing systems, as every stage that cuts text into words sees them: one list, so that the
 * chunker, the search's analysis and the PDF's line breaks agree on which text has no spaces.
 * Also the one escape of text for a regular expression, which those stages and the HTTP layer share.
 */

/** Scripts written without spaces between words: Intl.Segmenter finds their words. */
export const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/**
 * A wiki's language as the locale its words are found by: the dump's xml:lang, unless it is no language tag
 * ("en_US"), which Intl refuses; then none (the default rules).
 */
export function wordLocale(lang: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(lang)[0];
  } catch {
    return undefined;
  }
}

/** Soft hyphens (U+00AD, &shy;): a hint where a word may break, no character of it (D153). */
const SOFT_HYPHENS = /\u00ad/g;

/** `text` without its soft hyphens: left in, they cut a word in two for the index and for a query (D153). */
export const withoutSoftHyphens = (text: string) => text.replace(SOFT_HYPHENS, "");

/** A space by Unicode (its White_Space), or the byte order mark that String.prototype.trim() also removes. */
const SPACE = /[\p{White_Space}\uFEFF]/u;

/**
 * `text` without the spaces around it, as D6 trims q: every Unicode space, where String.prototype.trim() keeps NEL
 * (U+0085), so that a q of NEL alone was searched instead of refused as blank. A loop, not a regular expression: a
 * `\s+$` tried at each space of a long run inside a 128 KiB q (D88) would take quadratic time.
 */
export function trimSpaces(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && SPACE.test(text[start]!)) start++;
  while (end > start && SPACE.test(text[end - 1]!)) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/**
 * The characters (code points) of `text`, as users count them and D6 bounds q: a surrogate pair is one. Counted in
 * place: `[...text].length` makes an array of every character first, 200,000 elements for a pasted 200,000-word q
 * that is only to be refused.
 */
export function codePoints(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) if (pairAt(text, i)) pairs++;
  return text.length - pairs;
}

/** Where the first `n` code points of `text` end, as an index into it: never between the halves of a surrogate pair. */
export function codePointEnd(text: string, n: number): number {
  let i = 0;
  for (let seen = 0; seen < n && i < text.length; seen++) i += pairAt(text, i) ? 2 : 1;
  return i;
}

/** Whether `text[i]` and `text[i + 1]` are the two halves of one character (a surrogate pair). */
function pairAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return false;
  const next = text.charCodeAt(i + 1);
  return next >= 0xdc00 && next <= 0xdfff;
}

/** `text` as a regular expression that matches it literally. */
export const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
