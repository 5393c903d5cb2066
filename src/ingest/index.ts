/**
 * ingest: MediaWiki dumps → articles of clean sections and chunks, plus the redirect map.
 *
 * Dumps are streamed; wikitext is parsed on every core. Several dumps of one wiki merge,
 * and the newest revision of each page wins.
 */
import { availableParallelism } from "node:os";
import type { Article } from "./article";
import { toUnix } from "./article";
import { DumpError } from "./errors";
import { readExport, type RawPage, type SiteInfo } from "./mediawiki";
import { ParserPool } from "./pool";
import { openDump } from "./source";

export type { Article } from "./article";
export type { Chunk, SectionHead } from "./chunk";
export { wordCount } from "./chunk";
export { DumpError } from "./errors";
export { modifications } from "./modifications";
export type { RawPage, SiteInfo } from "./mediawiki";
export { countLeaks, findLeaks, LEAK_PATTERNS } from "./wikitext";

export const DEFAULT_CHUNK_WORDS = 300;

export interface IngestOptions {
  dumps: string[];
  /** Stop after this many articles. */
  limit?: number;
  chunkWords?: number;
  /** Keep the complete pages of a damaged dump instead of failing. */
  allowTruncated?: boolean;
  /** Parsing workers; default: one per core. */
  workers?: number;
  onProgress?: (progress: IngestProgress) => void;
  /**
   * Called with each article as it is converted, in dump order, instead of keeping it: the
   * result's articles then carry no sections or chunks (a build streams them to its file,
   * and keeps those of the result's article ids and revisions).
   */
  onArticle?: (article: Article, wiki: Wiki) => void;
  /** Called with each namespace-0 page sent to conversion, e.g. to compare the text made with its source. */
  onPage?: (page: RawPage) => void;
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
  /** Sorted by page id. */
  articles: Article[];
  redirects: Redirect[];
  sources: SourceReport[];
  truncated: boolean;
  /** Pages whose wikitext could not be converted; they are left out. */
  failures: { pageId: number; title: string; error: string }[];
  /** Characters of wikitext converted, for throughput figures. */
  wikitextChars: number;
  /**
   * The newest page read for each page id, article or redirect, before title clashes are
   * resolved (an update weighs them against the snapshot it starts from).
   */
  claims: Map<number, Claim>;
  /** The page id of each redirect, in the order of redirects. */
  redirectPageIds: number[];
}

export interface Claim {
  kind: "article" | "redirect";
  title: string;
  revId: number;
  tsUnix: number;
  target?: string;
}

