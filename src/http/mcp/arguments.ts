/**
 * A tool's JSON arguments read by the REST routes' strict rules (../http/params.ts, D3–D6):
 * each scalar is turned back into the text a query string would carry and read by readQuery
 * against the same TypeBox schema, so `limit: 99`, `limit: 2.5` and `format: "html"` fail as
 * they do over REST, with the same messages. Two rules are the tool's own: an argument the
 * tool does not take is refused (a model's misspelt name should not be silently ignored), and
 * the messages say "argument" where a route says "query parameter".
 *
 * A tool error sends its code and message only (D173): these two refusals build no D1 details, whose quote of the value
 * (an object or array, of any size over stdio) no client would see.
 */
import type { TObject } from "@sinclair/typebox";
import { ApiError, apiError, ERRORS, missingParameter, shortened } from "../errors";
import { readQuery, type Filled, type ReadOptions } from "../params";
import { trimSpaces } from "../../scripts";

export function readArguments<T extends TObject>(
  schema: T,
  args: Record<string, unknown> | undefined,
  options: ReadOptions = {},
): Filled<T> {
  const given = args ?? {};
  const names = Object.keys(schema.properties);
  const unknown = Object.keys(given).filter((name) => !names.includes(name));
  if (unknown.length) {
    throw new ApiError(
      ERRORS.invalidParameter.status,
      ERRORS.invalidParameter.code,
      `Unknown argument ${shortened(unknown[0]!)}: this tool takes ${names.join(", ")}.`,
    );
  }
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(given)) {
    // null stands for "not given", as clients send it for optional arguments they leave empty.
    if (value === null || value === undefined) continue;
    if (typeof value === "string") query.set(name, value);
    else if (typeof value === "number" || typeof value === "boolean") query.set(name, String(value));
    else throw apiError(ERRORS.invalidParameter, name, "a string, a number or a boolean");
  }
  for (const name of schema.required ?? []) {
    const value = query.get(name);
    if (value === null || trimSpaces(value) === "") throw missingParameter(name, `The argument ${name} is required.`);
  }
  return readQuery(schema, `?${query}`, options);
}
