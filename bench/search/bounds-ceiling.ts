/**
 * bun bench/search/bounds-ceiling.ts <snapshot.tome> [--class C] [--queries N] [--need K]
 *
 * The gate of issue 58 (D90): with the score bounded per word (a word adds its best form) and
 * each word's bound in a window of chunks read from its lists' impacts (word-reader.ts), how
 * much of the rarest required word's windows a block-max executor can skip. For the queries of
 * one class of the benchmark's mix (bench/queries.ts, its fixed seed), every chunk is scored by
 * the oracle (ranking/range-scores.ts), the pages holding every required word ranked as pages of
 * tier 0 (rules.ts pageScore, no title boost), and the bar is the K-th best page's score (K = 10:
 * the proximity window, the least a search ranks). Then the rarest required word's windows are
 * walked as the executor walks them (one block of its biggest list, to the end of the last page):
 * a window is skipped when pageFactor() × the sum of every word's bound there is below the bar.
 * Prints, over the queries, the median and mean share of windows skipped and of the rarest
 * word's postings in them.
 */
import { parseArgs } from "node:util";
import { open } from "../../src/search";
import { ListReader } from "../../src/search/ranking/list-reader";
import { QueryLists } from "../../src/search/ranking/query-lists";
import { RangeScorer } from "../../src/search/ranking/range-scores";
import { pageFactor, pageScore, PROXIMITY_WINDOW } from "../../src/search/ranking/rules";
import { WordReader } from "../../src/search/ranking/word-reader";
import { queryTerms } from "../../src/search/stages/terms";
import { parseQuery } from "../../src/search/text/query";
import { median } from "../stats";
import { mixClass, queryMix } from "../queries";

const USAGE = `Usage: bun bench/search/bounds-ceiling.ts <snapshot.tome> [--class C] [--queries N] [--need K]
  --class C     a class of bench/queries.ts's mix (default "2-4 words"); several joined by commas
  --queries N   queries drawn per class (default 100)
  --need K      the pages a search ranks (default ${PROXIMITY_WINDOW})`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    class: { type: "string", default: "2-4 words" },
    queries: { type: "string", default: "100" },
    need: { type: "string", default: String(PROXIMITY_WINDOW) },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const engine = open(positionals[0]);
const { text } = engine;
const need = Number(values.need);
const ranges = new RangeScorer(text);
const pageOf = engine.snapshot.pages;
const N = text.documentCount;
const pageOfChunk = new Int32Array(N);
const firstChunk = new Int32Array(pageOf.length + 1);
for (let p = 0; p < pageOf.length; p++) {
  firstChunk[p] = pageOf.firstDoc[p]!;
  pageOfChunk.fill(p, pageOf.firstDoc[p]!, pageOf.firstDoc[p]! + pageOf.chunkCounts[p]!);
}
firstChunk[pageOf.length] = N;

interface Row {
  query: string;
  windows: number;
  skipped: number;
  postings: number;
  postingsSkipped: number;
}

function measure(query: string): Row | undefined {
  const parsed = parseQuery(query, engine.lang);
  if (!parsed.words.length) return undefined;
  const terms = queryTerms(parsed, { text, lang: engine.lang });
  const lists = new QueryLists(text, {
    derived: text.derive(terms.exact),
    words: terms.words.length,
    required: terms.required,
    phraseWords: 0,
  });
  // The bar: the K-th best page among those holding every required word (tier 0).
  const scores = ranges.score(lists, 0, N);
  const pages: number[] = [];
  let page = -1;
  let best: number[] = [];
  const close = () => {
    if (page >= 0 && best.length) pages.push(pageScore(best[0]!, best[1] ?? 0, best[2] ?? 0, 0));
  };
  for (let i = 0; i < scores.count; i++) {
    if ((scores.exactMask[i]! & terms.required) !== terms.required) continue;
    const p = pageOfChunk[scores.docs[i]!]!;
    if (p !== page) {
      close();
      page = p;
      best = [];
    }
    best.push(scores.exact[i]!);
    best.sort((a, b) => b - a);
  }
  close();
  if (pages.length < need) return undefined;
  pages.sort((a, b) => b - a);
  const bar = pages[need - 1]!;
  const words = lists.byWord.map(
    (forms, w) =>
      new WordReader(
        w,
        forms,
        text,
        () => text.newCursor(),
        () => new ListReader(),
      ),
  );
  const lead = words.filter((w) => terms.required & (1 << w.word)).reduce((a, b) => (b.postings < a.postings ? b : a));
  const biggest = lead.forms.flatMap((f) => f.lists).reduce((a, b) => (b.cursor.df > a.cursor.df ? b : a));
  const walker = text.newCursor();
  const row: Row = { query, windows: 0, skipped: 0, postings: 0, postingsSkipped: 0 };
  let from = 0;
  for (let b = 0; b < biggest.cursor.blocks && from < N; ) {
    let to = Math.max(biggest.cursor.lastDoc(b), from);
    to = firstChunk[pageOfChunk[to]!]! + pageOf.chunkCounts[pageOfChunk[to]!]! - 1;
    let bound = 0;
    for (const w of words) bound += w.bound(from, to);
    let held = 0;
    for (const form of lead.forms)
      for (const l of form.lists)
        walker.open(l.address).forEach(
          () => {
            held++;
          },
          from,
          to + 1,
        );
    row.windows++;
    row.postings += held;
    if (pageFactor() * bound < bar) {
      row.skipped++;
      row.postingsSkipped += held;
    }
    from = to + 1;
    while (b < biggest.cursor.blocks && biggest.cursor.lastDoc(b) < from) b++;
  }
  return row;
}

const mix = queryMix(engine.snapshot);
for (const klass of values.class!.split(",")) {
  const queries = Array.from({ length: Number(values.queries) }, mixClass(mix, klass));
  const rows = queries.map(measure).filter((r): r is Row => r !== undefined);
  const share = (f: (r: Row) => number) => rows.map(f);
  const windows = share((r) => r.skipped / r.windows);
  const postings = share((r) => (r.postings ? r.postingsSkipped / r.postings : 0));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  console.log(
    `${positionals[0]}, class ${klass}: ${rows.length} of ${queries.length} queries with ${need} pages holding every required word`,
  );
  console.log(`| | median | mean |`);
  console.log(`|---|---|---|`);
  console.log(`| the rarest word's windows skipped | ${pct(median(windows))} | ${pct(mean(windows))} |`);
  console.log(`| its postings in them | ${pct(median(postings))} | ${pct(mean(postings))} |`);
}
