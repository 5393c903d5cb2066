/**
 * How each of the key tool's commands reads its options, apart from keys.ts (which answers --help and a mistaken
 * option) and keys-run.ts (which runs the commands): both read these, neither imports the other's module.
 */
import { given, readArgs } from "./args";
import { ArgumentError } from "./main";

/** `-h`/`--help` read (readArgs), said as "help"; else the options read. */
function orHelp<T extends { values: { help?: boolean } }>(read: T): T | "help" {
  return read.values.help ? "help" : read;
}

/**
 * How each command reads its options (mainAfterOptions): here, so that a command's --help and a mistaken option load
 * no access layer (keys-run.ts, which runs the commands, imports it), whatever the settings.
 */
export const READ = {
  create: (args: string[]) =>
    orHelp(
      readArgs(args, {
        name: { type: "string" },
        account: { type: "string" },
        plan: { type: "string" },
        scope: { type: "string" },
        expires: { type: "string" },
        json: { type: "boolean" },
      }),
    ),
  list: (args: string[]) => orHelp(readArgs(args, { json: { type: "boolean" } })),
  revoke: (args: string[]) => orHelp(readArgs(args, {}, 1)),
  plan: (args: string[]) =>
    orHelp(readArgs(args, { account: { type: "string" }, plan: { type: "string" }, rate: { type: "string" } })),
  account: ([which, ...rest]: string[]) => {
    if (which === "--help" || which === "-h") return "help";
    if (which !== "create" && which !== "token")
      throw new ArgumentError(
        // Said after "keys account: ", as every message of the command is (it said "keys account: keys account takes…").
        which === undefined ? "create or token is required" : `takes create or token, not ${given(which)}`,
      );
    const read = readArgs(rest, { account: { type: "string" }, plan: { type: "string" }, json: { type: "boolean" } });
    return read.values.help ? "help" : { which, ...read };
  },
  import: (args: string[]) => orHelp(readArgs(args, {})),
  export: (args: string[]) => orHelp(readArgs(args, {})),
};

/** The key tool's commands, by name. */
export type KeyCommand = keyof typeof READ;
/** A command's options, as read. */
export type KeyArgs = { [C in KeyCommand]: Exclude<ReturnType<(typeof READ)[C]>, "help"> };
