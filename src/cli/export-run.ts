/**
 * snapshot:export's work (src/cli/snapshot-export.ts runs it once its arguments are read): a snapshot's chunks as
 * JSON lines, each what GET /v1/chunk/{id} answers, streamed one page at a time.
 */
import { createWriteStream, existsSync, lstatSync, renameSync, rmSync, type Stats, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip, createZstdCompress } from "node:zlib";
import { Attributions, Resources } from "../http";
import { collector } from "../search";
import { openSnapshot, sectionsDamaged, type Snapshot, SnapshotError } from "../snapshot";
import { type CountProgressDisplay, countProgress } from "./progress";
import { ArgumentError, note } from "./main";
import {
  clearDeadWrites,
  LOCK_FREES_ITSELF,
  lockHolderShown,
  type LockPolicy,
  STOPPED_EXIT_CODE,
  takeLock,
  writeFailed,
} from "../files";
import { UserError } from "../errors";
import { commandLine } from "../invocation";
import { checkOut, stoppedOutput } from "./out";
import { printableName, shellWord } from "../printable";

/** snapshot:export's arguments, as parsed (src/cli/snapshot-export.ts). */
export interface ExportArgs {
  snapshot: string;
  out: string;
  since: number;
}

/** Lines are joined into writes of about this many characters: one write per line would cost more than the line. */
const WRITE_CHARS = 1 << 18;

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

/**
 * Characters of lines after which the pages of the file read so far leave the resident set (dropResident, D127).
 * Dropping them after every write made the export 3 to 4 times slower (its page table read again).
 */
const DROP_EVERY_CHARS = 64 << 20;

/**
 * Characters of lines between two full collections (D208): the strings written outlive a young collection, and only a
 * full one frees them. Every 64 M characters held the export to 293 MB at 5M chunks but took it from 56 s to 130 s
 * (each full collection returns memory that is then faulted in again).
 */
const FULL_COLLECTION_EVERY_CHARS = 1 << 30;

/**
 * The export's lines, joined into strings of about WRITE_CHARS; `done` is told the chunks written so far. `collect` is
 * called after each string is written, told `true` every `fullEveryChars` (collector(): the young garbage
 * collected as it goes, and all of it now and then: D208), where left to itself the collector let the lines' strings
 * pile up (9.1 GB at 5M chunks).
 */
