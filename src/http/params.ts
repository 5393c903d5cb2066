/**
 * Strict reading of query strings and path parameters, driven by the route's TypeBox schema
 * (schemas.ts). Elysia's own coercion is lenient (" 5", "0x10", "5.0" and "1e1" all pass as
 * numbers, a repeated parameter silently keeps one value), and the decisions are not:
 *   D3 integers are base-10 digits only, within bounds, never clamped; a parameter given twice is refused
 *   D4 booleans are true|false|1|0, any case
 *   D5 an unknown enum value names the allowed ones
 *   D6 q is trimmed; absent or blank is `missing q`, over 500 characters is refused
 * Unknown parameters are ignored (D3).
 */
import { Kind, type Static, type TObject, type TSchema } from "@sinclair/typebox";
import { codePoints, escapeRegExp, trimSpaces } from "../scripts";
import { invalidParameter, missingParameter, parameterError, type ParameterRow } from "./errors";
import { PARAMETERS } from "./openapi";
import { exchangeOf, routedPath, type Exchange } from "./pipeline";
import { MAX_INTEGER } from "./schemas";

const DIGITS = /^[0-9]+$/;
/** Compiled schema patterns (a route's few, compiled once rather than per request). */
const patterns = new Map<string, RegExp>();
const compiled = (pattern: string) => patterns.get(pattern) ?? patterns.set(pattern, new RegExp(pattern)).get(pattern)!;
const BOOLEAN = /^(true|false|1|0)$/i;

/** A schema's static type, with the properties that have defaults no longer optional (readQuery fills them). */
export type Filled<T extends TObject> = Static<T> & {
  [K in keyof T["properties"] as T["properties"][K] extends { default: unknown } ? K : never]-?: Exclude<
    Static<T["properties"][K]>,
    undefined
  >;
};

/** A promise of each member of T: Promise<A> | Promise<B> for A | B. */
type EachPromised<T> = T extends unknown ? Promise<T> : never;

/** Readers of properties by name (ReadOptions.readers). */
type Readers = Record<string, Reader>;

/** What a schema's properties are once read: defaults filled in, and a custom reader's property of the type it returns. */
type ReadOf<T extends TObject | undefined, R extends Readers = {}> = T extends TObject
  ? Omit<Filled<T>, keyof R> & { [K in keyof R & keyof T["properties"]]: ReturnType<R[K]> }
  : undefined;

/** What a route's handler is given: its query and path parameters as read, and the request's exchange (its request, x.request). */
export interface RouteInput<Q extends TObject | undefined, P extends TObject | undefined, R extends Readers = {}> {
  query: ReadOf<Q, R>;
  params: ReadOf<P, R>;
  x: Exchange;
}

/**
 * A route's strict reading and its handler, typed from its TypeBox schemas: spread `hooks`
 * into the route's options and pass `handler` as its handler. The handler takes the request's
 * exchange back (pipeline.ts exchangeOf), reads the query and path parameters strictly, then
 * asks the quota (checkQuota), then calls `handle` with them.
 *
 * Elysia is given no query or path schema to parse and check again after the strict reading
 * (it parsed the query string, checked the typed values and decoded them twice, a request's
 * cookies and headers too, as a handler that takes the whole context might read them): the
 * schemas ride on the hooks under PARAMETERS, for the OpenAPI document alone.
 */
export function route<
  Q extends TObject | undefined = undefined,
  P extends TObject | undefined = undefined,
  R extends Readers = {},
  T = unknown,
>(
  spec: {
    query?: Q;
    params?: P;
    readers?: R;
    codes?: ReadOptions["codes"];
    /** The handler asks the quota itself (checkQuota): what a request costs is known only there (a PDF's HEAD, D26). */
    ownQuota?: true;
  },
  handle: (input: RouteInput<Q, P, R>) => T,
) {
  const read = ({
    params,
    request,
  }: {
    params: Record<string, string | undefined>;
    request: Request;
  }): RouteInput<Q, P, R> => {
    const x = exchangeOf(request);
    // The path first: its error wins over the query's (as it did when a transform hook read them).
    const pathParams = spec.params && readParams(spec.params, params, x.path, spec);
    const input = { query: spec.query && readQuery(spec.query, request.url, spec), params: pathParams, x };
    if (!spec.ownQuota) checkQuota(x);
    // The one cast: readQuery and readParams return what the schemas (and readers) describe.
    return input as RouteInput<Q, P, R>;
  };
  // Elysia reads a handler's source to know what of the request to parse before it: this one's
  // parameter names the path parameters and the request alone. An async `handle` gets an async
  // handler, which Elysia awaits (so that its errors reach the app's error handler).
  // Typed as a promise of each kind of answer it may settle to (a Response, or a body of the schema's): Elysia
  // takes a promise of one of them, not one promise of either.
  const handler =
    handle.constructor.name === "AsyncFunction"
      ? ((async ({
          params,
          request,
        }: {
          params: Record<string, string | undefined>;
          request: Request;
        }): Promise<Awaited<T>> => await handle(read({ params, request }))) as unknown as (context: {
          params: Record<string, string | undefined>;
          request: Request;
        }) => EachPromised<Awaited<T>>)
      : ({ params, request }: { params: Record<string, string | undefined>; request: Request }): T =>
          handle(read({ params, request }));
  return { hooks: { [PARAMETERS]: { query: spec.query, params: spec.params } }, handler };
}

