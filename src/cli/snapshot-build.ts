/** bun run snapshot:build — MediaWiki dumps → a Tome snapshot. */
import { basename, dirname, join, resolve } from "node:path";
import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { totalmem } from "node:os";
import type { buildFromDumps } from "../build";
import { DEFAULT_CHUNK_WORDS, DEFAULT_MEMORY_BYTES, MEMORY_BOUND, MOST_MEMORY_BYTES } from "../build-defaults";
import type { IngestResult } from "../ingest";
import { MAX_BUILD_WORKERS } from "../scheduling";
import type { SnapshotMeta } from "../snapshot";
import { given, readOptions } from "./args";
import { ArgumentError, mainAfterOptions } from "./main";
import { restartWithAllocatorSettings } from "./allocator";
import { checkOut, stoppedOutput } from "./out";
import { commandLine } from "../invocation";
import {
  clearLeftovers,
  LOCK_FREES_ITSELF,
  lockHolderShown,
  removeAllScratch,
  SNAPSHOT_EXTENSION,
  STOPPED_EXIT_CODE,
  takeLock,
  type LockPolicy,
} from "../files";
import { UserError } from "../errors";
import { printableMessage, printableName } from "../printable";

const HELP = `Usage: ${commandLine("snapshot:build")} --dump <path|url> [--dump <path|url> …] [options]

Builds a Tome snapshot from MediaWiki XML dumps (schema 0.3 to 0.11; plain, .bz2, .gz or
.xz, recognised by content). Several dumps of the same wiki merge: the newest revision of
each page wins. Dumps of different wikis are refused. What each dump held (the articles
read, at most --limit) and what was written are reported on stdout; the progress bars and
errors go to stderr.

Options:
  --dump <path|url>     a dump file or http(s) URL; repeat for several (required)
  --out <file>          where to write the snapshot (default: snapshots/<dbname>${SNAPSHOT_EXTENSION})
  --limit <n>           stop after n articles
  --chunk-words <n>     words per chunk, at most (default ${DEFAULT_CHUNK_WORDS}; 2 characters of
                        Japanese or Chinese count as one word)
  --allow-truncated     keep the complete pages of a truncated or corrupt dump, and mark the
                        snapshot truncated, instead of failing
  --workers <n>         parsing threads, at most ${MAX_BUILD_WORKERS} (default: TOME_BUILD_WORKERS, else one per core);
                        the snapshot is the same bytes whatever their number
  --memory <size>       memory for the search index's inversion before it spills a sorted
                        run to disk (e.g. 500M, 2G; at least 1M, at most this machine's
                        memory or its container's limit, ${memoryHere()}; default a quarter
                        of that, at most 2G: ${sizeText(DEFAULT_MEMORY_BYTES)}). The merge of the runs stays below
                        the inversion's peak: with 500M the build peaked at 0.70 GB on
                        200,000 chunks and 0.80 GB on 1M (bench/scale/RESULTS.md).
  -h, --help            show this help

Example:
  ${commandLine("snapshot:build")} --dump test/fixtures/data/dumps/enwiki-2016-sample.xml.bz2 --out snapshots/en.tome
`;

export interface BuildArgs {
  dumps: string[];
  out?: string;
  limit?: number;
  chunkWords: number;
  allowTruncated: boolean;
  workers?: number;
  /** Bytes the index inversion may hold before spilling a run. */
  memoryBytes?: number;
}

export function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // Past 2^53 - 1 the figure is not the one given (and the library refused it with a RangeError's stack trace).
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw new ArgumentError(
      `--${name} takes a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, not ${given(value)}.`,
    );
  return Number(value);
}

/** --workers: parsing threads, 1 to MAX_BUILD_WORKERS (D113). */
export function workersOf(value: string | undefined): number | undefined {
  const workers = positiveInt("workers", value);
  if (workers !== undefined && workers > MAX_BUILD_WORKERS)
    throw new ArgumentError(
      `--workers takes at most ${MAX_BUILD_WORKERS} parsing threads (each holds about 17 MB; past the cores more parse no faster), not ${workers}.`,
    );
  return workers;
}

/**
 * The least --memory taken (D118): below it the index spills a run every page or so, and a whole wiki's millions of
 * runs would fail its merge hours in. `--memory 2`, meant as 2G, is 2 bytes.
 */