export function* exportLines(
  snapshot: Snapshot,
  rows: Iterable<number>,
  done: (chunks: number) => void = () => {},
  { dropEveryChars = DROP_EVERY_CHARS, fullEveryChars = FULL_COLLECTION_EVERY_CHARS, collect = collector(false) } = {},
): Generator<string> {
  const resources = new Resources(snapshot.meta, new Attributions(snapshot.meta));
  let batch = "";
  let sinceDropped = 0;
  let sinceCollected = 0;
  let chunks = 0;
  for (const i of rows) {
    // Let go for a writer (a copy over the file, D84): its pages read zeros now. To standard output, a pipe or a device
    // the lines read before are written whole; to a file, its part is removed and nothing written. Then exportFrom says
    // why the export stopped.
    if (!snapshot.container.readable) break;
    const page = snapshot.pages.at(i);
    for (let c = 0; c < page.chunks.length; c++) batch += `${JSON.stringify(resources.chunk(page, c))}\n`;
    chunks += page.chunks.length;
    if (batch.length >= WRITE_CHARS) {
      sinceDropped += batch.length;
      sinceCollected += batch.length;
      yield batch;
      batch = "";
      done(chunks);
      const full = sinceCollected >= fullEveryChars;
      collect(full);
      if (full) sinceCollected = 0;
      // The file is read through once: the pages read so far leave the resident set (D127), where every text block
      // of the snapshot stayed in it to the end (the size of its text: tens of GB at English Wikipedia's size).
      if (sinceDropped >= dropEveryChars) {
        snapshot.container.dropResident();
        sinceDropped = 0;
      }
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
 * update checks its base: through the file the export opened (its container: checkSections opened the path again, and
 * checked a file renamed onto it since, D84), its pages dropped as they are hashed, in MB as a stage of its own.
 */
async function checkExported(snapshot: Snapshot): Promise<void> {
  const { path } = snapshot;
  let progress: CountProgressDisplay | undefined;
  let damage: string | undefined;
  try {
    damage = sectionsDamaged(
      await snapshot.container.verify(
        (done, total) => {
          progress ??= countProgress(`checking ${printableName(basename(path))}`, Math.round(total / 1e6), "MB");
          progress.update(Math.round(done / 1e6));
        },
        { readOnce: true, only: (name) => EXPORTED.test(name) },
      ),
    );
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
    // A copy over the file mid-export stops it saying why, where reading the file cut short killed it (D84).
    snapshot.container.leaseForReading();
    return await exportFrom(snapshot, args, stdout);
  } finally {
    snapshot.container.letGo();
  }
}

/**
 * Says that the part an export by an earlier Tome left beside `out`, `.NAME.partial`, is there, and leaves it (D196):
 * that name carried no process and no lock was held, so whether its export still writes it (here, or in another
 * container on a shared folder) cannot be told, and removing a live export's part would lose its work.
 */
function noteOldPart(out: string): void {
  const part = join(dirname(out), `.${basename(out)}.partial`);
  let size: number;
  try {
    size = statSync(part).size;
  } catch {
    return;
  }
  note(
    `snapshot:export: left ${printableName(part)} (${sizeShown(size)}), the part of an export by a Tome from before 2 December 2026, whose parts named no process: whether that export still runs (here or in another container) cannot be told. Once none runs, delete it: rm ${shellWord(part)}`,
  );
}

/** A file's size for a message: "(0 MB)" said nothing of a part under half a megabyte. */
function sizeShown(bytes: number): string {
  if (bytes < 1e3) return `${bytes} bytes`;
  return bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

async function exportFrom(snapshot: Snapshot, args: ExportArgs, stdout: Writable): Promise<number | undefined> {
  const { rows, chunks } = exportedRows(snapshot, args.since);
  const compressor = compressorFor(args.out);
  const target = args.out === "-" ? undefined : outputKind(args.out);
  if (target) checkOut(args.out, [args.snapshot], { what: "export", example: "chunks.jsonl.zst" }, target === "file");
  await checkExported(snapshot);
  // A regular file is written beside itself and renamed into place when whole; a device, a pipe or a link is written to
  // as it is (renamed over, /dev/null would become a file). The part is named with this process's id, as atomicWrite's
  // are: one killed outright (kill -9, the OOM killer) leaves it, and the next export to this name removes it.
  const partial = target === "file" ? join(dirname(args.out), `.${basename(args.out)}.${process.pid}.tmp`) : undefined;
  if (target === "file" && !existsSync(dirname(args.out)))
    throw new ArgumentError(
      `no folder ${printableName(dirname(args.out))}/ to write ${printableName(basename(args.out))} in.`,
    );
  // A lock beside --out while the export writes it (renewed: takeLock), as a build's (claimOutput): a second export to
  // the name is refused, and the cleanup below spares the part of one running in another container on a shared folder,
  // whose id says nothing here (D175), where it removed it and that export failed at its rename, hours in.
  const lock = join(dirname(args.out), `.${basename(args.out)}.lock`);
  const release = partial ? takeLock(lock, exportLock(args.out, lock)) : undefined;
  try {
    return await writeExport(snapshot, args, stdout, { rows, chunks, compressor, target, partial, release });
  } finally {
    release?.();
  }
}

/** How an export's lock `lock` on `out` is refused: held by another export, or not writable. */
function exportLock(out: string, lock: string): LockPolicy {
  return {
    held: (pid, elsewhere) =>
      new UserError(
        `another export ${lockHolderShown(pid, elsewhere)} is writing ${printableName(out)}: wait for it, or write this one elsewhere with --out. ` +
          (elsewhere
            ? `Do not delete ${printableName(lock)}: ${LOCK_FREES_ITSELF}.`
            : `If none is running, delete ${printableName(lock)}.`),
      ),
    unwritable: (err) => writeFailed(out, err) as Error,
  };
}

async function writeExport(
  snapshot: Snapshot,
  args: ExportArgs,
  stdout: Writable,
  {
    rows,
    chunks,
    compressor,
    target,
    partial,
    release,
  }: {
    rows: number[];
    chunks: number;
    compressor: ReturnType<typeof compressorFor>;
    target: "file" | "other" | undefined;
    partial: string | undefined;
    release: (() => void) | undefined;
  },
): Promise<number | undefined> {
  const stale = partial ? clearDeadWrites(args.out) : [];
  const progress = countProgress(printableName(basename(args.snapshot)), chunks, "chunks");
  const lines = Readable.from(exportLines(snapshot, rows, progress.update), { objectMode: false });
  if (stale.length > 0)
    note(
      `snapshot:export: removed ${stale.length} part(s) of ${printableName(args.out)} left by an export that was killed (its process is gone): ${stale.map(printableName).join(", ")}.`,
    );
  if (partial) noteOldPart(args.out);
  // Stopped (Ctrl-C, SIGTERM): the part written goes, as a build's files do (D116), rather than staying hidden beside --out;
  // an --out already there is untouched (it is renamed over only when the export is whole), and is said so.
  const was = partial ? stoppedOutput(args.out) : undefined;
  const stop = () => {
    progress.stop();
    if (partial) {
      rmSync(partial, { force: true });
      release?.();
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
    snapshot.container.checkReadable();
    if (partial) renameSync(partial, args.out);
  } catch (err) {
    if (partial && existsSync(partial)) rmSync(partial);
    // The reader of standard output stopped (| head): what it read is what it wanted.
    if (!partial && (err as NodeJS.ErrnoException).code === "EPIPE") return undefined;
    if (err instanceof SnapshotError && !snapshot.container.readable)
      throw new SnapshotError(`${err.message} ${partial ? "Nothing was written." : "The export stops there."}`);
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
