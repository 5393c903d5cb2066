/**
 * Builds the search indexes into a snapshot file in bounded memory, as Lucene and Tantivy
 * build segments: chunks are inverted in memory until the budget is reached, each batch
 * written as a sorted run to a temporary folder, and the runs merged term by term at the end.
 * Runs hold consecutive chunks, so a term's documents come out of the merge already in
 * order; chunks of pages left out (an older revision, a title another page took) are dropped
 * and the rest renumbered, which keeps that order.
 */
import { makeScratch, removeScratch } from "../../files";
import { checkOption } from "../../errors";
import { MEMORY_RULE } from "./memory";
import { basename, join } from "node:path";
import { type Container, ContainerWriter, type RedirectList, Spool } from "../../snapshot";
import { textShardOptions, titleShardOptions } from "../postings/fields";
import type { ShardOptions } from "../postings/shard-types";
import { buildShard, Inversion } from "./invert";
import { type AnalysedPage, chunkFields, collectEvery, type PageChunks } from "./analysis";
import { RunSorter, writeRun } from "./runs";
import { writeShardData } from "../postings/store";
import { resolveTitles, type TitleList } from "../text/title-keys";
import { writeTitleLookup } from "../postings/titles";
import { logMemory } from "./memory-log";
import { type IndexBuildProgress, mergeRuns, RunCursor, TITLE_INDEX } from "./merge";

/**
 * Memory a run takes per character of its chunks' text (postings and position columns, maps),
 * as measured when the text itself was held too (83 M characters took the process from 404 MB
 * to 1,292 MB, 10.7 bytes a character), with some margin. Kept so that runs are cut where they
 * were: the same runs, the same file. Now that the text is not held, it over-counts (200k
 * chunks at 500M peaked at 0.70 GB, 0.85 before), which leaves room for the run the worker is
 * writing while the next is inverted.
 */
const BYTES_PER_TEXT_BYTE = 13;

/** A base's text index merged first (an update), read through the container the update opened, never its path again
 * (D84); checkReadable throws once its lease is broken, asked each key. */
type BaseIndex = { container: Container; documents: number; checkReadable?: () => void };

/** Analysed pages' bytes taken between two collections of the heap (collectEvery). */
const ANALYSED_GARBAGE = 64 << 20;

export class IndexBuilder {
  private readonly dir: string;
  private readonly runs: string[] = [];
  private readonly options: ShardOptions;
  /** The run being inverted: each chunk is inverted as it arrives, its text not kept. */
  private inversion: Inversion;
  /** Characters of text the run has taken (with a little for each chunk): what the budget counts. */
  private pendingBytes = 0;
  /** Collects the analysed pages taken, every ANALYSED_GARBAGE bytes of them. */
  private readonly collectAnalysed = collectEvery(ANALYSED_GARBAGE);
  private base = 0;
  readonly fields: string[];
  /** In the background, the worker sorting and writing the runs; gone once settled. */
  private sorter: RunSorter | undefined;
  /** Runs cut while the worker was busy, in order: each goes to it once it is done with the one before. */
  private readonly queued: { path: string; base: number; inversion: Inversion }[] = [];

  /**
   * `background`: runs are sorted and written by a worker while the next one is inverted here
   * (then ready() before each page is sent to be parsed, and settle() before finish()).
   */
  constructor(
    private readonly lang: string,
    private readonly memoryBytes: number,
    besides: string,
    background = false,
  ) {
    // A program's budget (the root package exports this class): NaN or none never spilled a run, -1 one a page.
    const call = "new IndexBuilder(lang, memoryBytes, besides)";
    if (memoryBytes === undefined) throw new TypeError(`${call}: memoryBytes must be given.`);
    checkOption(call, "memoryBytes", memoryBytes, MEMORY_RULE);
    this.dir = makeScratch(besides, "runs");
    this.options = textShardOptions(lang);
    this.fields = this.options.fields;
    this.inversion = new Inversion(this.options);
    if (background) this.sorter = new RunSorter((path) => this.written(path));
  }

