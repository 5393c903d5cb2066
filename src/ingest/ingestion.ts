/**
 * ingest(), one run in named steps: each dump is read in turn (readDump), its site information
 * merged into the wiki (takeSite), each namespace-0 page claimed or passed over (takePage)
 * and sent to the parsing workers, whose articles come back to converted(); a damaged dump
 * ends the run or is kept up to its damage (keepDamaged). result() resolves title clashes.
 */
import type { Article } from "./article";
import { Growable } from "../columns";
import { tmpdir } from "node:os";
import { type Claim, ClaimTable, RedirectColumns, type StandingClaim } from "./claim-table";
import { claimFor, leadsElsewhere, newer, titleHolders } from "./claims";
import { DumpError } from "./errors";
import { checkOptions, integerFrom, type OptionRule } from "../errors";
import { readExport } from "./mediawiki";
import type { RawPage, SiteInfo } from "./raw-page";
import { MAX_BUILD_WORKERS } from "../scheduling";
import { buildWorkers, ParserPool, type PoolResult } from "./pool";
import { type DumpSource, openDump } from "./source";
import {
  DEFAULT_CHUNK_WORDS,
  type IngestOptions,
  type IngestResult,
  type Redirect,
  type SourceReport,
  type Wiki,
} from "./types";
import { printableName } from "../printable";

/** What takePage did with a page: claimed it, passed over it, or stopped (the limit is reached). */
type Taken = "claimed" | "passed" | "full";

const PROGRESS_EVERY_MS = 100;

class Ingestion {
  private readonly chunkWords: number;
  private readonly limit: number;
  /**
   * Each page id's claim; a claim's row is marked converted when its article is kept in
   * `articles` or streamed to onArticle (a streamed page's claim holds its id, revision and
   * time; its title is in the claims' runs on disk, D114).
   */
  private readonly claims: ClaimTable;
  private readonly articles = new Map<number, Article>();
  private readonly failures: IngestResult["failures"] = [];
  private readonly sources: SourceReport[] = [];
  private readonly pool: ParserPool;
  private wiki: Wiki | null = null;
  private wikitextChars = 0;
  /** Article claims held: what the limit counts. */
  private accepted = 0;
  private hostGuessed = false;

  constructor(private readonly options: IngestOptions) {
    this.chunkWords = options.chunkWords ?? DEFAULT_CHUNK_WORDS;
    this.limit = options.limit ?? Infinity;
    this.pool = new ParserPool(
      options.workers ?? buildWorkers(),
      (done) => this.converted(done),
      options.parsingWorker,
      options.pageLimitMs,
    );
    this.claims = new ClaimTable(options.spillDir ?? tmpdir());
  }

  get full(): boolean {
    return this.accepted >= this.limit;
  }

  /** Reads one dump to its end (or to the limit, or to its damage when that may be kept). */
  async readDump(spec: string, dumpIndex: number): Promise<void> {
    const source = await openDump(spec, this.options.allowTruncated, this.options.signal);
    const report: SourceReport = {
      dump: spec,
      schema: "",
      compression: source.compression,
      articles: 0,
      redirects: 0,
      truncated: false,
    };
    this.sources.push(report);
    const progress = () =>
      this.options.onProgress?.({
        dump: spec,
        dumpIndex,
        dumpCount: this.options.dumps.length,
        bytesRead: source.bytesRead(),
        totalBytes: source.totalBytes,
        articles: this.accepted,
        redirects: report.redirects,
      });
    let lastProgress = 0;
    try {
      for await (const item of readExport(source.xml, printableName(spec))) {
        if (item.kind === "site") {
          this.takeSite(item.site, spec, report);
          continue;
        }
        if (item.kind === "left out") {
          // As the pages the workers could not convert; only articles' namespace is read at all.
          const { pageId, ns, title, error } = item.page;
          if (ns === 0) this.failures.push({ pageId, title, error });
          continue;
        }
        const taken = await this.takePage(item.page, report);
        if (taken === "full") break;
        if (taken === "passed") continue;
        const now = performance.now();
        if (now - lastProgress > PROGRESS_EVERY_MS) {
          lastProgress = now;
          progress();
        }
      }
      if (this.full) source.cancel();
      else await source.finished();
    } catch (err) {
      // Stopped, whatever the read failed with (a decoder killed with the read it waited on, D176) is no damage.
      if (this.options.signal?.aborted) {
        source.cancel();
        throw this.options.signal.reason;
      }
      await this.keepDamaged(err, source, report);
    }
    progress();
  }

