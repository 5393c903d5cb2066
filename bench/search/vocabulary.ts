/**
 * bun bench/search/vocabulary.ts [--large N] [--queries N] [--rounds R]
 *
 * The vocabulary in typed arrays (src/search/postings/vocabulary.ts) against the radix tree of Maps it
 * replaced (bench/search/radix-tree.ts, with MiniSearch's SearchableMap for get and atPrefix), on
 *   (a) the real vocabulary of the shared English dumps' text shard (as buildShard makes it), and
 *   (b) a large one: (a) plus words made up by bench/corpus/english-model.ts's letter chain (trained
 *       on the dumps' rare words) until it holds --large keys (default 2,000,000).
 * Prints bytes per term (new: its arrays exactly; old: JSC heap growth after GC, the key
 * strings and the tree), build time from the sorted keys, and per-query times of get, atPrefix
 * and typoNeighbours (1 and 2 typos): each the median over --rounds passes of the mean over
 * the queries, and for typos the median of single-query times too. Queries are the vocabulary's
 * own keys and misspellings of them (a letter deleted, inserted, replaced, two swapped), fixed seed.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { heapStats } from "bun:jsc";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    help: { type: "boolean" },
    large: { type: "string", default: "2000000" },
    queries: { type: "string", default: "2000" },
    rounds: { type: "string", default: "5" },
  },
});
if (values.help) {
  console.log(
    "Usage: bun bench/search/vocabulary.ts [--large N (default 2000000)] [--queries N (default 2000)] [--rounds R (default 5)]",
  );
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: SearchableMap } = await import("minisearch/SearchableMap");
const { dumpsDir } = await import("../support");
const { ingest } = await import("../../src/ingest");
const { textShardOptions } = await import("../../src/search/postings/fields");
const { buildShard } = await import("../../src/search/indexer/invert");
const { Vocabulary, vocabularyArrays, vocabularyFromArrays, vocabularyOf } = await import(
  "../../src/search/postings/vocabulary"
);
const { radixTree, typoNeighbours } = await import("./radix-tree");
const { ENGLISH_DUMPS, englishModel, prng } = await import("../corpus/english-model");

const LARGE = Number(values.large);
const QUERIES = Number(values.queries);
const ROUNDS = Number(values.rounds);

const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const heap = () => {
  Bun.gc(true);
  return heapStats().heapSize;
};

/** Mean time per query in microseconds: the median over ROUNDS passes (after one warm-up pass). */
function perQuery(queries: string[], run: (q: string) => unknown): number {
  for (const q of queries) run(q);
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = Bun.nanoseconds();
    for (const q of queries) run(q);
    rounds.push((Bun.nanoseconds() - t) / 1000 / queries.length);
  }
  return median(rounds);
}

/** Median of single-query times in microseconds. */
function singleMedian(queries: string[], run: (q: string) => unknown): number {
  const times = queries.map((q) => {
    const t = Bun.nanoseconds();
    run(q);
    return (Bun.nanoseconds() - t) / 1000;
  });
  return median(times);
}

function misspellings(keys: string[], n: number, seed: number): string[] {
  const random = prng(seed);
  const pick = <T>(a: ArrayLike<T>) => a[Math.floor(random() * a.length)]!;
  const out: string[] = [];
  while (out.length < n) {
    const key = pick(keys);
    if (key.length < 4) continue;
    const skip = key.charCodeAt(0) >= 0xe000 && key.charCodeAt(0) < 0xf000 ? 2 : 0;
    const at = skip + Math.floor(random() * (key.length - skip - 1));
    const letter = pick("abcdefghijklmnopqrstuvwxyz");
    out.push(
      [
        key,
        key.slice(0, at) + key.slice(at + 1),
        key.slice(0, at) + letter + key.slice(at),
        key.slice(0, at) + letter + key.slice(at + 1),
        key.slice(0, at) + key[at + 1] + key[at] + key.slice(at + 2),
      ][out.length % 5]!,
    );
  }
  return out;
}

