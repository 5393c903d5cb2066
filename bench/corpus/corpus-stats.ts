/**
 * The statistics that say whether a corpus looks like English Wikipedia, measured on the chunks the
 * real pipeline (src/ingest) cut: words per chunk, chunks and sections per page, vocabulary growth
 * (Heaps' law) and the weight of the most common words. bench/corpus/gen-corpus.ts and its test compare
 * the synthetic corpus with the shared English dumps through these.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wordCount, type IngestResult } from "../../src/ingest";
import { ContainerWriter, TextWriter } from "../../src/snapshot";
import { terms } from "../../src/search/text/analyze";
import { quantile } from "../stats";

export interface Spread {
  mean: number;
  median: number;
  p90: number;
}

export interface CorpusStats {
  pages: number;
  redirects: number;
  chunks: number;
  tokens: number;
  vocabulary: number;
  wordsPerChunk: Spread;
  chunksPerPage: Spread;
  /** Sections holding at least one chunk, the intro included. */
  sectionsPerPage: Spread;
  /** Heaps' law V = k·n^beta, fitted on the vocabulary size V after n tokens (chunks in dump order). */
  heaps: { k: number; beta: number };
  /** The 10 most common terms: share of all tokens, and share of chunks holding the term. */
  top: { term: string; tokenShare: number; chunkShare: number }[];
  /** Share of chunks holding at least one of the 10 most common terms. */
  top10ChunkShare: number;
  /** Distinct terms per chunk: the postings a chunk adds to the index. */
  termsPerChunk: Spread;
  /** Chunk text's size over its stored size, in the snapshot's zstd blocks (src/snapshot/text.ts). */
  textCompression: number;
}

/** The chunks' text stored as a snapshot stores it (src/snapshot/text.ts, into a file thrown away): raw bytes over stored bytes. */
function compressionOf(texts: string[]): number {
  const dir = mkdtempSync(join(tmpdir(), "tome-corpus-stats-"));
  const out = new ContainerWriter(join(dir, "text.tome"));
  try {
    const writer = new TextWriter(out);
    for (const t of texts) writer.add(t);
    writer.finish();
    return writer.bytesOut ? writer.bytesIn / writer.bytesOut : 0;
  } finally {
    out.abandon();
    rmSync(dir, { recursive: true, force: true });
  }
}

function spread(xs: number[]): Spread {
  if (!xs.length) return { mean: 0, median: 0, p90: 0 };
  return { mean: xs.reduce((a, b) => a + b, 0) / xs.length, median: quantile(xs, 0.5), p90: quantile(xs, 0.9) };
}

/** Least squares of log V on log n, over the points past the first 1,000 tokens. */
function fitHeaps(points: [number, number][]): { k: number; beta: number } {
  const pts = points.filter(([n]) => n >= 1000).map(([n, v]) => [Math.log(n), Math.log(v)] as const);
  if (pts.length < 2) return { k: 0, beta: 0 };
  const mx = pts.reduce((a, p) => a + p[0], 0) / pts.length;
  const my = pts.reduce((a, p) => a + p[1], 0) / pts.length;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of pts) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  const beta = sxy / sxx;
  return { k: Math.exp(my - beta * mx), beta };
}

