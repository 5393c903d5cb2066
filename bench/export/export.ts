/**
 * bun bench/export/export.ts [--chunks 1000000] [--rounds 3] [--dir DIR]
 *
 * snapshot:export's speed (issue 45): chunks a second written as JSON lines, at `--chunks`
 * chunks, the median of `--rounds` runs of the real command (bun src/cli/snapshot-export.ts)
 * into /dev/null, then one into .zst and one into .gz. The snapshot holds the real English
 * fixture dumps' pages (enwiki-2016-sample, enwik8-head, SQuAD's articles), copied under new
 * page ids until it has that many chunks: the export reads only the pages and their text,
 * so it is written without a search index (building one at 1M takes about ten minutes here,
 * bench/scale/RESULTS.md, and the export never reads it). Baseline in the same run: reading
 * every chunk's text alone, the floor of any export.
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const USAGE = `Usage: bun bench/export/export.ts [--chunks N] [--rounds N] [--dir DIR]
  --chunks N   chunks in the snapshot exported (default 1000000)
  --rounds N   exports timed into /dev/null; the median is reported (default 3)
  --dir DIR    where the snapshots go (default: a new temporary folder, removed at the end)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    chunks: { type: "string", default: "1000000" },
    rounds: { type: "string", default: "3" },
    dir: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  strict: true,
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { buildSnapshot } = await import("../../src/cli/snapshot-build");
const { DEFAULT_CHUNK_WORDS } = await import("../../src/ingest");
const { openSnapshot, redirectListOf, SnapshotWriter } = await import("../../src/snapshot");
const { dump, ROOT, tempDir } = await import("../support");

const target = Number(values.chunks);
const rounds = Number(values.rounds);
if (!Number.isInteger(target) || target < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error(`--chunks and --rounds take whole numbers ≥ 1.\n${USAGE}`);
  process.exit(2);
}
const dir = values.dir ?? tempDir("tome-export-bench-");
mkdirSync(dir, { recursive: true });

const started = performance.now();
const seed = await buildSnapshot(
  {
    dumps: ["enwiki-2016-sample.xml.bz2", "enwik8-head.xml.bz2", "squad-dev-articles.xml.bz2"].map(dump),
    out: join(dir, "seed.tome"),
    chunkWords: DEFAULT_CHUNK_WORDS,
    allowTruncated: false,
  },
  () => {},
);
const source = openSnapshot(seed);
const big = join(dir, `export-${target}.tome`);
const writer = new SnapshotWriter(big);
let chunks = 0;
for (let copy = 0; chunks < target; copy++) {
  for (let i = 0; i < source.pages.length && chunks < target; i++) {
    const page = source.pages.at(i);
    const chunkList = page.chunks.slice(0, target - chunks).map((c) => ({ section: c.section, text: c.text }));
    writer.add({ ...page, pageId: copy * 100_000_000 + page.pageId, chunks: chunkList });
    chunks += chunkList.length;
  }
}
writer.finishPages(() => true, redirectListOf([]));
const { formatVersion: _f, contentHash: _h, ...meta } = source.meta;
writer.finish({ ...meta, indexedChunks: chunks });
console.error(
  `snapshot of ${chunks} chunks (${(statSync(big).size / 1e6).toFixed(0)} MB) made in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);

/** Reads every chunk's text: what any export costs at least. */
function readAll(): number {
  const snapshot = openSnapshot(big);
  const t0 = performance.now();
  let n = 0;
  for (let i = 0; i < snapshot.pages.length; i++)
    for (let c = 0; c < snapshot.pages.chunkCounts[i]!; c++) n += snapshot.pages.chunkText(i, c).length > 0 ? 1 : 0;
  if (n !== chunks) throw new Error(`read ${n} chunks, not ${chunks}`);
  return (performance.now() - t0) / 1000;
}

/** One run of the real command; its wall time, in seconds. */
function exportTo(out: string): number {
  const t0 = performance.now();
  const run = Bun.spawnSync(["bun", join(ROOT, "src/cli/snapshot-export.ts"), "--snapshot", big, "--out", out], {
    stdout: out === "-" ? "ignore" : "inherit",
    stderr: "pipe",
  });
  if (run.exitCode !== 0) throw new Error(run.stderr.toString());
  return (performance.now() - t0) / 1000;
}

const baseline = median(Array.from({ length: rounds }, readAll));
const plain = median(Array.from({ length: rounds }, () => exportTo("-")));
const zst = exportTo(join(dir, "all.jsonl.zst"));
const gz = exportTo(join(dir, "all.jsonl.gz"));
const rate = (s: number) => Math.round(chunks / s).toLocaleString("en-US");
console.log(`snapshot:export at ${chunks.toLocaleString("en-US")} chunks (bun ${Bun.version}):`);
console.log(
  `  reading the text alone (baseline, in process): ${baseline.toFixed(1)} s, ${rate(baseline)} chunks/s (median of ${rounds})`,
);
console.log(
  `  export to stdout (/dev/null):  ${plain.toFixed(1)} s, ${rate(plain)} chunks/s (median of ${rounds}; ${(plain / baseline).toFixed(2)}× the baseline)`,
);
console.log(
  `  export to .zst: ${zst.toFixed(1)} s, ${rate(zst)} chunks/s, ${(statSync(join(dir, "all.jsonl.zst")).size / 1e6).toFixed(0)} MB`,
);
console.log(
  `  export to .gz:  ${gz.toFixed(1)} s, ${rate(gz)} chunks/s, ${(statSync(join(dir, "all.jsonl.gz")).size / 1e6).toFixed(0)} MB`,
);
console.log(`  whole run ${((performance.now() - started) / 1000).toFixed(0)} s`);
if (!values.dir) rmSync(dir, { recursive: true, force: true });
