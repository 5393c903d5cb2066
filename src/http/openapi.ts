/**
 * Builds the OpenAPI 3.1 document from the app's routes: each route's TypeBox schemas (path and
 * query parameters, and one schema per response status) and its `detail`. The schemas are the
 * very objects that validate requests and type the handlers, so the document cannot drift from
 * them; what they do not say (a response's description, headers and media type) rides on them
 * under the RESPONSE_DOC symbol (see docs.ts's `described`).
 */
import type { TSchema } from "@sinclair/typebox";

/** Where a response's documentation rides on its schema: a symbol, so validation and the emitted schema never see it. */
export const RESPONSE_DOC = Symbol("tome.response");
/** Where a route's `detail` names a second path that the same operation answers at. */
export const ALSO_AT = Symbol("tome.alsoAt");
/** Where a route's hooks hold its query and path schemas, which its handler reads (params.ts's route()) and Elysia never sees. */
export const PARAMETERS = Symbol("tome.parameters");

export interface HeaderDoc {
  description: string;
  schema: Record<string, unknown>;
  example: unknown;
  /** Its name under components/headers, where one header is described twice (Cache-Control: revalidate, or keep nothing); default the header's. */
  component?: string;
}

export interface ResponseDoc {
  description: string;
  headers: Record<string, HeaderDoc>;
  /** "" for an answer without a body. */
  mediaType: string;
  /** Named example bodies. */
  examples?: Record<string, unknown>;
}

interface AlsoAt {
  path: string;
  operationId: string;
  summary: string;
}

/** What the document reads of an Elysia route. */
export interface ApiRoute {
  method: string;
  path: string;
  hooks: {
    [PARAMETERS]?: { params?: unknown; query?: unknown };
    response?: unknown;
    detail?: Record<string | symbol, unknown> & { hide?: boolean };
  };
}

export interface DocumentParts {
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  securitySchemes: Record<string, unknown>;
  /** Schemas to name under components/schemas; wherever one is used it becomes a $ref. */
  components: Record<string, TSchema>;
}

type Json = Record<string, unknown>;

// Keywords whose values are data, not schemas.
const VALUE_KEYWORDS = new Set(["examples", "default", "const", "enum", "required"]);
/** Elysia's mark on a response schema whose answers it does not check (docs.ts's `described`, option `checked`). */
export const UNCHECKED = "noValidate";
// Elysia adds `additionalProperties: false` to a route's response schemas when it compiles the
// route (at its first request), and our schemas never set it: the document leaves it out, so
// that it does not depend on which routes have answered. UNCHECKED is Elysia's, not a keyword.
const LEFT_OUT = new Set(["additionalProperties", UNCHECKED]);

/** A schema's identity: its JSON, without what Elysia may have added. */
const identity = (schema: unknown) => JSON.stringify(schema, (key, value) => (LEFT_OUT.has(key) ? undefined : value));

export function openApiDocument(routes: readonly ApiRoute[], parts: DocumentParts): Json {
  const names = new Map(Object.entries(parts.components).map(([name, schema]) => [identity(schema), name]));
  const toSchema = (schema: unknown, self?: string) => emitSchema(schema, names, self);
  const headers: Record<string, HeaderDoc> = {};
  /** A reference to the header, named in components/headers (one description per name). */
  const header = (name: string, { component = name, ...doc }: HeaderDoc) => {
    if (headers[component] && identity(headers[component]) !== identity(doc))
      throw new Error(`two descriptions of the header ${component}`);
    headers[component] = doc;
    return { $ref: `#/components/headers/${component}` };
  };
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const detail = route.hooks.detail ?? {};
    if (detail.hide) continue;
    const { hide: _, ...documented } = detail;
    const method = route.method.toLowerCase();
    const operation: Json = {
      ...documented,
      parameters: [
        ...parameters(route.hooks[PARAMETERS]?.params, "path", toSchema),
        ...parameters(route.hooks[PARAMETERS]?.query, "query", toSchema),
      ],
      responses: responses(route, toSchema, header),
    };
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    paths[path] = { ...paths[path], [method]: operation };
    const also = detail[ALSO_AT] as AlsoAt | undefined;
    if (also)
      paths[also.path] = {
        ...paths[also.path],
        [method]: { ...operation, operationId: also.operationId, summary: also.summary },
      };
  }
  return {
    openapi: "3.1.0",
    info: parts.info,
    servers: parts.servers,
    tags: parts.tags,
    paths,
    components: {
      schemas: Object.fromEntries(
        Object.entries(parts.components).map(([name, schema]) => [name, toSchema(schema, name)]),
      ),
      headers,
      securitySchemes: parts.securitySchemes,
    },
  };
}

/** The OpenAPI parameters of a route's params or query object schema. */
function parameters(schema: unknown, where: "path" | "query", toSchema: (s: unknown) => unknown): Json[] {
  if (!schema) return [];
  const { properties, required = [] } = schema as { properties: Record<string, Json>; required?: string[] };
  return Object.entries(properties).map(([name, property]) => {
    const { description, examples, ...rest } = property;
    return {
      name,
      in: where,
      required: where === "path" || required.includes(name),
      description,
      schema: toSchema(rest),
      ...(Array.isArray(examples) ? { example: examples[0] } : {}),
    };
  });
}

function responses(
  route: ApiRoute,
  toSchema: (s: unknown) => unknown,
  header: (name: string, doc: HeaderDoc) => Json,
): Json {
  const out: Json = {};
  for (const [status, schema] of Object.entries((route.hooks.response ?? {}) as Record<string, TSchema>)) {
    const doc = (schema as { [RESPONSE_DOC]?: ResponseDoc })[RESPONSE_DOC];
    if (!doc)
      throw new Error(
        `${route.method} ${route.path}: response ${status} has no documentation (wrap its schema in described())`,
      );
    const examples =
      doc.examples && Object.fromEntries(Object.entries(doc.examples).map(([name, value]) => [name, { value }]));
    const headers = Object.fromEntries(Object.entries(doc.headers).map(([name, h]) => [name, header(name, h)]));
    const content = doc.mediaType
      ? { content: { [doc.mediaType]: { schema: toSchema(schema), ...(examples ? { examples } : {}) } } }
      : {};
    out[status] = { description: doc.description, headers, ...content };
  }
  return out;
}

/**
 * A TypeBox schema as plain JSON Schema: TypeBox's symbols, our `x-` markers and LEFT_OUT left
 * out, and every named schema but `self` replaced by a reference to it.
 */
function emitSchema(schema: unknown, names: Map<string, string>, self?: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => emitSchema(s, names));
  if (typeof schema !== "object" || schema === null) return schema;
  const name = names.get(identity(schema));
  if (name && name !== self) return { $ref: `#/components/schemas/${name}` };
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith("x-") || LEFT_OUT.has(key)) continue;
    if (key === "properties")
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, emitSchema(v, names)]));
    else out[key] = VALUE_KEYWORDS.has(key) ? value : emitSchema(value, names);
  }
  return out;
}
