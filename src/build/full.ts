/**
 * A full build: dumps → one snapshot file, in bounded memory. Ingest streams each article in;
 * its text goes to the file at once (snapshot), its words into the search index's runs
 * (search); the page table, the merged index and the table of contents follow at the end.
 */
import { dirname } from "node:path";
import { mkdirSync, statSync } from "node:fs";
import {
  checkIngest,
  DumpError,
  endResting,
  ingest,
  modifications,
  type IngestOptions,
  type IngestResult,
} from "../ingest";
import {
  SnapshotError,
  Growable,
  lowerBound,
  redirectListOf,
  SnapshotWriter,
  type PageInput,
  type Redirect,
  type RedirectIds,
  type RedirectList,
  type SnapshotMeta,
  type SourceReport,
  type Wiki,
} from "../snapshot";
import { IndexBuilder, logMemory, MEMORY_RULE, pageOrderSection, type IndexBuildProgress } from "../search";
import { checkOptions, integerFrom, type OptionRule } from "../errors";
import { type AnalysedArticle, buildParsingWorker } from "./analysed";
import { printableMessage, printableName } from "../printable";
import { DEFAULT_MEMORY_BYTES } from "../build-defaults";

export interface BuildOptions {
  out: string;
  chunkWords: number;
  /** Bytes the in-memory inversion may use before spilling a run. */
  memoryBytes?: number;
  createdAt?: Date | undefined;
  progress?: IndexBuildProgress;
  /**
   * Aborted, the build stops at its next safe point (the next page read, the end of a stage), removes its files and
   * rejects with the signal's reason (an AbortError unless the caller gave another); it handles no signal of the
   * process itself (D160).
   */
  signal?: AbortSignal | undefined;
}

export interface BuildReport {
  meta: SnapshotMeta;
  bytes: number;
  runs: number;
  text: { raw: number; compressed: number };
  /** Pages kept without text: no chunk, never a hit nor a title's answer (D174). */
  textless: number;
}

/** The pages of a page table's chunk counts that have no chunk (D174). */
export function countTextless(chunkCounts: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < chunkCounts.length; i++) if (chunkCounts[i] === 0) n++;
  return n;
}

/** Where a snapshot's pages came from; and what was done to their text, when not this build's ingest. */
export interface BuildAbout {
  wiki: Wiki;
  sources: SourceReport[];
  truncated: boolean;
  /** Recorded in the meta as is (a conversion keeps the old file's); default: what today's ingest does. */
  modifications?: string[];
}

/**
 * What a build takes, and the rule of each (D115): unchecked, chunkWords 0, NaN or "300" was written into the meta
 * (and the modifications a reuser is shown, and what an update cuts its chunks by), a createdAt that is not a Date
 * failed after the whole build, and an out that names a folder failed at the rename, the build done.
 */
export const BUILD_RULES: Record<keyof BuildOptions, OptionRule> = {
  out: [(v) => typeof v === "string" && v !== "", "the snapshot file's path"],
  chunkWords: [integerFrom(1), "an integer of 1 or more (the words a chunk holds at most)"],
  memoryBytes: MEMORY_RULE,
  createdAt: [(v) => v instanceof Date && !Number.isNaN(v.getTime()), "a valid Date"],
  progress: [(v) => typeof v === "function", "a function"],
  signal: [(v) => v instanceof AbortSignal, "an AbortSignal"],
};

/**
 * A safe point of a build or update (D160): throws the signal's reason when it is aborted. The event loop turns first,
 * so that an abort asked during the stage before (a signal's listener waits for that stage's synchronous work) is seen.
 */
export async function stopIfAborted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return;
  await new Promise((r) => setImmediate(r));
  signal.throwIfAborted();
}

/** A library caller's build options (D115), checked before anything is read or written; `out`'s folder made. */
function checkBuild(options: BuildOptions, call: string): void {
  checkOptions(call, options, BUILD_RULES);
  for (const name of ["out", "chunkWords"] as const)
    if (options[name] === undefined) throw new TypeError(`${call}: options.${name} must be given.`);
  checkOut(options.out, call);
}

/** A build's or update's `out` (its rule checked): not a folder (the rename would fail, the work done), its folder made. */
export function checkOut(out: string, call: string): void {
  let folder: boolean | undefined;
  // Its folder first: a stat under a file (ENOTDIR) threw the file system's error, the path in it raw.
  try {
    mkdirSync(dirname(out), { recursive: true });
    folder = statSync(out, { throwIfNoEntry: false })?.isDirectory();
  } catch (err) {
    throw new SnapshotError(
      `cannot write the snapshot to ${printableName(out)}: ${printableName((err as Error).message)}`,
    );
  }
  if (folder)
    throw new RangeError(
      `${call}: out is a folder, ${printableName(out)}: name the snapshot file to write in it (a .tome).`,
    );
}

