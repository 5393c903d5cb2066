/**
 * bun bench/relevance/ranking-score.ts [--json]
 *
 * Whether `_rankingScore` (Hit.rankingScore, D92) tells relevant hits from the others, as a RAG
 * pipeline thresholding it would need: over the dev qrels (eval/enwiki-dev-qrels.tsv, 152 real
 * queries over enwiki-2016-sample + enwik8-head in one snapshot; gold pages by title, redirects
 * resolved), the top 10 hits of each query, split into relevant (a gold page) and not: the mean
 * and quartiles of each's ranking score, and, per threshold, the share of each kept.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { quantile } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
});
if (values.help) {
  console.log("Usage: bun bench/relevance/ranking-score.ts [--json]");
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { open } = await import("../../src/search");
const { buildSnapshot, sharedDataDir } = await import("../support");

const SHARED = sharedDataDir();
const dir = mkdtempSync(join(tmpdir(), "tome-ranking-score-"));
try {
  const path = join(dir, "qrels.tome");
  await buildSnapshot(
    { dumps: [join(SHARED, "dumps/enwiki-2016-sample.xml.bz2"), join(SHARED, "dumps/enwik8-head.xml.bz2")] },
    path,
  );
  const tome = open(path);
  const [header, ...lines] = (await Bun.file(join(SHARED, "eval/enwiki-dev-qrels.tsv")).text())
    .split("\n")
    .filter(Boolean);
  const cols = header!.split("\t");
  const at = (name: string) => cols.indexOf(name);
  const gold = new Map<string, Set<number>>();
  for (const line of lines) {
    const f = line.split("\t");
    const page = tome.pageByTitle(f[at("gold_title")]!);
    if (!page) continue;
    const query = f[at("query")]!;
    (gold.get(query) ?? gold.set(query, new Set()).get(query)!).add(page.pageId);
  }
  const relevant: number[] = [];
  const other: number[] = [];
  for (const [query, pages] of gold)
    for (const h of tome.search(query, { limit: 10, budgetMs: Infinity }).hits)
      (pages.has(h.page.pageId) ? relevant : other).push(h.rankingScore);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
  const summary = (xs: number[]) => ({
    hits: xs.length,
    mean: mean(xs),
    q1: quantile(xs, 0.25),
    median: quantile(xs, 0.5),
    q3: quantile(xs, 0.75),
  });
  const thresholds = [0.3, 0.4, 0.5, 0.6, 0.7].map((t) => ({
    threshold: t,
    relevantKept: relevant.filter((s) => s >= t).length / (relevant.length || 1),
    otherKept: other.filter((s) => s >= t).length / (other.length || 1),
  }));
  const result = { queries: gold.size, relevant: summary(relevant), other: summary(other), thresholds };
  if (values.json) console.log(JSON.stringify(result));
  else {
    console.log(`dev qrels: ${gold.size} queries, their top 10 hits`);
    console.log("| hits | count | mean | quartiles |");
    console.log("|---|---|---|---|");
    for (const [name, s] of [
      ["relevant", result.relevant],
      ["not relevant", result.other],
    ] as const)
      console.log(
        `| ${name} | ${s.hits} | ${s.mean.toFixed(3)} | ${s.q1.toFixed(3)} / ${s.median.toFixed(3)} / ${s.q3.toFixed(3)} |`,
      );
    console.log("\n| kept at _rankingScore ≥ | relevant | not relevant |\n|---|---|---|");
    for (const t of thresholds)
      console.log(`| ${t.threshold} | ${(100 * t.relevantKept).toFixed(1)}% | ${(100 * t.otherKept).toFixed(1)}% |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