const LEAST_MEMORY_BYTES = 1e6;

const gigabytes = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;

/** A size as --memory takes it, rounded down so that the figure given is taken: 25.2G, 2.0G, 250M. */
export function sizeText(bytes: number): string {
  return bytes >= 1e9 ? `${(Math.floor(bytes / 1e8) / 10).toFixed(1)}G` : `${Math.floor(bytes / 1e6)}M`;
}

/** The --memory bound, for the commands' --help (D161). */
export function memoryHere(): string {
  return `here ${MEMORY_BOUND.limited ? "the container's, " : ""}${sizeText(MOST_MEMORY_BYTES)}`;
}

export function bytesOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^([0-9]+(?:\.[0-9]+)?)([KMGT]?)B?$/i.exec(value.trim());
  if (!m || Number(m[1]) <= 0)
    throw new ArgumentError(`--memory takes a size such as 500M or 2G, not ${given(value)}.`);
  const bytes = Math.round(
    Number(m[1]) * { "": 1, K: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2]!.toUpperCase() as "" | "K" | "M" | "G" | "T"],
  );
  if (bytes < LEAST_MEMORY_BYTES)
    throw new ArgumentError(
      `--memory ${value} is ${bytes.toLocaleString("en-US")} bytes, below the least it takes (1M): give a size with its unit, such as 500M or 2G.`,
    );
  if (bytes <= MOST_MEMORY_BYTES) return bytes;
  const bound = MEMORY_BOUND.limited
    ? `this container's memory limit (${gigabytes(MOST_MEMORY_BYTES)}, its cgroup's; the machine has ${gigabytes(totalmem())})`
    : `this machine's memory (${gigabytes(MOST_MEMORY_BYTES)})`;
  throw new ArgumentError(
    `--memory ${value} is more than ${bound}: give at most ${sizeText(MOST_MEMORY_BYTES)}, less to leave room for the rest of the build, or leave --memory out for the default (${sizeText(DEFAULT_MEMORY_BYTES)}).`,
  );
}

export function parseBuildArgs(argv: string[]): BuildArgs | "help" {
  const v = readOptions(argv, {
    dump: { type: "string", multiple: true },
    out: { type: "string" },
    limit: { type: "string" },
    "chunk-words": { type: "string" },
    "allow-truncated": { type: "boolean", default: false },
    workers: { type: "string" },
    memory: { type: "string" },
  });
  if (v === "help") return "help";
  if (!v.dump?.length) throw new ArgumentError("no dump given: pass --dump <path|url>.");
  // Found now, not after the hours a build may take: its snapshot is renamed to --out at the end.
  if (v.out !== undefined) {
    checkOut(v.out, v.dump);
  }
  return {
    dumps: v.dump,
    out: v.out,
    limit: positiveInt("limit", v.limit),
    chunkWords: positiveInt("chunk-words", v["chunk-words"]) ?? DEFAULT_CHUNK_WORDS,
    allowTruncated: v["allow-truncated"] ?? false,
    workers: workersOf(v.workers),
    memoryBytes: bytesOf(v.memory),
  };
}

/** What the dumps held, and the pages left out (the first 20), as builds and updates report them. */
export function logSources(result: Pick<IngestResult, "sources" | "failures">, log: (line: string) => void): void {
  for (const s of result.sources) {
    log(
      `${printableName(s.dump)}: schema ${s.schema}, ${s.articles} articles, ${s.redirects} redirects${s.truncated ? " (TRUNCATED)" : ""}`,
    );
    if (s.damage) log(`  kept the complete pages before the damage: ${s.damage}`);
  }
  for (const f of result.failures.slice(0, 20))
    log(
      `  left out page ${Number.isNaN(f.pageId) ? "without an id" : f.pageId} "${printableName(f.title)}": ${printableMessage(f.error)}`,
    );
  if (result.failures.length > 20) log(`  … and ${result.failures.length - 20} more pages left out`);
}

/**
 * Builds and writes a snapshot; returns its path. Its report goes to stdout (console.error
 * prints in red on a terminal, as if it had failed); the bars and errors go to stderr.
 */
