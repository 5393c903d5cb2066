/**
 * bun bench/build/projection.ts [--runs N] [--cores 2,8,16] [--repeat N] [--index-dump FILE --index-limit N]
 *
 * How long an English Wikipedia build would take, from rates measured here (each in a fresh
 * process, medians over the runs):
 *   - ingest: the English shared dumps (one wiki, read in one ingest) with 1 and with 2 of a build's
 *     parsing workers (which also analyse the chunks' words for the index, D139): MB of wikitext a
 *     second (wall), CPU-seconds per MB (all threads), chunks per MB;
 *   - the index: the same articles (or those of --index-dump, up to --index-limit articles: a
 *     larger corpus shows the rate at scale) written as a snapshot: CPU µs per chunk while pages
 *     are added (the postings kept, text blocks: they run beside the reading in a build) and after
 *     (page table, merge, page orders: one thread, after the last page);
 *   - the serial stages: the XML reader (one thread) in MB/s, and one bzip2 process in MB/s.
 * Then, for each core count: the reading (parsing, analysis, text, on every core at the efficiency
 * measured here: CPU per MB with 1 worker ÷ with 2; the wall speedup is printed too, but on a shared
 * machine it says more about the others' work than about the build's), bounded below by what only the main thread does (the XML reader, the
 * claims, the postings kept) and by the decoder, plus the index's last part (mostly one thread). The sizes are English Wikipedia's (issue 61): 95 GB of XML, 6.9M articles,
 * 25M chunks; the wikitext read is the chunks times the wikitext per chunk measured here.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { buildParsingWorker, SnapshotBuild } from "../../src/build";
import { given, readArgs } from "../../src/cli/args";
import { ArgumentError } from "../../src/cli/main";
import { positiveInt } from "../../src/cli/snapshot-build";
import { ingest, type Article } from "../../src/ingest";
import { readExport } from "../../src/ingest/mediawiki";
import { redirectListOf } from "../../src/snapshot";
import { dump, inChild } from "../support";
import { median } from "../stats";

const ENGLISH = ["enwiki-2016-sample.xml.bz2", "enwik8-head.xml.bz2", "squad-dev-articles.xml.bz2"].map(dump);

/** English Wikipedia, as issue 61 sizes it. */
const EN = { xmlMB: 95_000, articles: 6.9e6, redirects: 11e6, chunks: 25e6 };

const cpuSeconds = (since: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / 1e6;
};

interface IngestSample {
  wall: number;
  cpu: number;
  /** Of cpu, the main thread's (the XML reader, the claims, the articles received). */
  mainCpu: number;
  wikitextBytes: number;
  articles: number;
  chunks: number;
}

/**
 * The English shared dumps' pages `times` times over in one plain XML file (each copy's pages
 * with new ids and titles, so that none replaces another): real wikitext, read long enough that
 * what a run pays once (each worker's start and its compilation of the parser, about a second of
 * CPU each) weighs as it does in a build of hours.
 */
function repeatedDump(times: number): string {
  const out = join(tmpdir(), `tome-projection-x${times}-${process.pid}.xml`);
  const xmls = ENGLISH.map((path) => Bun.spawnSync(["bzip2", "-dc", path]).stdout.toString());
  const pages = xmls.flatMap((xml) => [...xml.matchAll(/<page>[\s\S]*?<\/page>/g)].map((m) => m[0]));
  const parts = [xmls[0]!.slice(0, xmls[0]!.indexOf("<page>"))];
  let id = 1;
  for (let copy = 0; copy < times; copy++)
    for (const page of pages)
      parts.push(
        page
          .replace(/<id>\d+<\/id>/, `<id>${id++}</id>`)
          .replace(/<title>([^<]*)<\/title>/, (_, title) => `<title>${title}${copy ? ` ${copy}` : ""}</title>`),
      );
  parts.push("</mediawiki>\n");
  writeFileSync(out, parts.join("\n"));
  return out;
}

