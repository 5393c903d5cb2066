/**
 * A query word as one pass of the executor reads it (executor.ts): its forms allowed in the
 * pass (a typo pass allows its typo terms too), each with a ListReader per field. A word adds
 * its best form (BM25F, rules.ts); its bound in a window is its best form's bound, from the
 * lists' impacts.
 */
import type { PostingsCursor } from "../postings/postings";
import type { Shard } from "../postings/shard";
import type { ListReader } from "./list-reader";
import type { Form } from "./query-lists";
import { bm25f } from "./rules";

/** Bounds are raised by this much: a sum of bounds in another order than the scores' must not fall below them. */
const ROUNDING = 1 + 1e-9;

export class WordReader {
  readonly forms: { idf: number; lists: ListReader[] }[] = [];
  /** Postings in the forms' lists: what reading the word costs. */
  postings = 0;
  /** Each form's bound in the range bound() was last asked for, and the forms by it, highest first. */
  private readonly formBounds: Float64Array;
  private readonly order: Uint8Array;
  /** The forms split() left out of scan() in its window (1): alone, their bounds there cannot lift a page past the bar. */
  private readonly skipped: Uint8Array;
  /** The range bound() was last asked for: formBounds are its. */
  private boundFrom = -1;
  private boundTo = -1;

  constructor(
    readonly word: number,
    forms: Form[],
    text: Shard,
    cursor: () => PostingsCursor,
    reader: () => ListReader,
    sparse = false,
  ) {
    for (const form of forms) {
      const lists = form.lists.map((l) =>
        reader().open(cursor(), l, text.norms(l.field), text.dense(l.address), sparse),
      );
      this.forms.push({ idf: form.idf, lists });
      this.postings += form.postings;
    }
    this.formBounds = new Float64Array(this.forms.length).fill(Infinity);
    this.order = Uint8Array.from(this.forms, (_f, i) => i);
    this.skipped = new Uint8Array(this.forms.length);
  }

  /**
   * Bounds the forms in [from, to] and leaves out of scan() those whose bound is below `least` (MaxScore within one
   * word: a page all of whose chunks hold only such forms cannot beat the bar); returns the greatest bound left out
   * (0: none). scan() with `skipped` then reads them alone, over a page the others found.
   */
  split(from: number, to: number, least: number): number {
    // The window's bounds were most often just asked (Windows.skipEnd()).
    if (from !== this.boundFrom || to !== this.boundTo) this.bound(from, to);
    let rest = 0;
    const { formBounds, skipped } = this;
    for (let i = 0; i < formBounds.length; i++) {
      const b = formBounds[i]!;
      skipped[i] = b < least ? 1 : 0;
      if (b < least && b > rest) rest = b;
    }
    return rest;
  }

  /**
   * What the word adds to doc, a chunk of the range bound() was last asked for: its best form's
   * score, 0 when no form holds it. The forms are asked highest bound first, and no further once
   * a form's bound cannot beat the best found.
   */
  scoreAt(doc: number): number {
    let best = 0;
    const { forms, formBounds, order } = this;
    for (let k = 0; k < order.length; k++) {
      const i = order[k]!;
      if (formBounds[i]! <= best) break;
      const form = forms[i]!;
      let combined = 0;
      for (const l of form.lists) combined += l.at1(doc);
      if (combined > 0) {
        const s = bm25f(form.idf, combined);
        if (s > best) best = s;
      }
    }
    return best;
  }

  /** The most the word adds to a chunk of [from, to] (0: it holds none there); scoreAt() then asks its forms by their bounds there. */
  bound(from: number, to: number): number {
    this.boundFrom = from;
    this.boundTo = to;
    let best = 0;
    const { forms, formBounds, order } = this;
    for (let i = 0; i < forms.length; i++) {
      const form = forms[i]!;
      let combined = 0;
      for (const l of form.lists) combined += l.bound(from, to);
      const s = combined > 0 ? bm25f(form.idf, combined) * ROUNDING : 0;
      formBounds[i] = s;
      if (s > best) best = s;
    }
    // Few forms: sorted by insertion, highest bound first.
    for (let k = 1; k < order.length; k++) {
      const i = order[k]!;
      let j = k - 1;
      while (j >= 0 && formBounds[order[j]!]! < formBounds[i]!) {
        order[j + 1] = order[j]!;
        j--;
      }
      order[j + 1] = i;
    }
    return best;
  }

  /** The first chunk at or after `from` that a list of the word may hold (ListReader.firstFrom; Infinity: none). */
  nextDoc(from: number): number {
    let next = Infinity;
    for (const form of this.forms)
      for (const l of form.lists) {
        const d = l.firstFrom(from);
        if (d < next) next = d;
      }
    return next;
  }

  /**
   * Marks every chunk of [from, to] the word holds (best[doc − from] > 0), listing them in touched[n…]: scan() without
   * the scores (its lists' sums are left in best).
   */
  mark(from: number, to: number, best: Float64Array, touched: Uint32Array, n: number): number {
    for (const form of this.forms) for (const l of form.lists) n = l.scan(from, to, best, touched, n);
    return n;
  }

  /**
   * Scores every chunk of [from, to] the word holds into best[doc − from] (its best form),
   * listing the chunks first touched in touched[n…]; returns the new n. The forms split() left out are not read, or,
   * with `skipped`, only they are. `combined` is scratch of the window's size, left zero; formTouched too.
   */
  scan(
    from: number,
    to: number,
    best: Float64Array,
    touched: Uint32Array,
    n: number,
    combined: Float64Array,
    formTouched: Uint32Array,
    skipped = false,
  ): number {
    const only = skipped ? 1 : 0;
    for (let f = 0; f < this.forms.length; f++) {
      if (this.skipped[f] !== only) continue;
      const form = this.forms[f]!;
      let m = 0;
      for (const l of form.lists) m = l.scan(from, to, combined, formTouched, m);
      for (let i = 0; i < m; i++) {
        const at = formTouched[i]!;
        const s = bm25f(form.idf, combined[at]!);
        combined[at] = 0;
        if (best[at] === 0) touched[n++] = at;
        if (s > best[at]!) best[at] = s;
      }
    }
    return n;
  }
}