function measure(name: string, keys: string[]): string[] {
  const lines = [
    `### ${name}: ${keys.length.toLocaleString("en")} keys, ${(keys.reduce((n, k) => n + k.length, 0) / keys.length).toFixed(2)} UTF-16 code units each on average`,
  ];
  // New: built from the sorted keys, as buildShard does.
  let t = performance.now();
  const data = vocabularyOf(keys);
  const newBuild = performance.now() - t;
  const newBytes = Object.values(vocabularyArrays(data)).reduce((n, a) => n + a.byteLength, 0);
  t = performance.now();
  const vocabulary = new Vocabulary(vocabularyFromArrays(vocabularyArrays(data)));
  const newLoad = performance.now() - t;

  // Old: the key strings (as the .idx file was split into them at boot) and the tree.
  const joined = keys.join("\n");
  const before = heap();
  t = performance.now();
  const oldKeys = joined.split("\n");
  const tree = radixTree(oldKeys);
  const oldBuild = performance.now() - t;
  const oldBytes = heap() - before;
  const map = new SearchableMap<number>(tree as never);

  const random = prng(7);
  const exact = Array.from({ length: QUERIES }, (_x, i) =>
    i % 2 ? keys[Math.floor(random() * keys.length)]! : misspellings(keys, 1, i)[0]!,
  );
  const prefixes = Array.from({ length: QUERIES }, () => {
    const k = keys[Math.floor(random() * keys.length)]!;
    const skip = k.charCodeAt(0) >= 0xe000 && k.charCodeAt(0) < 0xf000 ? 2 : 0;
    return k.slice(0, skip + 3 + Math.floor(random() * 3));
  });
  const typos = misspellings(keys, QUERIES, 11);

  // The two must agree before their times mean anything.
  for (const q of typos.slice(0, 200)) {
    if (JSON.stringify(vocabulary.typoNeighbours(q, 2)) !== JSON.stringify(typoNeighbours(tree, q, 2)))
      throw new Error(`typo lookups differ for ${q}`);
    if (vocabulary.get(q) !== map.get(q)) throw new Error(`get differs for ${q}`);
  }

  const rows: [string, number, number][] = [];
  rows.push(["get", perQuery(exact, (q) => map.get(q)), perQuery(exact, (q) => vocabulary.get(q))]);
  rows.push([
    "atPrefix (3–5 letters, all keys listed)",
    perQuery(prefixes, (q) => [...map.atPrefix(q)]),
    perQuery(prefixes, (q) => [...vocabulary.atPrefix(q)]),
  ]);
  rows.push([
    "prefixRange (what derive uses; old: atPrefix)",
    rows[1]![1],
    perQuery(prefixes, (q) => vocabulary.prefixRange(q)),
  ]);
  for (const max of [1, 2]) {
    const count = typos.reduce((n, q) => n + vocabulary.typoNeighbours(q, max).length, 0);
    const old = perQuery(typos, (q) => typoNeighbours(tree, q, max));
    rows.push([
      `typoNeighbours, max ${max} (${(count / typos.length).toFixed(1)} found per query)`,
      old,
      perQuery(typos, (q) => vocabulary.typoNeighbours(q, max)),
    ]);
    rows.push([
      `  same, median single query`,
      singleMedian(typos, (q) => typoNeighbours(tree, q, max)),
      singleMedian(typos, (q) => vocabulary.typoNeighbours(q, max)),
    ]);
    rows.push([
      `  typoTerms (no key strings: what derive uses; old: typoNeighbours)`,
      old,
      perQuery(typos, (q) => vocabulary.typoTerms(q, max, () => {})),
    ]);
  }
  lines.push(
    "",
    "| | old: Map radix tree | new: typed arrays | new / old |",
    "|---|---:|---:|---:|",
    `| bytes per term | ${(oldBytes / keys.length).toFixed(1)} | ${(newBytes / keys.length).toFixed(1)} | ${(newBytes / oldBytes).toFixed(3)} |`,
    `| build from sorted keys (ms) | ${oldBuild.toFixed(0)} | ${newBuild.toFixed(0)} | ${(newBuild / oldBuild).toFixed(2)} |`,
    `| boot from the stored file (ms) | ${oldBuild.toFixed(0)} (split + tree) | ${newLoad.toFixed(3)} (views) | |`,
    ...rows.map(([what, o, n]) => `| ${what} (µs/query) | ${o.toFixed(2)} | ${n.toFixed(2)} | ${(n / o).toFixed(2)} |`),
  );
  // Keep both alive until measured.
  if (!oldKeys.length && !tree.size) console.log("");
  return lines;
}

const options = textShardOptions("en");
const real = await ingest({ dumps: ENGLISH_DUMPS.map((f) => join(dumpsDir(), f)) });
const located = real.articles.flatMap((a) =>
  a.chunks.map((c) => ({ text: c.text, section: a.sections[c.section]?.heading ?? "", title: a.title })),
);
const shard = buildShard(located.length, (i) => located[i]!, options);
const english = new Vocabulary(shard.vocabulary);
const realKeys = Array.from({ length: english.size }, (_x, t) => english.keyOf(t));

const out = [
  `Bun ${Bun.version}, ${ROUNDS} rounds of ${QUERIES} queries, medians.`,
  "",
  ...measure("(a) the shared English dumps (text shard)", realKeys),
];

const model = await englishModel();
const large = new Set(realKeys);
for (let rank = model.vocabulary; large.size < LARGE; rank++) large.add(options.processTerm(model.syntheticWord(rank)));
const largeKeys = [...large].sort();
large.clear();
out.push("", ...measure(`(b) large: (a) plus made-up English-like words`, largeKeys));
console.log(out.join("\n"));