  /** How many runs were spilled so far. */
  get runCount(): number {
    return this.runs.length;
  }

  /** Adds a page's chunks, in the order the text store numbers them (`analysed`: by its parsing worker, D139). */
  addPage(page: PageChunks, analysed?: AnalysedPage): void {
    if (analysed) {
      this.inversion.addAnalysed(analysed);
      this.collectAnalysed(analysed);
    }
    for (let c = 0; c < page.chunks.length; c++) {
      const doc = chunkFields(page, c);
      if (!analysed) this.inversion.add(doc);
      const { text, section, title } = doc;
      this.pendingBytes += text!.length + section!.length + title!.length + 64;
    }
    this.sorter?.throwIfFailed();
    if (!this.full) return;
    if (!this.sorter) {
      this.spill();
      return;
    }
    // Cut where the budget says, whatever the worker is doing: the same runs as without it.
    this.queued.push(this.nextRun());
    if (!this.sorter.busy) this.handOff();
  }

  /** Whether the run being inverted fills the budget. */
  private get full(): boolean {
    return this.pendingBytes * BYTES_PER_TEXT_BYTE >= this.memoryBytes;
  }

  /**
   * Undefined when more pages may come now; otherwise a promise of when they may: a run is cut
   * and waits while the worker still writes the one before. Pages already being parsed still
   * come meanwhile (a few batches).
   */
  ready(): Promise<void> | undefined {
    if (!this.sorter) return undefined;
    return this.sorter.failed || this.queued.length ? this.sorter.next() : undefined;
  }

  /**
   * Waits for the worker's runs, the run inverted so far among them (no more pages come): its
   * inversion is let go before what follows the pages allocates. The runs are cut where they were.
   */
  async settle(): Promise<void> {
    const sorter = this.sorter;
    if (!sorter) return this.spill();
    if (this.inversion.count) {
      this.queued.push(this.nextRun());
      if (!sorter.busy) this.handOff();
    }
    await sorter.idle();
    sorter.close();
    this.sorter = undefined;
  }

  /** The run inverted so far: its file and first chunk. A new run begins. */
  private nextRun(): { path: string; base: number; inversion: Inversion } {
    const run = { path: join(this.dir, `run-${this.runs.length}.bin`), base: this.base, inversion: this.inversion };
    this.runs.push(run.path);
    this.base += run.inversion.count;
    this.inversion = new Inversion(this.options);
    this.pendingBytes = 0;
    return run;
  }

  /** The run inverted so far, sorted and written to its file here. */
  private spill(): void {
    if (!this.inversion.count) return;
    // The ingest's garbage goes before the sort allocates: it would otherwise add to the peak.
    Bun.gc(true);
    logMemory(`run ${this.runs.length}: before the sort`);
    const { path, base, inversion } = this.nextRun();
    writeRun(path, inversion, base);
    logMemory(`run ${this.runs.length - 1}: written`);
  }

  /** The first run waiting, sent to the worker to be sorted and written. */
  private handOff(): void {
    const { path, base, inversion } = this.queued.shift()!;
    logMemory(`${basename(path)}: to the worker`);
    this.sorter!.start(path, this.lang, base, inversion);
    // What the worker was not sent (the run's token tables) and the ingest's garbage go now:
    // the typed arrays hold most of it, which the collector, left alone, let pile up to 1 GB.
    Bun.gc(true);
  }

  /** A run is in its file: the next one waiting goes to the worker at once. */
  private written(path: string): void {
    logMemory(`${basename(path)}: written by the worker`);
    if (this.queued.length) this.handOff();
  }

