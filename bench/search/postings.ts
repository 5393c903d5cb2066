/**
 * bun bench/search/postings.ts [<snapshot.tome>] [--runs R] [--queries N]
 *
 * Block-compressed postings (src/search/postings/postings.ts) against the flat arrays they replaced
 * (a Uint32 document and a Uint8 frequency per posting), on a snapshot's text shard, or on
 * the shared English dumps (enwiki-2016 sample + enwik8 head) when no snapshot is given:
 *   - bytes per posting and per chunk: documents with frequencies, skip data, list headers,
 *     positions, and the term table, each apart
 *   - Shard.match() time per query, block postings against the flat arrays (the old match(),
 *     kept in bench/search/flat-shard.ts), alternating runs, medians.
 * The queries are bench/queries.ts's mix, turned into query words as the engine would (last
 * word a prefix, typos fuzzy), plus the same words restricted to a range of documents.
 */
import { parseArgs } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WordSpec } from "../../src/search/postings/shard-types";
import type { Snapshot } from "../../src/snapshot";
import { median, quantile } from "../stats";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    runs: { type: "string", default: "7" },
    queries: { type: "string", default: "100" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help) {
  console.log(
    "Usage: bun bench/search/postings.ts [<snapshot.tome>] [--runs R (default 7)] [--queries N per kind (default 100)]",
  );
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { loadIndexes, terms } = await import("../../src/search");
const { buildSnapshot, dump } = await import("../support");
const { textShardOptions, TEXT_BOOSTS } = await import("../../src/search/postings/fields");
const { PostingsReader } = await import("../../src/search/postings/postings");
const { TermLists } = await import("../../src/search/postings/term-lists");
const { buildShard } = await import("../../src/search/indexer/invert");
const { matchBuffer, Shard } = await import("../../src/search/postings/shard");
const { openSnapshot } = await import("../../src/snapshot");
const { FlatShard } = await import("./flat-shard");
const { queryMix } = await import("../queries");

let snapshot: Snapshot;
let source: string;
if (positionals[0]) {
  source = positionals[0];
  snapshot = openSnapshot(source);
} else {
  const dumps = ["enwiki-2016-sample.xml.bz2", "enwik8-head.xml.bz2"].map(dump);
  source = "shared English dumps (enwiki-2016-sample + enwik8-head)";
  const dir = mkdtempSync(join(tmpdir(), "tome-postings-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  await buildSnapshot({ dumps }, join(dir, "en.tome"));
  snapshot = openSnapshot(join(dir, "en.tome"));
}
const lang = snapshot.meta.wiki.lang;
const docs = snapshot.pages.list().flatMap((page) =>
  page.chunks.map((chunk) => ({
    text: chunk.text,
    section: page.sections[chunk.section]?.heading ?? "",
    title: page.title,
  })),
);
const options = textShardOptions(lang);
let t = performance.now();
// A snapshot's text shard as the server has it (mapped from the file), or built in memory for the shared dumps.
const shard = positionals[0]
  ? loadIndexes(snapshot).text
  : new Shard(
      buildShard(docs.length, (i) => docs[i]!, options),
      TEXT_BOOSTS,
    );
const data = shard.data;
const buildMs = performance.now() - t;
t = performance.now();
const flat = new FlatShard(shard, data, TEXT_BOOSTS);
const flatMs = performance.now() - t;

// Bytes, by region of each list.
const N = data.documentCount;
const F = data.fields.length;
const cursor = new PostingsReader(data.postings).cursor();
const lists = new TermLists(data.lists);
const listCount = (data.vocabulary.starts.length - 1) * F;
const dfOf = (k: number) => lists.df(Math.floor(k / F), k % F);
const atOf = (k: number) => lists.address(lists.index(Math.floor(k / F), k % F));
const order = Array.from({ length: listCount }, (_x, k) => k)
  .filter((k) => dfOf(k) > 0)
  .sort((a, b) => atOf(a) - atOf(b));
const bytes = { docs: 0, skips: 0, headers: 0, positions: 0 };
let postings = 0;
let positioned = 0;
const fieldPostings = new Array<number>(F).fill(0);
order.forEach((k, i) => {
  const at = atOf(k);
  const part = Math.floor(at / 2 ** 32);
  const next = order[i + 1];
  const end =
    next !== undefined && Math.floor(atOf(next) / 2 ** 32) === part
      ? atOf(next)
      : part * 2 ** 32 + data.postings[part]!.byteLength;
  cursor.open(at);
  const [skips, docsAt, positionsAt] = cursor.regions();
  const start = at - part * 2 ** 32;
  bytes.skips += skips;
  bytes.headers += docsAt - start - skips;
  bytes.docs += positionsAt - docsAt;
  bytes.positions += end - part * 2 ** 32 - positionsAt;
  postings += cursor.df;
  fieldPostings[k % F]! += cursor.df;
  if (cursor.hasPositions) positioned += cursor.df;
});
const termTable = Object.values(data.lists).reduce((sum, column) => sum + column.byteLength, 0);
const flatBytes = postings * 5 + (listCount + 1) * 4;
const total = data.postings.reduce((s, p) => s + p.byteLength, 0);
const per = (b: number, n: number) => (b / n).toFixed(2);
console.log(
  `${source}: ${N} chunks, ${postings} postings (${per(postings, N)} per chunk; by field ${data.fields.map((f, i) => `${f} ${fieldPostings[i]}`).join(", ")}), ${listCount} (term, field) slots, ${data.lists.df.length} lists`,
);
console.log(
  `text shard built or loaded in ${(buildMs / 1000).toFixed(1)} s; flat arrays decoded from it in ${(flatMs / 1000).toFixed(1)} s`,
);
console.log("\nbytes                          total       per posting   per chunk");
const row = (name: string, b: number, n = postings) =>
  console.log(`${name.padEnd(30)} ${String(b).padStart(11)} ${per(b, n).padStart(12)} ${per(b, N).padStart(11)}`);
row("documents + frequencies", bytes.docs);
row("skip data", bytes.skips);
row("list headers + padding", bytes.headers);
row("positions (text, section)", bytes.positions, positioned);
row("postings bytes, all", total);
row("term table (lists.first, fields, at, df)", termTable);
row("flat layout: docs+freqs+offsets", flatBytes);

// Queries.
const mix = queryMix(snapshot);
const perKind = Number(values.queries);
const queries: { kind: string; words: WordSpec[]; from?: number; to?: number }[] = [];
let seed = 11;
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
for (const [kind, make] of Object.entries(mix)) {
  for (let q = 0; q < perKind; q++) {
    const ws = terms(make(), lang);
    if (!ws.length) continue;
    const words = ws.map((w, i) => ({
      key: options.processTerm(w),
      prefix: kind === "prefix" || i === ws.length - 1,
      fuzzy: kind === "typo" ? (w.length >= 9 ? 2 : w.length >= 5 ? 1 : 0) : 0,
    }));
    queries.push({ kind, words });
    if (kind === "single word" || kind === "2-4 words") {
      const from = Math.floor(random() * N);
      queries.push({ kind: "range", words, from, to: Math.min(N, from + 1 + Math.floor(random() * N * 0.05)) });
    }
  }
}
// Both answer the same, first (the test checks it at length; this guards the figures).
const into = matchBuffer(N);
for (const q of queries) {
  const a = shard.match(q.words, { from: q.from, to: q.to, into });
  const sum = a.scores.subarray(0, a.count).reduce((s, x) => s + x, 0);
  const b = flat.match(q.words, { from: q.from, to: q.to, into });
  if (b.count !== a.count || b.scores.subarray(0, b.count).reduce((s, x) => s + x, 0) !== sum)
    throw new Error(`answers differ for ${JSON.stringify(q)}`);
}
const runs = Number(values.runs);
const times = { blocks: [] as number[][], flat: [] as number[][] };
for (let r = 0; r < runs; r++) {
  const order: ("blocks" | "flat")[] = r % 2 ? ["flat", "blocks"] : ["blocks", "flat"];
  for (const name of order) {
    const s: { match: InstanceType<typeof Shard>["match"] } = name === "blocks" ? shard : flat;
    const ts: number[] = [];
    for (const q of queries) {
      const t0 = performance.now();
      s.match(q.words, { from: q.from, to: q.to, into });
      ts.push(performance.now() - t0);
    }
    times[name].push(ts);
  }
}
console.log(
  `\nShard.match(), ${queries.length} queries × ${runs} runs (ms per query; per kind: median over runs of the kind's mean)`,
);
console.log("kind              blocks    flat   ratio");
const kinds = [...new Set(queries.map((q) => q.kind))];
const meanOf = (name: "blocks" | "flat", pick: (i: number) => boolean) =>
  median(
    times[name].map((ts) => {
      const xs = ts.filter((_t, i) => pick(i));
      return xs.reduce((s, x) => s + x, 0) / xs.length;
    }),
  );
for (const kind of [...kinds, "all"]) {
  const pick = (i: number) => kind === "all" || queries[i]!.kind === kind;
  const b = meanOf("blocks", pick);
  const f = meanOf("flat", pick);
  console.log(
    `${kind.padEnd(16)} ${b.toFixed(3).padStart(7)} ${f.toFixed(3).padStart(7)} ${(b / f).toFixed(2).padStart(7)}`,
  );
}
const p = (name: "blocks" | "flat", q: number) => median(times[name].map((ts) => quantile(ts, q)));
console.log(
  `p50 per query: blocks ${p("blocks", 0.5).toFixed(3)} ms, flat ${p("flat", 0.5).toFixed(3)} ms; p99: blocks ${p("blocks", 0.99).toFixed(3)} ms, flat ${p("flat", 0.99).toFixed(3)} ms`,
);
