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
 * The build and the snapshot's reader are loaded here, once the arguments are read: --help loads neither.
 */
export async function convert(file: string, out: string, progress?: IndexBuildProgress): Promise<BuildReport> {
  const [{ buildFromPages }, { readFormat1 }] = await Promise.all([import("../build"), import("../snapshot")]);
  const old = readFormat1(file);
  return buildFromPages(old.pages, old.redirects, old.meta, {
    out,
    chunkWords: old.meta.chunkWords,
    createdAt: new Date(old.meta.createdAt),
    progress,
  });
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
