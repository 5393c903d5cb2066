/**
 * bun bench/search/phrases-fts5.ts <snapshot.tome> [--queries N] [--words 2|3] [--json]
 *
 * Quoted phrases, Tome against SQLite FTS5 on the same chunks, in one process and one run
 * (issue 44: phrases at least as fast as FTS5). The snapshot's chunks (title and text) go
 * into an FTS5 table (unicode61, diacritics removed: as bench/relevance/relevance.ts); then N phrases of
 * 2 (or 3) consecutive words drawn from the snapshot's own text (bench/queries.ts, fixed seed)
 * are searched by both, interleaved, each asked for its best 10: Tome's `"w1 w2"` by
 * Engine.search (default options: pruned where D48 says, highlighted, cropped), FTS5's
 * `MATCH '"w1 w2"' ORDER BY bm25(chunks) LIMIT 10`. Reports p50 / p99 / mean ms of each and
 * the ratio of the p50s. Both run on this one thread; FTS5's table is in memory. --tome-only
 * leaves FTS5 out (a workload for the profiler: bun --cpu-prof-md … --tome-only).
 */
import { parseArgs } from "node:util";
import { quantile } from "../stats";

const USAGE = `Usage: bun bench/search/phrases-fts5.ts <snapshot.tome> [--queries N] [--words 2|3] [--json]
  --queries N   phrases to search (default 500)
  --words K     words per phrase (default 2)
  --json        print the figures as JSON
  --tome-only   search Tome alone, no FTS5 table (for profiling Tome's phrases)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    queries: { type: "string", default: "500" },
    words: { type: "string", default: "2" },
    json: { type: "boolean" },
    "tome-only": { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { open } = await import("../../src/search");
const { querySampler } = await import("../queries");
const { fts5Chunks } = await import("../support");

const engine = open(positionals[0]);
const pages = engine.snapshot.pages;
const { db, add } = fts5Chunks();
const loadStarted = performance.now();
let rows = 0;
db.transaction(() => {
  if (values["tome-only"]) return;
  for (let p = 0; p < pages.ids.length; p++) {
    const title = pages.title(p);
    for (let c = 0; c < pages.chunkCounts[p]!; c++) add(rows++, title, pages.chunkText(p, c));
  }
})();
const loadMs = performance.now() - loadStarted;

const { sampleWords } = querySampler(engine.snapshot, 23);
const plain = (w: string) => /^[\p{L}\p{N}]+$/u.test(w);
const words = Number(values.words);
const phrases: string[] = [];
while (phrases.length < Number(values.queries)) {
  const ws = sampleWords(words, plain);
  if (ws.length === words) phrases.push(ws.join(" "));
}

const select = db.prepare<{ id: number }, [string]>(
  "SELECT rowid AS id FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT 10",
);
const tome: number[] = [];
const fts: number[] = [];
let tomeHits = 0;
let ftsHits = 0;
// One of each first, untimed: both warm their code and the pages of the file they touch first.
engine.search(`"${phrases[0]}"`);
select.all(`"${phrases[0]}"`);
for (const phrase of phrases) {
  let t = performance.now();
  tomeHits += engine.search(`"${phrase}"`).hits.length;
  tome.push(performance.now() - t);
  if (values["tome-only"]) continue;
  t = performance.now();
  ftsHits += select.all(`"${phrase}"`).length;
  fts.push(performance.now() - t);
}

const stats = (xs: number[]) => ({
  p50: quantile(xs, 0.5),
  p99: quantile(xs, 0.99),
  mean: xs.reduce((a, b) => a + b, 0) / xs.length,
});
const result = {
  chunks: rows,
  phrases: phrases.length,
  words,
  ftsLoadMs: loadMs,
  tome: stats(tome),
  fts5: stats(fts),
  tomeHits,
  ftsHits,
};
if (values.json) console.log(JSON.stringify(result, null, 2));
else {
  const f = (x: number) => x.toFixed(2);
  console.log(
    `${rows.toLocaleString()} chunks (FTS5 table loaded in ${(loadMs / 1000).toFixed(1)} s); ${phrases.length} phrases of ${words} words`,
  );
  console.log(
    `Tome  p50 ${f(result.tome.p50)} ms  p99 ${f(result.tome.p99)} ms  mean ${f(result.tome.mean)} ms  (${tomeHits} hits)`,
  );
  console.log(
    `FTS5  p50 ${f(result.fts5.p50)} ms  p99 ${f(result.fts5.p99)} ms  mean ${f(result.fts5.mean)} ms  (${ftsHits} hits)`,
  );
  console.log(`Tome's p50 ÷ FTS5's: ${(result.tome.p50 / result.fts5.p50).toFixed(2)}`);
}
