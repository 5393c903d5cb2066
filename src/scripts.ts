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

/** `text` as a regular expression that matches it literally. */
export const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
