/** What a PDF shows: one page of the snapshot with its source, license and modifications (D14–D16). */
export interface PdfSection {
  heading: string;
  /** 0 for the introduction (no heading), 1 for "== h ==", 2 for "=== h ===", … (as the snapshot has it). */
  level: number;
  /** Paragraphs; a paragraph of several lines is a list, one item a line. */
  paragraphs: string[];
}

export interface PdfArticle {
  pageId: number;
  revId: number;
  title: string;
  /** The wiki's language code, for word breaking. */
  lang: string;
  /** The wiki's own name, in its language (e.g. "Βικιπαίδεια"): a keyword, not used in the English sentences. */
  sitename: string;
  /** The wiki's host (D14), e.g. "el.wikipedia.org". */
  project: string;
  url: string;
  permalink: string;
  /** ISO 8601: when the text was retrieved (the revision's time). */
  timestamp: string;
  /** ISO 8601: when the snapshot was built. */
  retrievedAt: string;
  sections: PdfSection[];
  license: { name: string; full_name: string; url: string };
  modifications: string[];
}

/**
 * The renderer's version (render.ts), in every PDF's ETag (D34): one more whenever a PDF of the same article comes out
 * saying something else, not only laid out otherwise, so that a client revalidating a PDF kept from before gets the
 * new one. 2: the characters left out are stated (D177), a wiki named by its host (D30).
 */
export const PDF_VERSION = "2";

const keys = new WeakMap<PdfArticle, string>();

/**
 * What names the PDF of an article: a hash of everything the renderer is given (not only the
 * revision: the same revision in a newer snapshot has another retrieval date, and another
 * build may record other modifications). The PDF cache is keyed by it, so a swapped-in
 * snapshot never gets a PDF made from the one before; the route's ETag is made from it too.
 */
export function articleKey(article: PdfArticle): string {
  let key = keys.get(article);
  if (key === undefined) {
    key = Bun.hash(JSON.stringify(article)).toString(16).padStart(16, "0");
    keys.set(article, key);
  }
  return key;
}
