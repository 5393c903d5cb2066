/**
 * bun bench/search.ts <snapshot.tome> [--queries N] [--json]
 *
 * In process, one core. Measures, on a snapshot:
 *   - build time of the search indexes (first open, indexes not yet kept beside it)
 *   - boot time (open with the kept indexes: decode snapshot + indexes)
 *   - heap bytes per chunk after boot (heap after GC, minus the heap before)
 *   - p50/p99 query latency for a mix: single words, 2–4 words, phrases, very common
 *     words, typos, prefixes, Japanese
 * Queries are drawn from the snapshot's own text (fixed seed), so every kind has matches.
 * Snapshot build time is measured by `bun run snapshot:build` itself (it prints it).
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { heapStats } from "bun:jsc";
import { indexPath, open, terms } from "../src/search";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { queries: { type: "string", default: "200" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  allowPositionals: true,
});
if (values.help || !positionals[0]) {
  console.log("Usage: bun bench/search.ts <snapshot.tome> [--queries N per kind] [--json]");
  process.exit(values.help ? 0 : 2);
}
const path = positionals[0];
const perKind = Number(values.queries);

const heap = () => {
  Bun.gc(true);
  return heapStats().heapSize;
};

rmSync(indexPath(path), { force: true });
const t0 = performance.now();
let first: Awaited<ReturnType<typeof open>> | null = await open(path);
const buildIndexSeconds = (performance.now() - t0) / 1000;
const chunks = first.snapshot.meta.indexedChunks;
first = null;

const heapBefore = heap();
const t1 = performance.now();
const tome = await open(path);
const bootSeconds = (performance.now() - t1) / 1000;
const heapBytesPerChunk = (heap() - heapBefore) / chunks;

// Query mix, from the snapshot's own words.
let seed = 7;
const random = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296);
const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
const pages = tome.snapshot.pages.filter((p) => p.chunks.length);
const lang = tome.snapshot.meta.wiki.lang;
const sampleWords = (n: number, filter: (w: string) => boolean = () => true): string[] => {
  for (let tries = 0; tries < 100; tries++) {
    const p = pick(pages);
    const c = pick(p.chunks);
    const ws = terms(c.text, lang).filter(filter);
    if (ws.length >= n) {
      const at = Math.floor(random() * (ws.length - n + 1));
      return ws.slice(at, at + n);
    }
  }
  return [];
};
const frequency = new Map<string, number>();
for (let i = 0; i < 2000; i++) for (const w of sampleWords(1)) frequency.set(w, (frequency.get(w) ?? 0) + 1);
const common = [...frequency.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([w]) => w);
const japanese = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const long = (w: string) => [...w].length >= 6 && !japanese.test(w);
const typo = (w: string) => {
  const cs = [...w];
  const i = 1 + Math.floor(random() * (cs.length - 2));
  cs[i] = cs[i] === "e" ? "a" : "e";
  return cs.join("");
};

const kinds: Record<string, () => string> = {
  "single word": () => sampleWords(1).join(" "),
  "2-4 words": () => sampleWords(2 + Math.floor(random() * 3)).join(" "),
  phrase: () => `"${sampleWords(2 + Math.floor(random() * 2)).join(" ")}"`,
  "very common": () => pick(common),
  typo: () => typo(sampleWords(1, long)[0] ?? "encyclopedia"),
  prefix: () => [...(sampleWords(1, long)[0] ?? "encyclopedia")].slice(0, 4).join(""),
  japanese: () => sampleWords(1, (w) => japanese.test(w)).join(" "),
};

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

const results: Record<string, { p50: number; p99: number; n: number; meanHits: number }> = {};
const all: number[] = [];
for (const [kind, make] of Object.entries(kinds)) {
  const queries = Array.from({ length: perKind }, make).filter((q) => q.replace(/"/g, "").trim());
  if (!queries.length) continue;
  for (const q of queries.slice(0, 10)) tome.search(q); // warm-up
  const times: number[] = [];
  let hits = 0;
  for (const q of queries) {
    const t = performance.now();
    const r = tome.search(q);
    times.push(performance.now() - t);
    hits += r.estimatedTotalHits;
  }
  all.push(...times);
  results[kind] = { p50: percentile(times, 0.5), p99: percentile(times, 0.99), n: times.length, meanHits: hits / times.length };
}

const report = {
  snapshot: path,
  pages: tome.snapshot.pages.length,
  chunks,
  buildIndexSeconds,
  bootSeconds,
  heapBytesPerChunk,
  latencyMs: results,
  overall: { p50: percentile(all, 0.5), p99: percentile(all, 0.99), n: all.length },
};
if (values.json) console.log(JSON.stringify(report));
else {
  console.log(`${path}: ${report.pages} pages, ${chunks} chunks`);
  console.log(`index build ${buildIndexSeconds.toFixed(1)} s; boot ${bootSeconds.toFixed(2)} s; heap ${(heapBytesPerChunk / 1024).toFixed(2)} KB per chunk`);
  console.log("| queries | n | p50 ms | p99 ms | mean matching pages |");
  console.log("|---|---|---|---|---|");
  for (const [k, r] of Object.entries(results)) console.log(`| ${k} | ${r.n} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.meanHits.toFixed(0)} |`);
  console.log(`| **all** | ${report.overall.n} | ${report.overall.p50.toFixed(2)} | ${report.overall.p99.toFixed(2)} | |`);
}