async function ingestChild(workers: number, dumps: string[]): Promise<IngestSample> {
  let wikitextBytes = 0;
  let chunks = 0;
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpu();
  const t0 = performance.now();
  const result = await ingest({
    dumps,
    workers,
    // A build's workers: the chunks' words are analysed for the index beside the parse (D139).
    parsingWorker: buildParsingWorker(),
    onPage: (page) => (wikitextBytes += Buffer.byteLength(page.text)),
    onArticle: (article) => (chunks += article.chunks.length),
  });
  return {
    wall: (performance.now() - t0) / 1000,
    cpu: cpuSeconds(cpu0),
    mainCpu: mainThreadCpu() - main0,
    wikitextBytes,
    articles: result.kept.pageIds.length,
    chunks,
  };
}

interface IndexSample {
  chunks: number;
  addCpu: number;
  /** Of addCpu, the main thread's (the postings kept; the runs are sorted and the text compressed on threads). */
  addMainCpu: number;
  finishCpu: number;
  finishWall: number;
}

async function indexChild(dumps: string[], limit: number | undefined): Promise<IndexSample> {
  const result = await ingest({ dumps, limit, parsingWorker: buildParsingWorker() });
  const articles: Article[] = result.articles;
  const out = join(tmpdir(), `tome-projection-${process.pid}.tome`);
  // As a build from dumps makes it: runs sorted and text compressed off the main thread.
  const build = new SnapshotBuild({ out, chunkWords: 300 }, true);
  try {
    const cpu0 = process.cpuUsage();
    const main0 = mainThreadCpu();
    for (const a of articles) {
      build.add(a, result.wiki.lang);
      await build.ready();
    }
    const addMainCpu = mainThreadCpu() - main0;
    await build.settle();
    const addCpu = cpuSeconds(cpu0);
    const cpu1 = process.cpuUsage();
    const t1 = performance.now();
    const { meta } = build.finish(result.kept, redirectListOf(result.redirects), result, result.redirectIds);
    return {
      chunks: meta.indexedChunks,
      addCpu,
      addMainCpu,
      finishCpu: cpuSeconds(cpu1),
      finishWall: (performance.now() - t1) / 1000,
    };
  } finally {
    await Bun.file(out)
      .delete()
      .catch(() => {});
  }
}

interface SerialSample {
  xmlMB: number;
  readerSeconds: number;
  bzip2Seconds: number;
}

/** The XML reader alone on decoded XML held in memory, and one bzip2 decoding the same dumps. */
async function serialChild(): Promise<SerialSample> {
  let xmlBytes = 0;
  let readerSeconds = 0;
  let bzip2Seconds = 0;
  for (const path of ENGLISH) {
    const t0 = performance.now();
    const proc = Bun.spawn(["bzip2", "-dc", path], { stdout: "pipe" });
    const xml = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
    await proc.exited;
    bzip2Seconds += (performance.now() - t0) / 1000;
    xmlBytes += xml.byteLength;
    const t1 = performance.now();
    let items = 0;
    for await (const _ of readExport(new Blob([xml]).stream(), path)) items++;
    if (!items) throw new Error(`${path} held nothing`);
    readerSeconds += (performance.now() - t1) / 1000;
  }
  return { xmlMB: xmlBytes / 1e6, readerSeconds, bzip2Seconds };
}

/** The median of each numeric field over the samples. */
function medians<T extends object>(samples: T[]): T {
  const first = samples[0]!;
  return Object.fromEntries(
    Object.keys(first).map((k) => [k, median(samples.map((s) => s[k as keyof T] as number))]),
  ) as T;
}

