/**
 * bun run snapshot:export — a snapshot's chunks as JSON lines, for embedding: one object per
 * chunk, in page-id then chunk order, each what GET /v1/chunk/{id} answers (the text, its
 * source and the attribution a reuser must show). Streamed: one page's chunks are in memory at
 * a time, and a slow reader (a pipe, the compressor) holds the loop back.
 */
import { createWriteStream, existsSync, lstatSync, renameSync, rmSync, type Stats, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { given, readArgs } from "./args";
import { createGzip, createZstdCompress } from "node:zlib";
import { ApiError, Attributions, readSince, Resources } from "../http";
import { checkSections, openSnapshot, type Snapshot, SnapshotError } from "../snapshot";
import { type CountProgressDisplay, countProgress } from "./progress";
import { ArgumentError, mainOf, note } from "./main";
import { STOPPED_EXIT_CODE, writeFailed } from "../files";
import { commandLine } from "../invocation";
import { SNAPSHOT_DIR, snapshotToRead } from "./snapshots";
import { checkOut, stoppedOutput } from "./out";
import { printableName } from "../printable";

/** Lines are joined into writes of about this many characters: one write per line would cost more than the line. */
const WRITE_CHARS = 1 << 18;

const HELP = `Usage: ${commandLine("snapshot:export")} [--snapshot FILE] [--out FILE | -] [--since T]

Writes every chunk of a snapshot as one JSON object per line (JSON Lines), in page-id order,
then chunk order within a page: what GET /v1/chunk/{id} answers for it, i.e.
  id, page_id, chunk_id, rev_id, title, section, text, url, timestamp,
  source (project, page_id, revision_id, source_url, permalink),
  license (name, full_name, url), modified, modifications
The text is CC BY-SA 4.0: whoever shows it must credit the article (url, source.permalink),
name the license and say it was modified (modifications); see GET /v1/license.

Options:
  --snapshot FILE  the snapshot (default: TOME_SNAPSHOT, else the one start serves in ${SNAPSHOT_DIR}/)
  --out FILE | -   where to write (default -, standard output). A name ending in .gz is
                   gzip-compressed, .zst zstd-compressed (.GZ, .ZST too); .bz2, .xz and other
                   compressors' endings are refused. A file is written beside its name and
                   renamed into place when whole (removed if the export is stopped)
  --since T        only pages changed at or after T: Unix seconds or an RFC 3339 date-time
                   with a zone, as GET /v1/changes takes it (the same pages)
  -h, --help       this text

A progress bar shows on a terminal (stderr). Memory stays flat: one page at a time.
`;

export interface ExportArgs {
  snapshot: string;
  out: string;
  since: number;
}

function parseExportArgs(args: string[], pinned: string | undefined): ExportArgs | "help" {
  const { values } = readArgs(args, {
    snapshot: { type: "string" },
    out: { type: "string" },
    since: { type: "string" },
  });
  if (values.help) return "help";
  const snapshot = values.snapshot ?? snapshotToRead(pinned);
  if (!snapshot)
    throw new ArgumentError(
      `no snapshot in ${SNAPSHOT_DIR}/ and no TOME_SNAPSHOT: give --snapshot FILE, or run ${commandLine("start")} once (it keeps the sample it serves there).`,
    );
  let since = 0;
  if (values.since !== undefined) {
    try {
      since = readSince(values.since);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      throw new ArgumentError(
        `--since takes Unix seconds or an RFC 3339 date-time with a zone (2026-01-01T00:00:00Z), not ${given(values.since)}.`,
      );
    }
  }
  return { snapshot, out: values.out ?? "-", since };
}

/** The rows of the pages changed at or after `since`, in page-id order, and how many chunks they hold. */
export function exportedRows(snapshot: Snapshot, since: number): { rows: number[]; chunks: number } {
  const { ts, chunkCounts } = snapshot.pages;
  const rows: number[] = [];
  let chunks = 0;
  for (let i = 0; i < ts.length; i++) {
    if (ts[i]! < since) continue;
    rows.push(i);
    chunks += chunkCounts[i]!;
  }
  return { rows, chunks };
}

/** The export's lines, joined into strings of about WRITE_CHARS; `done` is told the chunks written so far. */
export function* exportLines(
  snapshot: Snapshot,
  rows: Iterable<number>,
  done: (chunks: number) => void = () => {},
): Generator<string> {
  const resources = new Resources(snapshot.meta, new Attributions(snapshot.meta));
  let batch = "";
  let chunks = 0;
  for (const i of rows) {
    const page = snapshot.pages.at(i);
    for (let c = 0; c < page.chunks.length; c++) batch += `${JSON.stringify(resources.chunk(page, c))}\n`;
    chunks += page.chunks.length;
    if (batch.length >= WRITE_CHARS) {
      yield batch;
      batch = "";
      done(chunks);
    }
  }
  if (batch) yield batch;
  done(chunks);
}

/** Endings of compressed files this command does not write: such a name would hold plain JSON Lines, which bzcat or xz then refuse. */
const OTHER_COMPRESSION = /\.(bz2|xz|lzma|lz4|br|zip|7z|z)$/i;

/** The compressor a file name asks for, if any, however its ending is spelt (.gz, .GZ, .Zst). */
function compressorFor(out: string) {
  if (/\.gz$/i.test(out)) return createGzip();
  if (/\.zst$/i.test(out)) return createZstdCompress();
  const other = OTHER_COMPRESSION.exec(out);
  if (other)
    throw new ArgumentError(
      `--out ${printableName(out)}: snapshot:export compresses to .gz or .zst only, and a name ending in ${other[0]} would hold plain JSON Lines. Name it ${printableName(out.slice(0, -other[0].length))}.gz, .zst, or without the ending.`,
    );
  return undefined;
}

/** What --out names: a regular file (or none yet), or something else that is written to as it is. */
function outputKind(out: string): "file" | "other" {
  let link: Stats;
  try {
    link = lstatSync(out);
  } catch {
    return "file";
  }
  if (statSync(out, { throwIfNoEntry: false })?.isDirectory())
    throw new ArgumentError(
      `--out names a folder (${printableName(out)}): name the file to write, e.g. ${printableName(join(out, "chunks.jsonl.zst"))}.`,
    );
  return link.isFile() ? "file" : "other";
}

/** The sections an export reads: its text and page tables, and the sections' headings (not the search indexes). */
const EXPORTED = /^(text|pages|sections)\./;

/**
 * Checks the sections an export reads against their hashes before a line is written (D66): a damaged byte that zstd's
 * decoder does not catch (its frames carry no checksum), or in a section read as it is, decodes into other text. As an
 * update checks its base (checkSections: a mapping of its own, its pages dropped as they are hashed), in MB as a stage
 * of its own.
 */
async function checkExported(path: string): Promise<void> {
  let progress: CountProgressDisplay | undefined;
  let damage: string | undefined;
  try {
    ({ damage } = await checkSections(path, {
      only: (name) => EXPORTED.test(name),
      progress: (done, total) => {
        progress ??= countProgress(`checking ${printableName(basename(path))}`, Math.round(total / 1e6), "MB");
        progress.update(Math.round(done / 1e6));
      },
    }));
  } finally {
    progress?.stop();
  }
  if (damage)
    throw new SnapshotError(
      `${printableName(path)}: ${damage}, so its text may be altered. Nothing was written: check it with ${commandLine(`snapshot:verify ${printableName(path)}`)}, then copy or build it again.`,
    );
}

/**
 * Writes the export; returns the chunks written, or undefined when the reader of standard output stopped first. The
 * snapshot is let go when it returns or throws (refused, damaged, a write failed), not left mapped until collected.
 */
export async function runExport(args: ExportArgs, stdout: Writable = process.stdout): Promise<number | undefined> {
  const snapshot = openSnapshot(args.snapshot);
  try {
    return await exportFrom(snapshot, args, stdout);
  } finally {
    snapshot.container.letGo();
  }
}

async function exportFrom(snapshot: Snapshot, args: ExportArgs, stdout: Writable): Promise<number | undefined> {
  const { rows, chunks } = exportedRows(snapshot, args.since);
  const compressor = compressorFor(args.out);
  const target = args.out === "-" ? undefined : outputKind(args.out);
  if (target) checkOut(args.out, [args.snapshot], { what: "export", example: "chunks.jsonl.zst" }, target === "file");
  await checkExported(args.snapshot);
  const progress = countProgress(printableName(basename(args.snapshot)), chunks, "chunks");
  const lines = Readable.from(exportLines(snapshot, rows, progress.update), { objectMode: false });
  // A regular file is written beside itself and renamed into place when whole; a device, a pipe or a link is written to
  // as it is (renamed over, /dev/null would become a file).
  const partial = target === "file" ? join(dirname(args.out), `.${basename(args.out)}.partial`) : undefined;
  if (target === "file" && !existsSync(dirname(args.out)))
    throw new ArgumentError(
      `no folder ${printableName(dirname(args.out))}/ to write ${printableName(basename(args.out))} in.`,
    );
  // Stopped (Ctrl-C, SIGTERM): the part written goes, as a build's files do (D116), rather than staying hidden beside --out;
  // an --out already there is untouched (it is renamed over only when the export is whole), and is said so.
  const was = partial ? stoppedOutput(args.out) : undefined;
  const stop = () => {
    progress.stop();
    if (partial) {
      rmSync(partial, { force: true });
      note(`snapshot:export: stopped before its end: ${was}.`);
    }
    process.exit(STOPPED_EXIT_CODE);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const sink = partial ? createWriteStream(partial) : target ? createWriteStream(args.out) : stdout;
  const ends = target !== undefined;
  try {
    await (compressor ? pipeline(lines, compressor, sink, { end: ends }) : pipeline(lines, sink, { end: ends }));
    if (partial) renameSync(partial, args.out);
  } catch (err) {
    if (partial && existsSync(partial)) rmSync(partial);
    // The reader of standard output stopped (| head): what it read is what it wanted.
    if (!partial && (err as NodeJS.ErrnoException).code === "EPIPE") return undefined;
    if (err instanceof SnapshotError)
      throw new SnapshotError(
        `${printableName(args.snapshot)}: ${err.message}. ${partial ? "Nothing was written" : "The export stops there"}: check it with ${commandLine(`snapshot:verify ${printableName(args.snapshot)}`)}, then copy or build it again.`,
      );
    throw target ? writeFailed(args.out, err) : err;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    progress.stop();
  }
  return chunks;
}

/** The command, on its arguments (what follows its name). */
export async function main(argv: string[]): Promise<void> {
  await mainOf("snapshot:export", async (config) => {
    const args = parseExportArgs(argv, config.snapshot);
    if (args === "help") {
      process.stdout.write(HELP);
      return;
    }
    const started = performance.now();
    const chunks = await runExport(args);
    if (chunks === undefined) return;
    const seconds = (performance.now() - started) / 1000;
    note(
      `snapshot:export: ${chunks} chunks of ${printableName(args.snapshot)} → ${args.out === "-" ? "standard output" : printableName(args.out)} in ${seconds.toFixed(1)} s (${Math.round(chunks / Math.max(seconds, 0.001))} chunks/s).`,
    );
  });
}

if (import.meta.main) await main(Bun.argv.slice(2));
