/**
 * The block-max executor (D90): one pass ranks the pages of one tier, keeping the best `room`
 * of them (page-heap.ts), as Lucene's BlockMaxConjunctionBulkScorer and MaxScoreBulkScorer do
 * for documents. Chunks are read in windows of whole pages (a page's chunks are consecutive, so
 * a page is scored from all its chunks of the tier at once). Before a window is read, each
 * word's bound there (word-reader.ts, from its lists' impacts) is summed: when pageFactor() ×
 * the sum cannot beat the heap's bar, the window is skipped without decoding a block.
 *
 * With required words (every tier but "any word"), the rarest leads: its lists are scanned,
 * and its chunks narrowed by the other required words, cheapest first (each read over the
 * window when it holds few postings there for the candidates, else asked chunk by chunk, a
 * byte a chunk for the most common lists); the optional words (function words, the others) are
 * asked last, only for the chunks of a page whose bound, with their bounds, beats the bar. Without (any word), the words
 * are split per window as MaxScore splits them: the essential ones, whose bounds together could
 * beat the bar, give the candidates; a candidate's page is then scored from every word.
 */
import { SECTION_FIELD, TEXT_FIELD } from "../postings/fields";
import type { PostingsCursor } from "../postings/postings";
import type { Shard } from "../postings/shard";
import { ListReader } from "./list-reader";
import { type GatherPass, PageGatherer, type SkippedScratch } from "./page-gather";
import type { PageHeap } from "./page-heap";
import type { Form, QueryLists } from "./query-lists";
import { pageFactor } from "./rules";
import { type ChunkLayout, MAX_WINDOW, Windows } from "./windows";
import { WordReader } from "./word-reader";

/**
 * A required word is read over the window (its postings there) rather than asked chunk by chunk
 * when it holds fewer than this many postings a candidate there (by its lists' sizes): a pass
 * over a few postings costs less than a search in a block for each candidate.
 */
const SCAN_FROM = 8;
/** A lead holding at least one chunk in this many of its window's is listed in order by a pass over the window, not sorted. */
const DENSE_WINDOW = 16;

export interface Pass {
  lists: QueryLists;
  /** The words a chunk must hold (bits); 0: any word. */
  required: number;
  /** Whether the words' typo terms count: a typo tier. */
  typos: boolean;
  tier: number;
  /** Where the pages go; its room is how many the pass may keep. */
  heap: PageHeap;
  /** Pages already ranked (in a better tier, or apart): left out. */
  excluded: (page: number) => boolean;
  /** Chunks kept (quoted phrases): the others are not candidates. */
  keep?: ((chunk: number) => boolean) | undefined;
  /**
   * The quoted phrases' index terms, when `keepAll` is asked of the candidates before the other required words are read
   * (few chunks hold the phrases): the candidates are then the chunks whose text or heading holds the rarest of them
   * (every chunk holding the phrases does), when they are fewer than the lead's.
   */
  keepFirst?: number[] | undefined;
  /** `keep` asked of many chunks at once (stages/phrases.ts's ChunkFilter): what kept() asks with `keepFirst`. */
  keepAll?: ((from: number, at: Uint32Array, n: number, keep: Uint8Array) => void) | undefined;
  /** Whether the search is out of time: the pass then ends with what it has. */
  late: () => boolean;
}

export class Executor {
  private readonly cursors: PostingsCursor[] = [];
  private readonly readers: ListReader[] = [];
  private cursorsUsed = 0;
  private readersUsed = 0;
  private size = 0;
  private best = new Float64Array(0);
  /** A narrowing word's scores over the window, and the chunks it touched (narrow()). */
  private other = new Float64Array(0);
  private otherTouched = new Uint32Array(0);
  /** The candidates' scores so far, beside their chunks in `touched`. */
  private sums = new Float64Array(0);
  private combined = new Float64Array(0);
  private leadSum = new Float64Array(0);
  private leadMask = new Uint32Array(0);
  private touched = new Uint32Array(0);
  private union = new Uint32Array(0);
  private formTouched = new Uint32Array(0);
  /** The page being gathered. */
  private readonly pages: PageGatherer;
  /** What the last run did: chunks scored, postings decoded, and whether it ran out of time. */
  candidates = 0;
  postings = 0;
  cutOff = false;

  private readonly windows: Windows;
  private readonly documents: number;

  constructor(
    private readonly text: Shard,
    private readonly layout: ChunkLayout,
  ) {
    this.documents = text.documentCount;
    this.pages = new PageGatherer(layout);
    this.windows = new Windows(layout);
  }

