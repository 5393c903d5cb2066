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