  /** Waits for the workers' last articles. */
  drain(): Promise<void> {
    return this.pool.drain();
  }

  close(): void {
    this.pool.close();
  }

  /**
   * Resolves title clashes (the newest page holding a title keeps it) and sorts the output:
   * the articles kept as two columns (id and revision) and the redirects in columns of their
   * own; the claims' runs are read once, and removed.
   */
  result(): IngestResult {
    const damages = this.sources.filter((s) => s.damage).map((s) => s.damage);
    // Kept with --allow-truncated, a damage before the first page was an empty snapshot written (over the last good one
    // of its name), and one before <siteinfo> was said to be "not MediaWiki exports".
    if (damages.length && this.accepted === 0 && !this.claims.size)
      throw new DumpError(
        `${damages.join("\n")}\nNo complete page comes before the damage, so there is nothing to keep: no snapshot was written. Use a complete dump.`,
        { damaged: true },
      );
    if (!this.wiki) throw new DumpError("no <siteinfo> found in the dumps: they are not MediaWiki exports.");
    // The read's garbage (pages parsed, their rows) goes before the claims' resolution allocates:
    // left to the collector, it added 100–150 MB to the build's peak here at 200,000 articles.
    Bun.gc(true);
    const keptIds = new Growable(Uint32Array);
    const keptRevs = new Growable(Float64Array);
    // Spilled beside the build's other runs when it has a folder for them: they are held to its end.
    const redirectList = new RedirectColumns(this.options.spillDir);
    const listed: [number, Claim][] | undefined = this.options.listClaims ? [] : undefined;
    const decoder = new TextDecoder();
    const list = listed
      ? (c: StandingClaim) => {
          const title = decoder.decode(c.title);
          const claim: Claim = c.article
            ? { kind: "article", title, revId: c.revId, tsUnix: c.tsUnix }
            : { kind: "redirect", title, revId: c.revId, tsUnix: c.tsUnix, target: decoder.decode(c.target) };
          listed.push([c.pageId, claim]);
        }
      : undefined;
    try {
      for (const h of titleHolders(this.claims, this.options.spillDir ?? tmpdir(), list)) {
        if (h.article) {
          keptIds.push(h.pageId);
          keptRevs.push(h.revId);
        } else if (leadsElsewhere(h)) redirectList.push(h.title, h.target, h.pageId, h.revId, h.tsUnix);
      }
    } catch (err) {
      redirectList.close();
      throw err;
    }
    // The holders' sort (its records, the kept pages' growth) goes before the trim copies the redirects' columns.
    Bun.gc(true);
    redirectList.trim();
    const ids = keptIds.view();
    const order = Uint32Array.from({ length: ids.length }, (_, i) => i).sort((a, b) => ids[a]! - ids[b]!);
    const kept = {
      pageIds: order.map((i) => ids[i]!),
      revIds: Float64Array.from(order, (i) => keptRevs.get(i)),
    };
    const held = this.articles;
    const streamed = this.options.onArticle !== undefined;
    let articles: Article[] | undefined;
    let redirects: Redirect[] | undefined;
    return {
      wiki: this.wiki,
      get articles() {
        if (streamed)
          throw new Error(
            "ingest: the articles were streamed to onArticle, not kept: read `kept` (their ids and revisions)",
          );
        return (articles ??= Array.from(kept.pageIds, (id) => held.get(id)!));
      },
      get redirects() {
        return (redirects ??= Array.from({ length: redirectList.length }, (_, i) => ({
          title: redirectList.title(i),
          target: redirectList.target(i),
        })));
      },
      kept,
      redirectList,
      sources: this.sources,
      truncated: this.sources.some((s) => s.truncated),
      failures: this.failures,
      wikitextChars: this.wikitextChars,
      hostGuessed: this.hostGuessed,
      claims: listed ?? [],
      get redirectIds() {
        return redirectList.idLists;
      },
    };
  }

  /** Removes the claims' runs (after a failure). */
  abandon(): void {
    this.claims.close();
  }

