/**
 * How the person at the terminal runs Tome's commands, for every message and --help that names
 * one (D86): `bun run keys …` from a checkout (`npm start` for the server when npm started it),
 * `tome keys …` from the executable `bun run compile` writes, named as it was invoked.
 */
import { basename } from "node:path";

/** Running inside the executable: there every bundled module's URL is under Bun's embedded filesystem (as in files.ts). */
export const inExecutable = import.meta.url.startsWith("file:///$bunfs/");

/** The executable's own name (tome, unless it was renamed), or undefined in a checkout. */
const executable = inExecutable ? basename(process.execPath) : undefined;

/** npm ran the start script (npm start), as src/cli/config.ts, the one reader of the environment, says. */
let npmStart = false;

/** A package script (bun run, npm run) ran the command: in its package's folder, whichever folder it was typed in. */
let packageScript = false;

/** Told by src/cli/config.ts when it is loaded, before any command's text is made. */
export function startedByNpm(yes: boolean, script: boolean): void {
  npmStart = yes;
  packageScript = script;
}

/** Whether a relative path the person typed is read from a package's folder rather than theirs (a package script ran the command). */
export function runByPackageScript(): boolean {
  return packageScript;
}

/**
 * The line that runs a command with its arguments, as the user would type it here:
 * commandLine("keys create --name NAME") is "bun run keys create --name NAME" in a checkout
 * and "tome keys create --name NAME" from the executable.
 */
export function commandLine(command: string): string {
  if (executable) return `${executable} ${command}`;
  if (npmStart && command === "start") return "npm start";
  return `bun run ${command}`;
}
