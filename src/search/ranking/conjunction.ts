/**
 * match() kept to the documents holding every required word: a conjunction, as Lucene's
 * ConjunctionDISI leads with its rarest clause (issue 16).
 *
 * The documents are found from the rarest required word's lists, narrowed by each other rare
 * word at the blocks that hold documents still in; then every list is read at their blocks
 * only, in match()'s order, so that their scores are the very numbers match() computes.
 * A query's tier 0 when it fills the page (stages/candidates.ts), for a share of the postings.
 */
import { lookupTf, type LookupList } from "../index/lookup-lists";
import type { PostingsCursor } from "../index/postings";
import { BM25, popcount, type Matches, type ScoredList, type WordSpec } from "../index/shard-types";
import { ensureRoom, matchBuffer, type Shard } from "../index/shard";

/**
 * The conjunction is tried when the rarest required word is in at most this share of the
 * documents, and a word narrows the documents when it is in at most this share. Past it,
 * nearly every document holds them all, and reading the lists twice (to narrow, then to
 * score) costs more than match() reading them once.
 */
export const CONJUNCTION_SHARE = 1 / 4;

/**
 * The documents holding every word of `required` (bits of `words`), in document order, with
 * match()'s scores and masks; none once fewer than `least` are left. Undefined, having read
 * nothing, when the rarest required word's lists hold more than `budget` postings or are too
 * common to pay. Without `scored`, only the documents (masks: the required bits), for any
 * words: each list is then read at most once. With `from` and `to`, only documents in [from, to);
 * with `keep`, only those it keeps, asked once the rare words have narrowed them, before any score.
 */
export function matchAll(
  shard: Shard,
  cursor: PostingsCursor,
  words: WordSpec[],
  required: number,
  options: {
    into?: Matches;
    budget?: number;
    least?: number;
    scored?: boolean;
    from?: number;
    to?: number;
    /** Only the documents it keeps are scored and returned (a quoted phrase's check, stages/candidates.ts). */
    keep?: (doc: number) => boolean;
  } = {},
): Matches | undefined {
  const scored = options.scored ?? true;
  const derived = shard.derive(words);
  const lists = shard.scoredLists(derived);
  const postingsOf = new Float64Array(32);
  for (const l of lists) postingsOf[l.word]! += l.df;
  const common = scored ? CONJUNCTION_SHARE * shard.documentCount : Infinity;
  const order: number[] = [];
  for (let w = 0; w < 32; w++) if (required & (1 << w)) order.push(w);
  order.sort((a, b) => postingsOf[a]! - postingsOf[b]! || a - b);
  const rarest = order.length ? postingsOf[order[0]!]! : Infinity;
  if (rarest > common || rarest > (options.budget ?? Infinity)) return undefined;
  const out = options.into ?? matchBuffer(0);
  ensureRoom(out, Math.min(shard.documentCount, rarest));
  const reader = new ListReader(shard, cursor, out.docs);
  const firstLists = lists.filter((l) => l.word === order[0]);
  for (const l of firstLists) reader.readWhole(l, options.from, options.to);
  let n = reader.count;
  const { masks, scores } = shard.accumulators();
  const docs = out.docs.subarray(0, n);
  // One list's documents come in order; several lists' are sorted, or when they are many through a bit a document (the two cost about the same at N/16: bench/search/sort-bits.ts).
  if (firstLists.length > 1 && n > shard.documentCount / 16) sortThroughBits(docs, shard.documentBits());
  else if (firstLists.length > 1) docs.sort();
  const least = options.least ?? 0;
  for (const w of order.slice(1)) {
    if (postingsOf[w]! > common) continue;
    if (n < least) break;
    for (const l of lists) if (l.word === w) reader.read(l, n, false);
    const bit = (1 << w) >>> 0;
    let kept = 0;
    for (let i = 0; i < n; i++) {
      const d = docs[i]!;
      if (masks[d]! & bit) docs[kept++] = d;
      else masks[d] = 0;
    }
    n = kept;
  }
  if (options.keep && n >= least) {
    let kept = 0;
    for (let i = 0; i < n; i++) {
      const d = docs[i]!;
      if (options.keep(d)) docs[kept++] = d;
      else masks[d] = 0;
    }
    n = kept;
  }
  if (scored && n >= least) for (const l of lists) reader.read(l, n, true);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    const m = masks[d]!;
    if ((m & required) >>> 0 === required) {
      out.docs[count] = d;
      out.masks[count] = m;
      // MiniSearch multiplies a document's score by the number of query words it holds.
      out.scores[count++] = scores[d]! * popcount(m);
    }
    scores[d] = 0;
    masks[d] = 0;
  }
  out.count = count < least ? 0 : count;
  out.postings = reader.postings;
  out.derived = derived;
  return out;
}