  /** A dump of another wiki than the one read so far is refused: one snapshot holds one wiki. */
  private checkWiki(site: SiteInfo, spec: string): void {
    if (this.wiki && !sameWiki(this.wiki, site)) {
      throw new DumpError(
        `${printableName(spec)} is from ${site.host || site.dbname}, but the snapshot is of ${this.wiki.host || this.wiki.dbname}: one snapshot holds one wiki. Build a separate snapshot for each wiki.`,
      );
    }
  }

  /**
   * A dump the limit leaves unread: its head is read up to its <siteinfo>, which must be of the wiki read, as a dump
   * read is (D186): with --limit a dump of another wiki after the limit was passed over, neither refused nor said.
   */
  async checkUnread(spec: string): Promise<void> {
    const site = await headOf(spec, this.options.signal);
    if (site) this.checkWiki(site, spec);
  }

  /** A dump's <siteinfo>: it must be of the wiki read so far; the workers learn its namespaces. */
  private takeSite(site: SiteInfo, spec: string, report: SourceReport): void {
    report.schema = site.schema;
    this.checkWiki(site, spec);
    const lang = site.lang || site.host.split(".")[0] || "en";
    if (!this.wiki) this.hostGuessed = !site.host;
    const wiki = (this.wiki ??= {
      // The language the wiki is taken to be in names its host too: with neither, not ".wikipedia.org".
      host: site.host || `${lang}.wikipedia.org`,
      dbname: site.dbname,
      lang,
      sitename: site.sitename,
    });
    if (!wiki.dbname && site.dbname) wiki.dbname = site.dbname;
    this.pool.configure({ ...site, lang: site.lang || wiki.lang }, this.chunkWords);
  }

  /**
   * A page read: counted, then claimed if it is newer than the claim its id holds (claims.ts).
   * A claimed article goes to the workers; a redirect replaces whatever the id held.
   */
  private async takePage(page: RawPage, report: SourceReport): Promise<Taken> {
    if (page.ns !== 0) return "passed";
    const claim = claimFor(page);
    // The article that finds the limit reached is not read on, nor counted: with --limit n, n articles read.
    if (claim.kind === "article" && this.full) return "full";
    if (page.redirect !== undefined) report.redirects++;
    else report.articles++;
    const prior = this.claims.rowOf(page.pageId);
    if (prior >= 0 && !newer(claim, this.claims.version(prior))) return "passed";
    const priorArticle = prior >= 0 && this.claims.isArticle(prior);
    if (claim.kind === "article") {
      if (!priorArticle) this.accepted++;
    } else if (priorArticle) this.accepted--;
    this.claims.set(page.pageId, claim);
    this.articles.delete(page.pageId);
    if (claim.kind === "article") {
      this.options.onPage?.(page);
      const behind = this.options.ready?.();
      if (behind) await behind;
      await this.pool.submit(page);
    }
    return "claimed";
  }

  /** The workers' articles: kept (or streamed to onArticle) if their claim still stands. */
  private converted({ articles, failures }: PoolResult): void {
    for (const article of articles) {
      const row = this.claims.rowOf(article.pageId);
      // A later dump may have claimed the page with a newer revision meanwhile.
      if (row < 0 || !this.claims.isArticle(row) || this.claims.revOf(row) !== article.revId) continue;
      this.claims.markConverted(row);
      if (this.options.onArticle) this.options.onArticle(article, this.wiki!);
      else this.articles.set(article.pageId, article);
      this.wikitextChars += article.wikitextLength;
    }
    this.failures.push(...failures);
  }

  /**
   * A dump that failed: damage is kept (the pages read before it stand) when the options allow
   * it; anything else is thrown. The decoder's own complaint, when there is one, says more
   * than the XML parser's (asked only when the XML itself went wrong: the decoder may still be
   * busy otherwise).
   */
  private async keepDamaged(err: unknown, source: DumpSource, report: SourceReport): Promise<void> {
    const xmlFailed = err instanceof DumpError && (err.damaged || !report.schema);
    const decoderError = xmlFailed ? await source.decoderError() : null;
    source.cancel();
    const damage = decoderError ?? err;
    if (!(damage instanceof DumpError) || !damage.damaged) throw damage;
    if (!this.options.allowTruncated) {
      throw new DumpError(
        `${damage.message}\nNo snapshot was written. Use a complete dump, or pass --allow-truncated to keep the complete pages read before the damage.`,
        { damaged: true },
      );
    }
    report.truncated = true;
    report.damage = damage.message;
  }
}