/** CPU seconds of this process's main thread so far (Linux: /proc, in clock ticks of 10 ms). */
function mainThreadCpu(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const hours = (seconds: number) => `${(seconds / 3600).toFixed(1)} h`;

const USAGE =
  "Usage: bun bench/build/projection.ts [--runs N] [--cores 2,8,16] [--repeat N] [--index-dump FILE --index-limit ARTICLES]\n" +
  "Projects an English Wikipedia build's wall time from ingest and index rates measured on this machine.\n" +
  "--index-dump: measure the index on this dump (e.g. a corpus of bench/corpus/gen-corpus.ts) rather than the shared English dumps.\n" +
  "--repeat: measure the ingest on the English dumps' pages N times over (new ids and titles, one plain XML file): what each run pays once weighs less.";

/** The options, checked before any measuring (a --runs of "x" threw after the runs, with its stack). */
function optionsOf(argv: string[]) {
  try {
    const { values } = readArgs(argv, {
      runs: { type: "string", default: "3" },
      cores: { type: "string", default: "2,8,16" },
      "index-dump": { type: "string" },
      "index-limit": { type: "string" },
      child: { type: "string" },
      workers: { type: "string" },
      repeat: { type: "string", default: "1" },
      "ingest-dump": { type: "string" },
    });
    positiveInt("runs", values.runs);
    positiveInt("repeat", values.repeat);
    positiveInt("index-limit", values["index-limit"]);
    if (!/^[0-9]+(,[0-9]+)*$/.test(values.cores ?? "") || values.cores!.split(",").some((c) => Number(c) < 1))
      throw new ArgumentError(
        `--cores takes whole numbers ≥ 1 separated by commas (2,8,16), not ${given(values.cores ?? "")}.`,
      );
    return values;
  } catch (err) {
    if (!(err instanceof ArgumentError)) throw err;
    console.error(`projection: ${err.message}\n${USAGE}`);
    process.exit(2);
  }
}

async function main() {
  const values = optionsOf(Bun.argv.slice(2));
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const indexLimit = values["index-limit"] ? Number(values["index-limit"]) : undefined;
  const indexDumps = values["index-dump"] ? [values["index-dump"]] : ENGLISH;
  if (values.child === "ingest") {
    const dumps = values["ingest-dump"] ? [values["ingest-dump"]] : ENGLISH;
    return console.log(JSON.stringify(await ingestChild(Number(values.workers), dumps)));
  }
  if (values.child === "index") return console.log(JSON.stringify(await indexChild(indexDumps, indexLimit)));
  if (values.child === "serial") return console.log(JSON.stringify(await serialChild()));

  const runs = Number(values.runs);
  const one: IngestSample[] = [];
  const two: IngestSample[] = [];
  const index: IndexSample[] = [];
  const serial: SerialSample[] = [];
  const indexArgs = [
    ...(values["index-dump"] ? ["--index-dump", values["index-dump"]] : []),
    ...(indexLimit ? ["--index-limit", String(indexLimit)] : []),
  ];
  const repeat = Number(values.repeat);
  const repeated = repeat > 1 ? repeatedDump(repeat) : undefined;
  const ingestArgs = repeated ? ["--ingest-dump", repeated] : [];
  for (let r = 0; r < runs; r++) {
    // One worker and two in turn, so that a change in the machine's load falls on both.
    one.push(await inChild<IngestSample>(import.meta.path, ["--child", "ingest", "--workers", "1", ...ingestArgs]));
    two.push(await inChild<IngestSample>(import.meta.path, ["--child", "ingest", "--workers", "2", ...ingestArgs]));
    index.push(await inChild<IndexSample>(import.meta.path, ["--child", "index", ...indexArgs]));
    serial.push(await inChild<SerialSample>(import.meta.path, ["--child", "serial"]));
    console.error(`run ${r + 1} of ${runs} done`);
  }
  if (repeated) rmSync(repeated, { force: true });
  const i1 = medians(one);
  const i2 = medians(two);
  const ix = medians(index);
  const s = medians(serial);
  const speedup = median(one.map((a, k) => a.wall / two[k]!.wall));
  const mb = i1.wikitextBytes / 1e6;
  const cpuPerMB = i1.cpu / mb;
  const bytesPerChunk = i1.wikitextBytes / i1.chunks;
  const addUs = (ix.addCpu / ix.chunks) * 1e6;
  const finishUs = (ix.finishCpu / ix.chunks) * 1e6;
  const readerMBs = s.xmlMB / s.readerSeconds;
  const bzip2MBs = s.xmlMB / s.bzip2Seconds;

  console.log(`Medians of ${runs} runs, each in a fresh process. Load when done: ${loadAverage()}.`);
  console.log("");
  console.log("| measured | figure |");
  console.log("|---|---|");
  console.log(
    `| wikitext of the English shared dumps${repeated ? `, ${repeat} times over (--repeat)` : ""} | ${mb.toFixed(1)} MB, ${i1.articles} articles, ${i1.chunks} chunks |`,
  );
  console.log(`| ingest, 1 worker: wall MB/s / CPU s per MB | ${(mb / i1.wall).toFixed(2)} / ${cpuPerMB.toFixed(3)} |`);
  console.log(
    `| ingest, 2 workers: wall MB/s / CPU s per MB | ${(mb / i2.wall).toFixed(2)} / ${(i2.cpu / mb).toFixed(3)} |`,
  );
  console.log(`| 2 workers ÷ 1 worker, wall throughput (median of the pairs) | ${speedup.toFixed(2)}× |`);
  console.log(`| wikitext per chunk | ${bytesPerChunk.toFixed(0)} B |`);
  console.log(
    `| index${values["index-dump"] ? ` of ${values["index-dump"].split("/").pop()}` : ""}: CPU µs per chunk while pages are added / after (${ix.chunks} chunks) | ${addUs.toFixed(0)} / ${finishUs.toFixed(0)} |`,
  );
  console.log(`| XML reader (one thread) | ${readerMBs.toFixed(0)} MB/s of XML |`);
  console.log(`| one bzip2 process | ${bzip2MBs.toFixed(0)} MB/s of XML |`);
  console.log("");

  const wikitextMB = (EN.chunks * bytesPerChunk) / 1e6;
  // Per MB of wikitext, per chunk: what the main thread does (it cannot be shared), and what the other threads do.
  const mainPerMB = i1.mainCpu / mb;
  const workersPerMB = (i1.cpu - i1.mainCpu) / mb;
  const mainIndexUs = (ix.addMainCpu / ix.chunks) * 1e6;
  const threadsIndexUs = addUs - mainIndexUs;
  // The XML that is not article wikitext (redirects, other namespaces, markup) goes through the reader too.
  const mainCpu =
    wikitextMB * mainPerMB + (EN.chunks * mainIndexUs) / 1e6 + Math.max(0, EN.xmlMB - wikitextMB) / readerMBs;
  const otherCpu = wikitextMB * workersPerMB + (EN.chunks * threadsIndexUs) / 1e6;
  const finishCpu = (EN.chunks * finishUs) / 1e6;
  // What two workers cost in CPU against one on the same pages (their duplicated warm-up, the hand-offs): robust
  // to other work on the machine, unlike the wall speedup, which needs cores left idle by others.
  const efficiency = Math.min(1, i1.cpu / i2.cpu);
  console.log(
    `English Wikipedia: ${EN.xmlMB / 1000} GB of XML, ${EN.articles / 1e6}M articles, ${EN.chunks / 1e6}M chunks, so about ${(wikitextMB / 1000).toFixed(0)} GB of article wikitext at ${bytesPerChunk.toFixed(0)} B a chunk.`,
  );
  console.log(
    `CPU while the dumps are read: the main thread ${hours(mainCpu)} (XML, claims, postings: ${(mainPerMB * 1000).toFixed(0)} ms a MB and ${mainIndexUs.toFixed(0)} µs a chunk), the other threads ${hours(otherCpu)} (parsing and analysis, runs, text blocks); after: ${hours(finishCpu)} (page table, merge, page orders). Parallel efficiency ${efficiency.toFixed(2)}: CPU per MB at 1 worker ÷ at 2 (assumed beyond 2; the wall speedup above needs quiet cores).`,
  );
  console.log("");
  console.log(
    "| cores | reading, on every core | the main thread's share (a bound) | decoder bound (lbzip2 on every core) | after the reading | projected wall |",
  );
  console.log("|---|---|---|---|---|---|");
  for (const cores of values.cores.split(",").map(Number)) {
    const parallel = (mainCpu + otherCpu) / (cores * efficiency);
    const decoder = EN.xmlMB / (bzip2MBs * cores);
    const wall = Math.max(parallel, mainCpu, decoder) + finishCpu;
    console.log(
      `| ${cores} | ${hours(parallel)} | ${hours(mainCpu)} | ${hours(decoder)} | ${hours(finishCpu)} | **${hours(wall)}** |`,
    );
  }
}

const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

await main();