/** A build in progress: pages are added as they come, then finish() writes the file. */
export class SnapshotBuild {
  private readonly writer: SnapshotWriter;
  private index: IndexBuilder | undefined;
  /** Each page added's id and revision, by arrival: two columns, not an object a page. */
  private arrivalIds = new Growable(Uint32Array);
  private arrivalRevs = new Growable(Float64Array);
  /** The pages to keep, until the page table is written: held here only (12 bytes an article), not to the build's end. */
  private kept: KeptPages | undefined;

  /**
   * `background`: text compressed and the index's runs inverted off the main thread; then
   * ready() before each page is parsed, and settle() before finish().
   */
  constructor(
    private readonly options: BuildOptions,
    private readonly background = false,
    call = "new SnapshotBuild(options)",
  ) {
    checkBuild(options, call);
    this.writer = new SnapshotWriter(options.out, background);
  }

  /** Undefined when more pages may come now; otherwise a promise of when they may (the index or the text's compressors are behind). */
  ready(): Promise<void> | undefined {
    const index = this.index?.ready();
    const text = this.writer.ready();
    if (!index || !text) return index ?? text;
    return Promise.all([index, text]).then(() => {});
  }

  /** Waits until the text of every page added is in the file, and the index's runs too. */
  async settle(): Promise<void> {
    await Promise.all([this.writer.settleText(), this.index?.settle()]);
  }

  /** A page (with its chunks analysed when a build's parsing worker made it, AnalysedArticle). */
  add(page: PageInput & Pick<AnalysedArticle, "analysed">, lang: string): void {
    this.indexFor(lang);
    this.writer.add(page);
    this.index!.addPage(page, page.analysed);
    this.arrivalIds.push(page.pageId);
    this.arrivalRevs.push(page.revId);
  }

  /** Keeps the pages `kept` lists (id and revision), writes everything else and renames the file into place. */
  finish(kept: KeptPages, redirects: RedirectList, about: BuildAbout, redirectIds?: RedirectIds): BuildReport {
    this.keep(kept);
    return this.seal(about, this.writeIndexes(redirects, about, redirectIds));
  }

  /** The pages to keep (ids and revisions, in any order: a page id listed twice keeps its last), for writeIndexes(). */
  keep(kept: KeptPages): void {
    this.kept = kept;
  }

  /**
   * Writes the page table, the redirects and the search indexes of the pages keep() listed
   * (let go once the page table is written); returns only their counts. What it was given and made (the titles, the redirects, each
   * chunk's document) is let go when it returns: a caller that does not hold them either
   * (buildFromDumps) seals the file without them, and they are most of what a build holds per
   * article at its end.
   */
  writeIndexes(redirects: RedirectList, about: BuildAbout, redirectIds?: RedirectIds): IndexedCounts {
    // The ingest's garbage (its claims' resolution, the kept pages' sort) goes before the page table's rows are merged.
    Bun.gc(true);
    logMemory("ingest: done");
    const pages = this.writer.finishPages(this.keptArrivals(), redirects, undefined, redirectIds);
    // The page table's garbage (its rows merged, the redirects packed) goes before the text index's merge allocates.
    Bun.gc(true);
    logMemory("page table: done");
    const table = this.writer.out;
    // Made here when no page came (every one a redirect, or left out): then it has no run to sort in the background.
    const index = this.indexFor(about.wiki.lang, false);
    // Each chunk's document is held in `pages` only: the index lets it go once the text index is merged.
    index.finish(table, Object.assign(pages, { redirects }), this.options.progress);
    return {
      pages: pages.pages,
      documents: pages.documents,
      redirects: redirects.length,
      runs: index.runCount,
      textless: countTextless(pages.chunkCounts),
    };
  }

  /** Whether each arrival is kept (keptRevisions): the pages kept and the arrival columns are let go once read. */
  private keptArrivals(): (arrival: number) => boolean {
    if (!this.kept) throw new Error("build: writeIndexes() before keep()");
    const keep = keptRevisions(this.kept);
    this.kept = undefined;
    const ids = this.arrivalIds;
    const revs = this.arrivalRevs;
    this.arrivalIds = new Growable(Uint32Array);
    this.arrivalRevs = new Growable(Float64Array);
    return (a) => keep.take(ids.get(a), revs.get(a));
  }

