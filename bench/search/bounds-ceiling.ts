/**
 * bun bench/search/bounds-ceiling.ts <snapshot.tome> [--class C] [--queries N] [--need K] [--short S]
 *
 * How much of a conjunction a block-max executor could leave unread under the ranking rules
 * (issue 44): for the queries of one class of the benchmark's mix (bench/queries.ts, its fixed
 * seed) whose required words a conjunction finds, every chunk holding them is scored
 * (conjunction.ts matchAll), each page ranked as a page of tier 0 with no title boost
 * (rules.ts pageScore), and the bar is the K-th best page's score (K = 10: the proximity
 * window, the least a search ranks). Then, per query, the share of those chunks that:
 *   - block bounds skip: the sum of their lists' block bounds (block-bounds.ts) times the
 *     words, times PAGE_FACTOR, is below the bar (what a chunk-at-a-time block-max skips);
 *   - held lists' block bounds skip: the same sum over only the lists that hold the chunk,
 *     times the words it holds (a bound that knew which lists hold it: the rest of the gap is
 *     the blocks' spread of tf and length);
 *   - rare words exact, pages bounded: MaxScore's split, by page: the lists of the required
 *     words a conjunction narrows by (those in at most a quarter of the chunks), and every list
 *     of at most K postings a chunk of the conjunction (--short K), scored exactly, every other
 *     list by its block bound, times the words; a page bounded by pageScore() of its best
 *     three chunk bounds; the chunks of pages whose bound is below the bar (with K = 0, what
 *     0b7c96b's pruning could leave at best; with K = 4, 17b78c5's);
 *   - exact chunk bounds skip: their own exact score times PAGE_FACTOR is below the bar (no
 *     chunk bound can do better);
 *   - exact page bounds skip: their page's exact score is below the bar (no bound at all can
 *     do better: the pages that cannot rank);
 * and the bar over the best chunk's score. Prints the medians and means of each over the queries.
 */
import { parseArgs } from "node:util";
import { open } from "../../src/search";
import { CONJUNCTION_SHARE, matchAll } from "../../src/search/ranking/conjunction";
import { PAGE_FACTOR, pageScore, placeBestThree, PROXIMITY_WINDOW } from "../../src/search/ranking/rules";
import { BM25, popcount, type ScoredList } from "../../src/search/index/shard-types";
import { queryTerms } from "../../src/search/stages/terms";
import { parseQuery } from "../../src/search/text/query";
import { quantile } from "../stats";
import { BlockBounds } from "./block-bounds";
import { mixClass, queryMix } from "../queries";

