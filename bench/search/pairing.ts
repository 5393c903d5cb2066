/**
 * First runs paired in one process (paired.ts, huge-pages.ts): two engines over one corpus, each query's first run
 * timed on both by the process's CPU, the order alternating query by query so that the machine's noise and the head
 * start the second run of a query takes from the first (the caches the process keeps, about 0.4 ms: RESULTS.md,
 * session 69) fall on both sides alike.
 */
import type { Engine } from "../../src/search";
import { queryMix } from "../queries";

/** Other queries of the mix (another seed than the measured ones'), `count` of them, run on both engines. */
export function warmBoth(a: Engine, b: Engine, count: number): void {
  const other = queryMix(a.snapshot, 99);
  const kinds = Object.keys(other);
  for (let i = 0; i < count; i++) {
    const q = other[kinds[i % kinds.length]!]!();
    a.search(q);
    b.search(q);
  }
}

/** Each side's CPU ms a query, the per-query ratios b ÷ a, and how many queries' hits (pages, chunks, snippets) differ. */
export function pairFirstRuns(a: Engine, b: Engine, queries: string[]) {
  const onA: number[] = [];
  const onB: number[] = [];
  const ratios: number[] = [];
  let differ = 0;
  queries.forEach((q, i) => {
    let onARun: Run;
    let onBRun: Run;
    if (i % 2) {
      onARun = run(a, q);
      onBRun = run(b, q);
    } else {
      onBRun = run(b, q);
      onARun = run(a, q);
    }
    onA.push(onARun.ms);
    onB.push(onBRun.ms);
    ratios.push(onBRun.ms / onARun.ms);
    if (onARun.hits !== onBRun.hits) differ++;
  });
  return { onA, onB, ratios, differ };
}

interface Run {
  ms: number;
  hits: string;
}

function run(engine: Engine, q: string): Run {
  const started = process.cpuUsage();
  const { hits } = engine.search(q);
  const spent = process.cpuUsage(started);
  return {
    ms: (spent.user + spent.system) / 1000,
    hits: JSON.stringify(hits.map((h) => [h.page.pageId, h.chunk, h.formatted.text])),
  };
}
