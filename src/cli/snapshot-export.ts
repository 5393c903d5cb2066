/**
 * bun run snapshot:export — a snapshot's chunks as JSON lines, for embedding: one object per
 * chunk, in page-id then chunk order, each what GET /v1/chunk/{id} answers (the text, its
 * source and the attribution a reuser must show). Streamed: one page's chunks are in memory at
 * a time, and a slow reader (a pipe, the compressor) holds the loop back.
 */
import { restartWithAllocatorSettings } from "./allocator";
import { given, readArgs } from "./args";
import { ArgumentError, mainAfterOptions, note } from "./main";
import type { ExportArgs } from "./export-run";
import { commandLine } from "../invocation";
import { SNAPSHOT_DIR } from "./config";
import { printableName } from "../printable";

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

async function parseExportArgs(args: string[], pinned: () => string | undefined): Promise<ExportArgs | "help"> {
  const { values } = readArgs(args, {
    snapshot: { type: "string" },
    out: { type: "string" },
    since: { type: "string" },
  });
  if (values.help) return "help";
  // Loaded once the options are read: --help and an unknown option load no snapshot layer and no server.
  const snapshot = values.snapshot ?? (await import("./snapshots")).snapshotToRead(pinned());
  if (!snapshot)
    throw new ArgumentError(
      `no snapshot in ${SNAPSHOT_DIR}/ and no TOME_SNAPSHOT: give --snapshot FILE, or run ${commandLine("start")} once (it keeps the sample it serves there).`,
    );
  let since = 0;
  if (values.since !== undefined) {
    const { ApiError, readSince } = await import("../http");
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

/** The command, on its arguments (what follows its name). */
export async function main(argv: string[]): Promise<void> {
  await mainAfterOptions(
    "snapshot:export",
    (settings) => parseExportArgs(argv, () => settings().snapshot),
    HELP,
    async (args) => {
      // Loaded once the arguments are read, and timed from after it.
      const { runExport } = await import("./export-run");
      const started = performance.now();
      const chunks = await runExport(args);
      if (chunks === undefined) return;
      const seconds = (performance.now() - started) / 1000;
      note(
        `snapshot:export: ${chunks} chunks of ${printableName(args.snapshot)} → ${args.out === "-" ? "standard output" : printableName(args.out)} in ${seconds.toFixed(1)} s (${Math.round(chunks / Math.max(seconds, 0.001))} chunks/s).`,
      );
    },
  );
}

if (import.meta.main) {
  restartWithAllocatorSettings();
  await main(Bun.argv.slice(2));
}