/** MediaWiki's canonical form of a title: spaces for underscores, no anchor, first letter upper case. */
export function canonicalTitle(title: string): string {
  const t = title.replace(/#.*$/s, "").replace(/_/g, " ").replace(/\s+/g, " ").trim();
  if (!t) return t;
  const first = String.fromCodePoint(t.codePointAt(0)!);
  return first.toUpperCase() + t.slice(first.length);
}

/** Whether revision a is newer than b: the later timestamp, then the higher revision id. */
export const newer = (a: { tsUnix: number; revId: number }, b: { tsUnix: number; revId: number }) =>
  a.tsUnix !== b.tsUnix ? a.tsUnix > b.tsUnix : a.revId > b.revId;

export async function ingest(options: IngestOptions): Promise<IngestResult> {
  if (!options.dumps.length) throw new DumpError("no dump given: ingest needs at least one dump path or URL.");
  const chunkWords = options.chunkWords ?? DEFAULT_CHUNK_WORDS;
  const limit = options.limit ?? Infinity;
  const claims = new Map<number, Claim>();
  const articles = new Map<number, Article>();
  const failures: IngestResult["failures"] = [];
  const sources: SourceReport[] = [];
  let wiki: Wiki | null = null;
  let wikitextChars = 0;
  let accepted = 0;

  const pool = new ParserPool(options.workers ?? availableParallelism(), ({ articles: done, failures: failed }) => {
    for (const article of done) {
      const claim = claims.get(article.pageId);
      // A later dump may have claimed the page with a newer revision meanwhile.
      if (claim?.kind === "article" && claim.revId === article.revId) {
        if (options.onArticle) {
          options.onArticle(article, wiki!);
          articles.set(article.pageId, { ...article, sections: [], chunks: [] });
        } else articles.set(article.pageId, article);
        wikitextChars += article.wikitextLength;
      }
    }
    failures.push(...failed);
  });

  try {
    for (const [dumpIndex, spec] of options.dumps.entries()) {
      if (accepted >= limit) break;
      const source = await openDump(spec);
      const report: SourceReport = {
        dump: spec,
        schema: "",
        compression: source.compression,
        articles: 0,
        redirects: 0,
        truncated: false,
      };
      sources.push(report);
      const progress = () =>
        options.onProgress?.({
          dump: spec,
          dumpIndex,
          dumpCount: options.dumps.length,
          bytesRead: source.bytesRead(),
          totalBytes: source.totalBytes,
          articles: accepted,
          redirects: report.redirects,
        });
      let lastProgress = 0;
      try {
        for await (const item of readExport(source.xml, spec)) {
          if (item.kind === "site") {
            const site = item.site;
            report.schema = site.schema;
            if (wiki && !sameWiki(wiki, site)) {
              throw new DumpError(
                `${spec} is from ${site.host || site.dbname}, but the snapshot is of ${wiki.host || wiki.dbname}: one snapshot holds one wiki. Build a separate snapshot for each wiki.`,
              );
            }
            wiki ??= {
              host: site.host || `${site.lang}.wikipedia.org`,
              dbname: site.dbname,
              lang: site.lang || site.host.split(".")[0] || "en",
              sitename: site.sitename,
            };
            if (!wiki.dbname && site.dbname) wiki.dbname = site.dbname;
            pool.configure({ ...site, lang: site.lang || wiki.lang }, chunkWords);
            continue;
          }
          const page = item.page;
          if (page.ns !== 0) continue;
          if (page.redirect !== undefined) report.redirects++;
          else report.articles++;
          const claim = claimFor(page);
          const prior = claims.get(page.pageId);
          if (prior && !newer(claim, prior)) continue;
          if (claim.kind === "article") {
            if (accepted >= limit) break;
            if (!prior || prior.kind !== "article") accepted++;
            claims.set(page.pageId, claim);
            articles.delete(page.pageId);
            options.onPage?.(page);
            await pool.submit(page);
          } else {
            if (prior?.kind === "article") accepted--;
            claims.set(page.pageId, claim);
            articles.delete(page.pageId);
          }
          const now = performance.now();
          if (now - lastProgress > 100) {
            lastProgress = now;
            progress();
          }
        }
        if (accepted >= limit) source.cancel();
        else await source.finished();
      } catch (err) {
        // The decoder's own complaint, when there is one, says more than the XML parser's.
        // (Asked only when the XML itself went wrong: the decoder may still be busy otherwise.)
        const xmlFailed = err instanceof DumpError && (err.damaged || !report.schema);
        const decoderError = xmlFailed ? await source.decoderError() : null;
        source.cancel();
        const damage = decoderError ?? err;
        if (!(damage instanceof DumpError) || !damage.damaged) throw damage;
        if (!options.allowTruncated) {
          throw new DumpError(
            `${damage.message}\nNo snapshot was written. Use a complete dump, or pass --allow-truncated to keep the complete pages read before the damage.`,
            { damaged: true },
          );
        }
        report.truncated = true;
        report.damage = damage.message;
      }
      progress();
    }
    await pool.drain();
  } finally {
    pool.close();
  }

  if (!wiki) throw new DumpError("no <siteinfo> found in the dumps: they are not MediaWiki exports.");
  return finish(wiki, claims, articles, sources, failures, wikitextChars);
}

function claimFor(page: RawPage): Claim {
  const base = { title: canonicalTitle(page.title), revId: page.revId, tsUnix: toUnix(page.timestamp) };
  return page.redirect !== undefined
    ? { ...base, kind: "redirect", target: canonicalTitle(page.redirect) }
    : { ...base, kind: "article" };
}

/** Resolves title clashes (the newest page holding a title keeps it) and sorts the output. */
function finish(
  wiki: Wiki,
  claims: Map<number, Claim>,
  articles: Map<number, Article>,
  sources: SourceReport[],
  failures: IngestResult["failures"],
  wikitextChars: number,
): IngestResult {
  const byTitle = new Map<string, { pageId: number; claim: Claim }>();
  for (const [pageId, claim] of claims) {
    if (claim.kind === "article" && !articles.has(pageId)) continue; // conversion failed
    const holder = byTitle.get(claim.title);
    if (!holder || newer(claim, holder.claim)) byTitle.set(claim.title, { pageId, claim });
  }
  const kept: Article[] = [];
  const redirectIds = new Map<Redirect, number>();
  for (const { pageId, claim } of byTitle.values()) {
    if (claim.kind === "article") kept.push(articles.get(pageId)!);
    else if (claim.target && claim.target !== claim.title) redirectIds.set({ title: claim.title, target: claim.target }, pageId);
  }
  kept.sort((a, b) => a.pageId - b.pageId);
  const redirects = [...redirectIds.keys()].sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
  return {
    wiki,
    articles: kept,
    redirects,
    sources,
    truncated: sources.some((s) => s.truncated),
    failures,
    wikitextChars,
    claims,
    redirectPageIds: redirects.map((r) => redirectIds.get(r)!),
  };
}

/** A dump's site information (its <siteinfo>), read without going further. */
export async function siteOf(spec: string): Promise<SiteInfo> {
  const source = await openDump(spec);
  try {
    for await (const item of readExport(source.xml, spec)) if (item.kind === "site") return item.site;
  } catch (err) {
    const decoderError = err instanceof DumpError ? await source.decoderError() : null;
    throw decoderError ?? err;
  } finally {
    source.cancel();
  }
  throw new DumpError(`${spec} has no <siteinfo>: it is not a MediaWiki export.`);
}

/** Whether a dump's site information names the given wiki (by host when both have one, else dbname and language). */
export function sameWiki(a: Wiki, b: SiteInfo): boolean {
  if (a.host && b.host) return a.host === b.host;
  return a.dbname === b.dbname && a.lang === b.lang;
}
