/**
 * bun run start — serves the API from the newest snapshot in snapshots/ (or TOME_SNAPSHOT), and
 * moves to a newer one when it appears there or on SIGHUP (swap.ts), on
 * HOST (default: every interface) and PORT (default 8080), with the keys and usage under
 * TOME_DATA. When there is no snapshot, builds one first from TOME_DUMP (simple, en, a path or
 * a URL, downloaded resumably into dumps/) or, with none, from the sample of English Wikipedia
 * the repository carries, in seconds and offline (D60), kept in snapshots/ for the commands
 * that read a snapshot and for the next start (D86). When there is no key,
 * creates one and prints it once the server is up. `npm start` runs this after installing
 * what is missing (src/cli/run.sh).
 */
import { restartWithAllocatorSettings } from "./allocator";
import { type CommandIo, mainOf, PROCESS_IO } from "./main";
import { NEW_KEY_COMMAND, settingsHelp, settingsReadBy, SNAPSHOT_DIR } from "./config";
import { commandLine, inExecutable } from "../invocation";
import { noArgs } from "./args";

const HELP = `Usage: ${commandLine("start")}${inExecutable ? "" : "     (npm start also installs Bun and the dependencies when missing)"}

Snapshots: the server serves the newest *.tome in ${SNAPSHOT_DIR}/ and moves to a newer one when
one is renamed into place there (write it under another name, e.g. a hidden one, then rename it:
snapshot:build does), or on SIGHUP. The new snapshot is loaded beside the old one and every
section's hash checked first; requests in flight finish on the snapshot they started on. One
that fails to load or check (or is of another wiki) is logged, and the old one keeps serving.
The first one is checked while it serves: damaged, it gives way to the next one (the server
stops when there is none). Copied over in place (cp), the one served is let go first: requests
get 503 until the copy is whole and loaded (where the server can hold a read lease on the file).

Environment:
${settingsHelp(settingsReadBy("start"))}
Make another key with: ${NEW_KEY_COMMAND}
`;

/**
 * The command, on its arguments (what follows its name). `io` (the process's own by default) is where its settings
 * come from and its refusals go: test/helpers.ts' startTool runs a start that is refused in the test's process.
 */
export async function main(args: string[], io: CommandIo = PROCESS_IO): Promise<void> {
  noArgs("start", args, HELP, `its settings are environment variables, e.g. PORT=8081 ${commandLine("start")}`);
  await mainOf(
    "start",
    // The server, the engine and the build are loaded once the arguments are read: --help loads none of them.
    async (config) => (await import("./start-serve")).serveFromConfig(config, io),
    { fixedFolder: SNAPSHOT_DIR, io },
  );
}

if (import.meta.main) {
  restartWithAllocatorSettings();
  await main(Bun.argv.slice(2));
}
