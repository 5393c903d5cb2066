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
 * A refused argument's value as JSON, for its error's details: the first QUOTED characters of JSON.stringify's text (all
 * of it when shorter), built without the rest, which errors.ts's echoed cuts off. Over stdio no bound is met before
 * (POST /mcp's D155 and 64 KiB are HTTP's): a string or array of nearly 10 MB was turned whole into JSON on the one
 * thread to quote 200 characters of it, and an array nested 100,000 deep overflowed JSON.stringify's stack, answered
 * internal_error with a stack trace in the log. Each level nested writes a character, so the walk goes QUOTED deep at most.
 */
function shown(value: unknown): string {
  try {
    return String(prefix(value, QUOTED));
  } catch {
    return Array.isArray(value) ? "[…]" : "{…}";
  }
}

/** What errors.ts's echoed keeps of a refused value. */
const QUOTED = 200;

/**
 * JSON.stringify(value), or a prefix of it at least `budget` characters long; undefined where JSON.stringify answers
 * undefined (undefined, a function, a symbol).
 */
function prefix(value: unknown, budget: number): string | undefined {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function")
    value = (value as { toJSON(key: string): unknown }).toJSON("");
  if (typeof value === "string") return quoted(value, budget);
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (out.length >= budget) return out;
      if (i) out += ",";
      out += prefix(value[i], budget - out.length) ?? "null";
    }
    return `${out}]`;
  }
  let out = "{";
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    if (out.length >= budget) return out;
    if (out.length > 1) out += ",";
    out += quoted(key, budget - out.length);
    if (out.length >= budget) return out;
    out += `:${prefix(member, budget - out.length - 1)}`;
  }
  return `${out}}`;
}

/**
 * JSON.stringify(text), or a prefix of it at least `budget` characters long, built from that many characters of the
 * text: the string's quote left open, and not cut inside a surrogate pair, whose high half alone would be written as a
 * `\ud83d` escape, which the whole string's JSON does not hold.
 */
function quoted(text: string, budget: number): string {
  if (text.length <= budget) return JSON.stringify(text);
  const at = Math.max(budget, 0);
  const code = text.charCodeAt(at - 1);
  return JSON.stringify(text.slice(0, code >= 0xd800 && code <= 0xdbff ? at + 1 : at)).slice(0, -1);
}
