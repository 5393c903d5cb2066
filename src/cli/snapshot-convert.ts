/** bun run snapshot:convert — turns a format-1 snapshot into format 2, without the dump. */
import { oneFileArgs } from "./args";
import { buildFromPages } from "../build";
import { readFormat1 } from "../snapshot";
import { mainOf, note } from "./main";
import { checkOut } from "./out";
import { commandLine } from "../invocation";
import { printableName } from "../printable";

const HELP = `Usage: ${commandLine("snapshot:convert")} <old.tome> [--out <new.tome>]

Converts a snapshot of format 1 (one msgpackr blob, decoded whole at boot) into format 2
(sections mapped at boot, with the search index inside). The pages, chunks and redirects
are kept as they are; the index is built anew. Without --out the file is replaced (the
new file is renamed over it only when whole).
`;

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
    if (out !== undefined) {
      checkOut(out, []);
    }
    const old = readFormat1(file);
    const target = out ?? file;
    const report = buildFromPages(old.pages, old.redirects, old.meta, {
      out: target,
      chunkWords: old.meta.chunkWords,
      createdAt: new Date(old.meta.createdAt),
    });
    note(
      `converted ${printableName(file)} → ${printableName(target)}: ${report.meta.indexedPages} pages, ${report.meta.indexedChunks} chunks, ${(report.bytes / 1e6).toFixed(1)} MB.`,
    );
  });
}

if (import.meta.main) await main(Bun.argv.slice(2));