/**
 * D2's last check before the handler: a request whose cost the quota could not hold is refused
 * here, once its parameters are known to be valid. route()'s handler calls it after reading,
 * unless the route asks it itself (ownQuota).
 */
export function checkQuota(x: Exchange): void {
  const refusal = x.overQuota?.();
  if (refusal) throw refusal;
}

/** checkQuota as the transform of a route without parameters (Elysia hands a transform its context). */
export function quotaGate(ctx: { request: Request }): void {
  checkQuota(exchangeOf(ctx.request));
}

/** Reads a property from its raw text, or throws the ApiError the client should see. */
type Reader = (raw: string) => unknown;

export interface ReadOptions {
  /** Readers for properties whose rule no schema keyword states (e.g. D12's `since`). */
  readers?: Record<string, Reader>;
  /** The error row for any invalid value of a property, where api.md names one (errors.ts). */
  codes?: Record<string, ParameterRow>;
}

/** The query string of `url` as the schema's typed object, defaults filled in. */
export function readQuery<T extends TObject>(schema: T, url: string, options: ReadOptions = {}): Filled<T> {
  const q = url.indexOf("?");
  const { properties, required, names } = shapeOf(schema);
  const given = q < 0 ? undefined : valuesOf(url.slice(q + 1), names);
  const out: Record<string, unknown> = {};
  for (const [name, prop] of properties) {
    const values = given?.get(name) ?? [];
    if (values.length > 1) throw invalidParameter(name, values.join(","), "given once");
    let raw = values[0];
    if (raw !== undefined && prop["x-trimmed"]) raw = trimSpaces(raw);
    if (raw === undefined || (raw === "" && required.has(name))) {
      if (required.has(name)) throw missingParameter(name, `The query parameter ${name} is required.`);
      if (prop.default !== undefined) out[name] = prop.default;
      continue;
    }
    out[name] = read(name, prop, raw, options);
  }
  return out as Filled<T>;
}

/** The names a query is read for: a schema's properties, how long the longest is, and the pairs that may hold one. */
interface Names {
  set: ReadonlySet<string>;
  longest: number;
  /** A pair whose name is one of them, or escaped ("%71", "+") so that it may be: its name as written, and its value. */
  pairs: RegExp;
}

/** A schema's properties and required names, read once a schema (not on every request). */
const shapes = new WeakMap<TObject, { properties: [string, TSchema][]; required: Set<string>; names: Names }>();
function shapeOf(schema: TObject) {
  let shape = shapes.get(schema);
  if (!shape) {
    const properties = Object.entries(schema.properties);
    const set = new Set(properties.map(([name]) => name));
    const literal = [...set].map(escapeRegExp).join("|");
    const pairs = new RegExp(`(?<=^|&)(${literal}|[^&=]*[%+][^&=]*)(?:=([^&]*))?(?=&|$)`, "g");
    const names = { set, longest: Math.max(...[...set].map((n) => n.length)), pairs };
    shape = { properties, required: new Set(schema.required ?? []), names };
    shapes.set(schema, shape);
  }
  return shape;
}

/** A parameter's name as the query's form decoding reads it, when it is one of `names` (else undefined). */
function nameOf(raw: string, names: Names): string | undefined {
  if (names.set.has(raw)) return raw;
  // A character is at most 12 escaped (4 bytes of UTF-8, "%F0%9F%98%80", for 2 UTF-16 units): a longer one is none of them.
  if (raw.length > 12 * names.longest) return undefined;
  try {
    const name = decodeURIComponent(raw.replaceAll("+", " "));
    return names.set.has(name) ? name : undefined;
  } catch {
    // An escape that is no UTF-8 is read as U+FFFD or kept as is: no name of a schema holds either.
    return undefined;
  }
}

