/**
 * A form's pages in order of the most it can add to each (D122): what the typo-orders plan
 * (typo-orders.ts) reads of a typo term the snapshot stores no order for (one of fewer than
 * PRUNE_FROM postings, D51). Its lists are read whole; each chunk's part is the form's BM25F
 * over its fields (what the executor adds for that form alone, its weight in its IDF), and a
 * page's is D61's page score of its chunks' parts. A page's score for the query is at most the
 * sum of what its forms add to it (a word adds its best form; the page score is a sum of its
 * best chunks' scores with falling weights, so at most the sum over forms), which is all
 * Fagin's threshold needs of an order.
 */
import type { Form } from "../ranking/query-lists";
import { bm25f, pageScore } from "../ranking/rules";
import type { SearchContext } from "../stages/context";

export interface BoundOrder {
  /** The pages holding the form, the most it can add first. */
  pages: Int32Array;
  /** What it can add to each, in the same order. */
  bounds: Float64Array;
}

export function boundOrder(ctx: SearchContext, form: Form): BoundOrder {
  const { text, catalog, meter } = ctx;
  const cursor = ctx.textCursor;
  // Each list's documents and parts, then merged by document (a list per field: a few).
  const docs: Int32Array[] = [];
  const parts: Float64Array[] = [];
  for (const list of form.lists) {
    const { lengths, table } = text.norms(list.field);
    cursor.open(list.address);
    const d = new Int32Array(cursor.df);
    const v = new Float64Array(cursor.df);
    let k = 0;
    for (let b = 0; b < cursor.blocks; b++) {
      const n = cursor.decode(b);
      for (let i = 0; i < n; i++, k++) {
        const doc = cursor.docs[i]!;
        d[k] = doc;
        v[k] = (list.unit * cursor.tfs[i]!) / table[lengths[doc]!]!;
      }
    }
    meter.add(0, k);
    docs.push(d);
    parts.push(v);
  }
  const at = new Int32Array(docs.length);
  const pages: number[] = [];
  const bounds: number[] = [];
  let page = -1;
  let a = 0;
  let b = 0;
  let c = 0;
  const endPage = () => {
    if (page >= 0) {
      pages.push(page);
      bounds.push(pageScore(a, b, c, 0));
    }
  };
  for (;;) {
    let doc = Infinity;
    for (let l = 0; l < docs.length; l++) if (at[l]! < docs[l]!.length && docs[l]![at[l]!]! < doc) doc = docs[l]![at[l]!]!;
    if (doc === Infinity) break;
    let combined = 0;
    for (let l = 0; l < docs.length; l++)
      if (at[l]! < docs[l]!.length && docs[l]![at[l]!] === doc) combined += parts[l]![at[l]!++]!;
    const s = bm25f(form.idf, combined);
    const p = catalog.pageOfChunk[doc]!;
    if (p !== page) {
      endPage();
      page = p;
      a = b = c = 0;
    }
    if (s > a) {
      c = b;
      b = a;
      a = s;
    } else if (s > b) {
      c = b;
      b = s;
    } else if (s > c) c = s;
  }
  endPage();
  const order = Int32Array.from(pages.keys()).sort((x, y) => bounds[y]! - bounds[x]! || pages[x]! - pages[y]!);
  return { pages: order.map((i) => pages[i]!), bounds: Float64Array.from(order, (i) => bounds[i]!) };
}