  /** The last run's pages ended by a conjunction, asked of `keep`, and kept (page-gather.ts). */
  get pageCounts(): { seen: number; asked: number; kept: number } {
    const { pagesSeen: seen, pagesAsked: asked, pagesKept: kept } = this.pages;
    // A conjunction checked the phrases first: every page it ended holds them.
    if (this.phrasesFirst) return { seen, asked: seen, kept: seen };
    return { seen, asked, kept };
  }
  /** Whether the last run was a conjunction with quoted phrases, checked on its candidates first (kept()). */
  private phrasesFirst = false;

  run(pass: Pass): void {
    this.cursorsUsed = this.readersUsed = 0;
    this.candidates = this.postings = this.windowsRead = 0;
    this.pages.reset();
    this.cutOff = false;
    this.phrasesFirst = false;
    const words: WordReader[] = [];
    for (let w = 0; w < pass.lists.words; w++) {
      const forms = pass.lists.byWord[w]!.filter((f) => pass.typos || !f.typo);
      // A typo word ranked alone: its typo terms' sparse lists read for their bounds (ListReader.readSparse), its
      // windows being the word's own (measured: a prefix's completions gained nothing from it).
      const sparse = pass.typos && pass.lists.words === 1;
      if (forms.length) words.push(new WordReader(w, forms, this.text, this.cursor, this.reader, sparse));
      else if (pass.required & (1 << w)) return;
    }
    if (!words.length || pass.heap.bar === Infinity) return;
    const decodedBefore = this.decoded();
    if (pass.required) {
      const required = words.filter((w) => pass.required & (1 << w.word)).sort((a, b) => a.postings - b.postings);
      const optional = words.filter((w) => !(pass.required & (1 << w.word)));
      this.conjunction(pass, required[0]!, required.slice(1), optional);
    } else this.disjunction(pass, words);
    this.postings = this.decoded() - decodedBefore;
  }

  /** Every required word: the lead's chunks, narrowed by the others, the optional words asked for pages that may rank. */
  private conjunction(pass: Pass, lead: WordReader, checks: WordReader[], optional: WordReader[]) {
    const { pageOfChunk, firstChunk } = this.layout;
    const { heap } = pass;
    const all = [lead, ...checks, ...optional];
    // Quoted phrases checked on the candidates before the other words are read (kept()): the pages gathered hold them.
    const keepFirst = pass.keepFirst && pass.keepAll;
    const gathered = keepFirst ? { tier: pass.tier, heap } : pass;
    this.phrasesFirst = keepFirst !== undefined;
    // The chunks holding a phrase's rarest term are the candidates when they are fewer than the lead's: the lead is
    // then scored on those the phrases keep, as the other words are.
    const anchor = keepFirst ? this.anchorOf(pass, lead) : undefined;
    const driver = anchor ?? lead;
    const scored = anchor ? [lead, ...checks] : checks;
    // One word of several forms, alone, no quoted phrase: its forms that cannot lift a page past the bar give no
    // candidates (split()).
    const alone = !pass.keep && !checks.length && !optional.length && lead.forms.length > 1;
    let pos = 0;
    for (;;) {
      // Past the lead's last chunk, the rarest term's windows find no candidate: few, as it holds fewer chunks.
      const next = driver.nextDoc(pos);
      if (next === Infinity) return;
      const from = firstChunk[pageOfChunk[next]!]!;
      const to = this.windows.windowEnd(lead, from);
      const skipped = this.windows.skipEnd(all, from, to, heap.bar);
      if (skipped >= 0) {
        pos = skipped + 1;
        continue;
      }
      pos = to + 1;
      // Every word's forms bounded in this window, so that scoreAt() asks them best first.
      for (const w of scored) w.bound(from, to);
      let optionalBound = 0;
      for (const w of optional) optionalBound += w.bound(from, to);
      const rest = alone ? lead.split(from, to, heap.bar / pageFactor()) : 0;
      if (this.outOfTime(pass)) return;
      this.room(to - from + 1);
      const { best, touched, sums } = this;
      // The rarest term's chunks are only candidates, unscored (its score is not theirs).
      let n = anchor
        ? anchor.mark(from, to, best, touched, 0)
        : lead.scan(from, to, best, touched, 0, this.combined, this.formTouched);
      // The candidates, in chunk order, with the lead's score (none yet from the rarest term's): then narrowed word by word.
      const span = to - from + 1;
      if (n * DENSE_WINDOW >= span) {
        // Most of the window: read in order from the scores rather than sorted.
        n = 0;
        for (let at = 0; at < span; at++) {
          const s = best[at]!;
          if (s === 0) continue;
          touched[n] = at;
          sums[n++] = s;
          best[at] = 0;
        }
      } else {
        touched.subarray(0, n).sort();
        for (let i = 0; i < n; i++) {
          const at = touched[i]!;
          sums[i] = best[at]!;
          best[at] = 0;
        }
      }
      if (anchor) sums.fill(0, 0, n);
      if (keepFirst) n = this.kept(keepFirst, from, n);
      for (const w of scored) {
        if (!n) break;
        n = this.narrow(w, from, to, n, (w.postings * span) / this.documents < SCAN_FROM * n);
      }
      for (let i = 0; i < n; i++) {
        const d = from + touched[i]!;
        const p = pageOfChunk[d]!;
        if (pass.excluded(p)) continue;
        this.candidates++;
        if (this.pages.other(p)) this.flush(gathered, optional, optionalBound, lead, rest);
        this.pages.gather(p, d, sums[i]!);
      }
      this.flush(gathered, optional, optionalBound, lead, rest);
    }
  }

