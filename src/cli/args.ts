/**
 * A command's options, read strictly by node:util's parseArgs with -h/--help added. Its own
 * messages are kept but one: for an unknown option it suggests `-- "--bogus"`, as if the
 * command took arguments starting with "-"; none of ours does, so the message says which
 * options the command takes instead (mainOf then points to --help). An option that takes one
 * value, given twice, is refused (D118): parseArgs keeps the last, silently.
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { printableName } from "../printable";
import { commandLine } from "../invocation";
import { ArgumentError } from "./main";

/**
 * An argument a command refuses, said back in its message: quoted, its terminal escapes and controls written \u… (as
 * readArgs says its own), so that an ESC in it does not reach the terminal raw.
 */
export function given(value: string): string {
  return `"${printableName(value)}"`;
}

const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const;

type WithHelp<O> = { [K in keyof O | "help"]: K extends "help" ? (typeof HELP_OPTION)["help"] : O[K & keyof O] };
type Values<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ options: WithHelp<O>; strict: true; allowPositionals: true }>
>["values"];

/** "--name, --json and -h/--help": the options a command takes. */
function optionList(options: ParseArgsOptionsConfig): string {
  const names = Object.entries({ ...options, ...HELP_OPTION }).map(([name, o]) =>
    o.short ? `-${o.short}/--${name}` : `--${name}`,
  );
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/**
 * An option followed by what reads as another (--workers -1, --out -x.tome): said in one line with the value, where
 * parseArgs said in three that the value may have been forgotten and showed '--workers=-XYZ'.
 */
function ambiguity(argv: string[], named: string): string {
  const option = printableName(named);
  const found = argv[argv.indexOf(named) + 1];
  const next = found === undefined ? undefined : printableName(found);
  if (next === undefined || next.startsWith("--"))
    return `${option} takes a value${next ? `, and is followed by ${next}` : ""}.`;
  const write = /\s/.test(next) ? `"${option}=${next}"` : `${option}=${next}`;
  return `${option} is followed by "${next}", which reads as an option: if it is ${option}'s value, write ${write}.`;
}

/**
 * The options that say an empty value in words of their own, left to them by readArgs, which refuses every other one
 * given empty (`--dump ""`, `--from "$UNSET"`): read as left out, it sent follow to Wikimedia instead of a mirror and
 * export to the wrong message; read as a path, it said "dump not found: ." (D118). `--out` (checkOut: "name the file
 * to write") and keys create's `--name` ("give the key a name of 1 to 100 characters").
 */
const OWN_EMPTY = new Set(["out", "name"]);

/**
 * The options in `argv` and at most `positionals` arguments besides them (an ArgumentError
 * otherwise): an unknown option or a surplus argument is answered with the options there are.
 * `files`: the arguments are files, so one that reads as options is told how to name it.
 */
export function readArgs<const O extends ParseArgsOptionsConfig>(
  argv: string[],
  options: O,
  positionals = 0,
  files = false,
): { values: Values<O>; positionals: string[] } {
  const takes = () =>
    `the command takes ${positionals ? `${positionals === 1 ? "one argument" : `${positionals} arguments`} and ` : ""}${Object.keys(options).length ? `the options ${optionList(options)}` : "no option but -h/--help"}`;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, ...HELP_OPTION },
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (err) {
    const { code, message } = err as Error & { code?: string };
    const ambiguous = /^Option '(--[^']+)' argument is ambiguous/.exec(message)?.[1];
    if (ambiguous) throw new ArgumentError(ambiguity(argv, ambiguous));
    if (code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw new ArgumentError(message);
    // Of a group of short options ("-out.tome") the message names the letter alone ('o').
    const named = /Unknown option '([^']*)'/.exec(message)?.[1] ?? "";
    const option = named.startsWith("-") ? named : `-${named}`;
    // A file named "-x.tome" reads as options, and `bun file.ts -- -x.tome` drops the "--" before the command sees it.
    const single = argv.find((a) => /^-[^-]/.test(a) && a.slice(1).includes(option.slice(1)));
    const file = files && single ? ` (a file whose name starts with "-" is given as ./${single})` : "";
    throw new ArgumentError(`unknown option ${printableName(option)}: ${takes()}${printableName(file)}`);
  }
  const seen = new Map<string, string>();
  // --help beside it shows the help, as it does beside a value the command would refuse.
  for (const token of parsed.values.help ? [] : (parsed.tokens ?? [])) {
    if (token.kind !== "option" || token.value === undefined) continue;
    if (token.value === "" && !OWN_EMPTY.has(token.name))
      throw new ArgumentError(`--${token.name} is empty: give it a value, or leave it out.`);
    if (options[token.name]?.multiple) continue;
    const before = seen.get(token.name);
    if (before !== undefined)
      throw new ArgumentError(
        `--${token.name} is given twice (${given(before)}, then ${given(token.value)}): it takes one value. Give it once.`,
      );
    seen.set(token.name, token.value);
  }
  const surplus = parsed.positionals[positionals];
  if (surplus !== undefined) throw new ArgumentError(`unexpected argument ${given(surplus)}: ${takes()}`);
  return parsed as { values: Values<O>; positionals: string[] };
}

/** A command's options, and no argument besides them (readArgs): their values, or "help" for -h/--help. */
export function readOptions<const O extends ParseArgsOptionsConfig>(argv: string[], options: O): Values<O> | "help" {
  const { values } = readArgs(argv, options);
  return (values as { help?: boolean }).help ? "help" : values;
}

/**
 * For a command that takes no arguments (its settings are environment variables): -h/--help anywhere prints `help` and
 * exits 0; any other argument is said back with `instead`, what to do, and exits 2.
 */
export function noArgs(name: string, args: string[], help: string, instead: string): void {
  if (args.includes("-h") || args.includes("--help")) {
    process.stdout.write(help);
    process.exit(0);
  }
  if (args.length > 0) {
    console.error(`${name}: it takes no arguments, not "${printableName(args.join(" "))}": ${instead} (see --help).`);
    process.exit(2);
  }
}

/**
 * The one file `name` takes, with its options (readArgs, the arguments read as files): -h/--help anywhere prints `help`
 * and exits 0; anything but one file is said, with how to see the help, and exits 2. `wrong` says what to give when
 * nothing else is wrong (no file at all).
 */
export function oneFileArgs<const O extends ParseArgsOptionsConfig>(
  name: string,
  args: string[],
  options: O,
  help: string,
  wrong: string,
): { file: string; values: Values<O> } {
  if (args.includes("-h") || args.includes("--help")) {
    process.stdout.write(help);
    process.exit(0);
  }
  // An unknown option is named, with the options there are, rather than `wrong`.
  try {
    const { values, positionals } = readArgs(args, options, 1, true);
    if (positionals.length === 1) return { file: positionals[0]!, values };
  } catch (err) {
    wrong = `${(err as Error).message}.`;
  }
  console.error(`${name}: ${wrong}\nRun \`${commandLine(name)} --help\` for usage.`);
  process.exit(2);
}
