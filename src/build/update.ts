/**
 * update: a snapshot plus incremental dumps (and a list of deletions) → a new snapshot, at
 * the cost of the change plus a merge rather than a full build. The dumps' pages are
 * ingested and inverted as a build does it (bounded by the same memory budget); the base's
 * page table is read and its surviving rows kept, its text blocks copied (as they are
 * compressed, when every chunk in them survives), and its text index streamed term by term
 * through the build's merge, replaced and deleted chunks dropped and the rest renumbered,
 * together with the new pages' runs.
 *
 * The result is the snapshot a full build over the base's dumps and then these would make
 * (D-update in the report): chunks of the base's surviving pages numbered first, in their
 * order, then the new pages' in dump order; a newer revision replaces its page, an older or
 * equal one is ignored; the newest page holding a title keeps it. A base written before
 * redirects kept their page ids replaces its redirects by title only; one written before they
 * kept their revisions counts them older than anything in the dumps.
 */
import { basename, dirname } from "node:path";
import { type AnalysedArticle, buildParsingWorker } from "./analysed";
import {
  canonicalTitle,
  RedirectColumns,
  DumpError,
  endResting,
  ingest,
  INGEST_RULES,
  modifications,
  newer,
  sameWiki,
  siteOf,
  type IngestProgress,
  type IngestResult,
  type RedirectIdLists,
} from "../ingest";
import {
  type AppliedUpdate,
  type Container,
  eachRedirect,
  Growable,
  openSnapshot,
  type PageTable,
  type Snapshot,
  sectionsDamaged,
  SnapshotError,
  type SnapshotMeta,
  SnapshotWriter,
  textDictionaryOf,
  TextStore,
  viewOf,
} from "../snapshot";
import {
  IndexBuilder,
  logMemory,
  MEMORY_RULE,
  pageOrderSection,
  readShardData,
  type IndexBuildProgress,
} from "../search";
import { BUILD_RULES, checkOut, countTextless, stopIfAborted } from "./full";
import { DEFAULT_MEMORY_BYTES } from "../build-defaults";
import { type DeletionLine, type Deletions, unmatchedDeletions } from "./deletions";
import { commandLine } from "../invocation";
import { SortedRuns } from "../sorted-runs";
import { printableName } from "../printable";
import { checkOptions, integerFrom, type OptionRule } from "../errors";

export interface UpdateOptions {
  base: string;
  dumps: string[];
  deleted?: Deletions;
  out: string;
  /** Bytes the new pages' inversion may use before spilling a run. */
  memoryBytes?: number;
  workers?: number | undefined;
  createdAt?: Date | undefined;
  /** Bytes of the base's titles held before a sorted run is written (default 24 MB; tests force several runs). */
  titleRunBytes?: number;
  /** The incremental dumps' days (YYYYMMDD); default: read from their names. */
  days?: string[];
  onProgress?: ((progress: IngestProgress) => void) | undefined;
  progress?: IndexBuildProgress;
  /** Aborted, the update stops at its next safe point, removes its files and rejects with the signal's reason (D160). */
  signal?: AbortSignal | undefined;
}

export interface UpdateReport {
  meta: SnapshotMeta;
  bytes: number;
  runs: number;
  applied: AppliedUpdate;
  result: IngestResult;
  /** Pages kept without text: no chunk, never a hit nor a title's answer (D174). */
  textless: number;
  /** The --deleted list's lines that named no page or redirect of the base or the dumps: how many, the first (D45). */
  unmatchedDeletions?: UnmatchedDeletions;
}

type UnmatchedDeletions = ReturnType<typeof unmatchedDeletions>;

/** A page id's claim on its page and title, from the base (row) or the dumps (arrival). */
interface Holder {
  kind: "article" | "redirect";
  /** Unknown for the redirects of a base written without their ids. */
  pageId: number | undefined;
  /** Canonical. */
  title: string;
  revId: number;
  tsUnix: number;
  target?: string;
  row?: number;
  arrival?: number;
}

/** The day of an incremental dump, from its name (`enwiki-20240101-pages-meta-hist-incr.xml.bz2`). */
export function dayOfDump(spec: string): string | undefined {
  return /(?:^|[-_.])((?:19|20)\d{6})(?=[-_.])/.exec(basename(spec))?.[1];
}

