/**
 * The index build's run worker (src/search/indexer/runs.ts): a run it cannot write stops the build with
 * where and why, not a hang; a run it writes is the run the main thread would write.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { textShardOptions } from "../src/search/postings/fields";
import { Inversion } from "../src/search/indexer/invert";
import { PageAnalyser } from "../src/search/indexer/analysis";
import { IndexBuilder } from "../src/search/indexer/build";
import { RunSorter, runError, writeRun } from "../src/search/indexer/runs";
import { EN_2016, ingested, tempDir } from "./helpers";

// Per file (bun applies it to the current file only): these tests ingest a real dump and write runs, seconds on a busy machine.
setDefaultTimeout(120_000);

async function inversionOf(count: number): Promise<Inversion> {
  const { articles } = await ingested({ dumps: [EN_2016] });
  const inversion = new Inversion(textShardOptions("en"));
  for (const a of articles.slice(0, count))
    for (const c of a.chunks)
      inversion.add({ text: c.text, section: a.sections[c.section]?.heading ?? "", title: a.title });
  return inversion;
}

describe("the run worker", () => {
  test("writes the run the main thread would write", async () => {
    const dir = tempDir();
    const here = join(dir, "here.bin");
    writeRun(here, await inversionOf(20), 7);
    const written: string[] = [];
    const sorter = new RunSorter((path) => written.push(path));
    sorter.start(join(dir, "there.bin"), "en", 7, await inversionOf(20));
    await sorter.idle();
    sorter.close();
    expect(written).toEqual([join(dir, "there.bin")]);
    expect(readFileSync(join(dir, "there.bin"))).toEqual(readFileSync(here));
  });

  test("a run whose writer named its file already (a full disk) is said naming it once, its code kept", () => {
    const path = "/data/snapshots/.tome-runs-1-x/run-0.bin";
    const err = runError({
      path,
      error: `could not write ${path}: ENOSPC: no space left on device, write`,
      code: "ENOSPC",
    });
    expect(err.message).toBe(`could not write the index's run ${path}: ENOSPC: no space left on device, write`);
    expect((err as NodeJS.ErrnoException).code).toBe("ENOSPC");
    // A folder whose name holds an ESC and a line break: the writer names it \u-escaped (files.ts writeFailed), and so
    // does this, once.
    const odd = "/data/snap\x1b[31m\nshots/.tome-runs-1-x/run-0.bin";
    const shown = "/data/snap\\u001b[31m\\u000ashots/.tome-runs-1-x/run-0.bin";
    const named = runError({ path: odd, error: `could not write ${shown}: ENOSPC: no space left on device, write` });
    expect(named.message).toBe(`could not write the index's run ${shown}: ENOSPC: no space left on device, write`);
  });

  test("a run it cannot write fails with the path and the reason, and the worker stops", async () => {
    const dir = tempDir();
    const path = join(dir, "no-such-folder", "run-0.bin");
    const sorter = new RunSorter(() => {});
    sorter.start(path, "en", 0, await inversionOf(5));
    const failure = await sorter.next().then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure?.message).toContain(`could not write the index's run ${path}`);
    expect(failure?.message).toContain("ENOENT");
    expect(failure?.message).not.toContain("    at ");
    expect(sorter.failed).toBe(true);
    expect(() => sorter.throwIfFailed()).toThrow(failure!.message);
    // The worker ends (its close callback runs): awaited, not timed, so that a loaded machine cannot fail it.
    const closed = await new Promise<boolean>((resolve) => {
      sorter.close(() => resolve(true));
      setTimeout(() => resolve(false), 30_000);
    });
    expect(closed).toBe(true);
  });
});

describe("runs cut by the budget", () => {
  test("are the same with the worker as without it, however far behind the worker is", async () => {
    const { articles } = await ingested({ dumps: [EN_2016] });
    const runsOf = async (background: boolean) => {
      const index = new IndexBuilder("en", 300_000, tempDir(), background);
      // Added without a turn of the event loop: the worker, busy with the first run, falls behind.
      for (const a of articles) index.addPage(a);
      await index.settle();
      const count = index.runCount;
      index.abandon();
      return count;
    };
    const alone = await runsOf(false);
    expect(alone).toBeGreaterThan(10);
    expect(await runsOf(true)).toBe(alone);
  });
});

describe("settle: no more pages come", () => {
  test("the run inverted so far is written then, with or without the worker: nothing of the pages is held after it (D128)", async () => {
    const { articles } = await ingested({ dumps: [EN_2016] });
    for (const background of [false, true]) {
      // A budget no run fills: before settle(), every page is in the run being inverted.
      const index = new IndexBuilder("en", 2e9, tempDir(), background);
      for (const a of articles.slice(0, 10)) index.addPage(a);
      expect(index.runCount).toBe(0);
      await index.settle();
      expect(index.runCount).toBe(1);
      index.abandon();
    }
  });
});

describe("pages analysed in the parsing workers (D139)", () => {
  test("give the postings the main thread's own analysis gives, through two workers' numberings that start again", async () => {
    const { articles } = await ingested({ dumps: [EN_2016] });
    const pages = articles.slice(0, 30);
    const options = textShardOptions("en");
    const here = new Inversion(options);
    for (const a of pages)
      for (const c of a.chunks)
        here.add({ text: c.text, section: a.sections[c.section]?.heading ?? "", title: a.title });
    // Two workers whose numberings start again every few hundred keys, their pages interleaved.
    const workers = [new PageAnalyser(options, 300), new PageAnalyser(options, 500)];
    const analysed = pages.map((a, i) => workers[i % 2]!.analyse(a));
    expect(new Set(analysed.map((p) => `${p.worker}/${p.generation}`)).size).toBeGreaterThan(10);
    const there = new Inversion(options);
    for (const page of analysed) there.addAnalysed(page);
    expect(there.count).toBe(here.count);
    expect(there.shard()).toEqual(here.shard());
  });
});
