/** bun run snapshot:convert — turns a format-1 snapshot into format 2, without the dump. */
import { checkOut } from "./out";
import { oneFileArgs } from "./args";
import type { BuildReport } from "../build";
import type { IndexBuildProgress } from "../search";
import { mainOf, note } from "./main";
import { commandLine } from "../invocation";
import { printableName } from "../printable";

const HELP = `Usage: ${commandLine("snapshot:convert")} <old.tome> [--out <new.tome>]

Converts a snapshot of format 1 (one msgpackr blob, decoded whole at boot) into format 2
(sections mapped at boot, with the search index inside). The pages, chunks and redirects
are kept as they are; the index is built anew. Without --out the file is replaced (the
new file is renamed over it only when whole).
`;

/**
 * Writes the format-1 snapshot `file` as format 2 at `out`; its index is built anew, a stage at a time (`progress`).
 * The build and the snapshot's reader are loaded here, once the arguments are read: --help loads neither. `out` is
 * claimed as a build's is (claimOutput: its lock, renewed, and the leftovers of killed builds beside it cleared, said to
 * `log`): without the lock, a `start` or a build in another container sharing the folder took the convert's scratch
 * folders and half-written file for a killed one's (their pid names no process there) and removed them (D196).
 */
export async function convert(
  file: string,
  out: string,
  progress?: IndexBuildProgress,
  log: (line: string) => void = (line) => note(`snapshot:convert: ${line}`),
): Promise<BuildReport> {
  const [{ buildFromPages }, { readFormat1 }, { claimOutput }] = await Promise.all([
    import("../build"),
    import("../snapshot"),
    import("./snapshot-build"),
  ]);
  const old = readFormat1(file);
  const release = claimOutput(out, log);
  try {
    return await buildFromPages(old.pages, old.redirects, old.meta, {
      out,
      chunkWords: old.meta.chunkWords,
      createdAt: new Date(old.meta.createdAt),
      progress,
    });
  } finally {
    release();
  }
}

/** The command, on its arguments (what follows its name). */
export async function main(args: string[]): Promise<void> {
  const { file, values } = oneFileArgs(
    "snapshot:convert",
    args,
    { out: { type: "string" } },
    HELP,
    "give one format-1 snapshot, and optionally --out <file>.",
  );
  const out = values.out;
  await mainOf("snapshot:convert", async () => {
    // Found now, not when the new file is renamed into place after the conversion (a folder, '-', under a file).
    if (out !== undefined) checkOut(out, []);
    const target = out ?? file;
    const progress = (await import("./progress")).buildProgress();
    let report: BuildReport;
    try {
      report = await convert(file, target, progress.stage);
    } finally {
      progress.stop();
    }
    note(
      `converted ${printableName(file)} → ${printableName(target)}: ${report.meta.indexedPages} pages, ${report.meta.indexedChunks} chunks, ${(report.bytes / 1e6).toFixed(1)} MB.`,
    );
  });
}

if (import.meta.main) await main(Bun.argv.slice(2));
