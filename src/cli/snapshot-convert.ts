/** bun run snapshot:convert — turns a format-1 snapshot into format 2, without the dump. */
import { readArgs } from "./args";
import { buildFromPages } from "../build";
import { readFormat1 } from "../snapshot";
import { mainOf, note } from "./main";
import { checkOut } from "./out";
import { commandLine } from "../invocation";

const HELP = `Usage: ${commandLine("snapshot:convert")} <old.tome> [--out <new.tome>]

Converts a snapshot of format 1 (one msgpackr blob, decoded whole at boot) into format 2
(sections mapped at boot, with the search index inside). The pages, chunks and redirects
are kept as they are; the index is built anew. Without --out the file is replaced (the
new file is renamed over it only when whole).
`;

/** The command, on its arguments (what follows its name). */
export async function main(args: string[]): Promise<void> {
  if (args.includes("-h") || args.includes("--help")) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  let inputs: string[] = [];
  let out: string | undefined;
  let wrong = "give one format-1 snapshot, and optionally --out <file>.";
  try {
    const parsed = readArgs(args, { out: { type: "string" } }, 1, true);
    inputs = parsed.positionals;
    out = parsed.values.out;
  } catch (err) {
    wrong = `${(err as Error).message}.`;
  }
  if (inputs.length !== 1) {
    console.error(`snapshot:convert: ${wrong}\nRun \`${commandLine("snapshot:convert")} --help\` for usage.`);
    process.exit(2);
  }
  await mainOf("snapshot:convert", async () => {
    // Found now, not when the new file is renamed into place after the conversion (a folder, '-', under a file).
    if (out !== undefined) checkOut(out, []);
    const old = readFormat1(inputs[0]!);
    const target = out ?? inputs[0]!;
    const report = buildFromPages(old.pages, old.redirects, old.meta, {
      out: target,
      chunkWords: old.meta.chunkWords,
      createdAt: new Date(old.meta.createdAt),
    });
    note(
      `converted ${inputs[0]} → ${target}: ${report.meta.indexedPages} pages, ${report.meta.indexedChunks} chunks, ${(report.bytes / 1e6).toFixed(1)} MB.`,
    );
  });
}

if (import.meta.main) await main(Bun.argv.slice(2));
