/**
 * The page a pass of the executor is gathering (executor.ts): its candidate chunks, in chunk
 * order, with their scores so far. When the page ends, its bound (its chunks' scores raised by
 * what the words not yet read may add) is set against the bar; a page that may rank is scored
 * whole, kept by the quoted phrases, and offered to the pass's heap.
 */
import { PageBuilder } from "./page-entries";
import type { PageHeap } from "./page-heap";
import { pageScore } from "./rules";
import type { WordReader } from "./word-reader";

/** What the gatherer needs of a pass: its tier, its heap, and the chunks it keeps. */
export interface GatherPass {
  tier: number;
  heap: PageHeap;
  keep?: ((chunk: number) => boolean) | undefined;
}

/** Scratch of a window's size for flushSkipped(). */
export interface SkippedScratch {
  best: Float64Array;
  touched: Uint32Array;
  combined: Float64Array;
  formTouched: Uint32Array;
}

export class PageGatherer {
  private page = -1;
  private pageCount = 0;
  private pageChunks = new Int32Array(64);
  private pageScores = new Float64Array(64);
  private readonly builder = new PageBuilder();
  /** Chunks asked of the pass's `keep`, and kept (the share that held the quoted phrases). */
  asked = 0;
  kept = 0;
  /** Pages ended (their chunks holding the pass's words), and of those asked of `keep`, the ones it kept a chunk of. */
  pagesSeen = 0;
  pagesAsked = 0;
  pagesKept = 0;

  constructor(private readonly layout: { firstChunk: Int32Array; chunkCounts: ArrayLike<number> }) {}

  reset(): void {
    this.pageCount = 0;
    this.page = -1;
    this.asked = this.kept = 0;
    this.pagesSeen = this.pagesAsked = this.pagesKept = 0;
  }

  /** Whether chunks of another page than `page` are gathered (and must be ended first). */
  other(page: number): boolean {
    return this.pageCount > 0 && page !== this.page;
  }

  private keeps(keep: (chunk: number) => boolean, chunk: number): boolean {
    this.asked++;
    const kept = keep(chunk);
    if (kept) this.kept++;
    return kept;
  }

  gather(page: number, chunk: number, score: number): void {
    if (this.pageCount === 0) this.page = page;
    if (this.pageCount === this.pageChunks.length) {
      const chunks = new Int32Array(this.pageCount * 2);
      chunks.set(this.pageChunks);
      this.pageChunks = chunks;
      const scores = new Float64Array(this.pageCount * 2);
      scores.set(this.pageScores);
      this.pageScores = scores;
    }
    this.pageChunks[this.pageCount] = chunk;
    this.pageScores[this.pageCount++] = score;
  }

  /**
   * The most the page gathered can score, its chunks' scores so far each raised by `more` (`floor`: a chunk not
   * gathered); with `atLeast`, each raised to `more` rather than by it (a word's best form: the forms not read add none).
   */
  private pageBound(more: number, floor: number, atLeast = false): number {
    let a = floor;
    let b = floor;
    let c = floor;
    for (let i = 0; i < this.pageCount; i++) {
      const s = atLeast ? Math.max(this.pageScores[i]!, more) : this.pageScores[i]! + more;
      if (s > a) {
        c = b;
        b = a;
        a = s;
      } else if (s > b) {
        c = b;
        b = s;
      } else if (s > c) c = s;
    }
    return pageScore(a, b, c, 0);
  }

  /** Ends the page gathered by a conjunction: when it may beat the bar, its chunks completed with the optional words, kept and ranked. */
  flush(pass: GatherPass, optional: WordReader[], optionalBound: number): void {
    const count = this.pageCount;
    if (!count) return;
    this.pagesSeen++;
    const bound = this.pageBound(optionalBound, 0);
    this.pageCount = 0;
    if (bound < pass.heap.bar) return;
    const { builder } = this;
    builder.start(this.page);
    if (pass.keep) {
      const asked = this.asked;
      this.addKept(pass, pass.keep, count, optional, optionalBound);
      if (this.asked > asked) this.pagesAsked++;
      if (!builder.empty) this.pagesKept++;
    } else
      for (let i = 0; i < count; i++) {
        let s = this.pageScores[i]!;
        for (const w of optional) s += w.scoreAt(this.pageChunks[i]!);
        builder.add(this.pageChunks[i]!, pass.tier, s);
      }
    if (!builder.empty) pass.heap.offer(this.page, builder.score(0), builder.chunk, pass.tier);
  }