/**
 * Opens the base and checks it whole (every section's hash): a damaged base would pass its damage on. Refused (no text
 * index, damaged) or stopped while checked, the base is let go before this throws, not left mapped until collected.
 */
async function openBase(
  path: string,
  signal: AbortSignal | undefined,
  progress: IndexBuildProgress | undefined,
): Promise<Snapshot> {
  const base = openSnapshot(path);
  try {
    // Read for minutes without a turn of the event loop (the copy, the merge): a copy over it mid-update waits while
    // the update lets go and stops saying why, where reading the file cut short killed it (SIGBUS, D84). Every read
    // of the base (through this container or another of its file) asks checkReadable first.
    base.container.leaseForReading(true);
    // Everything of the base is read through that mapping, the file opened once (its text copied, its index merged): a
    // file renamed onto its path mid-update is not read; one renamed between its header's read and its mapping is
    // refused by the container (D84).
    if (!base.container.has("index.text.meta"))
      throw new SnapshotError(
        `${printableName(path)} has no text index. Rebuild it with \`${commandLine("snapshot:build --dump <dump>")}\`.`,
      );
    // Minutes at the size of English Wikipedia, before any dump is read: in MB, as a stage of its own.
    const stage = `checking ${printableName(basename(path))} whole (MB)`;
    signal?.throwIfAborted();
    const damage = sectionsDamaged(
      await base.container.verify(
        progress && ((done, total) => progress(stage, Math.round(done / 1e6), Math.round(total / 1e6))),
        { readOnce: true, signal },
      ),
    );
    if (damage)
      throw new SnapshotError(
        `${printableName(path)} is corrupt (${damage}): nothing was written. Update from an intact copy, or rebuild it with \`${commandLine("snapshot:build --dump <dump>")}\`.`,
      );
    return base;
  } catch (err) {
    base.container.letGo();
    throw err;
  }
}

/** What an update makes before it seals its file (the writer and index builder made, to abandon on a failure). */
interface UpdateParts {
  /** The base, let go by a failed or stopped update (a finished one lets it go once its pages are copied). */
  base?: Snapshot;
  writer?: SnapshotWriter;
  index?: IndexBuilder;
}

/**
 * What an update takes, and the rule of each (D115), by the build's and the ingest's rules where it shares an option:
 * unchecked, a dump's path not in a list was read a character a dump, a deletion list given as its file's path failed
 * inside ("deleted?.ids.has"), a createdAt that is not a Date once the base was merged, an out naming a folder at the
 * rename, and days not YYYYMMDD were recorded in the meta, where snapshot:follow reads which days are applied.
 */
/** A Map of a deletion list (its ids or its titles), each key taken by `key` and held to the line that named it. */
function linedMap(m: unknown, key: (k: unknown) => boolean): boolean {
  return (
    m instanceof Map &&
    [...(m as Map<unknown, Partial<DeletionLine> | null>)].every(
      ([k, at]) => key(k) && Number.isInteger(at?.line) && typeof at?.text === "string",
    )
  );
}

const UPDATE_RULES: Record<keyof UpdateOptions, OptionRule> = {
  base: [(v) => typeof v === "string" && v !== "", "the base snapshot's path"],
  dumps: INGEST_RULES.dumps,
  deleted: [
    (v) => {
      const d = v as Deletions;
      return (
        typeof d === "object" &&
        d !== null &&
        typeof d.file === "string" &&
        linedMap(d.ids, integerFrom(0)) &&
        linedMap(d.titles, (t) => typeof t === "string")
      );
    },
    "a deletion list as readDeletions or parseDeletions makes it ({ file, ids: a Map of page ids, titles: a Map of titles, each to its line { line, text } })",
  ],
  out: BUILD_RULES.out,
  memoryBytes: MEMORY_RULE,
  workers: INGEST_RULES.workers,
  createdAt: BUILD_RULES.createdAt,
  titleRunBytes: [integerFrom(1), "an integer of 1 or more (bytes)"],
  days: [
    (v) => Array.isArray(v) && v.every((d) => typeof d === "string" && /^\d{8}$/.test(d)),
    "a list of days, each YYYYMMDD",
  ],
  onProgress: INGEST_RULES.onProgress,
  progress: BUILD_RULES.progress,
  signal: BUILD_RULES.signal,
};

