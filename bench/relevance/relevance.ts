/**
 * bun bench/relevance/relevance.ts [--limit N] [--only squad|qrels] [--json]
 *
 * Relevance of Tome's ranking against two baselines over the same chunks, in one run:
 * - plain BM25: SQLite FTS5 (bun:sqlite), columns title and text, bm25(chunks, 5, 1), words OR'ed;
 * - MiniSearch with its default options (fields title and text).
 * Each ranks chunks; a page's place is that of its best chunk.
 *
 * Two sets of questions:
 * - SQuAD dev (eval/squad-dev-questions.jsonl over dumps/squad-dev-articles.xml.bz2): one gold page
 *   per question, plus whether the top hit's chunk holds one of the answers;
 * - the dev qrels (eval/enwiki-dev-qrels.tsv over enwiki-2016-sample + enwik8-head in one snapshot):
 *   gold pages by title (case-insensitive, redirects resolved), grade 2 for a dataset ending
 *   "(rel=2)", else 1; a row per dataset and the total.
 * Figures per query, then averaged: nDCG@10 (trec_eval's linear gain), Recall@1 and Recall@10 (share
 * of the gold pages found), MRR (1 / rank of the first gold page in the top 10).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import MiniSearch from "minisearch";
import { open, terms } from "../../src/search";
import { buildSnapshot, fts5Chunks, sharedDataDir } from "../support";
import { judge } from "./question-sets";

const USAGE = `Usage: bun bench/relevance/relevance.ts [--limit N] [--only squad|qrels] [--json] [--misses]
  --limit N   the first N SQuAD questions (default: all 10,570); the qrels are always all run
  --only X    run one set: squad or qrels
  --json      print the figures as JSON instead of tables
  --per-query FILE  write Tome's figures query by query as JSON (bench/relevance/paired.ts compares two)
  --misses    also list, to stderr, each query whose first gold page Tome ranks below 1st
              (its rank, Tome's top 3 and BM25's rank of the gold page), for studying the ranking`;

interface Query {
  text: string;
  dataset: string;
  /** Gold page index → grade. */
  gold: Map<number, number>;
  answers?: string[];
}

interface Ranked {
  /** Page indexes, best first, at most 10. */
  pages: number[];
  topChunk: string;
}

type System = (q: string) => Ranked;

interface Figures {
  queries: number;
  ndcg10: number;
  recall1: number;
  recall10: number;
  mrr: number;
  topChunkHoldsAnswer?: number;
  msPerQuery: number;
}

const K = 10;
const SYSTEMS = ["tome", "bm25", "minisearch"] as const;