export async function buildSnapshot(
  args: BuildArgs,
  log: (line: string) => void = (l) => console.log(printableMessage(l)),
): Promise<string> {
  const out = args.out ?? (await defaultOut(args.dumps[0]!));
  const release = claimOutput(out, log);
  try {
    return await buildTo(out, args, log);
  } finally {
    release();
  }
}

async function buildTo(out: string, args: BuildArgs, log: (line: string) => void): Promise<string> {
  // The build is loaded once the arguments are read: --help and a wrong option load no engine. Timed from after it, as
  // when it was loaded at the process's start.
  const [build, { buildProgress }] = await Promise.all([import("../build"), import("./progress")]);
  const started = performance.now();
  const progress = buildProgress();
  let report: Awaited<ReturnType<typeof buildFromDumps>>;
  try {
    report = await stoppable((signal) =>
      build.buildFromDumps(
        {
          dumps: args.dumps,
          limit: args.limit,
          chunkWords: args.chunkWords,
          allowTruncated: args.allowTruncated,
          workers: args.workers,
          onProgress: progress.reading,
        },
        {
          out,
          chunkWords: args.chunkWords,
          memoryBytes: args.memoryBytes,
          progress: progress.stage,
          signal,
        },
      ),
    );
  } finally {
    progress.stop();
  }
  const { result, meta: m, bytes } = report;
  logSources(result, log);
  // Said nowhere, a dump whose <siteinfo> has no <base> was attributed to <lang>.wikipedia.org, whichever wiki it came from.
  if (result.hostGuessed)
    log(
      `  no dump names its wiki (no <siteinfo><base>): taken to be ${m.wiki.host} (language ${m.wiki.lang}), which every page's source and attribution names. If it is another wiki, add its <siteinfo> to the dump.`,
    );
  log(`wrote ${printableName(out)}: ${writtenSummary(m, bytes, report.runs, started)}`);
  logTextless(report.textless, log);
  return out;
}

/**
 * Without --out: snapshots/<dbname>.tome, named from the first dump's site information, read before the build (as
 * snapshot:update checks the wiki, D111) so that the name is claimed for the whole build: two builds of one wiki
 * are one refused, not the last renamed in winning (D116).
 */
async function defaultOut(dump: string): Promise<string> {
  const site = await (await import("../ingest")).siteOf(dump);
  const wiki = site.dbname || site.host || `${site.lang || "en"}.wikipedia.org`;
  return join("snapshots", `${fileNameOf(wiki)}${SNAPSHOT_EXTENSION}`);
}

/**
 * The wiki's name as a file name in snapshots/: the dump writes it (<dbname>), and "../../x" or "/x" would put the
 * snapshot elsewhere.
 */
function fileNameOf(wiki: string): string {
  return wiki.replace(/[^\w.-]/g, "_").replace(/^\.+/, "") || "wiki";
}

/** `out` refused to this build: another build or update holds its lock, `lock` (a server's start waits for it to go, D190). */
export class OutputTaken extends UserError {
  constructor(
    message: string,
    readonly lock: string,
    /** The holder, as its lock names it ("(process N)"). */
    readonly holder: string,
  ) {
    super(message);
  }
}

/** How claimOutput's lock on `out` is refused: held by another build or update, or not writable. */
function policyFor(out: string, lock: string): LockPolicy {
  return {
    held: (pid, elsewhere) =>
      new OutputTaken(
        `another build or update ${lockHolderShown(pid, elsewhere)} is writing ${printableName(out)}: wait for it, or write this one elsewhere with --out. ` +
          (elsewhere
            ? `Do not delete ${printableName(lock)}: ${LOCK_FREES_ITSELF}.`
            : `If none is running, delete ${printableName(lock)}.`),
        lock,
        lockHolderShown(pid, elsewhere),
      ),
    unwritable: (err) =>
      new UserError(`cannot write beside ${printableName(out)} (${printableName(err.message)}): choose another --out.`),
  };
}

/**
 * Takes `out` for this build or update, or throws while another writes it (two would each report the file as
 * theirs, the last renamed in winning: a lock file beside it, `.<name>.lock`); then removes, and says so, the scratch
 * folders and half-written snapshots that a build or update killed before it could remove them left there. Returns
 * the function that lets `out` go.
 */
