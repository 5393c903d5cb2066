/** What ingest is asked (its options) and what it gives back (its result), with the records they hold. */
import type { Article } from "./article";
import type { Claim, RedirectColumns, RedirectIdLists } from "./claim-table";
import type { RawPage } from "./raw-page";

export { DEFAULT_CHUNK_WORDS } from "../build-defaults";

export interface IngestOptions {
  dumps: string[];
  /** Stop after this many articles. */
  limit?: number;
  chunkWords?: number;
  /** Keep the complete pages of a damaged dump instead of failing. */
  allowTruncated?: boolean;
  /** Parsing workers; default: buildWorkers() (TOME_BUILD_WORKERS, else one per core). */
  workers?: number | undefined;
  /** The parsing workers' script, when not ingest's own: one that serveParsing()s (a build's adds to each article). */
  parsingWorker?: string;
  /** A page whose conversion takes longer is left out (a failure); default 120 s. */
  pageLimitMs?: number;
  onProgress?: ((progress: IngestProgress) => void) | undefined;
  /**
   * Called with each article as it is converted, in dump order, instead of keeping it: the
   * result then lists no articles, only the ids and revisions of those kept (`kept`): a build
   * streams them to its file, and keeps those.
   */
  onArticle?: (article: Article, wiki: Wiki) => void;
  /**
   * Asked before each page is sent to be parsed: a promise holds the reading back until it
   * resolves (onArticle's consumer is behind; pages already being parsed still come).
   */
  ready?: () => Promise<void> | undefined;
  /**
   * Awaited once every article has come to onArticle, before the claims are resolved: the
   * consumer lets go of what it held for more pages (a build writes its last run) before the
   * resolution allocates.
   */
  allRead?: () => Promise<void>;
  /** Called with each namespace-0 page sent to conversion, e.g. to compare the text made with its source. */
  onPage?: (page: RawPage) => void;
  /**
   * Where the claims' titles go, in sorted runs, while the dumps are read (default: the system's
   * temporary folder); given, the redirects kept go to a file there too (RedirectColumns).
   */
  spillDir?: string;
  /** List every claim in the result (`claims`): an update weighs them against its base. */
  listClaims?: boolean;
  /**
   * Aborted, a read waiting on a dump that brings no bytes for a second is abandoned, and ingest rejects with the
   * signal's reason (D176); its safe points between pages are the caller's (`ready`).
   */
  signal?: AbortSignal | undefined;
}

export interface IngestProgress {
  dump: string;
  dumpIndex: number;
  dumpCount: number;
  /** Compressed bytes read of this dump, and its size when known. */
  bytesRead: number;
  totalBytes: number | undefined;
  articles: number;
  redirects: number;
}

export interface Wiki {
  host: string;
  dbname: string;
  lang: string;
  sitename: string;
}

export interface Redirect {
  title: string;
  target: string;
}

export interface SourceReport {
  dump: string;
  schema: string;
  compression: string;
  /** Namespace-0 articles and redirects read from this dump. */
  articles: number;
  redirects: number;
  truncated: boolean;
  /** Where the dump was damaged, when it was. */
  damage?: string;
}

export interface IngestResult {
  wiki: Wiki;
  /** Sorted by page id; made when first read. Not when streamed to onArticle (a build reads `kept`). */
  readonly articles: Article[];
  /** Made when first read from `redirectList`. */
  readonly redirects: Redirect[];
  /** The articles' ids and revisions, sorted by id: two columns, not an object an article. */
  kept: { pageIds: Uint32Array; revIds: Float64Array };
  /** The redirects kept, sorted by title, in columns. */
  redirectList: RedirectColumns;
  sources: SourceReport[];
  truncated: boolean;
  /** Pages whose wikitext could not be converted; they are left out. */
  failures: { pageId: number; title: string; error: string }[];
  /** Characters of wikitext converted, for throughput figures. */
  wikitextChars: number;
  /** Set when the first dump named no wiki (no <siteinfo><base>): its host was taken from its language, or "en". */
  hostGuessed?: boolean | undefined;
  /**
   * The newest page read for each page id, article or redirect, before title clashes are
   * resolved (an update weighs them against the snapshot it starts from): listed only when
   * asked (listClaims), else empty.
   */
  claims: [number, Claim][];
  /** The page id and revision of each redirect, in the order of redirects. */
  readonly redirectIds: RedirectIdLists;
}
