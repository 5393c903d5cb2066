/** bun run snapshot:verify — checks every section of a snapshot against its hash. */
import { oneFileArgs } from "./args";
import { mainOf } from "./main";
import { commandLine } from "../invocation";
import { printableName } from "../printable";

const HELP = `Usage: ${commandLine("snapshot:verify")} <snapshot.tome>

Reads the whole snapshot and checks every section against the sha256 its table records.
Opening a snapshot (the server's boot) checks only its header, length and table, because
hashing tens of gigabytes at every boot would take minutes; the server then checks the
sections in the background; a damaged one gives way to the next snapshot in its folder, and
the server stops when none is left. Run this after copying a snapshot.

Exit status: 0 whole, 1 damaged or unreadable, 2 usage.
`;

/** The command, on its arguments (what follows its name). */
export async function main(args: string[]): Promise<void> {
  const { file } = oneFileArgs("snapshot:verify", args, {}, HELP, "give one snapshot file.");
  await mainOf("snapshot:verify", async () => {
    // Loaded once the arguments are read: --help and a wrong argument load no engine.
    const { checkSections } = await import("../snapshot");
    const started = performance.now();
    let last = 0;
    const { damage, sections, bytes } = await checkSections(file, {
      progress: (done, total) => {
        if (process.stderr.isTTY && performance.now() - last > 200) {
          last = performance.now();
          process.stderr.write(`\r verifying ${((100 * done) / total).toFixed(0)}% of ${(total / 1e6).toFixed(0)} MB`);
        }
      },
    });
    if (process.stderr.isTTY) process.stderr.write("\n");
    if (damage) {
      console.error(
        `snapshot:verify: ${printableName(file)} is damaged: ${damage}. Rebuild it with \`${commandLine("snapshot:build")}\`, or copy it again.`,
      );
      process.exit(1);
    }
    console.error(
      `${printableName(file)}: whole (${sections} sections, ${(bytes / 1e6).toFixed(1)} MB checked in ${((performance.now() - started) / 1000).toFixed(1)} s).`,
    );
  });
}

if (import.meta.main) await main(Bun.argv.slice(2));
