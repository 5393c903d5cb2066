/**
 * What each element of a MediaWiki export does to the reader's state, as tables: where an
 * element's text goes (keyed by parent and element), and the few elements that do more when
 * they open or close (a page, a revision, a redirect, the namespaces' keys, the ends of the
 * site information). mediawiki.ts feeds the parser's events through them.
 */
import { newerInHistory } from "./claims";
import { DumpError } from "./errors";
import type { ExportItem, RawPage, SiteInfo } from "./raw-page";

const SUPPORTED = /^0\.(3|4|5|6|7|8|9|10|11)$/;

interface PageDraft {
  title: string;
  ns: number | undefined;
  pageId: number | undefined;
  redirect: string | undefined;
  revId: number | undefined;
  timestamp: string;
  text: string;
}

interface Revision {
  revId: number;
  timestamp: string;
  text: string;
}

type Attributes = Record<string, string>;

/** The reader's state between events; `out` collects what is ready to be yielded. */
export class ExportState {
  readonly out: ExportItem[] = [];
  readonly site: Partial<SiteInfo> & { namespaces: Map<string, number> } = { namespaces: new Map() };
  siteSent = false;
  rootSeen = false;
  rootClosed = false;
  readonly path: string[] = [];
  /** Where the text of the element open now goes, if anywhere, and the text so far. */
  store: TextStore | null = null;
  text = "";
  /** The key of the <namespace> being read. */
  nsKey = 0;
  page: PageDraft | null = null;
  inRevision = false;
  /** The newest revision of the page being read (history dumps carry several). */
  best: Revision | null = null;
  lastPage = "";
  pagesRead = 0;

  constructor(private readonly label: string) {}

  opened(name: string, attributes: Attributes): void {
    const parent = this.path[this.path.length - 1];
    this.path.push(name);
    if (this.path.length === 1) {
      this.root(name, attributes);
      return;
    }
    this.store = TEXT_OF.get(`${parent}/${name}`) ?? null;
    ON_OPEN.get(name)?.(this, parent, attributes);
    this.text = "";
  }

  closed(name: string): void {
    this.path.pop();
    if (this.store) {
      this.store(this, this.text);
      this.store = null;
      this.text = "";
    }
    ON_CLOSE.get(name)?.(this);
  }

  /** Sends the site information, once, before the first page (or at the end of <siteinfo>). */
  flushSite(): void {
    if (this.siteSent) return;
    this.siteSent = true;
    const site = this.site;
    this.out.push({
      kind: "site",
      site: {
        sitename: site.sitename ?? "",
        dbname: site.dbname ?? "",
        host: site.host ?? "",
        lang: site.lang ?? "",
        schema: site.schema ?? "",
        namespaces: site.namespaces,
      },
    });
  }

  private root(name: string, attributes: Attributes): void {
    if (name !== "mediawiki") {
      throw new DumpError(
        `${this.label} is not a MediaWiki XML export: its root element is <${name}>, not <mediawiki>.`,
      );
    }
    this.rootSeen = true;
    const { version: stated, xmlns } = attributes;
    const version = stated ?? /export-(\d+\.\d+)/.exec(xmlns ?? "")?.[1] ?? "";
    if (!SUPPORTED.test(version)) {
      throw new DumpError(
        `${this.label} uses MediaWiki export schema ${version || "(unknown)"}; Tome reads 0.3 to 0.11.`,
      );
    }
    this.site.schema = version;
    this.site.lang = attributes["xml:lang"] ?? "";
  }
}

/** Where an element's text goes (what it returns is not used). */
type TextStore = (state: ExportState, text: string) => unknown;

/** Elements whose text is kept, keyed "parent/element". */
/** An id's text as a number: an empty <id></id> is none (NaN), not Number("")'s 0. */
const idOf = (text: string): number => (text.trim() === "" ? Number.NaN : Number(text));

const TEXT_OF = new Map<string, TextStore>([
  ["siteinfo/sitename", (s, text) => (s.site.sitename = text.trim())],
  ["siteinfo/dbname", (s, text) => (s.site.dbname = text.trim())],
  ["siteinfo/base", (s, text) => (s.site.host = hostOf(text.trim()))],
  ["namespaces/namespace", (s, text) => s.site.namespaces.set(text.trim(), s.nsKey)],
  ["page/title", (s, text) => s.page && (s.page.title = text)],
  ["page/ns", (s, text) => s.page && (s.page.ns = Number(text))],
  ["page/id", (s, text) => s.page && s.page.pageId === undefined && (s.page.pageId = idOf(text))],
  ["revision/id", (s, text) => s.page && (s.page.revId = idOf(text))],
  ["revision/timestamp", (s, text) => s.page && (s.page.timestamp = text.trim())],
  ["revision/text", (s, text) => s.page && (s.page.text = text)],
]);

