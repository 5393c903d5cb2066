/**
 * A tool's JSON arguments read by the REST routes' strict rules (../http/params.ts, D3–D6):
 * each scalar is turned back into the text a query string would carry and read by readQuery
 * against the same TypeBox schema, so `limit: 99`, `limit: 2.5` and `format: "html"` fail as
 * they do over REST, with the same messages. Two rules are the tool's own: an argument the
 * tool does not take is refused (a model's misspelt name should not be silently ignored), and
 * the messages say "argument" where a route says "query parameter".
 */
import type { TObject } from "@sinclair/typebox";
import { invalidParameter, missingParameter, parameterError } from "../errors";
import { readQuery, type Filled, type ReadOptions } from "../params";

export function readArguments<T extends TObject>(
  schema: T,
  args: Record<string, unknown> | undefined,
  options: ReadOptions = {},
): Filled<T> {
  const given = args ?? {};
  const names = Object.keys(schema.properties);
  const unknown = Object.keys(given).filter((name) => !names.includes(name));
  if (unknown.length) {
    const name = unknown[0]!;
    const message = `Unknown argument ${name}: this tool takes ${names.join(", ")}.`;
    throw parameterError(name, shown(given[name]), `one of ${names.join(", ")}`, undefined, message);
  }
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(given)) {
    // null stands for "not given", as clients send it for optional arguments they leave empty.
    if (value === null || value === undefined) continue;
    if (typeof value === "string") query.set(name, value);
    else if (typeof value === "number" || typeof value === "boolean") query.set(name, String(value));
    else throw invalidParameter(name, shown(value), "a string, a number or a boolean");
  }
  for (const name of schema.required ?? []) {
    const value = query.get(name);
    if (value === null || value.trim() === "") throw missingParameter(name, `The argument ${name} is required.`);
  }
  return readQuery(schema, `?${query}`, options);
}

/**
 * A refused argument's value as JSON, for its error's details. Over stdio no bound on nesting is met before (POST /mcp's
 * D155 is HTTP's): an array nested 100,000 deep, a 200 KB line, overflowed JSON.stringify's stack, and the client's
 * mistake was answered internal_error, with a stack trace in the log.
 */
function shown(value: unknown): string {
  try {
    return String(JSON.stringify(value));
  } catch {
    return Array.isArray(value) ? "[…]" : "{…}";
  }
}