/** Sorts distinct documents by setting their bits, then reading the set bits in order; `bits` is left zero. */
export function sortThroughBits(docs: Uint32Array, bits: Uint32Array): void {
  const n = docs.length;
  for (let i = 0; i < n; i++) {
    const d = docs[i]!;
    bits[d >>> 5]! |= 1 << (d & 31);
  }
  for (let w = 0, k = 0; k < n; w++) {
    let x = bits[w]!;
    if (x === 0) continue;
    bits[w] = 0;
    do {
      const low = x & -x;
      docs[k++] = (w << 5) | (31 - Math.clz32(low));
      x ^= low;
    } while (x !== 0);
  }
}

/** Reads lists into the shard's accumulators, at the documents already reached. */
class ListReader {
  count = 0;
  postings = 0;
  private readonly scores: Float64Array;
  private readonly masks: Uint32Array;

  constructor(
    private readonly shard: Shard,
    private readonly cursor: PostingsCursor,
    /** The documents reached, the first list's in the order found; then sorted, those still in first. */
    private readonly docs: Uint32Array,
  ) {
    ({ scores: this.scores, masks: this.masks } = shard.accumulators());
  }

  /** Reads a list whole (or its documents in [from, to)), noting each document it reaches and setting its bit. */
  readWhole(l: ScoredList, from = 0, to = Infinity): void {
    this.readList(l, 0, false, true, from, to);
  }

  /**
   * Reads a list at docs[0, n), the documents whose masks are set: adds the word's bit to their
   * masks, and with `score` its postings' scores. The blocks that hold none of them are not
   * decoded, unless the list is the shorter (then those outside them only).
   */
  read(l: ScoredList, n: number, score: boolean): void {
    // Only the blocks from the first document still in to the last (they are in order).
    if (n > 0) this.readList(l, n, score, false, this.docs[0]!, this.docs[n - 1]! + 1);
  }

  private readList(l: ScoredList, n: number, score: boolean, first: boolean, from: number, to: number): void {
    const lookup = first ? undefined : this.shard.lookup(l, n);
    if (lookup) {
      this.readLookup(l, lookup, n, score);
      return;
    }
    const before = this.postings;
    const { scores, masks, docs: at } = this;
    const cursor = this.cursor.open(l.address);
    const { lengths, table } = this.shard.norms(l.field);
    const bit = (1 << l.word) >>> 0;
    const w = l.weight;
    const k1 = BM25.k + 1;
    const docs = cursor.docs;
    const tfs = cursor.tfs;
    const seek = !first && l.df > n;
    let count = this.count;
    const start = from > 0 ? cursor.blockOf(from) : 0;
    for (let b = start, i = 0; b < cursor.blocks; b++) {
      if (b > start && cursor.lastDoc(b - 1) >= to - 1) break;
      if (seek) {
        if (i >= n) break;
        const last = cursor.lastDoc(b);
        if (at[i]! > last) continue;
        const lo = i;
        while (i < n && at[i]! <= last) i++;
        this.postings += cursor.decode(b);
        // The documents still in against the block's, both in order: no look at the masks of the documents that are out.
        for (let k = lo, j = 0; k < i; k++) {
          const d = at[k]!;
          while (docs[j]! < d) j++;
          if (docs[j] !== d) continue;
          masks[d] = (masks[d]! | bit) >>> 0;
          if (!score) continue;
          const tf = tfs[j]!;
          scores[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
        }
        continue;
      }
      const m = cursor.decode(b);
      this.postings += m;
      for (let j = 0; j < m; j++) {
        const d = docs[j]!;
        if (masks[d] === 0) {
          if (!first || d < from || d >= to) continue;
          at[count++] = d;
        }
        masks[d] = (masks[d]! | bit) >>> 0;
        if (!score) continue;
        const tf = tfs[j]!;
        scores[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
      }
    }
    this.count = count;
    if (!first) this.shard.noteRead(l, this.postings - before);
  }

  /** read() of a list much longer than the documents asked, from its bit a document (lookup-lists.ts): a few reads a document. */
  private readLookup(l: ScoredList, list: LookupList, n: number, score: boolean): void {
    const { scores, masks, docs: at } = this;
    const { lengths, table } = this.shard.norms(l.field);
    const bit = (1 << l.word) >>> 0;
    const w = l.weight;
    const k1 = BM25.k + 1;
    for (let i = 0; i < n; i++) {
      const d = at[i]!;
      const tf = lookupTf(list, d);
      if (tf === 0) continue;
      masks[d] = (masks[d]! | bit) >>> 0;
      if (score) scores[d]! += w * (BM25.d + (tf * k1) / (tf + table[lengths[d]!]!));
    }
    this.postings += n;
  }
}