  /**
   * flush()'s `count` chunks asked of `keep` (quoted phrases: the costly check) best bound
   * first, and no further once the rest cannot change the page's entry (each bound below its
   * third best chunk kept) or the page can no longer beat the bar: the entry asking them all gives.
   */
  private addKept(
    pass: GatherPass,
    keep: (chunk: number) => boolean,
    count: number,
    optional: WordReader[],
    more: number,
  ): void {
    const { builder, pageChunks, pageScores } = this;
    const order = this.byScore(count);
    for (let k = 0; k < count; k++) {
      const i = order[k]!;
      const most = pageScores[i]! + more;
      if (most < builder.third) return;
      if (this.boundWith(most) < pass.heap.bar) return;
      const d = pageChunks[i]!;
      if (!this.keeps(keep, d)) continue;
      let s = pageScores[i]!;
      for (const w of optional) s += w.scoreAt(d);
      builder.add(d, pass.tier, s);
    }
  }

  /** The most the page being built can score when any chunk not yet asked may score up to `most`: the best three of both. */
  private boundWith(most: number): number {
    const { first, second, third } = this.builder;
    if (most >= first) return pageScore(most, most, most, 0);
    if (most >= second) return pageScore(first, most, most, 0);
    return pageScore(first, second, Math.max(third, most), 0);
  }

  /** The gathered chunks' indexes, best score first (chunk order among equals). */
  private byScore(count: number): Int32Array {
    if (this.order.length < count) this.order = new Int32Array(this.pageChunks.length);
    const order = this.order;
    const scores = this.pageScores;
    for (let i = 0; i < count; i++) {
      let j = i;
      // Insertion: a page gathers a few chunks.
      while (j > 0 && scores[order[j - 1]!]! < scores[i]!) {
        order[j] = order[j - 1]!;
        j--;
      }
      order[j] = i;
    }
    return order;
  }
  private order = new Int32Array(64);

  /**
   * Ends the page of one word read by its essential forms (WordReader.split()): when it may beat the bar, the forms left
   * out (each at most `rest`) read over the page's chunks, and each chunk given its best form. `scratch`: arrays of at
   * least the page's chunks, `best` left zero (the executor's window arrays that a pass of one word leaves unused).
   * Not for a pass with quoted phrases (the executor splits none).
   */
  flushSkipped(pass: GatherPass, word: WordReader, rest: number, scratch: SkippedScratch): void {
    const count = this.pageCount;
    if (!count) return;
    this.pagesSeen++;
    const bound = this.pageBound(rest, rest, true);
    this.pageCount = 0;
    if (bound < pass.heap.bar) return;
    const { builder, pageChunks, pageScores } = this;
    const { best, touched, combined, formTouched } = scratch;
    const p = this.page;
    const first = this.layout.firstChunk[p]!;
    const last = first + this.layout.chunkCounts[p]! - 1;
    // Forward only, as the window's scan: pages end in chunk order.
    word.scan(first, last, best, touched, 0, combined, formTouched, true);
    builder.start(p);
    let i = 0;
    for (let d = first; d <= last; d++) {
      let s = best[d - first]!;
      best[d - first] = 0;
      if (i < count && pageChunks[i] === d) s = Math.max(s, pageScores[i++]!);
      if (s > 0) builder.add(d, pass.tier, s);
    }
    if (!builder.empty) pass.heap.offer(p, builder.score(0), builder.chunk, pass.tier);
  }

  /**
   * Ends the page a disjunction found: when it may beat the bar, every chunk of the page scored,
   * the essential words' scores as gathered (exact: a chunk not gathered holds none of them),
   * the others asked.
   */
  flushWhole(pass: GatherPass, others: WordReader[], rest: number): void {
    const count = this.pageCount;
    if (!count) return;
    const bound = this.pageBound(rest, rest);
    this.pageCount = 0;
    if (bound < pass.heap.bar) return;
    const { builder, pageChunks, pageScores } = this;
    const p = this.page;
    builder.start(p);
    if (!others.length) {
      for (let i = 0; i < count; i++)
        if (!pass.keep || this.keeps(pass.keep, pageChunks[i]!)) builder.add(pageChunks[i]!, pass.tier, pageScores[i]!);
    } else {
      let i = 0;
      for (let d = this.layout.firstChunk[p]!, end = d + this.layout.chunkCounts[p]!; d < end; d++) {
        let s = 0;
        if (i < count && pageChunks[i] === d) s = pageScores[i++]!;
        for (const w of others) s += w.scoreAt(d);
        if (s > 0 && (!pass.keep || this.keeps(pass.keep, d))) builder.add(d, pass.tier, s);
      }
    }
    if (!builder.empty) pass.heap.offer(p, builder.score(0), builder.chunk, pass.tier);
  }
}