/** A library caller's update options (D115), checked before the base or any dump is read; `out`'s folder made. */
function checkUpdate(o: UpdateOptions): void {
  const call = "updateSnapshot(options)";
  checkOptions(call, o, UPDATE_RULES);
  for (const name of ["base", "dumps", "out"] as const)
    if (o[name] === undefined) throw new TypeError(`${call}: options.${name} must be given.`);
  if (!o.dumps.length && !o.deleted)
    throw new DumpError("nothing to apply: give at least one --dump or a --deleted list.");
  checkOut(o.out, call);
}

export async function updateSnapshot(o: UpdateOptions): Promise<UpdateReport> {
  checkUpdate(o);
  o.signal?.throwIfAborted();
  const parts: UpdateParts = {};
  const abandon = () => {
    parts.base?.container.letGo();
    parts.index?.abandon();
    parts.writer?.abandon();
  };
  try {
    const { writer, meta: about, report } = await writeUpdate(o, parts);
    await stopIfAborted(o.signal);
    // Nothing of the base nor of the merge is held here (D127): collected before the page orders map the new file.
    Bun.gc(true);
    logMemory("page orders: start");
    const { meta, bytes } = writer.finish(about, (path) => [pageOrderSection(path, o.progress)]);
    logMemory("page orders: done");
    return { meta, bytes, ...report };
  } catch (err) {
    abandon();
    throw err;
  }
}

/**
 * Everything of an update but the seal (meta, page orders, rename): the base read through
 * and let go, the dumps ingested, the page table and the indexes written. Returns the writer,
 * the meta to seal with and the report; what it held (the base's mapping, each chunk's
 * number, the rows kept) goes when it returns.
 */
