/**
 * dist/tome, the executable `bun run compile` writes (compile.ts): every command of the
 * package.json scripts in one file, as `tome <command> [its arguments]`, each with the same
 * options and environment variables as `bun run <command>`. A command's module is loaded only
 * when it runs, so that `tome keys` does not load the server.
 */
import { printableName } from "../printable";
import { note } from "./main";
import { restartWithAllocatorSettings } from "./allocator";

interface Command {
  what: string;
  /** A long-running command whose threads wait between requests, messages or writes: the allocator's settings (D209). */
  long?: boolean;
  load: () => Promise<{ main(args: string[]): Promise<void> }>;
}

const COMMANDS: Record<string, Command> = {
  start: {
    long: true,
    what: "serve the API from the newest snapshot (builds one when there is none)",
    load: () => import("./start"),
  },
  "snapshot:build": {
    long: true,
    what: "build a snapshot from one or more dumps",
    load: () => import("./snapshot-build"),
  },
  "snapshot:update": {
    long: true,
    what: "apply an incremental dump or a newer full dump to a snapshot",
    load: () => import("./snapshot-update"),
  },
  "snapshot:follow": {
    long: true,
    what: "keep a folder's snapshot current from Wikimedia's daily dumps",
    load: () => import("./snapshot-follow"),
  },
  "snapshot:verify": {
    what: "check every section of a snapshot against its hash",
    load: () => import("./snapshot-verify"),
  },
  "snapshot:export": {
    long: true,
    what: "write a snapshot's chunks as JSON lines, for embedding",
    load: () => import("./snapshot-export"),
  },
  "snapshot:convert": { what: "turn a format-1 snapshot into format 2", load: () => import("./snapshot-convert") },
  keys: { what: "create, list, revoke and move API keys", load: () => import("./keys") },
  mcp: { long: true, what: "the MCP server over stdio, on a local snapshot", load: () => import("./mcp") },
};

const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
const HELP = `Usage: tome <command> [its options]     (tome <command> --help: the command's own)

Tome, a self-hosted Wikipedia text retrieval service, in one executable: no Bun, no
node_modules. Each command is the \`bun run <command>\` of a checkout, with the same options
and environment variables.

Commands:
${Object.entries(COMMANDS)
  .map(([name, { what }]) => `  ${name.padEnd(width)}  ${what}`)
  .join("\n")}
`;

if (import.meta.main) {
  const [name, ...args] = Bun.argv.slice(2);
  if (!name || name === "--help" || name === "-h" || name === "help") {
    // Asked for, the help is the answer (stdout, 0); without a command, it is a usage error's (stderr, 2).
    (name ? process.stdout : process.stderr).write(HELP);
    process.exit(name ? 0 : 2);
  }
  // Its own commands only: COMMANDS["toString"] and COMMANDS["__proto__"] are an object's members (D89).
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    note(`tome: unknown command "${printableName(name)}".\n\n${HELP}`);
    process.exit(2);
  }
  if (command.long) restartWithAllocatorSettings();
  // The command's main reads and applies the settings (mainOf), once: read here first, a setting refused was named
  // "tome:", and refused the command's --help, which bun run <command> answers whatever the settings.
  await (await command.load()).main(args);
}
