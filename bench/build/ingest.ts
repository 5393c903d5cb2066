/**
 * bun bench/build/ingest.ts [--runs N] [--no-workers | --workers-only] [dump …]
 *
 * For each dump (default: every shared dump), in a fresh process per run:
 *   - the whole pipeline (decode, XML, wikitext → chunks on every core, snapshot encode + write):
 *     articles/s and MB/s of wikitext per CPU-second of this process (all its threads),
 *     and wall-clock rates
 *   - wtf_wikipedia alone on the same pages, one thread: wtf(text).text() per page, per CPU-second of
 *     this process (JSC compiles on threads of its own, for the parser alone as for the pipeline) and by the clock
 *   - their ratio (pipeline per core / wtf alone per core): the cost of everything around the parser; and
 *     the same for the ingest alone (decode, XML, wikitext → sections and chunks, claims: before the
 *     snapshot is written), which is what runs on the parsing workers' cores
 *     in a build (the index's inversion runs beside it; bench/build/projection.ts weighs both)
 *   - peak RSS of the pipeline, and the snapshot's size against the raw wikitext
 * Medians over the runs. Damaged dumps are read up to the damage (--allow-truncated).
 * CPU of the bzip2/xz decoder processes is not counted (they run beside the pipeline).
 *
 * Then (unless --no-workers) one worker against two (issue 61): every dump given read in one process
 * per run and worker count, with a build's parsing workers (the chunks' words analysed beside the
 * parse, D139), the two counts in turn; the wall throughput of 2 workers ÷ 1, the median of the
 * pairs. Each dump is its own ingest (one snapshot holds one wiki); the workers of one rest for the next (D159).
 */
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import wtf from "wtf_wikipedia";
import { buildParsingWorker } from "../../src/build";
import { ingest } from "../../src/ingest";
import { readExport } from "../../src/ingest/mediawiki";
import { openDump } from "../../src/ingest/source";
import { dumpsOr, inChild, writeSnapshot } from "../support";
import { median } from "../stats";

interface Sample {
  dump: string;
  articles: number;
  chunks: number;
  wikitextBytes: number;
  pipelineWall: number;
  pipelineCpu: number;
  ingestCpu: number;
  peakRssMB: number;
  snapshotBytes: number;
  wtfSeconds: number;
  /** CPU-seconds of this process (all its threads: JSC compiles on its own) over wtf_wikipedia alone. */
  wtfCpu: number;
}

async function child(dump: string): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const options = { dumps: [dump], allowTruncated: true };
  const result = await ingest(options);
  const ingested = process.cpuUsage(cpu0);
  const ingestCpu = (ingested.user + ingested.system) / 1e6;
  const out = join(tmpdir(), `tome-bench-${process.pid}.tome`);
  const { bytes } = writeSnapshot(result, out, options);
  const pipelineWall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const pipelineCpu = (cpu.user + cpu.system) / 1e6;
  const peakRssMB = process.resourceUsage().maxRSS / 1024;
  await Bun.file(out).delete();

  // The same pages, for wtf_wikipedia alone.
  const kept = new Set(result.articles.map((a) => a.revId));
  const texts: string[] = [];
  const source = await openDump(dump);
  try {
    for await (const item of readExport(source.xml, dump)) {
      if (item.kind === "page" && item.page.ns === 0 && kept.has(item.page.revId)) texts.push(item.page.text);
    }
  } catch {
    // damaged dump: the pages before the damage are what the pipeline kept too
  }
  source.cancel();
  const wikitextBytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
  const w0 = performance.now();
  const c0 = process.cpuUsage();
  let sink = 0;
  for (const t of texts) sink += wtf(t).text().length;
  const wtfSeconds = (performance.now() - w0) / 1000;
  const wtfUsage = process.cpuUsage(c0);
  const wtfCpu = (wtfUsage.user + wtfUsage.system) / 1e6;
  if (sink < 0) console.log(sink);

  return {
    dump: dump.split("/").pop()!,
    articles: result.articles.length,
    chunks: result.articles.reduce((n, a) => n + a.chunks.length, 0),
    wikitextBytes,
    pipelineWall,
    pipelineCpu,
    ingestCpu,
    peakRssMB,
    snapshotBytes: bytes,
    wtfSeconds,
    wtfCpu,
  };
}

interface WorkersSample {
  wall: number;
  cpu: number;
  wikitextBytes: number;
}

/** Every dump read by `workers` of a build's parsing workers, one ingest each, in this process. */
async function workersChild(workers: number, dumps: string[]): Promise<WorkersSample> {
  let wikitextBytes = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const dump of dumps)
    await ingest({
      dumps: [dump],
      allowTruncated: true,
      workers,
      parsingWorker: buildParsingWorker(),
      onPage: (page) => (wikitextBytes += Buffer.byteLength(page.text)),
      onArticle: () => {},
    });
  const cpu = process.cpuUsage(cpu0);
  return { wall: (performance.now() - t0) / 1000, cpu: (cpu.user + cpu.system) / 1e6, wikitextBytes };
}