  /** Writes the meta and the page orders (D51, from the file as written) and renames the file into place. */
  seal(about: BuildAbout, counts: IndexedCounts): BuildReport {
    // The title index's garbage and whatever writeIndexes() let go: collected before the page orders map the file.
    Bun.gc(true);
    logMemory("page orders: start");
    const { meta, bytes } = this.writer.finish(
      {
        createdAt: (this.options.createdAt ?? new Date()).toISOString(),
        wiki: about.wiki,
        sources: about.sources,
        truncated: about.truncated,
        indexedPages: counts.pages,
        indexedChunks: counts.documents,
        skippedRedirects: counts.redirects,
        chunkWords: this.options.chunkWords,
        modifications: about.modifications ?? modifications(this.options.chunkWords),
      },
      (path) => [pageOrderSection(path, this.options.progress)],
    );
    logMemory("page orders: done");
    return { meta, bytes, runs: counts.runs, text: this.writer.textBytes, textless: counts.textless };
  }

  /** The index builder, made with the first page (the wiki's language is known from then). */
  private indexFor(lang: string, background = this.background): IndexBuilder {
    return (this.index ??= new IndexBuilder(
      lang,
      this.options.memoryBytes ?? DEFAULT_MEMORY_BYTES,
      dirname(this.options.out),
      background,
    ));
  }

  /** Removes every temporary file (after a failure or an interruption). */
  abandon(): void {
    this.index?.abandon();
    this.writer.abandon();
  }
}

/** What writeIndexes() wrote, as seal() reports it. */
interface IndexedCounts {
  pages: number;
  documents: number;
  redirects: number;
  runs: number;
  textless: number;
}

/** The pages a build keeps: their ids and revisions, in any order (a page id listed twice keeps its last). */
interface KeptPages {
  pageIds: ArrayLike<number>;
  revIds: ArrayLike<number>;
}

/**
 * The pages kept, by id and revision, sorted in typed arrays rather than a map: take(id, rev)
 * says whether an arrival is kept, once per page id (a page id arrives again when several
 * dumps hold it).
 */
function keptRevisions(kept: KeptPages): { take(pageId: number, revId: number): boolean } {
  const order = Uint32Array.from({ length: kept.pageIds.length }, (_, k) => k).sort(
    (a, b) => kept.pageIds[a]! - kept.pageIds[b]! || a - b,
  );
  const ids = Float64Array.from(order, (k) => kept.pageIds[k]!);
  const revs = Float64Array.from(order, (k) => kept.revIds[k]!);
  const taken = new Uint8Array(order.length);
  return {
    take(pageId, revId) {
      let lo = lowerBound(ids, pageId);
      // A page id listed twice: the map kept its last revision.
      while (lo + 1 < ids.length && ids[lo + 1] === pageId) lo++;
      if (lo >= ids.length || ids[lo] !== pageId || revs[lo] !== revId || taken[lo]) return false;
      taken[lo] = 1;
      return true;
    },
  };
}

/** What a build reports of its ingest. */
type IngestSummary = Pick<
  IngestResult,
  "wiki" | "sources" | "truncated" | "failures" | "wikitextChars" | "hostGuessed"
>;

/** Builds a snapshot from dumps. The file appears only when whole. */
export async function buildFromDumps(
  ingestOptions: Omit<IngestOptions, "onArticle">,
  options: BuildOptions,
): Promise<BuildReport & { result: IngestSummary }> {
  const call = "buildFromDumps(ingestOptions, options)";
  checkIngest(ingestOptions, call);
  checkBuild(options, call);
  // One size of chunk, cut by the ingest and recorded in the meta: 50 cut and 300 recorded answered as 300-word chunks.
  const chunkWords = ingestOptions.chunkWords ?? options.chunkWords;
  if (chunkWords !== options.chunkWords)
    throw new RangeError(
      `${call}: ingestOptions.chunkWords (${chunkWords}) and options.chunkWords (${options.chunkWords}) differ: give the size of chunk once, in options.`,
    );
  options.signal?.throwIfAborted();
  const build = new SnapshotBuild(options, true, call);
  // Stopped (options.signal), the ingest removes its runs as on any failure, and the build its own (D160).
  try {
    const { result, counts } = await ingestAndIndex(build, { ...ingestOptions, chunkWords }, options);
    await stopIfAborted(options.signal);
    return { ...build.seal(result, counts), result };
  } catch (err) {
    build.abandon();
    throw err;
  }
}

/**
 * Ingests the dumps into a build and writes its pages and indexes (SnapshotBuild.writeIndexes): what
 * the ingest kept (ids, redirects) is held in this function's frame only, gone once it returns.
 */
