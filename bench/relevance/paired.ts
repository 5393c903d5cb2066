/**
 * bun bench/relevance/paired.ts BEFORE.json AFTER.json
 *
 * A paired, query-by-query comparison of two runs of `bun bench/relevance/relevance.ts
 * --per-query FILE` (before and after a change, the same queries): per set, how many queries'
 * nDCG@10 rose, fell or stayed, the mean difference, and a two-sided sign test's p-value over
 * the queries that moved; for SQuAD also the answer in the top chunk, gained and lost.
 */
import { readFileSync } from "node:fs";

interface Row {
  set: string;
  query: string;
  ndcg10: number;
  recall1: number;
  answer?: boolean;
}

const [beforePath, afterPath] = Bun.argv.slice(2);
if (!beforePath || !afterPath || beforePath === "--help" || beforePath === "-h") {
  console.log("Usage: bun bench/relevance/paired.ts BEFORE.json AFTER.json  (each from relevance.ts --per-query FILE)");
  process.exit(beforePath === "--help" || beforePath === "-h" ? 0 : 2);
}
const before = JSON.parse(readFileSync(beforePath, "utf8")) as Row[];
const after = JSON.parse(readFileSync(afterPath, "utf8")) as Row[];
/**
 * Each row's key: its set, its query, and how many rows of the same set and query came before it. SQuAD asks some
 * questions twice (two ids, other answers): keyed by their text alone, the second took the first's place.
 */
function keyed(rows: Row[]): [string, Row][] {
  const seen = new Map<string, number>();
  return rows.map((r) => {
    const text = `${r.set}\t${r.query}`;
    const n = seen.get(text) ?? 0;
    seen.set(text, n + 1);
    return [`${text}\t${n}`, r];
  });
}
const earlier = new Map(keyed(before));

/** Two-sided sign test: the chance of a split at least this uneven among n coin flips. */
function signTest(up: number, down: number): number {
  const n = up + down;
  const k = Math.min(up, down);
  let tail = 0;
  let c = 1;
  for (let i = 0; i <= n; i++) {
    if (i <= k) tail += c;
    c = (c * (n - i)) / (i + 1);
  }
  return Math.min(1, (2 * tail) / 2 ** n);
}

console.log(
  "| set | queries | nDCG@10 up / down / same | mean difference | sign test p | answer in top chunk gained / lost |",
);
console.log("|---|---|---|---|---|---|");
for (const set of [...new Set(after.map((r) => r.set))]) {
  const pairs = keyed(after)
    .filter(([k, r]) => r.set === set && earlier.has(k))
    .map(([k, r]) => [earlier.get(k)!, r] as const);
  let up = 0;
  let down = 0;
  let diff = 0;
  let gained = 0;
  let lost = 0;
  for (const [b, a] of pairs) {
    const d = a.ndcg10 - b.ndcg10;
    diff += d;
    if (d > 1e-12) up++;
    else if (d < -1e-12) down++;
    if (a.answer && !b.answer) gained++;
    if (b.answer && !a.answer) lost++;
  }
  const answers = pairs.some(([b]) => b.answer !== undefined) ? `${gained} / ${lost}` : "";
  console.log(
    `| ${set} | ${pairs.length} | ${up} / ${down} / ${pairs.length - up - down} | ${(diff / (pairs.length || 1)).toFixed(4)} | ${signTest(up, down).toFixed(3)} | ${answers} |`,
  );
}