  /** Ends a conjunction's page: its chunks completed with the optional words, or with the lead's forms split() left out. */
  private flush(pass: GatherPass, optional: WordReader[], optionalBound: number, lead: WordReader, rest: number) {
    if (rest > 0) this.pages.flushSkipped(pass, lead, rest, this.skippedScratch);
    else this.pages.flush(pass, optional, optionalBound);
  }

  /**
   * A reader of the quoted phrases' rarest term (pass.keepFirst) in the text and heading, the fields phrases are read
   * in, when it holds fewer chunks than the lead's lists do; undefined otherwise. It only finds candidates: its
   * score is not theirs.
   */
  private anchorOf(pass: Pass, lead: WordReader): WordReader | undefined {
    let rarest: Form | undefined;
    let postings = lead.postings;
    for (let w = 0; w < pass.lists.words; w++) {
      if (!(pass.required & (1 << w))) continue;
      for (const form of pass.lists.byWord[w]!) {
        if (form.typo || !pass.keepFirst!.includes(form.term)) continue;
        const lists = form.lists.filter((l) => l.field === TEXT_FIELD || l.field === SECTION_FIELD);
        const n = lists.reduce((sum, l) => sum + l.df, 0);
        if (n < postings) {
          postings = n;
          rarest = { ...form, lists, postings: n };
        }
      }
    }
    return rarest && new WordReader(rarest.word, [rarest], this.text, this.cursor, this.reader);
  }

  /**
   * Keeps of the n candidates (touched[0, n), their scores in sums, from `from`) those holding the quoted phrases
   * (`keepAll`, read on the phrase words' own text and heading lists), before any other word is read: a chunk holding
   * the phrases holds all their words, and few of the lead's chunks hold them (phrase checks cost less than reading
   * every form of the other words there). Returns how many are kept.
   */
  private kept(keepAll: NonNullable<Pass["keepAll"]>, from: number, n: number): number {
    const { touched, sums } = this;
    if (this.keeps.length < n) this.keeps = new Uint8Array(Math.max(n, this.size));
    const keeps = this.keeps;
    keepAll(from, touched, n, keeps.fill(1, 0, n));
    let kept = 0;
    for (let i = 0; i < n; i++) {
      if (!keeps[i]) continue;
      touched[kept] = touched[i]!;
      sums[kept++] = sums[i]!;
    }
    return kept;
  }
  /** kept()'s flags, a candidate each. */
  private keeps = new Uint8Array(0);

  /**
   * Keeps of the n candidates (touched[0, n), their scores in sums) those a required word holds,
   * its score added: by reading its lists over the window when they hold few postings there for
   * the candidates (`scan`: one pass, no search), else by asking it chunk by chunk. Returns how
   * many are kept.
   */
  private narrow(w: WordReader, from: number, to: number, n: number, scan: boolean): number {
    const { touched, sums } = this;
    let kept = 0;
    if (scan) {
      const { other, otherTouched } = this;
      const m = w.scan(from, to, other, otherTouched, 0, this.combined, this.formTouched);
      for (let i = 0; i < n; i++) {
        const at = touched[i]!;
        const v = other[at]!;
        if (!v) continue;
        touched[kept] = at;
        sums[kept++] = sums[i]! + v;
      }
      for (let i = 0; i < m; i++) other[otherTouched[i]!] = 0;
      return kept;
    }
    for (let i = 0; i < n; i++) {
      const at = touched[i]!;
      const v = w.scoreAt(from + at);
      if (!v) continue;
      touched[kept] = at;
      sums[kept++] = sums[i]! + v;
    }
    return kept;
  }

