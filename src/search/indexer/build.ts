/**
 * Builds the search indexes into a snapshot file in bounded memory, as Lucene and Tantivy
 * build segments: chunks are inverted in memory until the budget is reached, each batch
 * written as a sorted run to a temporary folder, and the runs merged term by term at the end.
 * Runs hold consecutive chunks, so a term's documents come out of the merge already in
 * order; chunks of pages left out (an older revision, a title another page took) are dropped
 * and the rest renumbered, which keeps that order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import {
  type Container,
  ContainerWriter,
  MAX_SECTION_BYTES,
  openContainer,
  type RedirectList,
  type SnapshotSection,
} from "../../snapshot";
import { textShardOptions, titleShardOptions } from "../index/fields";
import { buildShard } from "./invert";
import type { ShardData, ShardOptions } from "../index/shard-types";
import { Inversion } from "./invert";
import { RunSorter, writeRun } from "./runs";
import { PostingsReader, type PostingsCursor } from "../index/postings";
import { PostingsWriter } from "../index/postings-writer";
import { readShardData, writeShardData, writeShardTableSources } from "../index/store";
import { Spool } from "./spool";
import { resolveTitles, type TitleList } from "../text/title-keys";
import { writeTitleLookup } from "../index/titles";
import { Vocabulary } from "../index/vocabulary";
import { TermLists, TermListsWriter } from "../index/term-lists";
import { logMemory } from "./memory-log";

/**
 * Memory a run takes per character of its chunks' text (postings and position columns, maps),
 * as measured when the text itself was held too (83 M characters took the process from 404 MB
 * to 1,292 MB, 10.7 bytes a character), with some margin. Kept so that runs are cut where they
 * were: the same runs, the same file. Now that the text is not held, it over-counts (200k
 * chunks at 500M peaked at 0.70 GB, 0.85 before), which leaves room for the run the worker is
 * writing while the next is inverted.
 */
const BYTES_PER_TEXT_BYTE = 13;
/**
 * Documents and positions (a byte or two each) the merge reads between two remappings of the runs. Pages of a mapped file stay
 * in the process's resident set once read (until the kernel needs them); remapping the runs
 * and collecting the old mappings gives them back, so the merge's resident set stays flat
 * however many runs there are.
 */
const REMAP_ENTRIES = 64 << 20;

/** Where a merge writes: its sections' prefix, the stage its progress names, and whether its postings parts are padded. */
interface MergeTarget {
  prefix: string;
  stage: string;
  padParts: boolean;
}
const TEXT_INDEX: MergeTarget = { prefix: "index.text", stage: "merging the text index (terms)", padParts: false };
/** The title index, merged from runs, comes out as the one shard built in memory it replaced wrote it: parts padded. */
const TITLE_INDEX: MergeTarget = { prefix: "index.titles", stage: "merging the title index (terms)", padParts: true };

export type IndexBuildProgress = (stage: string, done: number, total: number) => void;