/** What opening an element does beyond keeping its text. */
const ON_OPEN = new Map<string, (s: ExportState, parent: string | undefined, attributes: Attributes) => void>([
  [
    "namespace",
    (s, parent, { key }) => {
      if (parent === "namespaces") s.nsKey = Number(key);
    },
  ],
  [
    "page",
    (s) => {
      s.flushSite();
      s.page = {
        title: "",
        ns: undefined,
        pageId: undefined,
        redirect: undefined,
        revId: undefined,
        timestamp: "",
        text: "",
      };
      s.best = null;
    },
  ],
  [
    "redirect",
    (s, parent, { title }) => {
      if (parent === "page" && s.page) s.page.redirect = title ?? "";
    },
  ],
  [
    "revision",
    (s, parent) => {
      if (parent === "page") s.inRevision = true;
      if (s.page) Object.assign(s.page, { revId: undefined, timestamp: "", text: "" });
    },
  ],
]);

/** What closing an element does once its text is kept. */
const ON_CLOSE = new Map<string, (s: ExportState) => void>([
  ["revision", keepNewestRevision],
  ["page", sendPage],
  ["siteinfo", (s) => s.flushSite()],
  [
    "mediawiki",
    (s) => {
      s.rootClosed = true;
      s.flushSite();
    },
  ],
]);

function keepNewestRevision(s: ExportState): void {
  const page = s.page;
  if (!page || !s.inRevision) return;
  s.inRevision = false;
  // A revision without its <id> has none: reported as the page's fault, not read as revision 0.
  if (newerInHistory(page, s.best))
    s.best = { revId: page.revId ?? Number.NaN, timestamp: page.timestamp, text: page.text };
}

/**
 * MediaWiki's page and revision ids are unsigned 32-bit integers, and a snapshot keeps them so: an id
 * out of that range would be another page's (2^32 + 1 is page 1's), or no page's.
 */
const isId = (n: number | undefined): n is number => Number.isInteger(n) && n! >= 0 && n! <= 0xffffffff;

/** Why a page read is not one MediaWiki exports, or undefined when it is. */
function faultOf(p: PageDraft, best: Revision): string | undefined {
  if (!isId(p.pageId)) return "its page id is missing or not MediaWiki's (a whole number from 0 to 4294967295)";
  if (!isId(best.revId)) return "its revision id is missing or not MediaWiki's (a whole number from 0 to 4294967295)";
  // MediaWiki has no page without a title, and never exports one.
  if (p.title.trim() === "") return "its title is empty";
  return undefined;
}

/**
 * A page with an id, a revision and a title, all well formed, is sent as a RawPage; one with a fault, or with no
 * revision, is sent as left out (the build reports it).
 */
function sendPage(s: ExportState): void {
  const p = s.page;
  if (!p) return;
  s.page = null;
  const best = s.best;
  const ns = p.ns ?? namespaceFromTitle(p.title, s.site.namespaces);
  const fault = best ? faultOf(p, best) : "it has no revision";
  if (!best || fault !== undefined) {
    s.out.push({ kind: "left out", page: { pageId: p.pageId ?? Number.NaN, ns, title: p.title, error: fault! } });
    return;
  }
  const page: RawPage = {
    pageId: p.pageId!, // faultOf found it an id
    ns,
    title: p.title,
    revId: best.revId,
    timestamp: best.timestamp,
    redirect: p.redirect ?? redirectFromText(best.text),
    text: best.text,
  };
  s.out.push({ kind: "page", page });
  s.lastPage = p.title;
  s.pagesRead++;
}

function hostOf(base: string): string {
  try {
    return new URL(base).host;
  } catch {
    return "";
  }
}

/** In schema 0.3 the namespace is only the title's prefix. */
function namespaceFromTitle(title: string, namespaces: Map<string, number>): number {
  const colon = title.indexOf(":");
  if (colon <= 0) return 0;
  const prefix = title.slice(0, colon);
  const key = namespaces.get(prefix) ?? namespaces.get(prefix.replace(/_/g, " "));
  return key ?? 0;
}

const REDIRECT_LINE = /^\s*#\s*REDIRECT\s*:?\s*\[\[([^\]|#]*)/i;

function redirectFromText(text: string): string | undefined {
  const m = REDIRECT_LINE.exec(text);
  return m ? m[1]!.trim() : undefined;
}