async function writeUpdate(
  o: UpdateOptions,
  parts: UpdateParts,
): Promise<{
  writer: SnapshotWriter;
  meta: Parameters<SnapshotWriter["finish"]>[0];
  report: Omit<UpdateReport, "meta" | "bytes">;
}> {
  const base = (parts.base = await openBase(o.base, o.signal, o.progress));
  logMemory("update: base opened");
  const wiki = { ...base.meta.wiki };
  for (const dump of o.dumps) {
    const site = await siteOf(dump);
    if (!sameWiki(wiki, site)) {
      throw new DumpError(
        `${dump} is a dump of ${site.host || site.dbname || "another wiki"}, but ${o.base} is of ${wiki.host || wiki.dbname}: nothing was written. Apply only that wiki's dumps.`,
      );
    }
    if (!wiki.dbname && site.dbname) wiki.dbname = site.dbname;
  }
  // The base's dictionary, so that its text blocks are copied as they are compressed.
  // Copied: the base's mapping is let go before the writer is done with it.
  const writer = (parts.writer = new SnapshotWriter(o.out, false, textDictionaryOf(base.container)?.slice()));
  const index = (parts.index = new IndexBuilder(wiki.lang, o.memoryBytes ?? DEFAULT_MEMORY_BYTES, dirname(o.out)));
  const arrivals: { pageId: number; revId: number }[] = [];
  let newChunks = 0;
  const empty: IngestResult = {
    wiki,
    articles: [],
    redirects: [],
    kept: { pageIds: new Uint32Array(0), revIds: new Float64Array(0) },
    redirectList: new RedirectColumns(),
    sources: [],
    truncated: false,
    failures: [],
    wikitextChars: 0,
    claims: [],
    redirectIds: new RedirectColumns().idLists,
  };
  const result = o.dumps.length
    ? await ingestDumps(o, base.meta.chunkWords, (a) => {
        base.container.checkReadable();
        // A revision the base already has (or older), or a page to delete: its text would be dead weight in the file.
        const row = base.pages.indexOf(a.pageId);
        if (row >= 0 && !newer(a, { tsUnix: base.pages.ts[row]!, revId: base.pages.revOf(row) })) return;
        if (o.deleted?.ids.has(a.pageId)) return;
        writer.add(a);
        index.addPage(a, (a as AnalysedArticle).analysed);
        arrivals.push({ pageId: a.pageId, revId: a.revId });
        newChunks += a.chunks.length;
      })
    : empty;
  await stopIfAborted(o.signal);
  // No turn of the event loop from here to the seal: the lease's signal, heard while the dumps were read, is said now.
  base.container.checkReadable();
  // The update weighs the dumps' claims (result.claims), not the redirects the ingest kept: their file goes now.
  result.redirectList.release();
  logMemory("update: dumps read");
  const merged = resolve(base, arrivals, result, o.deleted, dirname(o.out), o.titleRunBytes);
  const redirects = merged.redirects;
  let done: ReturnType<typeof writePages>;
  let baseDocuments: number;
  let textless: number;
  try {
    // The sort's garbage (its runs' buffers read) goes before the copy allocates.
    Bun.gc(true);
    logMemory("update: titles resolved");
    baseDocuments = readShardData(base.container, "index.text").documentCount;
    done = writePages(writer, base, merged, arrivals.length, baseDocuments, newChunks);
    textless = countTextless(done.chunkCounts);
    // Its pages read leave the resident set now; its lease is held until its text index is merged.
    base.container.dropResident();
    Bun.gc(true);
    logMemory("update: page table written");
    // Each chunk's number is held in `done` only: the index lets it go once the text index is merged.
    index.finish(writer.out, Object.assign(done, { redirects }), o.progress, {
      container: base.container,
      documents: baseDocuments,
      checkReadable: () => base.container.checkReadable(),
    });
    // The base is read: its mapping goes now, not when collected (its pages read would stay resident until then).
    base.container.checkReadable();
    base.container.letGo();
  } finally {
    // Their file, when the update failed before the title index let it go.
    redirects.close();
  }
  logMemory("update: indexes written");

  const createdAt = (o.createdAt ?? new Date()).toISOString();
  const applied: AppliedUpdate = {
    createdAt,
    base: base.meta.contentHash,
    dumps: o.dumps,
    days: o.days ?? o.dumps.map(dayOfDump).filter((d): d is string => d !== undefined),
    ...(o.deleted ? { deleted: { file: o.deleted.file, ...merged.deletedOfBase } } : {}),
    changed: merged.changed,
    added: merged.added,
    removed: merged.removed,
  };
  return {
    writer,
    meta: {
      createdAt,
      wiki,
      sources: [...base.meta.sources, ...result.sources],
      truncated: base.meta.truncated,
      indexedPages: done.pages,
      indexedChunks: done.documents,
      skippedRedirects: redirects.length,
      chunkWords: base.meta.chunkWords,
      modifications: modificationsAfter(base.meta, result.kept.pageIds.length > 0),
      base: base.meta.contentHash,
      updates: [...(base.meta.updates ?? []), applied],
    },
    report: { runs: index.runCount, applied, result, textless, unmatchedDeletions: merged.unmatched },
  };
}

/**
 * The base's surviving text copied, then its rows kept pointing at it (the k-th kept row is
 * arrival `arrivals + k`), then the page table written. Returns what the indexes need: the
 * merge's numbering of every chunk (the base's, by their number in its index, then the new
 * pages', by arrival), the titles and chunk counts; what it makes on the way (each base chunk's
 * number in the new text, the documents' order) goes when it returns.
 */