/**
 * The values the query string gives the schema's parameters, as URLSearchParams reads them, found without reading
 * the others: a URL of 128 KiB (D88) holds 60,000 parameters, which URLSearchParams took 32 ms to read whole, and D3
 * ignores all but these.
 */
function valuesOf(search: string, names: Names): Map<string, string[]> {
  const found = new Map<string, string[]>();
  // As URLSearchParams, a "?" at the start is not the first name's (url??q=x).
  for (const [, rawName, raw = ""] of (search.startsWith("?") ? search.slice(1) : search).matchAll(names.pairs)) {
    const name = nameOf(rawName!, names);
    if (name === undefined) continue;
    const value = raw.includes("%") || raw.includes("+") ? new URLSearchParams(`v=${raw}`).get("v")! : raw;
    const values = found.get(name);
    if (values) values.push(value);
    else found.set(name, [value]);
  }
  return found;
}

/**
 * Path parameters (split out and percent-decoded by the router) as the schema's typed object. A parameter whose escapes
 * are no UTF-8 (%E0%A4%A) the router gives as null: it is refused, echoed in its error as sent, the path's last segment
 * (where each route's one parameter is); never read as a value.
 */
function readParams<T extends TObject>(
  schema: T,
  params: Record<string, string | null | undefined>,
  path: string,
  options: ReadOptions = {},
): T["static"] {
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(schema.properties)) {
    const value = params[name];
    if (value === null || value === undefined) throw unreadable(name, prop, lastSegment(path), options);
    out[name] = read(name, prop, value, options);
  }
  return out as T["static"];
}

/** The error of a parameter the router could not decode: its schema's own, for what was sent, else the escapes'. */
function unreadable(name: string, prop: TSchema, sent: string, options: ReadOptions): unknown {
  try {
    read(name, prop, sent, options);
  } catch (error) {
    return error;
  }
  return parameterError(name, sent, "percent escapes of UTF-8", options.codes?.[name]);
}

const lastSegment = (path: string) => {
  const routed = routedPath(path);
  return routed.slice(routed.lastIndexOf("/") + 1);
};

/** An integer parameter as the API reads one (D3): base-10 digits only, from `lo` to `hi`; else undefined. */
export function integerIn(raw: string, lo = 0, hi = MAX_INTEGER): number | undefined {
  if (!DIGITS.test(raw)) return undefined;
  const n = Number(raw);
  return n < lo || n > hi ? undefined : n;
}

function read(name: string, prop: TSchema, raw: string, options: ReadOptions): unknown {
  const custom = options.readers?.[name];
  if (custom) return custom(raw);
  const fail = (constraint: string) => parameterError(name, raw, constraint, options.codes?.[name]);
  if (prop.type === "integer") {
    const lo = (prop.minimum as number | undefined) ?? 0;
    const hi = (prop.maximum as number | undefined) ?? MAX_INTEGER;
    const n = integerIn(raw, lo, hi);
    if (n === undefined) throw fail(`an integer from ${lo} to ${hi} (base-10 digits)`);
    return n;
  }
  if (prop.type === "boolean") {
    if (!BOOLEAN.test(raw)) throw fail("true, false, 1 or 0");
    return raw === "1" || raw.toLowerCase() === "true";
  }
  const allowed = literals(prop);
  if (allowed) {
    if (!allowed.includes(raw)) throw fail(`one of ${allowed.join(", ")}`);
    return raw;
  }
  if (prop.type === "string") {
    const max = prop.maxLength as number | undefined;
    // Characters as users count them (code points), not UTF-16 units.
    if (max !== undefined && codePoints(raw) > max) throw fail(`at most ${max} characters`);
    const pattern = prop.pattern as string | undefined;
    if (pattern !== undefined && !compiled(pattern).test(raw))
      throw fail(prop.description ? `of the form ${prop.description}` : `matching ${pattern}`);
    return raw;
  }
  throw new Error(`no reader for parameter ${name} (${String(prop[Kind])})`);
}

/** The values of a union of literals (an enum), if the schema is one. */
function literals(prop: TSchema): string[] | undefined {
  const anyOf = prop.anyOf as TSchema[] | undefined;
  if (!anyOf?.length || !anyOf.every((s) => typeof s.const === "string")) return undefined;
  return anyOf.map((s) => s.const as string);
}