export function claimOutput(out: string, log: (line: string) => void): () => void {
  // The first folder made for `out`, if any: one that holds nothing once the command failed goes again (D171).
  const made = mkdirSync(dirname(out), { recursive: true });
  const unmake = () => {
    if (made === undefined || existsSync(out)) return;
    for (let dir = dirname(out); ; dir = dirname(dir)) {
      try {
        rmdirSync(dir);
      } catch {
        return;
      }
      if (resolve(dir) === resolve(made)) return;
    }
  };
  const lock = join(dirname(out), `.${basename(out)}.lock`);
  let release: () => void;
  try {
    release = takeLock(lock, policyFor(out, lock));
  } catch (err) {
    // Refused (held, or not writable): the folders made for it go, as a failed build's do (D171).
    unmake();
    throw err;
  }
  clearLeftovers(dirname(out), log);
  // Stopped by SIGINT or SIGTERM, the build or update removes its files and exits (D116): its log says so, not nothing.
  // An `out` already there (an update's --out its --base) is untouched: "was not written" sounded as if it were lost.
  const was = stoppedOutput(out);
  const stopped = (code: number) => {
    if (code === STOPPED_EXIT_CODE)
      log(`stopped before its end: ${was}, and the temporary files were removed. Run it again to write it.`);
  };
  process.on("exit", stopped);
  return () => {
    process.off("exit", stopped);
    release();
    unmake();
  };
}

/** A second SIGINT or SIGTERM this soon after the first is the same Ctrl-C, passed on by npm or bun run. */
const SIGNAL_ECHO_MS = 1000;

/**
 * Runs a build or update with a signal that SIGINT and SIGTERM abort (D160): the library stops at its next safe point
 * and removes its files, then the command exits STOPPED_EXIT_CODE, its log saying so (claimOutput, D116); a read
 * waiting on a stalled dump is abandoned a second on (D176). A signal again, later than an echo of the first, stops at once.
 */
export async function stoppable<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let first = 0;
  const stop = () => {
    if (first && performance.now() - first >= SIGNAL_ECHO_MS) {
      removeAllScratch();
      process.exit(STOPPED_EXIT_CODE);
    }
    first ||= performance.now();
    controller.abort();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    return await run(controller.signal);
  } catch (err) {
    // Whatever it failed with once stopped, the stop is what the person asked for.
    if (!controller.signal.aborted) throw err;
    removeAllScratch();
    process.exit(STOPPED_EXIT_CODE);
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/**
 * The pages kept without text (D174), on a line of their own after what was written: in the page count, found by id,
 * and never a hit nor a title's answer, they were nowhere said.
 */
export function logTextless(textless: number, log: (line: string) => void): void {
  if (textless)
    log(
      `  ${textless} of the pages kept have no text (empty, or only tables, templates or lists, which the conversion drops): /v1/page/{id} and /v1/changes show them, but no search or title finds them (D174)`,
    );
}

/** What a build or an update wrote, for its last line: the snapshot's size, its index runs, the time since `started`, the peak memory. */
export function writtenSummary(m: SnapshotMeta, bytes: number, runs: number, started: number): string {
  return (
    `${m.indexedPages} pages, ${m.indexedChunks} chunks, ${m.skippedRedirects} redirects, ${(bytes / 1e6).toFixed(1)} MB${m.truncated ? ", truncated" : ""}, ` +
    `${runs} index run(s), in ${((performance.now() - started) / 1000).toFixed(1)} s, peak memory ${(peakMemoryBytes() / 1e9).toFixed(2)} GB`
  );
}

/** The command, on its arguments (what follows its name). */
export async function main(argv: string[]): Promise<void> {
  await mainAfterOptions(
    "snapshot:build",
    () => parseBuildArgs(argv),
    HELP,
    (args) => buildSnapshot(args),
    {
      lowered: true,
    },
  );
}

if (import.meta.main) {
  restartWithAllocatorSettings();
  await main(Bun.argv.slice(2));
}

/**
 * This process's peak resident memory. Linux's VmHWM, not getrusage: a spawned process's
 * rusage peak starts from its parent's size at the fork.
 */
export function peakMemoryBytes(): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}