const aFunction: OptionRule = [(v) => typeof v === "function", "a function"];
const aBoolean: OptionRule = [(v) => typeof v === "boolean", "true or false"];

/**
 * What ingest() takes, and the rule of each (D115): unchecked, chunkWords 0 or -1 never ended, "50" and NaN cut
 * chunks of another size than asked, limit -1 said the dumps were no MediaWiki exports, pageLimitMs -1 left every
 * page out, and a dump path given as a string, not a list, failed inside.
 */
export const INGEST_RULES: Record<keyof IngestOptions, OptionRule> = {
  dumps: [(v) => Array.isArray(v) && v.every((d) => typeof d === "string"), "a list of dump paths or URLs"],
  limit: [integerFrom(1), "an integer of 1 or more (articles)"],
  chunkWords: [integerFrom(1), "an integer of 1 or more (the words a chunk holds at most)"],
  allowTruncated: aBoolean,
  workers: [
    (v) => integerFrom(1)(v) && (v as number) <= MAX_BUILD_WORKERS,
    `a whole number of parsing threads from 1 to ${MAX_BUILD_WORKERS}`,
  ],
  parsingWorker: [(v) => typeof v === "string", "a script's path"],
  pageLimitMs: [(v) => typeof v === "number" && v > 0, "a number of milliseconds above 0"],
  onProgress: aFunction,
  onArticle: aFunction,
  ready: aFunction,
  allRead: aFunction,
  onPage: aFunction,
  spillDir: [(v) => typeof v === "string" && v !== "", "a folder's path"],
  listClaims: aBoolean,
  signal: [(v) => v instanceof AbortSignal, "an AbortSignal"],
};

/** A library caller's options (D115): a TypeError or RangeError naming the option, before any dump is opened. */
export function checkIngest(options: unknown, call = "ingest(options)"): void {
  checkOptions(call, options, INGEST_RULES);
  if ((options as IngestOptions).dumps === undefined)
    throw new TypeError(`${call}: dumps must be given, a list of dump paths or URLs.`);
}

export async function ingest(options: IngestOptions): Promise<IngestResult> {
  checkIngest(options);
  if (!options.dumps.length) throw new DumpError("no dump given: ingest needs at least one dump path or URL.");
  const run = new Ingestion(options);
  try {
    for (const [dumpIndex, spec] of options.dumps.entries()) {
      if (run.full) await run.checkUnread(spec);
      else await run.readDump(spec, dumpIndex);
    }
    await run.drain();
    run.close();
    await options.allRead?.();
    return run.result();
  } catch (err) {
    run.close();
    run.abandon();
    throw err;
  }
}

/**
 * A dump's site information (its <siteinfo>), read without going further: by the serial decoder, which
 * writes the first block at once (a parallel one decodes ahead, and of a damaged dump may write nothing: D111).
 */
export async function siteOf(spec: string): Promise<SiteInfo> {
  const site = await headOf(spec);
  if (site) return site;
  throw new DumpError(`${printableName(spec)} has no <siteinfo>: it is not a MediaWiki export.`);
}

/**
 * A dump's <siteinfo> if it comes before its first page (where MediaWiki writes it), else undefined (a dump that does
 * not name its wiki, taken as any other's): read no further than that. The signal abandons a read that stalls once it
 * is aborted (D176), as a dump read is.
 */
async function headOf(spec: string, signal?: AbortSignal): Promise<SiteInfo | undefined> {
  const source = await openDump(spec, true, signal);
  try {
    for await (const item of readExport(source.xml, printableName(spec)))
      return item.kind === "site" ? item.site : undefined;
  } catch (err) {
    const decoderError = err instanceof DumpError ? await source.decoderError() : null;
    throw decoderError ?? err;
  } finally {
    source.cancel();
  }
  return undefined;
}

/** Whether a dump's site information names the given wiki (by host when both have one, else dbname and language). */
export function sameWiki(a: Wiki, b: SiteInfo): boolean {
  if (a.host && b.host) return a.host === b.host;
  return a.dbname === b.dbname && a.lang === b.lang;
}
