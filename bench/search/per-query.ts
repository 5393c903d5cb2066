/**
 * bun bench/search/per-query.ts <snapshot.tome> --class C [--queries N] [--runs R]
 *
 * Where one class's time goes, query by query: the queries of a class of the benchmark's mix
 * (bench/queries.ts, its fixed seed), each searched twice to warm it (so that the lookup lists
 * it makes, on its second search, are not counted), then R times; printed fastest first, each with its median time, its
 * plan (SearchWork.plan), the postings it decoded, the candidates it ranked, the lists its
 * words' terms have in the text shard (required words' and the rest: function words, which are
 * optional, a prefix's expansions and other forms are among the rest) and the query. Ends with
 * the medians over the class.
 */
import { parseArgs } from "node:util";
import { median } from "../stats";

const USAGE = `Usage: bun bench/search/per-query.ts <snapshot.tome> --class C [--queries N] [--runs R]
  --class C     a class of bench/queries.ts's mix ("2-4 words", question, phrase, …)
  --queries N   queries drawn (default 60)
  --runs R      timed searches of each query after its warm-up (default 3)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    class: { type: "string" },
    queries: { type: "string", default: "60" },
    runs: { type: "string", default: "3" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0] || !values.class) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { open } = await import("../../src/search");
const { queryTerms } = await import("../../src/search/stages/terms");
const { parseQuery } = await import("../../src/search/text/query");
const { mixClass, queryMix } = await import("../queries");

const engine = open(positionals[0]);
const queries = Array.from({ length: Number(values.queries) }, mixClass(queryMix(engine.snapshot), values.class));
const runs = Number(values.runs);
/** Searches of a query before it is timed: a lookup list is made on the search after the one that read its blocks (rent or buy, D78). */
const WARM_UPS = 2;

interface Row {
  query: string;
  ms: number;
  plan: string;
  postings: number;
  candidates: number;
  requiredLists: number;
  otherLists: number;
}

const rows: Row[] = queries.map((query) => {
  let work = engine.search(query).work;
  for (let w = 1; w < WARM_UPS; w++) work = engine.search(query).work;
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const started = performance.now();
    work = engine.search(query).work;
    times.push(performance.now() - started);
  }
  return {
    query,
    ms: median(times),
    plan: work.plan,
    postings: work.postings,
    candidates: work.candidates,
    ...listsOf(query),
  };
});

function listsOf(query: string): { requiredLists: number; otherLists: number } {
  const terms = queryTerms(parseQuery(query, engine.lang), { text: engine.text, lang: engine.lang });
  const lists = engine.text.derive(terms.exact).flatMap((d) => engine.text.termLists(d.term).map(() => d.word));
  const required = lists.filter((word) => terms.required & (1 << word)).length;
  return { requiredLists: required, otherLists: lists.length - required };
}

rows.sort((a, b) => a.ms - b.ms);
console.log(`${positionals[0]}, class ${values.class}: ${rows.length} queries, median of ${runs} warm searches each`);
console.log("| ms | plan | postings | candidates | required words' lists | other lists | query |");
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.ms.toFixed(2)} | ${r.plan} | ${r.postings} | ${r.candidates} | ${r.requiredLists} | ${r.otherLists} | ${r.query} |`,
  );
}
const mid = (pick: (r: Row) => number) => median(rows.map(pick));
console.log(
  `| **median** ${mid((r) => r.ms).toFixed(2)} | | ${mid((r) => r.postings)} | ${mid((r) => r.candidates)} | ${mid((r) => r.requiredLists)} | ${mid((r) => r.otherLists)} | |`,
);
