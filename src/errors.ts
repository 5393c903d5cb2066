/**
 * UserError: the base of every error the person at the terminal can fix (a damaged key store,
 * a bad option, a port in use). The CLIs print its message on one line and exit with its code,
 * never with a stack trace (src/cli/main.ts); anything else is a fault of ours and is thrown.
 */
export class UserError extends Error {
  /** The process's exit code: 1 by default, 2 for a mistake in how the command was called. */
  readonly exitCode: number;
  /** A file or folder the person named that is not there, as named: the CLI says where a relative one was looked for. */
  readonly missing?: string | undefined;
  constructor(message: string, { exitCode = 1, missing }: UserErrorOptions = {}) {
    super(message);
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.missing = missing;
  }
}

/** What a UserError carries beside its message. */
export interface UserErrorOptions {
  exitCode?: number;
  missing?: string;
}

/** A value as an argument's message shows it: a string quoted, an object or array as written, a bigint with its n. */
export function said(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return `${value}n`;
  if (value instanceof String || value instanceof Number || value instanceof Boolean)
    return `a ${value.constructor.name} object (${said(value.valueOf())})`;
  if (typeof value === "object" && value !== null) {
    const shown = Bun.inspect(value, { depth: 1 })
      .replace(/\s+/g, " ")
      .replace(/,\s*([}\]])/g, " $1");
    return shown.length > 80 ? `${shown.slice(0, 79)}…` : shown;
  }
  return String(value);
}

/** An option's test, and the rule it checks as said to a caller who breaks it. */
export type OptionRule = readonly [holds: (value: unknown) => boolean, rule: string];

/**
 * Throws a RangeError naming the option `name` of `call` when `value` is given and breaks its rule: one message for
 * every library entry point's options (the engine's, createApp's, the build's; D151, D115).
 */
export function checkOption(call: string, name: string, value: unknown, [holds, rule]: OptionRule): void {
  if (value !== undefined && !holds(value))
    throw new RangeError(`${call}: ${name} must be ${rule}, not ${said(value)}.`);
}

/**
 * Throws a TypeError when `options` is not an object, or names an option `rules` does not hold (with the camelCase
 * one a snake_case name stands for); then checks each option by its rule, own or inherited, as the callee reads them.
 */
export function checkOptions(call: string, options: unknown, rules: Record<string, OptionRule>): void {
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new TypeError(`${call}: options must be an object, not ${said(options)}.`);
  for (const name of Object.keys(options)) {
    if (Object.hasOwn(rules, name)) continue;
    const camel = name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
    const hint = camel !== name && Object.hasOwn(rules, camel) ? ` (did you mean ${camel}?)` : "";
    throw new TypeError(`${call}: ${name} is no option${hint}; the options are ${Object.keys(rules).join(", ")}.`);
  }
  for (const [name, rule] of Object.entries(rules))
    checkOption(call, name, (options as Record<string, unknown>)[name], rule);
}

/** A rule's test: a safe integer of `least` or more. */
export const integerFrom = (least: number) => (v: unknown) => Number.isSafeInteger(v) && (v as number) >= least;

/**
 * A write refused by the file system as a whole (full, over its quota, read-only), not by one file's or folder's
 * permissions: every command says these one way, with their fix (src/cli/main.ts FILE_SYSTEM_FIXES, D184), so a
 * command's own message is not put in their place (the server's lock, src/access/server-lock.ts).
 */
export const WHOLE_FILE_SYSTEM_REFUSALS = ["ENOSPC", "EDQUOT", "EROFS"] as const;

/** Whether `err` is one of WHOLE_FILE_SYSTEM_REFUSALS (by its code). */
export function wholeFileSystemRefused(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return (WHOLE_FILE_SYSTEM_REFUSALS as readonly string[]).includes(code ?? "");
}