  /**
   * Merges the runs into `out` (sections index.text.*), keeping the chunks docOfText keeps,
   * then builds the title index and the title lookup from the pages kept. With `base` (an
   * update), the text index of that snapshot file is merged in first, as a run of its
   * `documents` chunks numbered before the runs' (docOfText covers both). `kept.docOfText`
   * is let go (replaced by an empty array) once the text index is merged: a caller that holds
   * it only in `kept` does not hold it (4 bytes a chunk) through the title index.
   */
  finish(
    out: ContainerWriter,
    kept: {
      docOfText: Int32Array;
      documents: number;
      titles: TitleList;
      chunkCounts: ArrayLike<number>;
      redirects: RedirectList;
    },
    progress: IndexBuildProgress = () => {},
    base?: BaseIndex,
  ): void {
    try {
      if (this.sorter) throw new Error("index: finish() while runs are being written: settle() first");
      this.spill();
      logMemory("merge: start");
      this.mergeText(out, kept, progress, base);
      kept.docOfText = new Int32Array(0);
      logMemory("merge: done");
      // The merge's mapped runs and buffers are garbage now. Collected before the title index
      // allocates, they no longer add to the build's peak (at 5M chunks they did: 2.70 GB).
      Bun.gc(true);
      logMemory("merge: collected");
      const { aliasText, lookup } = this.resolveTitles(kept);
      // The redirects' titles are in the spool now: the rest of the build has no use for them.
      kept.redirects.release?.();
      Bun.gc(true);
      logMemory("title index: keys resolved");
      this.titleIndex(out, kept.titles, aliasText, progress);
      logMemory("title index: merged");
      writeTitleLookup(out, lookup);
      logMemory("title index: done");
    } finally {
      this.abandon();
    }
  }

  /**
   * Every title key and redirect resolved once, for the aliases and the lookup; the keys are
   * let go before the inversion allocates, and the aliases' lists (4 bytes a page and a
   * redirect) once spooled.
   */
  private resolveTitles(kept: { titles: TitleList; chunkCounts: ArrayLike<number>; redirects: RedirectList }) {
    const { aliases, lookup } = resolveTitles(kept.chunkCounts, kept.redirects, kept.titles, this.dir);
    return { aliasText: spoolAliases(join(this.dir, "aliases"), kept.titles.length, kept.redirects, aliases), lookup };
  }

  /**
   * The title index (index.titles), built as the text index is: titles and their aliases
   * inverted a batch at a time within the budget, each batch a run, the runs merged. One
   * title index inverted whole held about 1 KB per title at its end (with its redirects).
   */
  private titleIndex(
    out: ContainerWriter,
    titles: TitleList,
    aliasText: AliasReader,
    progress: IndexBuildProgress,
  ): void {
    const options = titleShardOptions(this.lang);
    const cursors: RunCursor[] = [];
    try {
      this.titleRuns(titles, aliasText, options, cursors, progress);
    } finally {
      aliasText.close();
    }
    const documents = titles.length;
    const identity = new Int32Array(documents);
    for (let i = 0; i < documents; i++) identity[i] = i;
    mergeRuns(out, this.dir, cursors, options, identity, documents, progress, TITLE_INDEX);
  }

  /** The title index's runs, cut within the budget: each title's aliases read in turn from their spool. */
  private titleRuns(
    titles: TitleList,
    aliasText: AliasReader,
    options: ShardOptions,
    cursors: RunCursor[],
    progress: IndexBuildProgress,
  ): void {
    for (let start = 0; start < titles.length || !cursors.length; ) {
      let end = start;
      const runAliases: string[] = [];
      for (
        let bytes = 0;
        end < titles.length && (end === start || bytes * BYTES_PER_TEXT_BYTE < this.memoryBytes);
        end++
      ) {
        const aliases = aliasText.next();
        runAliases.push(aliases);
        // Each alias's length and one: what the redirects' titles counted one at a time.
        bytes += titles.at(end)!.length + 64 + aliases.length + (aliases ? 1 : 0);
      }
      // The last run's garbage goes before this one allocates, as in spill().
      Bun.gc(true);
      const data = buildShard(
        end - start,
        (i) => ({ title: titles.at(start + i)!, aliases: runAliases[i]! }),
        options,
        (done) => progress("title index", start + done, titles.length),
      );
      const path = join(this.dir, `titles-${cursors.length}.bin`);
      const run = new ContainerWriter(path);
      writeShardData(run, "run", data);
      run.finish({ base: start, count: end - start });
      cursors.push(new RunCursor(path, "run", 0, cursors.length));
      start = end;
    }
  }

