/**
 * How every CLI ends on an error the user can fix: `name: message` on stderr, with the usage hint after a mistake in
 * the arguments, and the error's exit code; no stack trace; a system call refused on a file, its own message (D184).
 * Any other error is ours, and is thrown as it is.
 */
import { isAbsolute, relative, resolve } from "node:path";
import { UserError, type WHOLE_FILE_SYSTEM_REFUSALS } from "../errors";
import { cannotRead } from "../files";
import { commandLine, runByPackageScript } from "../invocation";
import { printableMessage, printableName } from "../printable";
import { lowerThisProcess } from "../scheduling";
import { applyConfig, readConfig, type Config } from "./config";

/** A mistake in how a command was called (an unknown option, a missing value): exit code 2, with the usage hint. */
export class ArgumentError extends UserError {
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

/**
 * What a file system's refusal to write asks of the person at the terminal: `elsewhere`, the setting that moves the write,
 * if one does. Every one of WHOLE_FILE_SYSTEM_REFUSALS has its fix here (its type says so), as the commands that leave
 * those to this one message count on (wholeFileSystemRefused).
 */
const FILE_SYSTEM_FIXES: Record<
  (typeof WHOLE_FILE_SYSTEM_REFUSALS)[number] | "EACCES" | "ENOTDIR",
  (elsewhere: string | undefined) => string
> = {
  ENOSPC: (elsewhere) => `the disk is full: free space there${elsewhere ? `, or write elsewhere (${elsewhere})` : ""}`,
  EDQUOT: (elsewhere) =>
    `the disk quota is used up: free space there${elsewhere ? `, or write elsewhere (${elsewhere})` : ""}`,
  EROFS: (elsewhere) =>
    `the file system is read-only: ${elsewhere ? `write elsewhere (${elsewhere})` : "make it writable"}`,
  EACCES: (elsewhere) =>
    `this user may not write there: ${elsewhere ? `write elsewhere (${elsewhere}), or change` : "change"} the folder's permissions`,
  // A file named where a folder is needed (TOME_DATA=keys.json, or a folder inside a file): stat and mkdir say ENOTDIR.
  ENOTDIR: (elsewhere) =>
    `a file stands where that path needs a folder: ${elsewhere ? `name a folder (${elsewhere})` : "move it away"}`,
};

/** Calls that only read: a refusal of one is no write refused, and no setting that moves a write is the fix. */
const READS = new Set(["scandir", "opendir", "readdir", "read"]);

/** A read the file system refused to this user (no write refused: no setting that moves a write is the fix). */
function readRefused(err: unknown): boolean {
  const { code, syscall } = (err ?? {}) as NodeJS.ErrnoException;
  return (code === "EACCES" || code === "EPERM") && READS.has(syscall ?? "");
}

/** The fix for a file system's refusal of a write, if it is one a person can make; mkdir of a folder a file holds the name of is EEXIST. */
function fileSystemFix(err: unknown): ((elsewhere: string | undefined) => string) | undefined {
  const { code, syscall } = (err ?? {}) as NodeJS.ErrnoException;
  if (code === "EEXIST" && syscall === "mkdir") return FILE_SYSTEM_FIXES.ENOTDIR;
  return Object.hasOwn(FILE_SYSTEM_FIXES, code ?? "")
    ? FILE_SYSTEM_FIXES[code as keyof typeof FILE_SYSTEM_FIXES]
    : undefined;
}

/** An error a system call gave on a file (an errno code, the call and the file it named), not one of Tome's own. */
function systemRefusal(err: unknown): boolean {
  const { code, syscall, path } = (err ?? {}) as NodeJS.ErrnoException;
  return (
    err instanceof Error &&
    typeof code === "string" &&
    /^E[A-Z]+$/.test(code) &&
    typeof syscall === "string" &&
    typeof path === "string"
  );
}

/** Where a command is told to write instead. */
const elsewhereFor = (name: string) =>
  name === "start" || name === "keys" || name.startsWith("keys ")
    ? "TOME_DATA"
    : name === "snapshot:follow"
      ? "--dir"
      : "--out";

/**
 * What a command is given by its process and says through it: its environment, its output and its end. A command's
 * main takes one, the process's own by default (PROCESS_IO); test/helpers.ts' keyTool runs the key tool in the test's
 * process with its own, and so replaces no console method, process.exit or process.env that a server in the same
 * process uses meanwhile.
 */
export interface CommandIo {
  /** The environment the settings are read from (readConfig; the process's when not given). */
  env?: Record<string, string | undefined>;
  /** A line on stdout, as console.log writes one. */
  log(line: string): void;
  /** A line on stderr, as console.error writes one. */
  error(line: string): void;
  /** Text on stdout as it is (a help text). */
  out(text: string): void;
  /** Text on stderr as it is. */
  err(text: string): void;
  /** The command's end, with this exit code. */
  exit(code: number): never;
}

/** The process's own: its environment, console, stdout and stderr, and exit. */
export const PROCESS_IO: CommandIo = {
  log: (line) => console.log(line),
  error: (line) => console.error(line),
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  exit: (code) => process.exit(code),
};

export interface MainOptions {
  /** What follows an ArgumentError's message (default: how to see the command's --help). */
  usage?: string;
  /** A folder the command writes that no setting moves (start's snapshots/, D86): a write refused in it is not told to go elsewhere. */
  fixedFolder?: string;
  /** Where the settings come from and the errors go (default: the process's own). */
  io?: CommandIo;
}

/** What mainAfterOptions alone does with a command (mainOf, which reads no options, has none of it). */
interface AfterOptions extends MainOptions {
  /**
   * A build (snapshot:build, update, follow): once its options are read, the process lowers itself by
   * TOME_BUILD_NICE, below a server beside it, before its parsing workers and decompressors start at its nice (D189).
   */
  lowered?: boolean;
  /**
   * false: the command uses none of the layers applyConfig loads to tell them a setting (snapshot, search, ingest),
   * which it then does not apply (the key tool, whatever TOME_ZSTD, TOME_DEBUG_MEM or TOME_BUILD_WORKERS say).
   */
  usesLayers?: boolean;
}

/** Whether the refused write's path (an fs error's, or writeFailed's) lies in `folder`. */
function refusedIn(err: unknown, folder: string | undefined): boolean {
  const path = (err as NodeJS.ErrnoException).path;
  if (!folder || typeof path !== "string") return false;
  const within = relative(resolve(folder), resolve(path));
  return within === "" || (!within.startsWith("..") && !isAbsolute(within));
}

/**
 * A line for the person at the terminal on stderr, its controls escaped (printableMessage), not coloured: console.error
 * prints in red on a terminal, which says "error".
 */
export function note(line: string, io: CommandIo = PROCESS_IO): void {
  io.err(`${printableMessage(line)}\n`);
}

/**
 * Where a relative path that is not there was read from, when a package script ran the command: `bun run` runs it in
 * the folder of the script's package, so `bun run snapshot:verify ../x.tome` typed in Tome's docs/ looks beside Tome's
 * folder, not beside docs/; Tome run by another package's script reads it from that package's folder.
 */
function lookedFrom(err: unknown): string {
  const missing = err instanceof UserError ? err.missing : undefined;
  if (missing === undefined || isAbsolute(missing) || /^https?:\/\//i.test(missing) || !runByPackageScript()) return "";
  return ` A relative path is read from ${printableName(process.cwd())}: a package script (\`bun run\`, \`npm start\`) runs its command in the folder of its package, whichever folder it is typed in. Give the path from there, or an absolute one.`;
}

/**
 * Runs a command's main with the settings read once (config.ts) and applied (applyConfig), turning the errors a user
 * can fix into one line and an exit code. A command that reads its options in it is mainAfterOptions.
 */
export async function mainOf(name: string, run: (config: Config) => unknown, options: MainOptions = {}): Promise<void> {
  await settled(
    name,
    async (settings) => {
      const config = settings();
      await applyConfig(config);
      await run(config);
    },
    options,
  );
}

/**
 * A command that reads its options before its settings, their mistakes said as its others are (mainOf): `read`
 * reads them, "help" for -h/--help (readOptions), then `help` is printed, or the settings are read and applied and `run`
 * runs on the options. Read before readConfig, so that --help is answered whatever the settings say (TOME_ZSTD=lz4, as
 * start's --help is), and before applyConfig, which loads a layer to tell it a setting other than its default
 * (TOME_ZSTD, TOME_DEBUG_MEM, TOME_BUILD_WORKERS): --help and a mistaken option load no engine. `read` that needs a
 * setting (export's TOME_SNAPSHOT) calls `settings` once it has answered --help.
 */
export async function mainAfterOptions<A>(
  name: string,
  read: (settings: () => Config) => A | "help" | Promise<A | "help">,
  help: string,
  run: (args: A, config: Config) => unknown,
  options: AfterOptions = {},
): Promise<void> {
  await settled(
    name,
    async (settings) => {
      const args = await read(settings);
      if (args === "help") return void (options.io ?? PROCESS_IO).out(help);
      const config = settings();
      if (options.usesLayers !== false) await applyConfig(config);
      if (options.lowered) lowerThisProcess(config.buildNice);
      await run(args, config);
    },
    options,
  );
}

/**
 * `run` with the settings to read (config.ts) when it asks for them, once, the errors a user can fix (the settings'
 * among them) turned into one line and an exit code.
 */
async function settled(name: string, run: (settings: () => Config) => unknown, options: MainOptions): Promise<void> {
  const io = options.io ?? PROCESS_IO;
  let config: Config | undefined;
  try {
    await run(() => (config ??= readConfig(io.env)));
  } catch (err) {
    if (readRefused(err)) {
      const { path, message } = err as NodeJS.ErrnoException;
      io.error(`${name}: ${cannotRead(printableName(path ?? message), err)}`);
      io.exit(1);
    }
    const fix = fileSystemFix(err);
    if (fix) {
      const fixed = refusedIn(err, options.fixedFolder);
      const where = fixed ? ` (${options.fixedFolder}/ is ${resolve(options.fixedFolder!)}; no setting moves it)` : "";
      // The writes go to temporary files renamed into place when whole: nothing the command replaces is lost.
      // A file system's message is one line, its path put in raw.
      io.error(
        `${name}: ${printableName((err as Error).message)}: ${fix(fixed ? undefined : elsewhereFor(name))}${where}. Nothing it would have replaced was changed.`,
      );
      io.exit(1);
    }
    // A system call refused on a file no fix above names (ENOENT creating a file in /proc, EIO, EPERM): the file
    // system's own message, which names the call and the file, on one line (D184); no stack trace.
    if (systemRefusal(err)) {
      io.error(`${name}: ${printableName((err as Error).message)}`);
      io.exit(1);
    }
    const exitCode = err instanceof UserError ? err.exitCode : undefined;
    if (exitCode === undefined) throw err;
    const usage =
      err instanceof ArgumentError ? `\n${options.usage ?? `Run \`${commandLine(`${name} --help`)}\` for usage.`}` : "";
    io.error(`${name}: ${printableMessage((err as Error).message)}${lookedFrom(err)}${usage}`);
    io.exit(exitCode);
  }
}
