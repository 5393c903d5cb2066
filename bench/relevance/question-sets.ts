/**
 * The two question sets of relevance.ts, for tune.ts: SQuAD dev (one gold page per question,
 * and its answers) and the dev qrels (gold pages by title, grade 2 for a "(rel=2)" dataset),
 * read against an opened snapshot; each question with a stable id, and the figures Tome's
 * ranking earns on a set (nDCG@10 with trec_eval's linear gain, Recall@1/@10, MRR, and
 * whether the top chunk holds an answer), measured as relevance.ts measures them.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Engine, loadIndexes } from "../../src/search";
import { openSnapshot, type Snapshot } from "../../src/snapshot";
import { buildSnapshot } from "../support";

/** The snapshot of a set's dumps (in `data`/dumps) at `dir`/`name`.tome: built there once, then reused. */
export async function setSnapshot(dir: string, name: string, dumps: string[], data: string): Promise<Snapshot> {
  const path = join(dir, `${name}.tome`);
  if (!existsSync(path)) {
    console.error(`building ${path} …`);
    await buildSnapshot({ dumps: dumps.map((d) => join(data, "dumps", d)) }, path);
  }
  return openSnapshot(path);
}

/** An engine over the snapshot under the score parameters set now: its indexes opened anew, no stored page orders. */
export function engineOf(snapshot: Snapshot): Engine {
  const { text, titles } = loadIndexes(snapshot);
  return new Engine(snapshot, text, titles, null);
}

/** Whether a chunk's text holds one of a SQuAD question's answers (case aside). */
export const holdsAnswer = (text: string, answers: string[] | undefined): boolean => {
  const lower = text.toLowerCase();
  return !!answers?.some((a) => lower.includes(a.toLowerCase()));
};

export interface Question {
  /** SQuAD's question id; the qrels' dataset and qid. */
  id: string;
  text: string;
  /** Gold page index → grade. */
  gold: Map<number, number>;
  answers?: string[];
}

export interface Figures {
  questions: number;
  ndcg10: number;
  recall1: number;
  recall10: number;
  mrr: number;
  /** SQuAD only. */
  answer?: number;
}

const K = 10;

/** Page index by page id, as relevance.ts numbers pages (the snapshot's order). */
const pageIndexOf = (tome: Engine) => new Map(tome.snapshot.pages.list().map((p, i) => [p.pageId, i]));

export async function squadQuestions(tome: Engine, dataDir: string): Promise<Question[]> {
  const pageIndex = pageIndexOf(tome);
  const lines = (await Bun.file(join(dataDir, "eval/squad-dev-questions.jsonl")).text()).split("\n").filter(Boolean);
  return lines.map((l) => {
    const q = JSON.parse(l) as { id: string; question: string; answers: string[]; page_id: number };
    return { id: q.id, text: q.question, gold: new Map([[pageIndex.get(q.page_id) ?? -1, 1]]), answers: q.answers };
  });
}

/** The qrels' questions with a gold page in the snapshot (as relevance.ts: the others are skipped). */
export async function qrelsQuestions(tome: Engine, dataDir: string): Promise<Question[]> {
  const pageIndex = pageIndexOf(tome);
  const [header, ...lines] = (await Bun.file(join(dataDir, "eval/enwiki-dev-qrels.tsv")).text())
    .split("\n")
    .filter(Boolean);
  const cols = header!.split("\t");
  const at = (name: string) => cols.indexOf(name);
  const byId = new Map<string, Question>();
  for (const line of lines) {
    const f = line.split("\t");
    const raw = f[at("dataset")]!;
    const id = `${raw.replace(/\(rel=\d+\)$/, "")}\t${f[at("qid")]}`;
    const q = byId.get(id) ?? { id, text: f[at("query")]!, gold: new Map<number, number>() };
    byId.set(id, q);
    const page = tome.pageByTitle(f[at("gold_title")]!);
    if (page) q.gold.set(pageIndex.get(page.pageId)!, /\(rel=2\)$/.test(raw) ? 2 : 1);
  }
  return [...byId.values()].filter((q) => q.gold.size);
}

/** One ranking's figures for a question: its top 10 pages (indexes) and the text of its top chunk. */
export function judge(pages: number[], topChunk: string, gold: Map<number, number>, answers?: string[]) {
  let dcg = 0;
  let first = 0;
  let found1 = 0;
  let found10 = 0;
  pages.slice(0, K).forEach((p, i) => {
    const grade = gold.get(p);
    if (!grade) return;
    dcg += grade / Math.log2(i + 2);
    if (!first) first = i + 1;
    if (i === 0) found1++;
    found10++;
  });
  const ideal = [...gold.values()].sort((a, b) => b - a).slice(0, K);
  return {
    ndcg10: dcg / ideal.reduce((s, g, i) => s + g / Math.log2(i + 2), 0),
    recall1: found1 / gold.size,
    recall10: found10 / gold.size,
    mrr: first ? 1 / first : 0,
    answer: holdsAnswer(topChunk, answers),
  };
}

/** Tome's figures on the questions: the top 10 pages of each, searched without a time limit. */
export function measure(tome: Engine, questions: Question[], search: Parameters<Engine["search"]>[1] = {}): Figures {
  const pageIndex = pageIndexOf(tome);
  const sum = { ndcg10: 0, recall1: 0, recall10: 0, mrr: 0, answer: 0 };
  for (const q of questions) {
    const { hits } = tome.search(q.text.slice(0, 500), { limit: K, highlight: false, budgetMs: Infinity, ...search });
    const top = hits[0] ? hits[0].page.chunks[hits[0].chunk]!.text : "";
    const j = judge(
      hits.map((h) => pageIndex.get(h.page.pageId)!),
      top,
      q.gold,
      q.answers,
    );
    sum.ndcg10 += j.ndcg10;
    sum.recall1 += j.recall1;
    sum.recall10 += j.recall10;
    sum.mrr += j.mrr;
    if (j.answer) sum.answer++;
  }
  const n = questions.length || 1;
  return {
    questions: questions.length,
    ndcg10: sum.ndcg10 / n,
    recall1: sum.recall1 / n,
    recall10: sum.recall10 / n,
    mrr: sum.mrr / n,
    ...(questions.some((q) => q.answers) ? { answer: sum.answer / n } : {}),
  };
}

/** A question's half, 0 tuning or 1 held out, whatever the run: the top bit of FNV-1a of its id (the low bits mix least). */
export function half(id: string): 0 | 1 {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return (h >>> 31) as 0 | 1;
}
