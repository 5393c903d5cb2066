import { open } from "./src/search";
const t0 = performance.now();
const e = open("/tmp/s2/en.tome");
console.log("open ms", performance.now() - t0);
for (const q of ["albedo of snow", '"black-sky albedo"', "anarchism", "Alabama", "einstien relativity", "alg"]) {
  const r = e.search(q, { limit: 3 });
  console.log(
    q,
    r.estimatedTotalHits,
    r.hits.map((h) => `${h.page.title}#${h.chunk} ${h.score.toFixed(2)}`),
  );
}
console.log(e.lucky("Albedo")?.page.title, e.pageByTitle("anarchist")?.title, e.page(39)?.chunks[0]?.text.slice(0, 60));
console.log(e.changes(0, 0, 2).pages.map((p) => [p.title, p.timestamp]));