export class IndexBuilder {
  private readonly dir: string;
  private readonly runs: string[] = [];
  private readonly options: ShardOptions;
  /** The run being inverted: each chunk is inverted as it arrives, its text not kept. */
  private inversion: Inversion;
  /** Characters of text the run has taken (with a little for each chunk): what the budget counts. */
  private pendingBytes = 0;
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
    this.dir = mkdtempSync(join(besides, ".tome-runs-"));
    this.options = textShardOptions(lang);
    this.fields = this.options.fields;
    this.inversion = new Inversion(this.options);
    if (background) this.sorter = new RunSorter((path) => this.written(path));
  }

  /** How many runs were spilled so far. */
  get runCount(): number {
    return this.runs.length;
  }

  /** Adds a page's chunks, in the order the text store numbers them. */
  addPage(title: string, sections: SnapshotSection[], chunks: { section: number; text: string }[]): void {
    for (const c of chunks) {
      const section = sections[c.section]?.heading ?? "";
      this.inversion.add({ text: c.text, section, title });
      this.pendingBytes += c.text.length + section.length + title.length + 64;
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

  /** Waits for the worker's runs (then writes the last one here). */
  async settle(): Promise<void> {
    const sorter = this.sorter;
    if (!sorter) return;
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
   * `documents` chunks numbered before the runs' (docOfText covers both).
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
    base?: { path: string; documents: number },
  ): void {
    try {
      if (this.sorter) throw new Error("index: finish() while runs are being written: settle() first");
      this.spill();
      logMemory("merge: start");
      this.mergeText(out, kept, progress, base);
      logMemory("merge: done");
      // The merge's mapped runs and buffers are garbage now. Collected before the title index
      // allocates, they no longer add to the build's peak (at 5M chunks they did: 2.70 GB).
      Bun.gc(true);
      logMemory("merge: collected");
      // Every title key and redirect resolved once, for the aliases and the lookup; the keys are let go before the inversion allocates.
      const { aliases, lookup } = resolveTitles(kept.chunkCounts, kept.redirects, kept.titles);
      Bun.gc(true);
      logMemory("title index: keys resolved");
      this.titleIndex(out, kept.titles, kept.redirects, aliases, progress);
      logMemory("title index: merged");
      writeTitleLookup(out, lookup);
      logMemory("title index: done");
    } finally {
      this.abandon();
    }
  }

  /**
   * The title index (index.titles), built as the text index is: titles and their aliases
   * inverted a batch at a time within the budget, each batch a run, the runs merged. One
   * title index inverted whole held about 1 KB per title at its end (with its redirects).
   */
  private titleIndex(
    out: ContainerWriter,
    titles: TitleList,
    redirects: RedirectList,
    aliases: { start: Uint32Array; list: Uint32Array },
    progress: IndexBuildProgress,
  ): void {
    const options = titleShardOptions(this.lang);
    const aliasesOf = (i: number) =>
      Array.from(aliases.list.subarray(aliases.start[i]!, aliases.start[i + 1]!), (r) => redirects.title(r)).join("\n");
    const cursors: RunCursor[] = [];
    for (let start = 0; start < titles.length || !cursors.length; ) {
      let end = start;
      for (
        let bytes = 0;
        end < titles.length && (end === start || bytes * BYTES_PER_TEXT_BYTE < this.memoryBytes);
        end++
      ) {
        bytes += titles.at(end)!.length + 64;
        for (let a = aliases.start[end]!; a < aliases.start[end + 1]!; a++)
          bytes += redirects.title(aliases.list[a]!).length + 1;
      }
      // The last run's garbage goes before this one allocates, as in spill().
      Bun.gc(true);
      const data = buildShard(
        end - start,
        (i) => ({ title: titles.at(start + i)!, aliases: aliasesOf(start + i) }),
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
    const documents = titles.length;
    const identity = new Int32Array(documents);
    for (let i = 0; i < documents; i++) identity[i] = i;
    mergeRuns(out, this.dir, cursors, options, identity, documents, progress, TITLE_INDEX);
  }

  /** The runs (and a base snapshot's text index) merged into `out`'s text index: the cursors live only here. */
  private mergeText(
    out: ContainerWriter,
    kept: { docOfText: Int32Array; documents: number },
    progress: IndexBuildProgress,
    base?: { path: string; documents: number },
  ): void {
    // A base snapshot's text index (an update) is the oldest run: equal keys take it first.
    const sources = this.runs.map((path) => ({ path, prefix: "run", offset: base?.documents ?? 0 }));
    if (base) sources.unshift({ path: base.path, prefix: "index.text", offset: 0 });
    const cursors = sources.map((s, rank) => new RunCursor(s.path, s.prefix, s.offset, rank));
    mergeRuns(out, this.dir, cursors, this.options, kept.docOfText, kept.documents, progress);
  }

  /** Removes the runs (after success, failure or an interruption). */
  abandon(): void {
    const remove = () => rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
    // Removed now, and again once the worker is gone: it may have been writing a run.
    this.sorter?.close(remove);
    this.sorter = undefined;
    remove();
  }
}

/**
 * A run's vocabulary, one key at a time, from its mapped bytes (a spilled run, or a
 * snapshot's text index; keys compared in place, never made strings). Its chunk i is number
 * base + i in the merge's docOfText.
 */
class RunCursor {
  vocabulary!: Vocabulary;
  term = -1;
  data!: ShardData;
  lists!: TermLists;
  postings!: PostingsCursor;
  readonly base: number;
  constructor(
    private readonly path: string,
    private readonly prefix: string,
    offset: number,
    /** The run's place among the runs: equal keys are taken in this order. */
    readonly rank: number,
  ) {
    const meta = this.map().meta as { base?: number };
    // A spilled run's metadata says where its chunks start; a snapshot's index starts at 0.
    this.base = offset + (prefix === "run" ? meta.base! : 0);
  }
  /** Maps the run afresh (the old mapping goes when collected), keeping the place. */
  map(): Container {
    const container = openContainer(this.path);
    this.data = readShardData(container, this.prefix);
    this.lists = new TermLists(this.data.lists);
    this.postings = new PostingsReader(this.data.postings).cursor();
    this.vocabulary = new Vocabulary(this.data.vocabulary);
    return container;
  }
  /** Moves to the next key; false at the end. */
  next(): boolean {
    if (this.term + 1 >= this.vocabulary.size) return false;
    this.term++;
    return true;
  }
  /** How this cursor's key compares with another's. */
  compare(other: RunCursor): number {
    return this.vocabulary.compareWith(this.term, other.vocabulary, other.term);
  }
}

/**
 * Postings written as they come into sections `${prefix}.postings.N`, through a buffer: the
 * writer hands over one list at a time, most of them a few bytes.
 */
class PostingsSections {
  private readonly buffer = new Uint8Array(4 << 20);
  private used = 0;
  private part = -1;
  private partBytes = 0;
  constructor(
    private readonly out: ContainerWriter,
    private readonly prefix: string,
    /** Whether each part is padded to whole 8-byte words, as a shard built in memory writes them (memoryPostings). */
    private readonly padParts = false,
  ) {}
  /** The PostingsWriter sink. */
  readonly sink = (part: number, bytes: Uint8Array, length: number): void => {
    if (part !== this.part) {
      this.close();
      this.out.begin(`${this.prefix}.postings.${part}`);
      this.part = part;
      this.partBytes = 0;
    }
    this.partBytes += length;
    if (this.used + length > this.buffer.length) this.flush();
    if (length > this.buffer.length) this.out.write(bytes.subarray(0, length));
    else if (length <= 64) {
      // Most lists are a few bytes: copied without making a subarray object for each.
      const buffer = this.buffer;
      for (let i = 0, at = this.used; i < length; i++) buffer[at + i] = bytes[i]!;
      this.used += length;
    } else {
      this.buffer.set(bytes.subarray(0, length), this.used);
      this.used += length;
    }
  };
  private flush(): void {
    if (this.used) this.out.write(this.buffer.subarray(0, this.used));
    this.used = 0;
  }
  private close(): void {
    if (this.part < 0) return;
    this.flush();
    if (this.padParts && this.partBytes % 8) this.out.write(new Uint8Array(8 - (this.partBytes % 8)));
    this.out.end();
  }
  /** Ends the last part: the number of parts written. */
  finish(): number {
    this.close();
    return this.part + 1;
  }
}

/**
 * Merges the runs into out's sections index.text.*. The term tables (vocabulary, list
 * addresses and sizes) go through spools in `dir` rather than memory: they grow with the
 * vocabulary, and are written after the postings.
 */
function mergeRuns(
  out: ContainerWriter,
  dir: string,
  cursors: RunCursor[],
  options: ShardOptions,
  docOfText: Int32Array,
  documents: number,
  progress: IndexBuildProgress,
  into: MergeTarget = TEXT_INDEX,
): void {
  const fields = options.fields;
  const F = fields.length;
  const sections = new PostingsSections(out, into.prefix, into.padParts);
  const writer = new PostingsWriter(sections.sink, MAX_SECTION_BYTES - 8);
  const keepsPositions = fields.map((f) => options.positionFields?.includes(f) ?? false);
  const lists = {
    first: new Spool(join(dir, `${into.prefix}.lists.first`), Uint32Array),
    fields: new Spool(join(dir, `${into.prefix}.lists.fields`), Uint8Array),
    at: new Spool(join(dir, `${into.prefix}.lists.at`), Float64Array),
    df: new Spool(join(dir, `${into.prefix}.lists.df`), Uint32Array),
  };
  const vocabularyChars = new Spool(join(dir, `${into.prefix}.vocabulary.chars`), Uint16Array);
  const vocabularyStarts = new Spool(join(dir, `${into.prefix}.vocabulary.starts`), Uint32Array);
  try {
    mergeInto(
      cursors,
      writer,
      keepsPositions,
      docOfText,
      { lists: new TermListsWriter(lists), vocabularyChars, vocabularyStarts },
      (terms) => progress(into.stage, terms, terms),
    );
    const postingsParts = sections.finish();
    logMemory("merge: postings written");
    const fieldLengths = new Uint16Array(F * documents);
    for (const c of cursors) {
      const n = c.data.documentCount;
      for (let i = 0; i < n; i++) {
        const doc = docOfText[c.base + i]!;
        if (doc < 0) continue;
        for (let f = 0; f < F; f++) fieldLengths[f * documents + doc] = c.data.fieldLengths[f * n + i]!;
      }
    }
    const terms = vocabularyStarts.length - 1;
    writeShardTableSources(
      out,
      into.prefix,
      { fields, documentCount: documents, terms, postingsParts },
      { vocabularyChars, vocabularyStarts, ...lists, fieldLengths },
    );
  } finally {
    for (const spool of [...Object.values(lists), vocabularyChars, vocabularyStarts]) spool.close();
  }
}

/** The merge proper: the runs' keys in order, each key's lists concatenated, renumbered and written. */
function mergeInto(
  cursors: RunCursor[],
  writer: PostingsWriter,
  keepsPositions: boolean[],
  docOfText: Int32Array,
  tables: { lists: TermListsWriter; vocabularyChars: Spool<Uint16Array>; vocabularyStarts: Spool<Uint32Array> },
  progress: (terms: number) => void,
): void {
  const F = keepsPositions.length;
  const { lists, vocabularyChars, vocabularyStarts } = tables;
  // A key's lists, written to the tables only if the key is kept.
  const keyAt = new Float64Array(F);
  const keyDf = new Uint32Array(F);
  let previous: RunCursor | undefined;
  let previousTerm = -1;
  // A min-heap of cursors by key; ties in run order, so documents stay in order. Written
  // without destructuring swaps: each would allocate an array, millions of them per merge.
  const heap: RunCursor[] = [];
  const less = (a: RunCursor, b: RunCursor) => {
    const d = a.compare(b);
    return d < 0 || (d === 0 && a.rank < b.rank);
  };
  const push = (c: RunCursor) => {
    let i = heap.length;
    heap.push(c);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = heap[p]!;
      if (!less(c, parent)) break;
      heap[i] = parent;
      i = p;
    }
    heap[i] = c;
  };
  const pop = (): RunCursor => {
    const top = heap[0]!;
    const last = heap.pop()!;
    const n = heap.length;
    if (n) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const m = r < n && less(heap[r]!, heap[l]!) ? r : l;
        if (!less(heap[m]!, last)) break;
        heap[i] = heap[m]!;
        i = m;
      }
      heap[i] = last;
    }
    return top;
  };
  for (const c of cursors) if (c.next()) push(c);
  let terms = 0;
  let keys = 0;
  const holding: RunCursor[] = [];
  let read = 0;
  while (heap.length) {
    if (read >= REMAP_ENTRIES) {
      for (const c of cursors) c.map();
      Bun.gc(true);
      read = 0;
    }
    holding.length = 0;
    const first = pop();
    holding.push(first);
    while (heap.length && heap[0]!.compare(first) === 0) holding.push(pop());
    let kept = 0;
    for (let f = 0; f < F; f++) {
      const positions = keepsPositions[f]!;
      writer.begin(positions);
      let df = 0;
      for (const c of holding) {
        const list = c.lists.index(c.term, f);
        if (list < 0) continue;
        const cursor = c.postings.open(c.lists.address(list));
        for (let b = 0; b < cursor.blocks; b++) {
          const n = positions ? cursor.decodePositions(b) : cursor.decode(b);
          read += n + (positions ? cursor.positionStarts[n]! : 0);
          for (let i = 0; i < n; i++) {
            const doc = docOfText[c.base + cursor.docs[i]!]!;
            if (doc < 0) continue;
            writer.add(doc, cursor.tfs[i]!);
            df++;
            if (positions)
              for (let at = cursor.positionStarts[i]!, end = cursor.positionStarts[i + 1]!; at < end; at++)
                writer.position(cursor.positionValues[at]!);
          }
        }
      }
      const address = writer.end();
      keyAt[f] = df ? address : 0;
      keyDf[f] = df;
      kept += df;
    }
    // A key whose every chunk was left out is dropped.
    if (kept) {
      if (previous && previous.vocabulary.compareWith(previousTerm, first.vocabulary, first.term) >= 0) {
        throw new Error(
          `merge: key ${JSON.stringify(first.vocabulary.keyOf(first.term))} after ${JSON.stringify(previous.vocabulary.keyOf(previousTerm))}`,
        );
      }
      previous = first;
      previousTerm = first.term;
      lists.add(keyAt, keyDf);
      vocabularyStarts.push(vocabularyChars.length);
      const codes = first.vocabulary.codes;
      for (let i = first.vocabulary.keyStart(first.term), end = first.vocabulary.keyStart(first.term + 1); i < end; i++)
        vocabularyChars.push(codes[i]!);
      terms++;
    }
    for (const c of holding) if (c.next()) push(c);
    if (keys % 250_000 === 0) logMemory(`merge: ${keys} keys, ${terms} terms`);
    if (++keys % 50_000 === 0) progress(terms);
  }
  vocabularyStarts.push(vocabularyChars.length);
}
