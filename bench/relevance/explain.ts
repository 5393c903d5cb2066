/**
 * bun bench/relevance/explain.ts <snapshot.tome> [--limit N] "query" ["query" …]
 *
 * Each query's first N hits (default 3) as the engine ranks them, with their scores, chunk
 * and section: to see why one page ranks above another (for instance a SQuAD question that
 * `relevance.ts --misses` lists), on two commits' snapshots side by side.
 */
import { parseArgs } from "node:util";
import { open } from "../../src/search";

const USAGE = `Usage: bun bench/relevance/explain.ts <snapshot.tome> [--limit N] "query" ["query" …]
  --limit N   hits shown per query (default 3)`;

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { limit: { type: "string", default: "3" }, help: { type: "boolean", short: "h" } },
  allowPositionals: true,
});
if (values.help || positionals.length < 2) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}

const engine = open(positionals[0]!);
for (const q of positionals.slice(1)) {
  const { hits } = engine.search(q, {
    limit: Number(values.limit),
    highlight: false,
    budgetMs: Number.POSITIVE_INFINITY,
  });
  console.log(q);
  for (const h of hits)
    console.log(`  ${h.score.toFixed(2)}  ${h.page.title}  chunk ${h.chunk}  (${h.section || "intro"})`);
}
