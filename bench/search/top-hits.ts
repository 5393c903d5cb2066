/**
 * The top hits of a fixed mix of queries, as JSON lines: run it on two checkouts and compare
 * the outputs to check that a change leaves every ranking (and every highlighted text) as it was.
 *
 *   bun bench/search/top-hits.ts SNAPSHOT [QUERIES] > hits.jsonl
 *
 * About QUERIES searches (default 350) drawn by bench/queries.ts, some with other options, and a
 * lucky lookup every tenth; the time budget is lifted so that the load of the machine cannot cut a search short.
 */
import { GUARDS, open } from "../../src/search";
import { queryMix } from "../queries";

const [path, count = "350"] = process.argv.slice(2);
if (!path || path === "--help") {
  console.error("usage: bun bench/search/top-hits.ts SNAPSHOT [QUERIES]");
  process.exit(path ? 0 : 2);
}
(GUARDS as { budgetMs: number }).budgetMs = 1e9;
const tome = open(path);
const mix = Object.entries(queryMix(tome.snapshot, 11));
for (let i = 0; i < Number(count); i++) {
  const [kind, make] = mix[i % mix.length]!;
  const q = make();
  const options = i % 5 === 4 ? { highlight: false, cropLength: 120 } : i % 7 === 3 ? { offset: 10 } : {};
  const r = tome.search(q, options);
  const hits = r.hits.map((h) => [
    h.page.pageId,
    h.chunk,
    h.score,
    h.formatted.title,
    h.formatted.text,
    h.page.timestamp,
    h.page.title,
    h.page.sections.length,
    h.page.chunks.length,
  ]);
  console.log(JSON.stringify({ kind, q, options, total: r.estimatedTotalHits, hits }));
  if (i % 10 === 0) {
    const l = tome.lucky(q);
    console.log(
      JSON.stringify({
        lucky: q,
        page: l?.page.pageId,
        chunk: l?.hit.chunk,
        text: l?.hit.formatted.text,
        total: l?.totalResults,
      }),
    );
  }
}