/** 1 and 2 workers in turn, `runs` pairs (the first count alternating), over every dump: the wall speedup's median. */
async function workersTable(dumps: string[], runs: number) {
  const pairs: [WorkersSample, WorkersSample][] = [];
  for (let r = 0; r < runs; r++) {
    const got: WorkersSample[] = [];
    for (const w of r % 2 ? [2, 1] : [1, 2])
      got[w - 1] = await inChild<WorkersSample>(import.meta.path, ["--child-workers", String(w), ...dumps]);
    const [one, two] = got as [WorkersSample, WorkersSample];
    pairs.push([one, two]);
    console.error(`workers, run ${r + 1}: 1 worker ${one.wall.toFixed(1)} s, 2 workers ${two.wall.toFixed(1)} s`);
  }
  const mb = pairs[0]![0].wikitextBytes / 1e6;
  const f = (n: number, d = 2) => n.toFixed(d);
  const [one, two] = [0, 1].map((i) => ({
    wall: median(pairs.map((p) => p[i]!.wall)),
    cpu: median(pairs.map((p) => p[i]!.cpu)),
  }));
  console.log("");
  console.log(
    `One worker against two: ${dumps.length} dumps, ${f(mb, 1)} MB of wikitext, each dump its own ingest; medians of ${runs} pairs, each count in a fresh process, in turn. Load when done: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}.`,
  );
  console.log("| workers | wall s | MB/s (wall) | CPU s per MB |");
  console.log("|---|---|---|---|");
  for (const [n, s] of [
    [1, one!],
    [2, two!],
  ] as const)
    console.log(`| ${n} | ${f(s.wall, 1)} | ${f(mb / s.wall)} | ${f(s.cpu / mb, 3)} |`);
  console.log(
    `2 workers ÷ 1 worker, wall throughput: ${f(median(pairs.map(([a, b]) => a.wall / b.wall)))}× (median of the pairs: ${pairs.map(([a, b]) => f(a.wall / b.wall)).join(", ")})`,
  );
}

async function main() {
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      runs: { type: "string", default: "3" },
      child: { type: "string" },
      "child-workers": { type: "string" },
      "no-workers": { type: "boolean" },
      "workers-only": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
  });
  if (values.help) {
    console.log(
      "Usage: bun bench/build/ingest.ts [--runs N] [--no-workers | --workers-only] [dump …]   (default: every dump in test/fixtures/data/dumps)\n" +
        "  --no-workers    the per-dump table only, not 1 worker against 2\n" +
        "  --workers-only  1 worker against 2 only",
    );
    return;
  }
  if (values["child-workers"]) {
    console.log(JSON.stringify(await workersChild(Number(values["child-workers"]), positionals)));
    return;
  }
  if (values.child) {
    console.log(JSON.stringify(await child(values.child)));
    return;
  }
  const dumps = dumpsOr(positionals);
  const runs = Number(values.runs);
  if (!values["workers-only"]) await perDumpTable(dumps, runs);
  if (!values["no-workers"]) await workersTable(dumps, runs);
}

async function perDumpTable(dumps: string[], runs: number) {
  const rows: Sample[] = [];
  for (const dump of dumps) {
    const samples: Sample[] = [];
    for (let r = 0; r < runs; r++) {
      samples.push(await inChild<Sample>(import.meta.path, ["--child", dump]));
    }
    const pick = (k: keyof Sample) => median(samples.map((s) => s[k] as number));
    rows.push({
      dump: samples[0]!.dump,
      articles: samples[0]!.articles,
      chunks: samples[0]!.chunks,
      wikitextBytes: samples[0]!.wikitextBytes,
      pipelineWall: pick("pipelineWall"),
      pipelineCpu: pick("pipelineCpu"),
      ingestCpu: pick("ingestCpu"),
      peakRssMB: pick("peakRssMB"),
      snapshotBytes: samples[0]!.snapshotBytes,
      wtfSeconds: pick("wtfSeconds"),
      wtfCpu: pick("wtfCpu"),
    });
    console.error(`done ${samples[0]!.dump}`);
  }

  const f = (n: number, d = 1) => n.toFixed(d);
  console.log(
    `Medians of ${runs} runs per dump. "per core" = per CPU-second of the process (all its threads, JSC's compiler threads too), the pipeline's and wtf_wikipedia's alone alike; the ratios are of those.`,
  );
  console.log(
    "| dump | articles | chunks | wikitext MB | pipeline MB/s per core | pipeline MB/s (wall) | wtf alone MB/s per core | wtf alone MB/s (wall, one thread) | ratio pipeline/wtf | ingest MB/s per core | ratio ingest/wtf | peak RSS MB | snapshot MB | snapshot / wikitext |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  const total = { articles: 0, bytes: 0, cpu: 0, ingestCpu: 0, wall: 0, wtf: 0, wtfCpu: 0, snap: 0 };
  const line = (name: string, chunks: string, r: typeof total, peak: string) => {
    const mb = r.bytes / 1e6;
    return `| ${name} | ${r.articles} | ${chunks} | ${f(mb)} | ${f(mb / r.cpu, 2)} | ${f(mb / r.wall, 2)} | ${f(mb / r.wtfCpu, 2)} | ${f(mb / r.wtf, 2)} | ${f(r.wtfCpu / r.cpu, 2)} | ${f(mb / r.ingestCpu, 2)} | ${f(r.wtfCpu / r.ingestCpu, 2)} | ${peak} | ${f(r.snap / 1e6, 2)} | ${f(r.snap / r.bytes, 2)} |`;
  };
  for (const r of rows) {
    const one = {
      articles: r.articles,
      bytes: r.wikitextBytes,
      cpu: r.pipelineCpu,
      ingestCpu: r.ingestCpu,
      wall: r.pipelineWall,
      wtf: r.wtfSeconds,
      wtfCpu: r.wtfCpu,
      snap: r.snapshotBytes,
    };
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += one[k];
    console.log(line(r.dump, String(r.chunks), one, f(r.peakRssMB, 0)));
  }
  console.log(line("**all**", "", total, `${f(Math.max(...rows.map((r) => r.peakRssMB)), 0)} (max)`));
}

await main();
