/** What reading a MediaWiki export yields (mediawiki.ts, through elements.ts): the site information, then raw pages. */

export interface SiteInfo {
  sitename: string;
  dbname: string;
  /** Host of the wiki, from <siteinfo><base>, e.g. "en.wikipedia.org". */
  host: string;
  /** Language code, from <mediawiki xml:lang>. */
  lang: string;
  /** Export schema version, e.g. "0.10". */
  schema: string;
  /** Namespace name → key, used where <ns> is absent (schema 0.3). */
  namespaces: Map<string, number>;
}

export interface RawPage {
  pageId: number;
  ns: number;
  title: string;
  revId: number;
  timestamp: string;
  /** Redirect target title, from <redirect title> or a #REDIRECT line. */
  redirect: string | undefined;
  text: string;
}

/** A page the reader leaves out (an id that is not MediaWiki's, an empty title): the build reports it as a page left out. */
interface LeftOut {
  /** The id as read (NaN when there was none). */
  pageId: number;
  ns: number;
  title: string;
  error: string;
}

export type ExportItem =
  | { kind: "site"; site: SiteInfo }
  | { kind: "page"; page: RawPage }
  | { kind: "left out"; page: LeftOut };
