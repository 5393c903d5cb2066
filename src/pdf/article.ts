import { codePointEnd, codePoints } from "../scripts";

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
  /** Set when the text was cut at the PDF's bound (cutForPdf, D182): the characters it shows, of the article's, and the bound. */
  cut?: { shown: number; total: number; max: number };
}

/**
 * The most characters of article text a PDF holds (D182). A render keeps every page it lays out until the document is
 * written, in one worker: measured, about 0.3 KB a character of English text, 0.5 of Japanese and 1.2 of Bengali, and a
 * 6.7-million-character page (1,801 A4 pages, which a build keeps: D150) raised the server's memory by 1.05 GB. Half a
 * million characters is 125 to 140 English pages (121 MB measured), twice the longest article of the shared dumps (271,842 characters).
 */
export const PDF_MAX_CHARACTERS = 500_000;

/** Each article's textLength, counted once: the route, cachedPdf, render and the queue's bound all ask for it. */
const lengths = new WeakMap<PdfArticle, number>();

/** The article's text: its paragraphs' characters, counted as code points (D6); the title and headings not counted. */
export function textLength(article: PdfArticle): number {
  let chars = lengths.get(article);
  if (chars === undefined) {
    chars = 0;
    for (const section of article.sections) for (const p of section.paragraphs) chars += codePoints(p);
    lengths.set(article, chars);
  }
  return chars;
}

/**
 * The article as its PDF shows it: whole when its text is at most `max` characters, else cut there (at the last space
 * in the paragraph it reaches, not inside a word where one is near) with `cut` set, and the sections after left out.
 */
export function cutForPdf(article: PdfArticle, max = PDF_MAX_CHARACTERS): PdfArticle {
  if (article.cut) return article;
  const total = textLength(article);
  if (total <= max) return article;
  let shown = 0;
  let reached = false;
  const sections: PdfSection[] = [];
  for (const section of article.sections) {
    if (reached) break;
    const paragraphs: string[] = [];
    for (const p of section.paragraphs) {
      const left = max - shown;
      const chars = codePoints(p);
      if (chars <= left) {
        paragraphs.push(p);
        shown += chars;
        continue;
      }
      let kept = p.slice(0, codePointEnd(p, left));
      const space = kept.search(/\s\S*$/);
      if (space > kept.length / 2) kept = kept.slice(0, space);
      if (kept) paragraphs.push(`${kept.trimEnd()}…`);
      shown += codePoints(kept);
      // Nothing after the cut: the sections that follow are left out too.
      reached = true;
      break;
    }
    if (!reached || paragraphs.length) sections.push({ ...section, paragraphs });
  }
  return { ...article, sections, cut: { shown, total, max } };
}

/**
 * The renderer's version (render.ts), in every PDF's ETag (D34): one more whenever a PDF of the same article comes out
 * saying something else, not only laid out otherwise, so that a client revalidating a PDF kept from before gets the
 * new one. 2: the characters left out are stated (D177), a wiki named by its host (D30). 3: a text longer than
 * PDF_MAX_CHARACTERS is cut there, and the document says so (D182).
 */
export const PDF_VERSION = "3";

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
