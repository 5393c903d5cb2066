/**
 * bench/corpus/gen-corpus.ts, English-like mode: a small synthetic corpus, cut by the real pipeline,
 * has the statistics of the shared English dumps within the tolerances below, and the same seed
 * gives the same file.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { corpusStats, type CorpusStats } from "../bench/corpus/corpus-stats";
import { englishModel, generateEnglish, type EnglishModel } from "../bench/corpus/english-model";
import { ingest } from "../src/ingest";
import { ROOT, runToExit, tempDir } from "./helpers";

let model: EnglishModel;
let real: CorpusStats;
let synth: CorpusStats;
const dir = tempDir("tome-gen-corpus-");
const out = join(dir, "english.xml");

beforeAll(async () => {
  model = await englishModel();
  real = model.realStats;
  await generateEnglish(model, out, 2000, 7);
  synth = corpusStats([await ingest({ dumps: [out] })]);
}, 60_000);

const within = (actual: number, expected: number, share: number) =>
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(expected * share);

describe("an English-like corpus of 2,000 chunks", () => {
  test("snapshot:build's ingest cuts about as many chunks as asked", () => {
    within(synth.chunks, 2000, 0.1);
    within(synth.redirects / synth.pages, real.redirects / real.pages, 0.25);
  });

  test("words per chunk: mean within 5%, median and p90 within 10% of the dumps'", () => {
    within(synth.wordsPerChunk.mean, real.wordsPerChunk.mean, 0.05);
    within(synth.wordsPerChunk.median, real.wordsPerChunk.median, 0.1);
    within(synth.wordsPerChunk.p90, real.wordsPerChunk.p90, 0.1);
  });

  test("chunks and sections per page: means within 30% (about 120 pages drawn)", () => {
    within(synth.chunksPerPage.mean, real.chunksPerPage.mean, 0.3);
    within(synth.sectionsPerPage.mean, real.sectionsPerPage.mean, 0.3);
  });

  test("the 10 most common words are English ones, at their real weight", () => {
    for (const t of synth.top) expect(t.term).toMatch(/^[a-z]+$/);
    const realTop = new Set(real.top.map((t) => t.term));
    expect(synth.top.filter((t) => realTop.has(t.term)).length).toBeGreaterThanOrEqual(8);
    const weight = (s: CorpusStats) => s.top.reduce((a, t) => a + t.tokenShare, 0);
    expect(Math.abs(weight(synth) - weight(real))).toBeLessThanOrEqual(0.01);
    expect(Math.abs(synth.top10ChunkShare - real.top10ChunkShare)).toBeLessThanOrEqual(0.03);
  });

  test("vocabulary grows as the dumps' Heaps' law says: within 25% at the same token count", () => {
    within(synth.vocabulary, real.heaps.k * synth.tokens ** real.heaps.beta, 0.25);
    expect(Math.abs(synth.heaps.beta - real.heaps.beta)).toBeLessThanOrEqual(0.08);
  });

  test("the same seed gives the same file, another seed another", async () => {
    const again = join(dir, "again.xml");
    const other = join(dir, "other.xml");
    await generateEnglish(model, again, 300, 7);
    const first = join(dir, "first.xml");
    await generateEnglish(model, first, 300, 7);
    await generateEnglish(model, other, 300, 8);
    expect(await Bun.file(again).text()).toBe(await Bun.file(first).text());
    expect(await Bun.file(other).text()).not.toBe(await Bun.file(first).text());
  });
});

describe("the command line", () => {
  const run = (...args: string[]) => runToExit(["bun", join(ROOT, "bench/corpus/gen-corpus.ts"), ...args], {});

  test("--help says how to use it", async () => {
    const r = await run("--help");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--seed");
    expect(r.stdout).toContain("--mode");
  });

  test("a bad --chunks or --mode is refused with a clear message, no stack trace", async () => {
    for (const [args, message] of [
      [["--chunks", "many"], "--chunks must be a positive whole number"],
      [["--mode", "klingon"], "--mode must be english or mixed"],
    ] as const) {
      const r = await run(...args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toContain("    at ");
    }
  });

  test("an option it does not take (--chunk for --chunks, --compare with --mode mixed) is refused before it writes, where it wrote a million chunks or threw", async () => {
    const out = join(tempDir("tome-gen-corpus-"), "c.xml");
    for (const [args, message] of [
      [["--chunk", "300", "--out", out], "unknown option --chunk"],
      [["--mode", "mixed", "--compare", "--out", out], "--compare is for --mode english"],
    ] as const) {
      const r = await run(...args);
      expect({ args, code: r.code, said: r.stderr.split("\n")[0] }).toEqual({
        args,
        code: 2,
        said: expect.stringContaining(message),
      });
      expect(r.stderr).not.toContain("    at ");
      expect(existsSync(out)).toBe(false);
    }
  });
});