  /** Whether the search is out of time, asked before each window but the first a run reads: the pass then ends with what it has. */
  private outOfTime(pass: Pass): boolean {
    if (this.windowsRead++ > 0 && pass.late()) this.cutOff = true;
    return this.cutOff;
  }
  private windowsRead = 0;

  /** Any word: per window, the essential words (MaxScore) give the candidates; a candidate's page is scored from every word. */
  private disjunction(pass: Pass, words: WordReader[]) {
    const { pageOfChunk, firstChunk } = this.layout;
    const { heap } = pass;
    const bounds = new Float64Array(words.length);
    let essential = words.slice();
    let pos = 0;
    for (;;) {
      // Windows follow each other: the next starts at the first chunk any word holds (a word
      // left out of the last window's essential ones may hold the chunks up to it).
      let next = Infinity;
      for (const w of words) next = Math.min(next, w.nextDoc(pos));
      let primary = essential[0]!;
      for (const w of essential) if (w.postings > primary.postings) primary = w;
      if (next === Infinity) return;
      const from = firstChunk[pageOfChunk[next]!]!;
      const to = this.windows.windowEnd(primary, from);
      const bar = heap.bar;
      const skipped = this.windows.skipEnd(words, from, to, bar);
      if (skipped >= 0) {
        pos = skipped + 1;
        continue;
      }
      pos = to + 1;
      for (const [i, w] of words.entries()) bounds[i] = w.bound(from, to);
      if (this.outOfTime(pass)) return;
      // The words whose bounds, the smallest first, cannot together lift a page past the bar are not essential.
      const order = words.map((_w, i) => i).sort((a, b) => bounds[a]! - bounds[b]!);
      let rest = 0;
      let cut = 0;
      while (cut < order.length && pageFactor() * (rest + bounds[order[cut]!]!) < bar) rest += bounds[order[cut++]!]!;
      essential = order.slice(cut).map((i) => words[i]!);
      const others = order.slice(0, cut).map((i) => words[i]!);
      this.room(to - from + 1);
      const { best, touched, union, leadSum, leadMask } = this;
      let u = 0;
      for (const w of essential) {
        const n = w.scan(from, to, best, touched, 0, this.combined, this.formTouched);
        for (let i = 0; i < n; i++) {
          const at = touched[i]!;
          if (!leadMask[at]) union[u++] = at;
          leadMask[at] = 1;
          leadSum[at]! += best[at]!;
          best[at] = 0;
        }
      }
      union.subarray(0, u).sort();
      for (let i = 0; i < u; i++) {
        const at = union[i]!;
        const s = leadSum[at]!;
        leadSum[at] = 0;
        leadMask[at] = 0;
        const d = from + at;
        const p = pageOfChunk[d]!;
        if (pass.excluded(p)) continue;
        this.candidates++;
        if (this.pages.other(p)) this.pages.flushWhole(pass, others, rest);
        this.pages.gather(p, d, s);
      }
      this.pages.flushWhole(pass, others, rest);
    }
  }

  private room(n: number): void {
    if (this.size >= n) return;
    const size = Math.max(n, MAX_WINDOW * 2);
    this.size = size;
    this.best = new Float64Array(size);
    this.other = new Float64Array(size);
    this.otherTouched = new Uint32Array(size);
    this.sums = new Float64Array(size);
    this.combined = new Float64Array(size);
    this.leadSum = new Float64Array(size);
    this.leadMask = new Uint32Array(size);
    this.touched = new Uint32Array(size);
    this.union = new Uint32Array(size);
    this.formTouched = new Uint32Array(size);
    this.skippedScratch = {
      best: this.other,
      touched: this.otherTouched,
      combined: this.combined,
      formTouched: this.formTouched,
    };
  }
  /** flushSkipped()'s scratch: the window's arrays a conjunction of one word does not use while it gathers pages. */
  private skippedScratch!: SkippedScratch;

  private readonly cursor = (): PostingsCursor => (this.cursors[this.cursorsUsed++] ??= this.text.newCursor());
  private readonly reader = (): ListReader => (this.readers[this.readersUsed++] ??= new ListReader());

  private decoded(): number {
    let n = 0;
    for (const c of this.cursors) n += c.decodedPostings;
    return n;
  }
}
