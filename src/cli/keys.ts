/**
 * bun run keys — the dashboard: API keys and plans, kept under TOME_DATA (default ./data), or
 * in Redis when TOME_REDIS_URL is set (key-store.ts). Keys are never managed through the public
 * API (api.md section 2.6). A running server (every replica, with Redis) sees every change on
 * its next request. `import` and `export` move a store and this month's usage between the two.
 * The commands are keys-run.ts, loaded once one is named: `keys --help` and an unknown command load no access layer.
 */
import { commandLine } from "../invocation";
import { printableName } from "../printable";
import { DEFAULT_DATA_DIR } from "./config";
import type { KeyCommand } from "./keys-run";
import { type CommandIo, PROCESS_IO } from "./main";

const HELP = `Usage: ${commandLine("keys")} <command> [options]

Commands:
  create   create an API key (printed once)
  list     list keys, their state and their account's usage this month
  revoke   revoke a key: it stops working on the server's next request
  plan     change an account's plan
  account  give an account holder the dashboard (/dashboard): "account create", "account token"
  import   move the keys and this month's usage from TOME_DATA into Redis (TOME_REDIS_URL)
  export   move the keys and this month's usage from Redis (TOME_REDIS_URL) into TOME_DATA

Run "${commandLine("keys")} <command> --help" for a command's options.
Everything is kept under TOME_DATA (default ./${DEFAULT_DATA_DIR}), or in Redis when
TOME_REDIS_URL is set (redis://HOST:PORT), as the server keeps it.
`;

/** The commands keys-run.ts runs, each once (the type checker holds them to its list). */
const COMMANDS: Record<KeyCommand, true> = {
  create: true,
  list: true,
  revoke: true,
  plan: true,
  account: true,
  import: true,
  export: true,
};

/** The command, on its arguments (what follows its name), in `io`: the process's environment and output unless told. */
export async function main(args: string[], io: CommandIo = PROCESS_IO): Promise<void> {
  const [command, ...rest] = args;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    // Asked for, the help is the answer (stdout, 0); without a command, it is a usage error's (stderr, 2).
    (command ? io.out : io.err)(HELP);
    io.exit(command ? 0 : 2);
  }
  // Its own commands only: COMMANDS["toString"] ran Object's toString (exit 0, nothing done), "__proto__" threw (D89).
  if (!Object.hasOwn(COMMANDS, command)) {
    io.error(`keys: unknown command "${printableName(command)}".\n\n${HELP}`);
    io.exit(2);
  }
  await (await import("./keys-run")).runKeys(command as KeyCommand, rest, io);
}

if (import.meta.main) await main(Bun.argv.slice(2));
