/**
 * The merge of the index build: the runs' vocabularies walked in key order, each key's lists
 * concatenated, renumbered and written into the snapshot's sections.
 */
import { join } from "node:path";
import { type Container, type ContainerWriter, MAX_SECTION_BYTES, openContainer, Spool } from "../../snapshot";
import type { FieldNorms, ShardData, ShardOptions } from "../postings/shard-types";
import { normTable } from "../postings/norms";
import { DENSE_SHARE } from "../postings/dense-lists";
import { PostingsReader, type PostingsCursor } from "../postings/postings";
import { PostingsWriter } from "../postings/postings-writer";
import { readShardData, writeShardTableSources } from "../postings/store";
import { Vocabulary } from "../postings/vocabulary";
import { TermLists, TermListsWriter } from "../postings/term-lists";
import { logMemory } from "./memory-log";

/**
 * Documents and positions (a byte or two each) the merge reads between two remappings of the runs. Pages of a mapped file stay
 * in the process's resident set once read (until the kernel needs them); remapping the runs
 * and collecting the old mappings gives them back, so the merge's resident set stays flat
 * however many runs there are.
 */
const REMAP_ENTRIES = 64 << 20;

export type IndexBuildProgress = (stage: string, done: number, total: number) => void;

/** Where a merge writes: its sections' prefix, the stage its progress names, whether its postings parts are padded, and whether its most common lists also get dense tfs. */
interface MergeTarget {
  prefix: string;
  stage: string;
  padParts: boolean;
  dense?: boolean;
}
const TEXT_INDEX: MergeTarget = {
  prefix: "index.text",
  stage: "merging the text index (terms)",
  padParts: false,
  dense: true,
};
/** The title index, merged from runs, comes out as the one shard built in memory it replaced wrote it: parts padded. */
export const TITLE_INDEX: MergeTarget = {
  prefix: "index.titles",
  stage: "merging the title index (terms)",
  padParts: true,
};

/**
 * A run's vocabulary, one key at a time, from its mapped bytes (a spilled run, or a
 * snapshot's text index; keys compared in place, never made strings). Its chunk i is number
 * base + i in the merge's docOfText.
 */
export class RunCursor {
  vocabulary!: Vocabulary;
  term = -1;
  data!: ShardData;
  lists!: TermLists;
  postings!: PostingsCursor;
  readonly base: number;
  constructor(
    /** The run's file, mapped afresh at each map(); or a container already open (an update's base), whose pages read leave the resident set there instead. */
    private readonly source: string | Container,
    private readonly prefix: string,
    offset: number,
    /** The run's place among the runs: equal keys are taken in this order. */
    readonly rank: number,
    /**
     * Called before the run is mapped and before each key: throws when the file may no longer be read (an update's
     * base, whose lease a copy over it broke, D84). Keys are read between two calls.
     */
    private readonly checkReadable: () => void = () => {},
  ) {
    const meta = this.map().meta as { base?: number };
    // A spilled run's metadata says where its chunks start; a snapshot's index starts at 0.
    this.base = offset + (prefix === "run" ? meta.base! : 0);
  }
  /** Maps the run afresh (the old mapping goes when collected), keeping the place. */
  map(): Container {
    this.checkReadable();
    const open = typeof this.source === "string";
    const container = open ? openContainer(this.source) : this.source;
    if (!open) container.dropResident();
    this.data = readShardData(container, this.prefix);
    this.lists = new TermLists(this.data.lists);
    this.postings = new PostingsReader(this.data.postings).cursor();
    this.vocabulary = new Vocabulary(this.data.vocabulary);
    return container;
  }
  /** Moves to the next key; false at the end. */
  next(): boolean {
    this.checkReadable();
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
export function mergeRuns(
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
  const dense = {
    addresses: new Spool(join(dir, `${into.prefix}.dense.addresses`), Float64Array),
    tfs: new Spool(join(dir, `${into.prefix}.dense.tfs`), Uint8Array),
    buffer: into.dense ? new Uint8Array(documents) : undefined,
    from: Math.max(1, Math.ceil(documents * DENSE_SHARE)),
  };
  const vocabularyChars = new Spool(join(dir, `${into.prefix}.vocabulary.chars`), Uint16Array);
  const vocabularyStarts = new Spool(join(dir, `${into.prefix}.vocabulary.starts`), Uint32Array);
  // The merged documents' field lengths first: each block's impact is chosen by their norms.
  const fieldLengths = new Uint16Array(F * documents);
  for (const c of cursors) {
    const n = c.data.documentCount;
    for (let i = 0; i < n; i++) {
      const doc = docOfText[c.base + i]!;
      if (doc < 0) continue;
      for (let f = 0; f < F; f++) fieldLengths[f * documents + doc] = c.data.fieldLengths[f * n + i]!;
    }
  }
  const norms = fields.map((_f, f) => {
    const lengths = fieldLengths.subarray(f * documents, (f + 1) * documents);
    return { lengths, table: normTable(lengths).table };
  });
  try {
    mergeInto(
      cursors,
      writer,
      keepsPositions,
      norms,
      docOfText,
      dense,
      { lists: new TermListsWriter(lists), vocabularyChars, vocabularyStarts },
      (terms) => progress(into.stage, terms, terms),
    );
    const postingsParts = sections.finish();
    logMemory("merge: postings written");
    const terms = vocabularyStarts.length - 1;
    writeShardTableSources(
      out,
      into.prefix,
      { fields, documentCount: documents, terms, postingsParts },
      { vocabularyChars, vocabularyStarts, ...lists, fieldLengths },
    );
    if (into.dense) {
      dense.addresses.copyInto(out, `${into.prefix}.dense.addresses`);
      dense.tfs.copyInto(out, `${into.prefix}.dense.tfs`);
    }
  } finally {
    for (const spool of [...Object.values(lists), vocabularyChars, vocabularyStarts, dense.addresses, dense.tfs])
      spool.close();
  }
}

/** The merge proper: the runs' keys in order, each key's lists concatenated, renumbered and written. */
function mergeInto(
  cursors: RunCursor[],
  writer: PostingsWriter,
  keepsPositions: boolean[],
  norms: FieldNorms[],
  docOfText: Int32Array,
  dense: { addresses: Spool<Float64Array>; tfs: Spool<Uint8Array>; buffer: Uint8Array | undefined; from: number },
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
      writer.begin(positions, norms[f]);
      let df = 0;
      // A list of DENSE_SHARE of the documents or more also gets its tfs a byte a document (lookups in O(1)).
      let expected = 0;
      if (dense.buffer)
        for (const c of holding) {
          const list = c.lists.index(c.term, f);
          if (list >= 0) expected += c.lists.count(list);
        }
      const denseTfs = expected >= dense.from ? dense.buffer : undefined;
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
            if (denseTfs) denseTfs[doc] = cursor.tfs[i]!;
            df++;
            if (positions)
              for (let at = cursor.positionStarts[i]!, end = cursor.positionStarts[i + 1]!; at < end; at++)
                writer.position(cursor.positionValues[at]!);
          }
        }
      }
      const address = writer.end();
      if (denseTfs) {
        if (df >= dense.from) {
          dense.addresses.push(address);
          dense.tfs.pushAll(denseTfs);
        }
        denseTfs.fill(0);
      }
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