const USAGE = `Usage: bun bench/search/bounds-ceiling.ts <snapshot.tome> [--class C] [--queries N] [--need K] [--short S]
  --class C     a class of bench/queries.ts's mix (default "2-4 words"); several joined by commas
  --queries N   queries drawn per class (default 100)
  --need K      the pages a search ranks (default ${PROXIMITY_WINDOW})
  --short S     in the split bound, lists of at most S postings a chunk of the conjunction are read exactly (default 4)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    class: { type: "string", default: "2-4 words" },
    queries: { type: "string", default: "100" },
    need: { type: "string", default: String(PROXIMITY_WINDOW) },
    short: { type: "string", default: "4" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const engine = open(positionals[0]);
const { text, snapshot, lang } = engine;
const { firstDoc } = snapshot.pages;
const pageOf = new Int32Array(text.documentCount);
for (let p = 0; p < firstDoc.length; p++) pageOf.fill(p, firstDoc[p]!, firstDoc[p]! + snapshot.pages.chunkCounts[p]!);
const need = Number(values.need);
const shortList = Number(values.short);
const mix = queryMix(snapshot);
const cursor = text.newCursor();
const boundCursor = text.newCursor();
const blockBounds = new BlockBounds(text);
/** Per chunk, its index among the conjunction's (-1: none). */
const at = new Int32Array(text.documentCount).fill(-1);

console.log(
  `${positionals[0]}: the share of a conjunction's chunks each bound could leave unread, need ${need}, short lists ${shortList}`,
);
console.log(
  "| class | queries | chunks a query | block bounds skip | held lists' block bounds skip | rare words exact, pages bounded | exact chunk bounds skip | exact page bounds skip | bar ÷ best chunk |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const name of values.class.split(",")) {
  const make = mixClass(mix, name);
  const rows: number[][] = [];
  for (let q = 0; q < Number(values.queries); q++) {
    const terms = queryTerms(parseQuery(make(), lang), { text, lang });
    const all = matchAll(text, cursor, terms.exact, terms.required);
    if (!all || all.count === 0) continue;
    // Each page's exact score from its chunks' best three.
    const best = new Map<number, Float64Array>();
    let bestChunk = 0;
    for (let i = 0; i < all.count; i++) {
      const p = pageOf[all.docs[i]!]!;
      let three = best.get(p);
      if (!three) best.set(p, (three = new Float64Array(3).fill(-1)));
      placeBestThree(three, 0, all.scores[i]!);
      bestChunk = Math.max(bestChunk, all.scores[i]!);
    }
    const pageScores = new Map([...best].map(([p, t]) => [p, pageScore(t[0]!, t[1]!, t[2]!, 0)]));
    if (pageScores.size < need) continue;
    const bar = [...pageScores.values()].sort((a, b) => b - a)[need - 1]!;
    // Each chunk's block bound: its lists' bounds at the blocks that may hold it.
    const lists = text.scoredLists(all.derived);
    const words = new Set(lists.map((l) => l.word)).size;
    const bound = new Float64Array(all.count);
    const held = new Float64Array(all.count);
    const split = new Float64Array(all.count);
    const postingsOf = new Map<number, number>();
    for (const l of lists) postingsOf.set(l.word, (postingsOf.get(l.word) ?? 0) + l.df);
    const narrows = (w: number) =>
      (terms.required & (1 << w)) !== 0 && postingsOf.get(w)! <= CONJUNCTION_SHARE * text.documentCount;
    // Short lists are read exactly too: reading them costs less than the chunks they could rule out.
    const exact = (l: ScoredList) => narrows(l.word) || l.df <= shortList * all.count;
    for (let i = 0; i < all.count; i++) at[all.docs[i]!] = i;
    for (const l of lists) {
      const { lengths, table } = text.norms(l.field);
      const bounds = blockBounds.of(l);
      const read = exact(l);
      const c = boundCursor.open(l.address);
      for (let i = 0, b = 0; i < all.count; i++) {
        while (b < c.blocks && c.lastDoc(b) < all.docs[i]!) b++;
        if (b < c.blocks) bound[i]! += l.weight * bounds[b]!;
      }
      for (let i = 0, b = 0; i < all.count && !read; i++) {
        while (b < c.blocks && c.lastDoc(b) < all.docs[i]!) b++;
        if (b < c.blocks) split[i]! += l.weight * bounds[b]!;
      }
      for (let b = 0; b < c.blocks; b++) {
        const n = c.decode(b);
        for (let j = 0; j < n; j++) {
          const d = c.docs[j]!;
          const i = at[d]!;
          if (i < 0) continue;
          held[i]! += l.weight * bounds[b]!;
          const tf = c.tfs[j]!;
          if (read) split[i]! += l.weight * (BM25.d + (tf * (BM25.k + 1)) / (tf + table[lengths[d]!]!));
        }
      }
    }
    // Each page's bound from its chunks' split bounds.
    const splitPage = new Map<number, Float64Array>();
    for (let i = 0; i < all.count; i++) {
      const p = pageOf[all.docs[i]!]!;
      let three = splitPage.get(p);
      if (!three) splitPage.set(p, (three = new Float64Array(3).fill(-1)));
      placeBestThree(three, 0, split[i]! * words);
    }
    for (let i = 0; i < all.count; i++) at[all.docs[i]!] = -1;
    let byBlock = 0;
    let byHeld = 0;
    let bySplit = 0;
    let byChunk = 0;
    let byPage = 0;
    for (let i = 0; i < all.count; i++) {
      if (bound[i]! * words * PAGE_FACTOR < bar) byBlock++;
      if (held[i]! * popcount(all.masks[i]!) * PAGE_FACTOR < bar) byHeld++;
      const t = splitPage.get(pageOf[all.docs[i]!]!)!;
      if (pageScore(t[0]!, t[1]!, t[2]!, 0) < bar) bySplit++;
      if (all.scores[i]! * PAGE_FACTOR < bar) byChunk++;
      if (pageScores.get(pageOf[all.docs[i]!]!)! < bar) byPage++;
    }
    rows.push([
      all.count,
      byBlock / all.count,
      byHeld / all.count,
      bySplit / all.count,
      byChunk / all.count,
      byPage / all.count,
      bar / bestChunk,
    ]);
  }
  const column = (k: number, f: (x: number) => string) => {
    const xs = rows.map((r) => r[k]!);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    return `${f(quantile(xs, 0.5))} (mean ${f(mean)})`;
  };
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  console.log(
    `| ${name} | ${rows.length} | ${column(0, (x) => x.toFixed(0))} | ${column(1, pct)} | ${column(2, pct)} | ${column(3, pct)} | ${column(4, pct)} | ${column(5, pct)} | ${column(6, (x) => x.toFixed(2))} |`,
  );
}