function parse() {
  try {
    const { values } = parseArgs({
      args: Bun.argv.slice(2),
      options: {
        limit: { type: "string" },
        only: { type: "string" },
        json: { type: "boolean" },
        misses: { type: "boolean" },
        "per-query": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    const limit = values.limit === undefined ? undefined : Number(values.limit);
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
      throw new Error(`--limit must be a positive whole number, not "${values.limit}"`);
    if (values.only !== undefined && values.only !== "squad" && values.only !== "qrels")
      throw new Error(`--only is squad or qrels, not "${values.only}"`);
    return { limit, only: values.only, json: !!values.json, misses: !!values.misses, perQuery: values["per-query"] };
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

/** A snapshot of the dumps, opened, with its two baselines built over the same chunks. */
async function corpus(dumps: string[], dir: string) {
  const path = join(dir, `${dumps.length}-${Date.now()}.tome`);
  await buildSnapshot({ dumps }, path);
  const tome = open(path);
  const pages = tome.snapshot.pages.list();
  const chunkPage: number[] = [];
  const chunkText: string[] = [];

  const { db, add } = fts5Chunks();
  const mini = new MiniSearch<{ id: number; title: string; text: string }>({ fields: ["title", "text"] });
  db.transaction(() => {
    pages.forEach((p, pi) => {
      for (const c of p.chunks) {
        const id = chunkText.length;
        chunkPage.push(pi);
        chunkText.push(c.text);
        add(id, p.title, c.text);
        mini.add({ id, title: p.title, text: c.text });
      }
    });
  })();
  const select = db.prepare<{ id: number }, [string]>(
    "SELECT rowid AS id FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks, 5, 1) LIMIT 2000",
  );

  const bestPages = (chunkIds: Iterable<number>): Ranked => {
    const out: number[] = [];
    let topChunk: string | undefined;
    for (const id of chunkIds) {
      topChunk ??= chunkText[id]!;
      const p = chunkPage[id]!;
      if (!out.includes(p)) out.push(p);
      if (out.length === K) break;
    }
    return { pages: out, topChunk: topChunk ?? "" };
  };
  const pageIndex = new Map(pages.map((p, i) => [p.pageId, i]));
  const systems: Record<(typeof SYSTEMS)[number], System> = {
    tome: (q) => {
      const { hits } = tome.search(q.slice(0, 500), { limit: K, highlight: false, budgetMs: Infinity });
      return {
        pages: hits.map((h) => pageIndex.get(h.page.pageId)!),
        topChunk: hits[0] ? hits[0].page.chunks[hits[0].chunk]!.text : "",
      };
    },
    bm25: (q) => {
      const words = [...new Set(terms(q))];
      if (!words.length) return { pages: [], topChunk: "" };
      return bestPages(select.all(words.map((w) => `"${w}"`).join(" OR ")).map((r) => r.id));
    },
    minisearch: (q) => bestPages(mini.search(q).map((r) => r.id as number)),
  };
  const cleanup = () => {
    db.close();
    rmSync(path, { force: true });
  };
  const titleOf = (i: number) => pages[i]?.title ?? "?";
  return { tome, systems, pageIndex, titleOf, cleanup, size: { pages: pages.length, chunks: chunkText.length } };
}

/** To stderr: each query whose best gold page Tome ranks below first, beside BM25's rank of it. */
function listMisses(queries: Query[], c: { systems: Record<string, System>; titleOf: (i: number) => string }): void {
  const rankOf = (pages: number[], q: Query) => {
    const i = pages.findIndex((p) => q.gold.has(p));
    return i < 0 ? "-" : String(i + 1);
  };
  for (const q of queries) {
    const tome = c.systems.tome!(q.text).pages;
    if (q.gold.has(tome[0]!)) continue;
    const bm25 = c.systems.bm25!(q.text).pages;
    const gold = [...q.gold.keys()].map(c.titleOf).join(" | ");
    const top = tome.slice(0, 3).map(c.titleOf).join(" | ");
    console.error(
      `${q.dataset}\ttome ${rankOf(tome, q)}\tbm25 ${rankOf(bm25, q)}\t${q.text.slice(0, 120)}\tgold: ${gold}\ttop: ${top}`,
    );
  }
}

/** Tome's figures query by query (--per-query), for a paired comparison of two runs (paired.ts). */
const perQuery: { set: string; query: string; ndcg10: number; recall1: number; answer?: boolean }[] = [];

function evaluate(queries: Query[], rank: System, set?: string): Figures {
  const sum = { ndcg10: 0, recall1: 0, recall10: 0, mrr: 0, answer: 0 };
  const started = performance.now();
  for (const q of queries) {
    const { pages, topChunk } = rank(q.text);
    const j = judge(pages, topChunk, q.gold, q.answers);
    sum.ndcg10 += j.ndcg10;
    sum.recall1 += j.recall1;
    sum.recall10 += j.recall10;
    sum.mrr += j.mrr;
    if (j.answer) sum.answer++;
    if (set)
      perQuery.push({
        set,
        query: q.text,
        ndcg10: j.ndcg10,
        recall1: j.recall1,
        ...(q.answers ? { answer: j.answer } : {}),
      });
  }
  const n = queries.length || 1;
  const figures: Figures = {
    queries: queries.length,
    ndcg10: sum.ndcg10 / n,
    recall1: sum.recall1 / n,
    recall10: sum.recall10 / n,
    mrr: sum.mrr / n,
    msPerQuery: (performance.now() - started) / n,
  };
  if (queries.some((q) => q.answers)) figures.topChunkHoldsAnswer = sum.answer / n;
  return figures;
}

async function squad(dir: string, limit: number | undefined) {
  const c = await corpus([join(SHARED, "dumps/squad-dev-articles.xml.bz2")], dir);
  const lines = (await Bun.file(join(SHARED, "eval/squad-dev-questions.jsonl")).text()).split("\n").filter(Boolean);
  const queries: Query[] = lines.slice(0, limit).map((l) => {
    const q = JSON.parse(l) as { question: string; answers: string[]; page_id: number };
    return {
      text: q.question,
      dataset: "squad",
      gold: new Map([[c.pageIndex.get(q.page_id) ?? -1, 1]]),
      answers: q.answers,
    };
  });
  const rows = {
    squad: Object.fromEntries(
      SYSTEMS.map((s) => [s, evaluate(queries, c.systems[s], s === "tome" ? "squad" : undefined)]),
    ),
  };
  if (args.misses) listMisses(queries, c);
  c.cleanup();
  return { corpus: c.size, missingGold: queries.filter((q) => q.gold.has(-1)).length, rows };
}

/** "beir-dbpedia-entity-test(rel=2)" → "dbpedia-entity", "fever-dev" → "fever", "miracl-en-train" → "miracl". */
const datasetName = (d: string) =>
  d
    .replace(/\(rel=\d+\)$/, "")
    .replace(/^beir-/, "")
    .replace(/-(test|dev|train)$/, "")
    .replace(/-en$/, "");

async function qrels(dir: string) {
  const c = await corpus(
    [join(SHARED, "dumps/enwiki-2016-sample.xml.bz2"), join(SHARED, "dumps/enwik8-head.xml.bz2")],
    dir,
  );
  const [header, ...lines] = (await Bun.file(join(SHARED, "eval/enwiki-dev-qrels.tsv")).text())
    .split("\n")
    .filter(Boolean);
  const cols = header!.split("\t");
  const at = (name: string) => cols.indexOf(name);
  const byId = new Map<string, Query>();
  const missing: string[] = [];
  for (const line of lines) {
    const f = line.split("\t");
    const raw = f[at("dataset")]!;
    const dataset = datasetName(raw);
    const key = `${dataset}\t${f[at("qid")]}`;
    const q = byId.get(key) ?? { text: f[at("query")]!, dataset, gold: new Map<number, number>() };
    byId.set(key, q);
    const page = c.tome.pageByTitle(f[at("gold_title")]!);
    if (!page) {
      missing.push(f[at("gold_title")]!);
      continue;
    }
    q.gold.set(c.pageIndex.get(page.pageId)!, /\(rel=2\)$/.test(raw) ? 2 : 1);
  }
  const queries = [...byId.values()].filter((q) => q.gold.size);
  const datasets = [...new Set(queries.map((q) => q.dataset))].sort();
  const rows: Record<string, Record<string, Figures>> = {};
  for (const d of [...datasets, "total"]) {
    const subset = d === "total" ? queries : queries.filter((q) => q.dataset === d);
    const set = d === "total" ? undefined : "qrels";
    rows[d] = Object.fromEntries(
      SYSTEMS.map((s) => [s, evaluate(subset, c.systems[s], s === "tome" ? set : undefined)]),
    );
  }
  if (args.misses) listMisses(queries, c);
  c.cleanup();
  return { corpus: c.size, missingGold: missing, queriesWithoutGold: byId.size - queries.length, rows };
}

function table(title: string, rows: Record<string, Record<string, Figures>>): string {
  const f = (x: number | undefined) => (x === undefined ? "" : x.toFixed(3));
  const answers = Object.values(rows).some((r) => r.tome!.topChunkHoldsAnswer !== undefined);
  const head = [
    "set",
    "system",
    "queries",
    "nDCG@10",
    "Recall@1",
    "Recall@10",
    "MRR",
    ...(answers ? ["top chunk holds answer"] : []),
    "ms/query",
  ];
  const out = [`### ${title}`, "", `| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const [name, r] of Object.entries(rows)) {
    for (const s of SYSTEMS) {
      const x = r[s]!;
      const cells = [
        s === "tome" ? name : "",
        s,
        String(x.queries),
        f(x.ndcg10),
        f(x.recall1),
        f(x.recall10),
        f(x.mrr),
        ...(answers ? [f(x.topChunkHoldsAnswer)] : []),
        x.msPerQuery.toFixed(2),
      ];
      out.push(`| ${cells.join(" | ")} |`);
    }
  }
  return out.join("\n");
}

const SHARED = sharedDataDir();
const args = parse();
const dir = mkdtempSync(join(tmpdir(), "tome-relevance-"));
try {
  const result: Record<string, unknown> = {};
  const squadResult = args.only === "qrels" ? undefined : await squad(dir, args.limit);
  const qrelsResult = args.only === "squad" ? undefined : await qrels(dir);
  if (args.perQuery) await Bun.write(args.perQuery, JSON.stringify(perQuery));
  if (args.json) {
    if (squadResult) result.squad = squadResult;
    if (qrelsResult) result.qrels = qrelsResult;
    console.log(JSON.stringify(result, null, 2));
  } else {
    if (squadResult) {
      const { corpus: s, missingGold } = squadResult;
      console.log(
        table(
          `SQuAD dev: ${s.pages} pages, ${s.chunks} chunks${missingGold ? `; ${missingGold} questions whose page is missing` : ""}`,
          squadResult.rows,
        ),
      );
      console.log();
    }
    if (qrelsResult) {
      const { corpus: s, missingGold, queriesWithoutGold } = qrelsResult;
      const note = missingGold.length
        ? `; gold titles not in the snapshot: ${missingGold.join(", ")} (${queriesWithoutGold} queries left with none, skipped)`
        : "";
      console.log(table(`dev qrels: ${s.pages} pages, ${s.chunks} chunks${note}`, qrelsResult.rows));
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