export function corpusStats(results: IngestResult[]): CorpusStats {
  const wordsPerChunk: number[] = [];
  const chunksPerPage: number[] = [];
  const sectionsPerPage: number[] = [];
  const counts = new Map<string, number>();
  const chunkTerms: Set<string>[] = [];
  const texts: string[] = [];
  const heapsPoints: [number, number][] = [];
  let tokens = 0;
  let nextPoint = 1000;
  let pages = 0;
  let redirects = 0;
  for (const r of results) {
    redirects += r.redirects.length;
    for (const a of r.articles) {
      pages++;
      chunksPerPage.push(a.chunks.length);
      sectionsPerPage.push(new Set(a.chunks.map((c) => c.section)).size);
      for (const c of a.chunks) {
        wordsPerChunk.push(wordCount(c.text));
        texts.push(c.text);
        const ts = terms(c.text, r.wiki.lang);
        for (const t of ts) {
          counts.set(t, (counts.get(t) ?? 0) + 1);
          if (++tokens === nextPoint) {
            heapsPoints.push([tokens, counts.size]);
            nextPoint = Math.ceil(nextPoint * 1.25);
          }
        }
        chunkTerms.push(new Set(ts));
      }
    }
  }
  heapsPoints.push([tokens, counts.size]);
  const topTerms = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
  const chunks = chunkTerms.length;
  const top = topTerms.map(([term, n]) => ({
    term,
    tokenShare: n / tokens,
    chunkShare: chunkTerms.filter((s) => s.has(term)).length / chunks,
  }));
  const top10ChunkShare = chunkTerms.filter((s) => topTerms.some(([t]) => s.has(t))).length / chunks;
  return {
    pages,
    redirects,
    chunks,
    tokens,
    vocabulary: counts.size,
    wordsPerChunk: spread(wordsPerChunk),
    chunksPerPage: spread(chunksPerPage),
    sectionsPerPage: spread(sectionsPerPage),
    heaps: fitHeaps(heapsPoints),
    top,
    top10ChunkShare,
    termsPerChunk: spread(chunkTerms.map((t) => t.size)),
    textCompression: compressionOf(texts),
  };
}

const f = (x: number, digits = 1) => x.toFixed(digits);
const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/** A Markdown table of the two corpora side by side. */
export function sideBySide(realName: string, real: CorpusStats, synthName: string, synth: CorpusStats): string {
  const rows: [string, string, string][] = [
    ["pages (articles)", String(real.pages), String(synth.pages)],
    ["redirects per article", f(real.redirects / real.pages, 3), f(synth.redirects / synth.pages, 3)],
    ["chunks", String(real.chunks), String(synth.chunks)],
    ["tokens", String(real.tokens), String(synth.tokens)],
    ["vocabulary (distinct terms)", String(real.vocabulary), String(synth.vocabulary)],
  ];
  for (const [label, key] of [
    ["words per chunk", "wordsPerChunk"],
    ["chunks per page", "chunksPerPage"],
    ["sections per page", "sectionsPerPage"],
    ["distinct terms per chunk", "termsPerChunk"],
  ] as const)
    rows.push([
      `${label}: mean / median / p90`,
      `${f(real[key].mean)} / ${f(real[key].median)} / ${f(real[key].p90)}`,
      `${f(synth[key].mean)} / ${f(synth[key].median)} / ${f(synth[key].p90)}`,
    ]);
  rows.push([
    "Heaps' law V = k·n^β: k, β",
    `${f(real.heaps.k)}, ${f(real.heaps.beta, 3)}`,
    `${f(synth.heaps.k)}, ${f(synth.heaps.beta, 3)}`,
  ]);
  rows.push([
    "vocabulary predicted at 1e9 tokens",
    (real.heaps.k * 1e9 ** real.heaps.beta).toExponential(2),
    (synth.heaps.k * 1e9 ** synth.heaps.beta).toExponential(2),
  ]);
  for (let i = 0; i < 10; i++) {
    const a = real.top[i];
    const b = synth.top[i];
    const cell = (t?: CorpusStats["top"][number]) =>
      t ? `${t.term}: ${pct(t.tokenShare)} of tokens, in ${pct(t.chunkShare)} of chunks` : "";
    rows.push([`top word ${i + 1}`, cell(a), cell(b)]);
  }
  rows.push([
    "top 10 words: share of tokens",
    pct(real.top.reduce((s, t) => s + t.tokenShare, 0)),
    pct(synth.top.reduce((s, t) => s + t.tokenShare, 0)),
  ]);
  rows.push([
    "chunk text over its zstd size (16 KB blocks, level 9)",
    f(real.textCompression, 2),
    f(synth.textCompression, 2),
  ]);
  rows.push(["chunks holding one of the top 10 words", pct(real.top10ChunkShare), pct(synth.top10ChunkShare)]);
  return [`| | ${realName} | ${synthName} |`, "|---|---|---|", ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}
