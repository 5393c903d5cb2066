/**
 * How every CLI ends on an error the user can fix: `name: message` on stderr, with the usage
 * hint after a mistake in the arguments, and the error's exit code; no stack trace. Any other
 * error is ours, and is thrown as it is.
 */
import { UserError } from "../errors";
import { commandLine } from "../invocation";
import { applyConfig, readConfig, type Config } from "./config";

/** A mistake in how a command was called (an unknown option, a missing value): exit code 2, with the usage hint. */
export class ArgumentError extends UserError {
  constructor(message: string) {
    super(message, 2);
  }
}

/** An error class whose errors are the user's to fix although it does not extend UserError (see mainOf). */

export interface MainOptions {
  /** What follows an ArgumentError's message (default: how to see the command's --help). */
  usage?: string;
}

/** A line for the person at the terminal on stderr, as it is: console.error prints in red on a terminal, which says "error". */
export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

/**
 * Runs a command's main with the settings read once (config.ts), turning the errors a user can
 * fix into one line and an exit code.
 */
export async function mainOf(name: string, run: (config: Config) => unknown, options: MainOptions = {}): Promise<void> {
  try {
    const config = readConfig();
    applyConfig(config);
    await run(config);
  } catch (err) {
    const exitCode = err instanceof UserError ? err.exitCode : undefined;
    if (exitCode === undefined) throw err;
    const usage =
      err instanceof ArgumentError ? `\n${options.usage ?? `Run \`${commandLine(`${name} --help`)}\` for usage.`}` : "";
    console.error(`${name}: ${(err as Error).message}${usage}`);
    process.exit(exitCode);
  }
}