  /** The runs (and a base snapshot's text index) merged into `out`'s text index: the cursors live only here. */
  private mergeText(
    out: ContainerWriter,
    kept: { docOfText: Int32Array; documents: number },
    progress: IndexBuildProgress,
    base?: BaseIndex,
  ): void {
    // A base snapshot's text index (an update) is the oldest run: equal keys take it first.
    const sources = this.runs.map((path) => ({ path, prefix: "run", offset: base?.documents ?? 0 }));
    const cursors = sources.map((s, rank) => new RunCursor(s.path, s.prefix, s.offset, rank + (base ? 1 : 0)));
    if (base) cursors.unshift(new RunCursor(base.container, "index.text", 0, 0, base.checkReadable));
    mergeRuns(out, this.dir, cursors, this.options, kept.docOfText, kept.documents, progress);
  }

  /** Removes the runs (after success, failure or an interruption). */
  abandon(): void {
    const remove = () => removeScratch(this.dir);
    // Removed now, and again once the worker is gone: it may have been writing a run.
    this.sorter?.close(remove);
    this.sorter = undefined;
    remove();
  }
}

/**
 * Each title's aliases (its redirects' titles, a line each), written in title order to `path`:
 * the title index reads them in that order, a run at a time, and the redirects' strings need
 * not be held while it is inverted (at English Wikipedia's 11 million redirects, most of what
 * the build held per article then).
 */
function spoolAliases(
  path: string,
  count: number,
  redirects: RedirectList,
  aliases: { start: Uint32Array; list: Uint32Array },
): AliasReader {
  const bytes = new Spool(path, Uint8Array, 1 << 20);
  const lengths = new Uint32Array(count);
  const encoder = new TextEncoder();
  try {
    for (let i = 0; i < count; i++) {
      const text = Array.from(aliases.list.subarray(aliases.start[i]!, aliases.start[i + 1]!), (r) =>
        redirects.title(r),
      ).join("\n");
      if (!text) continue;
      const encoded = encoder.encode(text);
      lengths[i] = encoded.length;
      bytes.pushAll(encoded);
      if ((i & 0xffff) === 0xffff) Bun.gc(false);
    }
    bytes.flush();
  } catch (err) {
    bytes.close();
    throw err;
  }
  return new AliasReader(bytes, lengths);
}

/** Reads the spooled aliases back in order (next()), through a buffer of its own. */
class AliasReader {
  private readonly decoder = new TextDecoder();
  private buffer = new Uint8Array(1 << 20);
  /** Bytes of the buffer read from the file, and how many of them were handed out. */
  private filled = 0;
  private taken = 0;
  /** Where the next read of the file starts. */
  private at = 0;
  private index = 0;

  constructor(
    private readonly file: Spool<Uint8Array>,
    private readonly lengths: Uint32Array,
  ) {}

  /** The next title's aliases, a line each ("" when it has none). */
  next(): string {
    const n = this.lengths[this.index++]!;
    if (!n) return "";
    if (this.filled - this.taken < n) this.refill(n);
    const text = this.decoder.decode(this.buffer.subarray(this.taken, this.taken + n));
    this.taken += n;
    return text;
  }

  /** Keeps the bytes not yet handed out and reads on, so that `need` bytes are in the buffer. */
  private refill(need: number): void {
    const left = this.buffer.subarray(this.taken, this.filled);
    if (need > this.buffer.length) {
      const grown = new Uint8Array(need);
      grown.set(left);
      this.buffer = grown;
    } else this.buffer.copyWithin(0, this.taken, this.filled);
    this.filled = left.length;
    this.taken = 0;
    while (this.filled < need) {
      const n = this.file.readAt(this.buffer.subarray(this.filled), this.at);
      if (n <= 0) throw new Error("title index: the aliases' spool ended early");
      this.at += n;
      this.filled += n;
    }
  }

  close(): void {
    this.file.close();
  }
}
