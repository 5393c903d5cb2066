import type { PostingsCursor } from "./postings";
import { BLOCK } from "./postings-format";
import { MAX_WORDS } from "./shard-types";
import { TermExpansion } from "./term-expansion";

/**
 * windowWeight()'s sort key: a position above, its group (< MAX_WORDS = 31) in the low GROUP_BITS bits; a field's
 * positions stay far below 2^27.
 */
const GROUP_BITS = 5;
const GROUP_MASK = (1 << GROUP_BITS) - 1;
/** How many lists sequenceCheck() and smallestSpan() keep a cursor open on (a query's words, forms and typos, two fields). */
const SEQUENCE_CURSORS = 256;

/** Word positions: whether a document holds a term or a sequence of terms, and the smallest span holding a term of each group. */
export class ShardPositions extends TermExpansion {
  /** Whether a document holds an index term, in any field. */
  holds(term: number, doc: number): boolean {
    const F = this.fields.length;
    for (let f = 0; f < F; f++) {
      const list = this.lists.index(term, f);
      if (list >= 0 && this.cursor.open(this.lists.address(list)).holds(doc)) return true;
    }
    return false;
  }

  /**
   * A term's word positions in a document's field (token indexes in the field's tokenize()
   * output), for the fields that keep them; undefined when the field does not hold the term
   * there. A view of scratch memory, valid until the next call on this shard: copy it to keep it.
   */
  positions(term: number, field: number, doc: number): Uint32Array | undefined {
    const list = this.lists.index(term, field);
    return list < 0 ? undefined : this.cursor.open(this.lists.address(list)).positions(doc);
  }

  /**
   * Whether a document's field holds the terms as consecutive words (a quoted phrase), asked of
   * document after document; undefined when the field holds some term nowhere. Each list is
   * read on a cursor of its own, found once here and kept open across calls: documents asked
   * in order mostly fall in the block that cursor decoded last (one shared cursor decoded it
   * anew for every term of every document: 70% of a phrase search's time).
   */
  sequenceCheck(terms: number[], field: number): ((doc: number) => boolean) | undefined {
    const cursors = this.termCursors(terms, field);
    if (!cursors) return undefined;
    // Positions read rarest word first. Whether each word is held is asked with the rarest last: the chunks asked are
    // mostly its own (D138's candidates), and most lack the next rarest (the rarest asked first was asked in vain).
    const order = terms.map((_t, w) => w).sort((a, b) => cursors[a]!.df - cursors[b]!.df);
    const heldOrder = [...order.slice(1), order[0]!];
    return (doc) => this.holdsOn(cursors, order, heldOrder, doc);
  }

  /**
   * sequenceCheck() asked of many documents at once (D203): of the documents from + at[i], ascending, whose keep[i]
   * is set, clears keep[i] where the field does not hold the terms in a row. Whether each word is held is asked of
   * them all, list after list, each list's blocks walked forward once (one function call a document cost more than
   * the lookup itself: a phrase's candidates are thousands, few hold it); positions are read only where every word is.
   */
  sequenceFilter(
    terms: number[],
    field: number,
  ): ((from: number, at: Uint32Array, n: number, keep: Uint8Array) => void) | undefined {
    const cursors = this.termCursors(terms, field);
    if (!cursors) return undefined;
    const order = terms.map((_t, w) => w).sort((a, b) => cursors[a]!.df - cursors[b]!.df);
    const held = [...order.slice(1), order[0]!].map((w) => cursors[w]!);
    // Each list's walk: the last document of its decoded block (Infinity: read through), and its place there.
    const last = new Float64Array(held.length);
    const place = new Int32Array(held.length);
    return (from, at, n, keep) => {
      last.fill(-1);
      place.fill(0);
      candidates: for (let i = 0; i < n; i++) {
        if (!keep[i]) continue;
        const doc = from + at[i]!;
        for (let k = 0; k < held.length; k++) {
          const cursor = held[k]!;
          const dense = cursor.dense;
          if (dense) {
            if (dense[doc]) continue;
            keep[i] = 0;
            continue candidates;
          }
          const docs = cursor.docs;
          if (doc > last[k]!) {
            const b = cursor.blockOf(doc);
            last[k] = b < cursor.blocks ? docs[cursor.decode(b) - 1]! : Infinity;
            place[k] = 0;
          }
          let j = place[k]!;
          if (last[k] !== Infinity) while (docs[j]! < doc) j++;
          place[k] = j;
          if (last[k] === Infinity || docs[j] !== doc) {
            keep[i] = 0;
            continue candidates;
          }
        }
        // Every word held: each cursor is on the block holding doc, its positions read there.
        if (!this.inRow(cursors, order, doc)) keep[i] = 0;
      }
    };
  }

