/**
 * Streams a MediaWiki XML export (schema 0.3 to 0.11) into site information and raw pages.
 * Memory holds one page at a time, whatever the size of the dump.
 */
import { SaxesParser } from "saxes";
import { DumpError } from "./errors";

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

export type ExportItem = { kind: "site"; site: SiteInfo } | { kind: "page"; page: RawPage };

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

/** Where the text of the current element goes, if anywhere. */
type Field =
  | "sitename"
  | "dbname"
  | "base"
  | "namespace"
  | "title"
  | "ns"
  | "pageId"
  | "revId"
  | "timestamp"
  | "text"
  | null;

/**
 * Yields the site information first, then every page in document order.
 * Throws a DumpError with `damaged: true` and the position of the damage when the XML
 * is cut short or malformed; every page yielded before that is complete.
 */
export async function* readExport(xml: ReadableStream<Uint8Array>, label: string): AsyncGenerator<ExportItem> {
  const parser = new SaxesParser({ position: true });
  const decoder = new TextDecoder("utf-8");
  const out: ExportItem[] = [];

  let site: Partial<SiteInfo> & { namespaces: Map<string, number> } = { namespaces: new Map() };
  let siteSent = false;
  let rootSeen = false;
  let rootClosed = false;
  const path: string[] = [];
  let field: Field = null;
  let buf = "";
  let nsKey = 0;
  let page: PageDraft | null = null;
  let inRevision = false;
  let bestRev: { revId: number; timestamp: string; text: string } | null = null;
  let lastPage = "";
  let pagesRead = 0;

  const flushSite = () => {
    if (siteSent) return;
    siteSent = true;
    out.push({
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
  };

  parser.on("opentag", (tag) => {
    const name = tag.name;
    const parent = path[path.length - 1];
    path.push(name);
    if (path.length === 1) {
      if (name !== "mediawiki") {
        throw new DumpError(`${label} is not a MediaWiki XML export: its root element is <${name}>, not <mediawiki>.`);
      }
      rootSeen = true;
      const attrs = tag.attributes as Record<string, string>;
      const version = attrs.version ?? /export-(\d+\.\d+)/.exec(attrs.xmlns ?? "")?.[1] ?? "";
      if (!SUPPORTED.test(version)) {
        throw new DumpError(`${label} uses MediaWiki export schema ${version || "(unknown)"}; Tome reads 0.3 to 0.11.`);
      }
      site.schema = version;
      site.lang = attrs["xml:lang"] ?? "";
      return;
    }
    field = null;
    switch (name) {
      case "sitename":
      case "dbname":
      case "base":
        if (parent === "siteinfo") field = name;
        break;
      case "namespace":
        if (parent === "namespaces") {
          field = "namespace";
          nsKey = Number((tag.attributes as Record<string, string>).key);
        }
        break;
      case "page":
        flushSite();
        page = { title: "", ns: undefined, pageId: undefined, redirect: undefined, revId: undefined, timestamp: "", text: "" };
        bestRev = null;
        break;
      case "title":
        if (parent === "page") field = "title";
        break;
      case "ns":
        if (parent === "page") field = "ns";
        break;
      case "id":
        if (parent === "page") field = "pageId";
        else if (parent === "revision") field = "revId";
        break;
      case "redirect":
        if (parent === "page" && page) page.redirect = (tag.attributes as Record<string, string>).title ?? "";
        break;
      case "revision":
        if (parent === "page") inRevision = true;
        if (page) {
          page.revId = undefined;
          page.timestamp = "";
          page.text = "";
        }
        break;
      case "timestamp":
        if (parent === "revision") field = "timestamp";
        break;
      case "text":
        if (parent === "revision") field = "text";
        break;
    }
    buf = "";
  });

  parser.on("text", (t) => {
    if (field) buf += t;
  });
  parser.on("cdata", (t) => {
    if (field) buf += t;
  });

  parser.on("closetag", (tag) => {
    const name = tag.name;
    path.pop();
    if (field) {
      const value = buf;
      switch (field) {
        case "sitename":
          site.sitename = value.trim();
          break;
        case "dbname":
          site.dbname = value.trim();
          break;
        case "base":
          try {
            site.host = new URL(value.trim()).host;
          } catch {
            site.host = "";
          }
          break;
        case "namespace":
          site.namespaces.set(value.trim(), nsKey);
          break;
        case "title":
          if (page) page.title = value;
          break;
        case "ns":
          if (page) page.ns = Number(value);
          break;
        case "pageId":
          if (page && page.pageId === undefined) page.pageId = Number(value);
          break;
        case "revId":
          if (page) page.revId = Number(value);
          break;
        case "timestamp":
          if (page) page.timestamp = value.trim();
          break;
        case "text":
          if (page) page.text = value;
          break;
      }
      field = null;
      buf = "";
    }
    if (name === "revision" && page && inRevision) {
      inRevision = false;
      // History dumps carry several revisions: keep the newest.
      if (!bestRev || page.timestamp > bestRev.timestamp) {
        bestRev = { revId: page.revId ?? 0, timestamp: page.timestamp, text: page.text };
      }
    } else if (name === "page" && page) {
      const p = page;
      page = null;
      if (p.pageId === undefined || !Number.isSafeInteger(p.pageId) || !bestRev) return;
      const ns = p.ns ?? namespaceFromTitle(p.title, site.namespaces);
      const redirect = p.redirect ?? redirectFromText(bestRev.text);
      out.push({
        kind: "page",
        page: {
          pageId: p.pageId,
          ns,
          title: p.title,
          revId: bestRev.revId,
          timestamp: bestRev.timestamp,
          redirect,
          text: bestRev.text,
        },
      });
      lastPage = p.title;
      pagesRead++;
    } else if (name === "siteinfo") {
      flushSite();
    } else if (name === "mediawiki") {
      rootClosed = true;
      flushSite();
    }
  });

  const damage = (why: string): DumpError => {
    if (!rootSeen) return new DumpError(`${label} is not a MediaWiki XML export (${why} at line ${parser.line}).`);
    const where = `line ${parser.line}, byte ${bytes} of the decompressed XML`;
    const after = pagesRead ? `after ${pagesRead} complete pages (the last was "${lastPage}")` : "before any complete page";
    return new DumpError(`${label} is truncated or corrupt at ${where}, ${after}: ${why}.`, { damaged: true });
  };

  let bytes = 0;
  const reader = xml.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      try {
        parser.write(decoder.decode(value, { stream: true }));
      } catch (err) {
        if (err instanceof DumpError) throw err;
        throw damage(cleanSaxesMessage(err));
      }
      if (out.length) yield* out.splice(0, out.length);
    }
    try {
      parser.write(decoder.decode());
      parser.close();
    } catch (err) {
      if (err instanceof DumpError) throw err;
      throw damage(cleanSaxesMessage(err));
    }
    if (out.length) yield* out.splice(0, out.length);
    if (!rootSeen) throw damage("no <mediawiki> element found");
    if (!rootClosed) throw damage("the XML ends before </mediawiki>");
  } finally {
    reader.releaseLock();
  }
}

function cleanSaxesMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  // saxes prefixes "line:column: "; we report our own position.
  return msg.replace(/^(?:[^:]*:)?\d+:\d+:\s*/, "").replace(/\.$/, "");
}

/** In schema 0.3 the namespace is only the title's prefix. */
export function namespaceFromTitle(title: string, namespaces: Map<string, number>): number {
  const colon = title.indexOf(":");
  if (colon <= 0) return 0;
  const prefix = title.slice(0, colon);
  const key = namespaces.get(prefix) ?? namespaces.get(prefix.replace(/_/g, " "));
  return key ?? 0;
}

const REDIRECT_LINE = /^\s*#\s*REDIRECT\s*:?\s*\[\[([^\]|#]*)/i;

export function redirectFromText(text: string): string | undefined {
  const m = REDIRECT_LINE.exec(text);
  return m ? m[1]!.trim() : undefined;
}