function writePages(
  writer: SnapshotWriter,
  base: Snapshot,
  merged: ReturnType<typeof resolve>,
  arrivals: number,
  baseDocuments: number,
  newChunks: number,
) {
  const pages = base.pages;
  const kept = merged.baseRows;
  const textNumber = copyText(writer, pages, kept, base.container);
  Bun.gc(true);
  logMemory("update: text copied");
  const firstTextOf = new Uint32Array(kept.length);
  for (const [k, r] of kept.entries()) {
    base.container.checkReadable();
    const row = pages.row(r);
    row.firstText = row.chunkSections.length ? textNumber[row.firstText]! : 0;
    firstTextOf[k] = row.firstText;
    writer.addRow(row);
    // Each row read leaves its arrays and strings behind (about 1 KB a row): collected as they go (fully,
    // every 16,384 rows: young collections left 220 MB of them at 1M articles, growing with the rows),
    // they do not pile up; the base's pages read leave the resident set as they go (it is read through once).
    if ((k & 0x3fff) === 0x3fff) {
      Bun.gc(true);
      base.container.dropResident();
    }
  }
  const byDoc = Uint32Array.from(kept.keys()).sort((x, y) => pages.firstDoc[kept[x]!]! - pages.firstDoc[kept[y]!]!);
  const docOrder = new Uint32Array(kept.length + merged.newArrivals.length);
  for (const [i, k] of byDoc.entries()) docOrder[i] = arrivals + k;
  docOrder.set(merged.newArrivals, kept.length);
  // Every arrival in docOrder is kept: the base's rows kept, the new pages that hold their titles.
  const inOrder = new Uint8Array(arrivals + kept.length);
  for (const a of docOrder) inOrder[a] = 1;
  // The last rows' garbage (up to 16,384 rows' sections and strings) goes before the page table allocates.
  Bun.gc(true);
  logMemory("update: rows added");
  const done = writer.finishPages((a) => inOrder[a] === 1, merged.redirects, docOrder, merged.redirectIds);
  const docOf = new Int32Array(baseDocuments + newChunks).fill(-1);
  for (const [k, r] of kept.entries()) {
    const from = pages.firstDoc[r]!;
    const text = firstTextOf[k]!;
    for (let c = 0; c < pages.chunkCounts[r]!; c++) docOf[from + c] = done.docOfText[text + c]!;
  }
  for (let t = 0; t < newChunks; t++) docOf[baseDocuments + t] = done.docOfText[t]!;
  return {
    docOfText: docOf,
    documents: done.documents,
    pages: done.pages,
    titles: done.titles,
    chunkCounts: done.chunkCounts,
  };
}

/**
 * What the updated snapshot's text has been through: the base's record, and (when this update
 * converted pages) anything today's ingest does that the base's build did not.
 */
function modificationsAfter(base: SnapshotMeta, converted: boolean): string[] {
  if (!converted) return base.modifications;
  return [...base.modifications, ...modifications(base.chunkWords).filter((m) => !base.modifications.includes(m))];
}

/**
 * Copies the text of the base's rows kept, read through the base's container (the file the update opened, not its
 * path again: it reopened the path, and read a file renamed onto it since). Returns each base chunk's number in the new
 * text store.
 */
function copyText(
  writer: SnapshotWriter,
  pages: PageTable,
  rows: Uint32Array,
  /** The base's container, whose lease guards its reads (D84). */
  base: Container,
): Int32Array {
  // No block cached: the base's text is read once.
  const text = new TextStore(base, 0);
  const alive = new Uint8Array(text.chunkCount);
  for (const r of rows) alive.fill(1, pages.firstText[r]!, pages.firstText[r]! + pages.chunkCounts[r]!);
  // Its blocks read leave the resident set as the copy goes (the whole base text would count otherwise). The copy's
  // garbage (a few objects a block) is collected as it goes: the collector, paced by the base's mapped bytes, let it
  // pile up to 500 MB at 1M articles.
  return writer.copyText(text, alive, () => {
    base.checkReadable();
    base.dropResident();
    Bun.gc(false);
  });
}

/** Ingests the dumps, streaming each article to `add`; a damaged dump is refused whole. */
async function ingestDumps(
  o: UpdateOptions,
  chunkWords: number,
  add: (a: IngestResult["articles"][number]) => void,
): Promise<IngestResult> {
  try {
    return await ingest({
      dumps: o.dumps,
      chunkWords,
      workers: o.workers,
      parsingWorker: buildParsingWorker(),
      onProgress: o.onProgress,
      onArticle: add,
      // Asked before each page is parsed: a safe point (D160).
      ready: () => {
        o.signal?.throwIfAborted();
        return undefined;
      },
      spillDir: dirname(o.out),
      listClaims: true,
      signal: o.signal,
    }).finally(endResting);
  } catch (err) {
    if (err instanceof DumpError && err.damaged) {
      // The damage's own sentence (every one ends in a period), without the build's advice after it.
      const said = err.message.split("\n")[0]!;
      throw new DumpError(
        `${said} Nothing was written: fetch the dump again (applying part of a day would leave pages stale).`,
        { damaged: true },
      );
    }
    throw err;
  }
}