  /** The cursors sequenceCheck() and sequenceFilter() read the terms' lists in the field on; undefined when it lacks one. */
  private termCursors(terms: number[], field: number): PostingsCursor[] | undefined {
    const cursors: PostingsCursor[] = [];
    for (const term of terms) {
      const cursor = this.sequenceCursor(term, field);
      if (!cursor) return undefined;
      cursors.push(cursor);
    }
    return cursors;
  }

  /** Whether doc holds the words of `cursors` in a row, each word's positions asked in `order`. */
  private holdsOn(cursors: PostingsCursor[], order: number[], heldOrder: number[], doc: number): boolean {
    // Every word held first: positions are read only where they all are (most chunks holding the rare word lack another).
    for (const w of heldOrder) if (!cursors[w]!.holdsDoc(doc)) return false;
    return this.inRow(cursors, order, doc);
  }

  /** Whether doc, holding every word of `cursors`, holds them in a row, each word's positions asked in `order`. */
  private inRow(cursors: PostingsCursor[], order: number[], doc: number): boolean {
    const anchor = order[0]!;
    const anchorCursor = cursors[anchor]!;
    const anchorCount = anchorCursor.positionsInto(doc);
    if (anchorCount < 0) return false;
    // Start positions still possible (the anchor's positions less its place), narrowed word by word.
    if (this.sequenceScratch.length < anchorCount) this.sequenceScratch = new Uint32Array(anchorCount * 2);
    const starts = this.sequenceScratch;
    const first = anchorCursor.scratchPositions;
    let n = 0;
    for (let i = 0; i < anchorCount; i++) if (first[i]! >= anchor) starts[n++] = first[i]! - anchor;
    for (let k = 1; k < order.length && n > 0; k++) {
      const w = order[k]!;
      const cursor = cursors[w]!;
      const count = cursor.positionsInto(doc);
      if (count < 0) return false;
      const at = cursor.scratchPositions;
      let kept = 0;
      let j = 0;
      for (let i = 0; i < n; i++) {
        const want = starts[i]! + w;
        while (j < count && at[j]! < want) j++;
        if (j < count && at[j] === want) starts[kept++] = starts[i]!;
      }
      n = kept;
    }
    return n > 0;
  }
  protected sequenceScratch = new Uint32Array(64);
  /** sequenceCheck()'s and smallestSpan()'s cursors, by list address: a query's lists, dropped all at once past SEQUENCE_CURSORS. */
  protected readonly sequenceCursors = new Map<number, PostingsCursor>();

  /**
   * The cursor sequenceCheck() and smallestSpan() read a (term, field) list on, open on it; undefined when the field
   * does not hold the term. `shared`: a positions lookup that copies what it reads at once (smallestSpan(),
   * windowWeight()): once SEQUENCE_CURSORS lists are kept, it reads a list not kept on the shard's one cursor rather
   * than dropping the kept ones, which a query of that many lists would otherwise do chunk after chunk.
   */
  protected sequenceCursor(term: number, field: number, shared = false): PostingsCursor | undefined {
    const list = this.lists.index(term, field);
    if (list < 0) return undefined;
    const address = this.lists.address(list);
    let cursor = this.sequenceCursors.get(address);
    if (!cursor) {
      const full = this.sequenceCursors.size >= SEQUENCE_CURSORS;
      if (full && shared) return this.withDense(this.cursor.open(address), address);
      if (full) this.sequenceCursors.clear();
      // A cursor handed out earlier in this search may still be asked (a check made before the room filled): only
      // those of ended searches are opened again.
      const pooled = this.cursorsUsed < SEQUENCE_CURSORS * 2;
      const fresh = pooled ? (this.cursorPool[this.cursorsUsed++] ??= this.reader.cursor()) : this.reader.cursor();
      cursor = this.withDense(fresh.open(address), address);
      this.sequenceCursors.set(address, cursor);
    }
    return cursor;
  }
  /**
   * sequenceCursor()'s cursors, opened again search after search: made anew, each cost its scratch arrays (about
   * 8 KB), 6 a phrase search, a tenth of a rare phrase's time. `cursorsUsed`: those handed out since the last endSearch().
   */
  private readonly cursorPool: PostingsCursor[] = [];
  private cursorsUsed = 0;

  /**
   * Ends a search's reading of positions: its cursors are let go, to be opened again on the next search's lists. A
   * lookup past a full room (SEQUENCE_CURSORS lists in one search) drops none (`shared`) and reads on the shard's one
   * cursor, block after block.
   */
  endSearch(): void {
    this.sequenceCursors.clear();
    this.cursorsUsed = 0;
  }