async function ingestAndIndex(
  build: SnapshotBuild,
  ingestOptions: Omit<IngestOptions, "onArticle">,
  { out, signal }: BuildOptions,
) {
  const { result, redirects } = await ingestInto(build, ingestOptions, out, signal);
  try {
    await stopIfAborted(signal);
    return { result, counts: build.writeIndexes(redirects, result, redirects.idLists) };
  } finally {
    // Their file, when the build failed before the title index let it go.
    redirects.close();
  }
}

/** Ingests the dumps into a build (the claims' runs beside its output), which keeps the pages kept: returns what else writeIndexes() needs. */
async function ingestInto(
  build: SnapshotBuild,
  ingestOptions: Omit<IngestOptions, "onArticle">,
  out: string,
  signal: AbortSignal | undefined,
) {
  const ingested = await ingest({
    ...ingestOptions,
    spillDir: dirname(out),
    signal,
    parsingWorker: buildParsingWorker(),
    onArticle: (a, wiki) => build.add(a, wiki.lang),
    // Asked before each page is parsed: a safe point (D160).
    ready: () => {
      signal?.throwIfAborted();
      return build.ready();
    },
    // The last run's inversion (up to --memory) goes to its file before the claims' resolution allocates (D128).
    allRead: () => build.settle(),
  }).finally(endResting);
  if (!ingested.kept.pageIds.length) {
    ingested.redirectList.close();
    throw noPageKept(ingested);
  }
  const { wiki, sources, truncated, failures, wikitextChars, hostGuessed } = ingested;
  const result: IngestSummary = { wiki, sources, truncated, failures, wikitextChars, hostGuessed };
  build.keep(ingested.kept);
  return { result, redirects: ingested.redirectList };
}

/**
 * D171: dumps that keep no page are refused, nothing written. Their snapshot would answer nothing, and written to
 * snapshot:build's default (snapshots/<dbname>.tome) it replaced the one served there, which the server then swapped to.
 */
function noPageKept({ sources, failures }: IngestResult): DumpError {
  const articles = sources.reduce((n, s) => n + s.articles, 0);
  const redirects = sources.reduce((n, s) => n + s.redirects, 0);
  const what = sources.length === 1 ? `${printableName(sources[0]!.dump)} holds` : `the ${sources.length} dumps hold`;
  const none = "a snapshot of no pages would answer nothing, so none was written.";
  // The pages left out are the reason, and mending them the next step: the dump is of articles already.
  const first = failures[0];
  if (first) {
    const n = failures.length;
    return new DumpError(
      `${what} no article that could be kept: ${n === 1 ? "1 page was" : `${n} pages were`} left out (${n === 1 ? "" : "the first, "}"${printableName(first.title)}": ${printableMessage(first.error)}): ${none} Mend what the error names in ${n === 1 ? "that page" : "those pages"} (D150 lists why a page is left out), or report the error if the page is as MediaWiki exported it.`,
    );
  }
  // An article with no failure was replaced by a newer redirect of its page id.
  const held = articles
    ? `no article kept: ${articles === 1 ? "its 1 article was" : `its ${articles} articles were`} replaced by newer redirects`
    : `no article (a page of the main namespace that is no redirect)${redirects ? `, only ${redirects === 1 ? "a redirect" : `${redirects} redirects`}` : ""}`;
  return new DumpError(`${what} ${held}: ${none} Give a dump of the wiki's articles (pages-articles).`);
}

/** Builds a snapshot from pages already in memory (tests, conversion of a format-1 file). */
export function buildFromPages(
  pages: Iterable<PageInput>,
  redirects: Redirect[],
  about: BuildAbout & { redirectIds?: RedirectIds },
  options: BuildOptions,
): BuildReport {
  const build = new SnapshotBuild(options, false, "buildFromPages(pages, redirects, about, options)");
  try {
    // Synchronous: a signal can only have been aborted before (D160).
    options.signal?.throwIfAborted();
    const pageIds = new Growable(Uint32Array);
    const revIds = new Growable(Float64Array);
    for (const p of pages) {
      build.add(p, about.wiki.lang);
      pageIds.push(p.pageId);
      revIds.push(p.revId);
    }
    return build.finish(
      { pageIds: pageIds.view(), revIds: revIds.view() },
      redirectListOf(redirects),
      about,
      about.redirectIds,
    );
  } catch (err) {
    build.abandon();
    throw err;
  }
}

/** Writes an ingest result (held in memory) as a snapshot: for tests and small tools. */
export function writeIngested(result: IngestResult, out: string, chunkWords: number, createdAt?: Date): BuildReport {
  return buildFromPages(result.articles, result.redirects, result, { out, chunkWords, createdAt });
}
