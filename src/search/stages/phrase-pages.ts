/**
 * Quoted phrases alone, over every page (the `phrases` plan, ranking/plan.ts): the best `need`
 * pages holding every phrase, exact, with the phrases checked on as few pages as that takes.
 *
 * Every chunk holding the phrases' words (their conjunction, ranking/conjunction.ts) is found
 * and scored. A page's chunks that hold the phrases are among its chunks that hold the words,
 * so its score over the latter (pageScore of its best three) bounds its score over the former.
 * The pages are checked best bound first, each wholly (stages/phrases.ts); once `need` pages
 * are known to rank above every bound left, the rest are left unchecked: none of them can rank.
 * Title matches and boosted titles rank by other rules (D8): they are checked first, all.
 * Past the time budget the pages not yet checked are left out. The pages holding the phrases
 * are then estimated from the share of the checked pages that did (D48).
 */
import { matchAll } from "../ranking/conjunction";
import { pageScore, placeBestThree, rankClass } from "../ranking/rules";
import type { ParsedQuery } from "../text/query";
import type { SearchContext } from "./context";
import { type KeptPhrases, phraseCheck } from "./phrases";
import type { Candidate } from "./pool";
import type { QueryTerms } from "./terms";
import { markTitleGroups } from "./title-groups";

/** The D8 group of a page with no title match. */
const OTHER_GROUP = 2;
const OTHER_CLASS = rankClass(OTHER_GROUP, 0);

/** A ranked page, as stages/pages.ts ranks it: class, then score, then page. */
interface Entry {
  page: number;
  klass: number;
  score: number;
}

const before = (a: Entry, b: Entry): boolean =>
  a.klass < b.klass || (a.klass === b.klass && (a.score > b.score || (a.score === b.score && a.page < b.page)));

/**
 * The chunks holding every phrase of the pages that may rank among the best `need`, in the
 * pool, as stages/pages.ts reads them; with the pages holding the phrases, estimated.
 * Undefined, the pool left empty, when the conjunction does not pay (every word common).
 */
export function phrasePages(
  ctx: SearchContext,
  query: ParsedQuery,
  terms: QueryTerms,
  need: number,
): { kept: KeptPhrases; matching: number } | undefined {
  const { text, scratch, meter, catalog } = ctx;
  const holds = phraseCheck(ctx, query);
  if (!holds) return undefined;
  const all = matchAll(text, ctx.textCursor, terms.exact, terms.full, { into: scratch.textBuffer(0) });
  if (!all) return undefined;
  meter.counted(all);
  const { pageGroup, titleBoost } = scratch;
  markTitleGroups(ctx, query, terms.title, terms.informative);
  // Each page's chunks, at all[start, end) (a page's chunks are consecutive), and the bound of its score.
  const starts: number[] = [];
  const bounds: number[] = [];
  const three = new Float64Array(3);
  for (let i = 0; i < all.count; ) {
    const p = catalog.pageOfChunk[all.docs[i]!]!;
    starts.push(i);
    three.fill(-1);
    for (; i < all.count && catalog.pageOfChunk[all.docs[i]!] === p; i++) placeBestThree(three, 0, all.scores[i]!);
    const titled = pageGroup[p]! > 0 || titleBoost[p]! > 0;
    bounds.push(titled ? Infinity : pageScore(three[0]!, three[1]!, three[2]!, 0));
  }
  const pages = starts.length;
  starts.push(all.count);
  const order = new PageHeap(bounds);
  const holding = new Uint8Array(all.count);
  /** The best `need` pages checked so far, best first. */
  const best: Entry[] = [];
  let checked = 0;
  let found = 0;
  for (let k = order.pop(); k >= 0; k = order.pop()) {
    const bound = bounds[k]!;
    const last = best.length >= need ? best[need - 1]! : undefined;
    // A page with no title match ranks at most as its bound, in the class of chunks holding every word: past the last kept, none left can rank.
    if (last && bound !== Infinity && (last.klass < OTHER_CLASS || (last.klass === OTHER_CLASS && bound < last.score)))
      break;
    if (checked % 16 === 15 && meter.late()) break;
    checked++;
    three.fill(-1);
    let any = false;
    for (let i = starts[k]!; i < starts[k + 1]!; i++) {
      if (!holds(all.docs[i]!)) continue;
      holding[i] = 1;
      any = true;
      placeBestThree(three, 0, all.scores[i]!);
    }
    if (!any) continue;
    found++;
    const page = catalog.pageOfChunk[all.docs[starts[k]!]!]!;
    const group = pageGroup[page] ? pageGroup[page]! - 1 : OTHER_GROUP;
    const entry = {
      page,
      klass: rankClass(group, 0),
      score: pageScore(three[0]!, three[1]!, three[2]!, titleBoost[page]!),
    };
    let at = best.length;
    while (at > 0 && before(entry, best[at - 1]!)) at--;
    if (at < need) {
      best.splice(at, 0, entry);
      if (best.length > need) best.pop();
    }
  }
  // The chunks that held the phrases, in the pool; the others are not kept.
  let n = 0;
  for (let i = 0; i < all.count; i++) {
    if (!holding[i]) continue;
    all.docs[n] = all.docs[i]!;
    all.masks[n] = all.masks[i]!;
    all.scores[n++] = all.scores[i]!;
  }
  all.count = n;
  const { pool } = scratch;
  pool.add(all, 0, terms.full, "having");
  const list: Candidate[] = [];
  for (let i = 0; i < pool.size; i++) {
    const c = pool.candidate(i);
    c.position = i;
    list.push(c);
  }
  // Scales the pages found to the pages holding the phrases, estimated from the share of those checked that did.
  const estimated = checked ? Math.round((pages * found) / checked) : 0;
  return { kept: { list, estimate: found ? estimated / found : 1 }, matching: estimated };
}

/** Pages by their bound, highest first, then in page order (their index): a binary heap, since few are taken. */
class PageHeap {
  private readonly heap: Int32Array;
  private size: number;

  constructor(private readonly bounds: number[]) {
    this.size = bounds.length;
    this.heap = Int32Array.from({ length: this.size }, (_x, k) => k);
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** The next page's index, -1 when none is left. */
  pop(): number {
    if (!this.size) return -1;
    const top = this.heap[0]!;
    this.heap[0] = this.heap[--this.size]!;
    this.down(0);
    return top;
  }

  private above(a: number, b: number): boolean {
    const { bounds } = this;
    return bounds[a]! > bounds[b]! || (bounds[a] === bounds[b] && a < b);
  }

  private down(i: number): void {
    const { heap, size } = this;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < size && this.above(heap[l]!, heap[top]!)) top = l;
      if (r < size && this.above(heap[r]!, heap[top]!)) top = r;
      if (top === i) return;
      [heap[i], heap[top]] = [heap[top]!, heap[i]!];
      i = top;
    }
  }
}