  /** A long dense list's positions are found from its tfs a chunk (a short one's block is one decode anyway). */
  private withDense(cursor: PostingsCursor, address: number): PostingsCursor {
    if (cursor.df >= BLOCK) cursor.dense = this.dense(address);
    return cursor;
  }
  /**
   * Appends a (term, field) list's positions in doc to `gathered` from `used` (each shifted by GROUP_BITS with `group`
   * below, or as they are when `group` is -1): the new end. Each list is read on its own kept cursor
   * (sequenceCursor): chunks asked one after another fall in the blocks their cursors decoded last (the one shared
   * cursor, opened on list after list, decoded each anew).
   */
  private gather(term: number, field: number, doc: number, used: number, group: number): number {
    const cursor = this.sequenceCursor(term, field, true);
    const count = cursor ? cursor.positionsInto(doc) : -1;
    if (count < 0) return used;
    if (used + count > this.gathered.length) {
      const grown = new Uint32Array(Math.max(used + count, this.gathered.length * 2));
      grown.set(this.gathered.subarray(0, used));
      this.gathered = grown;
    }
    const from = cursor!.scratchPositions;
    const into = this.gathered;
    if (group < 0) for (let i = 0; i < count; i++) into[used + i] = from[i]!;
    else for (let i = 0; i < count; i++) into[used + i] = (from[i]! << GROUP_BITS) | group;
    return used + count;
  }
  /** gather()'s positions: smallestSpan's lists one after another, from spanStarts[k] to spanStarts[k + 1]; windowWeight's keys. */
  protected gathered = new Uint32Array(256);
  protected spanStarts = new Uint32Array(MAX_WORDS * 4 + 1);
  protected spanNext = new Uint32Array(MAX_WORDS * 4);
  /** How many of its groups the document held, in the last smallestSpan() call. */
  spanGroups = 0;

  protected windowCounts = new Int32Array(MAX_WORDS);

  /**
   * The most weight a run of `width` consecutive words of a document's field holds: the sum of `weights[g]` over the
   * groups (at most MAX_WORDS) with a term in the run, each counted once (0 when it holds none).
   */
  windowWeight(groups: number[][], weights: number[], field: number, doc: number, width: number): number {
    const n = Math.min(groups.length, MAX_WORDS);
    let used = 0;
    for (let g = 0; g < n; g++) {
      if (!weights[g]) continue;
      for (const t of groups[g]!) used = this.gather(t, field, doc, used, g);
    }
    const keys = this.gathered.subarray(0, used).sort();
    const counts = this.windowCounts.fill(0);
    let sum = 0;
    let most = 0;
    for (let i = 0, j = 0; j < used; j++) {
      const g = keys[j]! & GROUP_MASK;
      if (counts[g]!++ === 0) sum += weights[g]!;
      while ((keys[j]! >>> GROUP_BITS) - (keys[i]! >>> GROUP_BITS) >= width) {
        const h = keys[i++]! & GROUP_MASK;
        if (--counts[h]! === 0) sum -= weights[h]!;
      }
      if (sum > most) most = sum;
    }
    return most;
  }

  /**
   * The fewest consecutive words of a document's field holding one term of every group that
   * it holds a term of (0 when it holds terms of fewer than two groups), from the positions.
   * A group is a word's forms: the word, its other forms, its typos.
   */
  smallestSpan(groups: number[][], field: number, doc: number): number {
    this.spanGroups = 0;
    if (groups.length + 1 > this.spanStarts.length) {
      this.spanStarts = new Uint32Array(groups.length + 1);
      this.spanNext = new Uint32Array(groups.length);
    }
    const starts = this.spanStarts;
    let lists = 0;
    let used = 0;
    for (const group of groups) {
      const start = used;
      for (const t of group) used = this.gather(t, field, doc, used, -1);
      if (used === start) continue;
      if (group.length > 1) this.gathered.subarray(start, used).sort();
      starts[lists++] = start;
    }
    starts[lists] = used;
    this.spanGroups = lists;
    if (lists < 2) return 0;
    const values = this.gathered;
    // A window over the merged positions: advance the list whose current position is lowest.
    const next = this.spanNext;
    for (let k = 0; k < lists; k++) next[k] = starts[k]!;
    let best = Infinity;
    for (;;) {
      let lo = 0;
      let hi = 0;
      for (let k = 0; k < lists; k++) {
        const p = values[next[k]!]!;
        if (p < values[next[lo]!]!) lo = k;
        if (p > values[next[hi]!]!) hi = k;
      }
      const span = values[next[hi]!]! - values[next[lo]!]! + 1;
      if (span < best) best = span;
      if (++next[lo]! >= starts[lo + 1]!) break;
    }
    return best;
  }
}