/**
 * Which pages and redirects the new snapshot holds: as ingest resolves several dumps (the
 * newest revision of a page id wins; the newest page holding a title keeps it), the base's
 * pages and redirects weighed by their revisions (a base's redirects without them, older than
 * anything in the dumps; without page ids, replaced or deleted by title).
 *
 * The dumps' claims (a day's changes) are held; the base's pages and redirects (millions) are
 * read a row at a time and sorted by title in runs on disk (`dir`), as ingest sorts its
 * claims, not held as an object each. Of equal claims on a title, the first written keeps it:
 * the base's redirects without ids, then its pages, its redirects, and the dumps' new pages.
 */
function resolve(
  base: Snapshot,
  arrivals: { pageId: number; revId: number }[],
  result: IngestResult,
  deleted: Deletions | undefined,
  dir: string,
  runBytes = TITLE_RUN_BYTES,
): {
  baseRows: Uint32Array;
  newArrivals: Uint32Array;
  redirects: RedirectColumns;
  redirectIds: RedirectIdLists | undefined;
  changed: number;
  added: number;
  removed: number;
  deletedOfBase: { pages: number; redirects: number };
  unmatched: UnmatchedDeletions;
} {
  const pages = base.pages;
  const claims = new Map(result.claims);
  // The arrival holding each page id's newest converted revision (a later one replaces an earlier).
  const arrivalOf = new Map<number, number>();
  for (const [i, a] of arrivals.entries()) arrivalOf.set(a.pageId, i);
  /** A page id's holder once the dumps' claim on it (if any) is weighed: undefined when its page is left out. */
  const standing = (pageId: number, prior: Holder | undefined): Holder | undefined => {
    const c = claims.get(pageId);
    if (!c || (prior && !newer(c, prior))) return prior;
    if (c.kind === "redirect") return { ...c, pageId };
    const a = arrivalOf.get(pageId);
    // Deleted by id, its text was never added: still its holder, for write() to count it deleted.
    if (a === undefined && deleted?.ids.has(pageId))
      return { kind: "article", pageId, title: c.title, revId: c.revId, tsUnix: c.tsUnix };
    // Its wikitext could not be converted: a full build leaves the page out, older revision and all.
    if (a === undefined || arrivals[a]!.revId !== c.revId) return undefined;
    return { kind: "article", pageId, title: c.title, revId: c.revId, tsUnix: c.tsUnix, arrival: a };
  };
  // [kind (0 a base row, 1 a redirect, 2 an arrival), pageId (-1: unknown), revId, tsUnix, row or arrival], [title, target].
  const byTitle = new SortedRuns({
    besides: dir,
    numbers: 5,
    strings: 2,
    keyFields: 0,
    stringKey: true,
    budgetBytes: runBytes,
  });
  // What the list removed of the base, counted by what the base held (an article the dumps made a redirect is a page).
  const deletedOfBase = { pages: 0, redirects: 0 };
  // The list's ids and titles that named a page or redirect, to say the lines that named none (D45).
  const matchedIds = new Set<number>();
  const matchedTitles = new Set<string>();
  let written = 0;
  const write = (h: Holder | undefined, inBase?: keyof typeof deletedOfBase) => {
    if (!h) return;
    const byId = h.pageId !== undefined && deleted?.ids.has(h.pageId);
    const titled = deleted?.titles.has(h.title);
    if (byId || titled) {
      if (byId) matchedIds.add(h.pageId!);
      if (titled) matchedTitles.add(h.title);
      if (inBase) deletedOfBase[inBase]++;
      return;
    }
    const kind = h.kind === "redirect" ? 1 : h.row !== undefined ? 0 : 2;
    byTitle.push([kind, h.pageId ?? -1, h.revId, h.tsUnix, h.row ?? h.arrival ?? -1], [h.title, h.target ?? ""]);
    // A copy over the base waits on its lease: answered within a few thousand rows (D84).
    if ((written & 0xfff) === 0) base.container.checkReadable();
    // Each row read leaves a few strings behind: collected as they go (fully, as the rows' copy does), they
    // do not pile up; the base's pages read leave the resident set as they go (it is read through once).
    if ((++written & 0xffff) === 0) {
      Bun.gc(true);
      base.container.dropResident();
    }
  };
  const baseIds = new Set<number>();
  const section = (name: string) =>
    base.container.has(name) ? viewOf(Uint32Array, base.container.section(name)) : undefined;
  const redirectIds = section("redirects.pageId");
  // The revisions that made them redirects; a base written without them: older than anything in the dumps.
  const redirectRevs = section("redirects.rev");
  const redirectTimes = section("redirects.ts");
  // The base's redirects, read one at a time.
  const baseRedirect = (title: string, target: string, i: number): Holder => ({
    kind: "redirect",
    pageId: redirectIds?.[i],
    title,
    target,
    revId: redirectRevs?.[i] || -Infinity,
    tsUnix: redirectTimes?.[i] || -Infinity,
  });
  try {
    if (!redirectIds)
      eachRedirect(base.container, (title, target, i) => write(baseRedirect(title, target, i), "redirects"));
    for (let r = 0; r < pages.length; r++) {
      const pageId = pages.ids[r]!;
      if (claims.has(pageId)) baseIds.add(pageId);
      const title = canonicalTitle(pages.title(r));
      const holder: Holder = { kind: "article", pageId, title, revId: pages.revOf(r), tsUnix: pages.ts[r]!, row: r };
      write(standing(pageId, holder), "pages");
    }
    if (redirectIds)
      eachRedirect(base.container, (title, target, i) => {
        if (claims.has(redirectIds[i]!)) baseIds.add(redirectIds[i]!);
        write(standing(redirectIds[i]!, baseRedirect(title, target, i)), "redirects");
      });
    for (const pageId of claims.keys()) if (!baseIds.has(pageId)) write(standing(pageId, undefined));
  } catch (err) {
    byTitle.close();
    throw err;
  }
  const baseRows = new Growable(Uint32Array);
  const newArrivals = new Growable(Uint32Array);
  // To a file beside the output (the base's millions of redirects are held to the title index otherwise).
  const redirects = new RedirectColumns(dir);
  let everyId = true;
  let holder: { numbers: Float64Array; title: Uint8Array; target: Uint8Array } | undefined;
  const take = () => {
    const [kind, pageId, revId, tsUnix, at] = holder!.numbers;
    if (kind === 0) baseRows.push(at!);
    else if (kind === 2) newArrivals.push(at!);
    else if (holder!.target.length && !sameBytes(holder!.target, holder!.title)) {
      redirects.push(holder!.title, holder!.target, Math.max(0, pageId!), revId!, tsUnix!);
      if (pageId! < 0) everyId = false;
    }
  };
  try {
    for (const record of byTitle.drain()) {
      const title = record.string(0);
      const sameTitle = holder !== undefined && sameBytes(title, holder.title);
      const v = record.numbers;
      if (
        sameTitle &&
        !newer({ tsUnix: v[3]!, revId: v[2]! }, { tsUnix: holder!.numbers[3]!, revId: holder!.numbers[2]! })
      )
        continue;
      if (holder && !sameTitle) take();
      // Copied: the record's views go with the next one.
      holder = { numbers: v.slice(), title: title.slice(), target: record.string(1).slice() };
    }
    if (holder) take();
  } catch (err) {
    redirects.close();
    throw err;
  }
  redirects.trim();
  const kept = { baseRows: baseRows.view().sort(), newArrivals: newArrivals.view().sort() };
  let changed = 0;
  for (const a of kept.newArrivals) if (pages.indexOf(arrivals[a]!.pageId) >= 0) changed++;
  // A base page not kept by its row nor replaced by an arrival of its id is removed.
  const removed = pages.length - kept.baseRows.length - changed;
  return {
    ...kept,
    redirects,
    redirectIds: everyId ? redirects.idLists : undefined,
    changed,
    added: kept.newArrivals.length - changed,
    removed,
    deletedOfBase,
    unmatched: deleted ? unmatchedDeletions(deleted, matchedIds, matchedTitles) : undefined,
  };
}

/** Bytes of titles held before they are sorted and written as a run. */
const TITLE_RUN_BYTES = 24 << 20;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
