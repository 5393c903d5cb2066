/**
 * bun scripts/openapi-plugin.ts [--out DIR] [--chromium]
 *
 * Issue 48's probe, the evidence of decision D73: the OpenAPI document that Elysia's own plugin,
 * @elysiajs/openapi, makes of Tome's routes, beside today's (src/http/openapi.ts), check by check.
 * The plugin is used as it is meant to be: the routes' own TypeBox schemas (query and path
 * schemas through its `references` option, since the routes read those themselves), each
 * response's description, headers (its `withHeaders`) and examples on the response schema, the
 * routes' `detail`, today's info, servers, tags and security schemes as its `documentation`, and
 * Swagger UI from the installed swagger-ui-dist (its `swagger.cdn` and `swagger.theme`).
 * --out writes both documents (today.json, plugin.json) for `redocly lint` and openapi-typescript;
 * --chromium also opens the plugin's /docs in headless Chromium, with no network but this server.
 */
import { openapi, withHeaders } from "@elysiajs/openapi";
import { Type as t, type TSchema } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { createApp } from "../src/http";
import { apiContext } from "../src/http/context";
import { ApiError, errorBody, ERRORS } from "../src/http/errors";
import { PARAMETERS, RESPONSE_DOC, type ResponseDoc } from "../src/http/openapi";
import { aboutRoutes } from "../src/http/routes/about";
import { changesRoutes } from "../src/http/routes/changes";
import { luckyRoutes } from "../src/http/routes/lucky";
import { pageRoutes } from "../src/http/routes/pages";
import { pdfRoutes } from "../src/http/routes/pdf";
import { searchRoutes } from "../src/http/routes/search";
import { openChromium } from "../test/chromium";
import { EN_2016, engineFor } from "../test/helpers";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    out: { type: "string" },
    chromium: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(
    "Usage: bun scripts/openapi-plugin.ts [--out DIR (writes today.json and plugin.json)] [--chromium (opens the plugin's /docs in headless Chromium)]\n",
  );
  process.exit(0);
}

type Json = Record<string, any>;
const PLUGIN_VERSION = (
  JSON.parse(readFileSync(Bun.resolveSync("@elysiajs/openapi/package.json", import.meta.dir), "utf8")) as {
    version: string;
  }
).version;
const SWAGGER_UI = dirname(Bun.resolveSync("swagger-ui-dist/package.json", import.meta.dir));

console.error("building a snapshot of enwiki-2016-sample…");
const engine = await engineFor({ dumps: [EN_2016] });
const pdf = { render: async () => new Uint8Array([37, 80, 68, 70]) };
const today = createApp(engine, { pdf });
const todayDoc = (await (await today.handle(request("/v1/openapi.json"))).json()) as Json;

/** Today's routes, each documented as the plugin reads a route (see the file's comment). */
function pluginRoutes() {
  const ctx = apiContext(engine);
  const groups = [
    aboutRoutes(ctx),
    searchRoutes(ctx),
    pageRoutes(ctx),
    changesRoutes(ctx),
    luckyRoutes(ctx),
    pdfRoutes(ctx, pdf, () => {}),
  ];
  const references: Record<string, Record<string, Json>> = {};
  for (const group of groups) {
    for (const route of group.routes) {
      const hooks = route.hooks as Json;
      const parameters = (route.hooks as { [PARAMETERS]?: { query?: TSchema; params?: TSchema } })[PARAMETERS];
      if (parameters)
        references[route.path] = {
          [route.method.toLowerCase()]: { query: parameters.query, params: parameters.params },
        };
      for (const [status, schema] of Object.entries((hooks.response ?? {}) as Record<string, TSchema>))
        hooks.response[status] = asPluginResponse(schema);
    }
  }
  return { groups, references };
}

/** A response schema as the plugin reads one: its description on the schema, its examples as the schema's, its headers by withHeaders. */
function asPluginResponse(schema: TSchema): TSchema {
  const doc = (schema as { [RESPONSE_DOC]?: ResponseDoc })[RESPONSE_DOC]!;
  const headers = Object.fromEntries(
    Object.entries(doc.headers).map(([name, h]) => [
      name,
      t.Unsafe({ ...h.schema, description: h.description, examples: [h.example] }),
    ]),
  );
  const examples = doc.examples ? { examples: Object.values(doc.examples) } : {};
  return withHeaders({ ...schema, description: doc.description, ...examples } as TSchema, headers as never) as TSchema;
}

const { groups, references } = pluginRoutes();
const plugin = new Elysia({ normalize: false, handler: { standardHostname: false } })
  .onError({ as: "global" }, ({ error, code, set }) => {
    if (error instanceof ApiError) {
      set.status = error.status;
      return error.body;
    }
    set.status = code === "NOT_FOUND" ? 404 : 500;
    return { ...errorBody(ERRORS.internalError), elysia: String(code) };
  })
  .use(
    openapi({
      path: "/docs",
      specPath: "/v1/openapi.json",
      provider: "swagger-ui",
      references: references as never,
      documentation: {
        info: todayDoc.info,
        servers: todayDoc.servers,
        tags: todayDoc.tags,
        components: { securitySchemes: todayDoc.components.securitySchemes },
      },
      swagger: {
        cdn: "/docs/assets/swagger-ui-bundle.js",
        theme: "/docs/assets/swagger-ui.css",
        validatorUrl: "none",
        deepLinking: true,
        autoDarkMode: false,
      },
    }),
  );
for (const name of ["swagger-ui-bundle.js", "swagger-ui.css"])
  plugin.get(`/docs/assets/${name}`, () => Bun.file(join(SWAGGER_UI, name)), { detail: { hide: true } });
for (const group of groups) plugin.use(group);

function request(path: string): Request {
  return new Request(`http://localhost${path}`);
}
const pluginDoc = (await (await plugin.handle(request("/v1/openapi.json"))).json()) as Json;

// ---- the checks ----

function operations(doc: Json): { path: string; method: string; op: Json }[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ path, method, op: op as Json })),
  );
}
/** One line per operation (and response), of what `of` reads from it. */
function perOperation(doc: Json, of: (op: Json) => unknown): string[] {
  return operations(doc)
    .map(({ path, method, op }) => `${method} ${path}: ${JSON.stringify(of(op))}`)
    .sort();
}
const perResponse = (of: (response: Json, status: string) => unknown) => (op: Json) =>
  Object.fromEntries(
    Object.entries((op.responses ?? {}) as Json).map(([status, r]) => [status, of(r as Json, status)]),
  );

async function lint(doc: Json): Promise<string[]> {
  const { createConfig, lintFromString } = await import("@redocly/openapi-core");
  const problems = await lintFromString({
    source: JSON.stringify(doc),
    absoluteRef: "openapi.json",
    config: await createConfig({ extends: ["recommended"] }),
  });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`).sort();
}

/** Whether the document stays the same once every route has answered (Elysia adds to a route's schemas at its first request). */
async function stable(app: { handle(r: Request): Response | Promise<Response> }, doc: Json): Promise<boolean> {
  for (const { path } of operations(doc))
    await app.handle(request(`${path.replace("{page_id}", "39").replace("{id}", "39_0")}?q=albedo`));
  return JSON.stringify((await (await app.handle(request("/v1/openapi.json"))).json()) as Json) === JSON.stringify(doc);
}

/** The server's own answers to bad requests: they must not change because the document was built. */
const BAD = [
  "/v1/search?q=albedo&limit=99",
  "/v1/search?q=albedo&limit=5.0",
  "/v1/search?q=albedo&limit=5&limit=6",
  "/v1/page/abc",
  "/v1/chunk/39-0",
  "/v1/pdf/39.pdf",
  "/v1/changes?since=yesterday",
];
async function answers(app: { handle(r: Request): Response | Promise<Response> }): Promise<string[]> {
  return Promise.all(
    BAD.map(async (path) => {
      const r = await app.handle(request(path));
      return `${path} → ${r.status} ${r.headers.get("content-type")?.startsWith("application/pdf") ? "(a PDF)" : (await r.text()).slice(0, 60)}`;
    }),
  );
}

/** A header object's own description and example (what Swagger UI's header table and a client generator read), or "bare". */
function headerDocs(doc: Json, header: Json): string {
  const h = header.$ref ? doc.components.headers[header.$ref.split("/").pop()] : header;
  return typeof h.description === "string" && h.example !== undefined ? "described" : "bare";
}
const headers = (doc: Json, of: (name: string, header: Json) => string) =>
  perOperation(
    doc,
    perResponse((r) => Object.entries((r.headers ?? {}) as Json).map(([name, h]) => of(name, h as Json))),
  );
const parameters = (doc: Json, of: (p: Json) => string) => perOperation(doc, (op) => (op.parameters ?? []).map(of));

const CHECKS: [string, (doc: Json) => unknown][] = [
  [
    "operations (method, path)",
    (doc) =>
      operations(doc)
        .map((o) => `${o.method} ${o.path}`)
        .sort(),
  ],
  ["operation ids", (doc) => perOperation(doc, (op) => op.operationId)],
  ["statuses answered", (doc) => perOperation(doc, (op) => Object.keys(op.responses ?? {}))],
  [
    "response descriptions",
    (doc) =>
      perOperation(
        doc,
        perResponse((r) => r.description),
      ),
  ],
  [
    "media types",
    (doc) =>
      perOperation(
        doc,
        perResponse((r) => Object.keys(r.content ?? {})),
      ),
  ],
  ["response headers (rate limit, quota, X-Credit-Cost, ETag…)", (doc) => headers(doc, (name) => name)],
  [
    "each header's description and example on the header object",
    (doc) => headers(doc, (name, h) => `${name} ${headerDocs(doc, h)}`),
  ],
  [
    "named examples (the error answers the tests compare with the server's)",
    (doc) =>
      perOperation(
        doc,
        perResponse((r) => Object.keys(r.content?.["application/json"]?.examples ?? {})),
      ),
  ],
  ["parameters (name, in, required)", (doc) => parameters(doc, (p) => `${p.name} ${p.in} ${p.required}`)],
  [
    "each parameter's description and example on the parameter (what Swagger UI shows and fills in)",
    (doc) =>
      parameters(
        doc,
        (p) => `${p.name} ${p.description ? "described" : "-"} ${p.example !== undefined ? "example" : "-"}`,
      ),
  ],
  ["security", (doc) => perOperation(doc, (op) => op.security)],
  ["named schemas", (doc) => Object.keys(doc.components?.schemas ?? {}).sort()],
];

const rows: { check: string; todayOnly: string[]; pluginOnly: string[] }[] = [];
/** A check's result for each document, as lines: the report shows the lines only one of them has. */
function compare(check: string, todays: unknown, plugins: unknown) {
  const lines = (value: unknown) => (Array.isArray(value) ? value.map(String) : [String(value)]);
  const [a, b] = [lines(todays), lines(plugins)];
  rows.push({
    check,
    todayOnly: a.filter((line) => !b.includes(line)),
    pluginOnly: b.filter((line) => !a.includes(line)),
  });
}

const [todayLint, pluginLint] = [await lint(todayDoc), await lint(pluginDoc)];
compare("redocly's recommended rules", todayLint, pluginLint);
for (const [check, of] of CHECKS) compare(check, of(todayDoc), of(pluginDoc));
const page = await (await plugin.handle(request("/docs"))).text();
const todayPage = await (await today.handle(request("/docs"))).text();
const externals = (html: string) => [...html.matchAll(/(?:src|href)="(https?:[^"]+)"/g)].map((m) => m[1]);
compare("/docs loads nothing from another host", externals(todayPage), externals(page));
compare(
  "the server's answers to bad requests, once the document was built",
  await answers(today.routes),
  await answers(plugin),
);
compare(
  "the document, once every route has answered, is unchanged",
  await stable(createApp(engine, { pdf }), todayDoc),
  await stable(plugin, pluginDoc),
);

if (values.chromium) {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => plugin.handle(r) });
  const tab = await openChromium();
  try {
    for (const path of ["/docs", "/docs/"]) {
      await tab.navigate(`${server.url.origin}${path}`);
      const listed = await tab
        .waitFor("document.querySelectorAll('.opblock').length > 0", 10_000)
        .then(() =>
          tab.evaluate<string[]>(
            "[...document.querySelectorAll('.opblock')].map(o => o.querySelector('.opblock-summary-method').textContent.toLowerCase() + ' ' + o.querySelector('.opblock-summary-path').dataset.path)",
          ),
        )
        .catch(() => tab.evaluate<string[]>("[document.body.innerText.slice(0, 80)]"));
      compare(
        `Chromium: the operations ${path} lists`,
        operations(todayDoc)
          .map((o) => `${o.method} ${o.path}`)
          .sort(),
        listed.sort(),
      );
      compare(
        `Chromium: requests ${path} makes to another host`,
        [],
        tab.requests.filter((url) => !url.startsWith(`${server.url.origin}/`) && !url.startsWith("data:")),
      );
    }
  } finally {
    await tab.close();
    server.stop(true);
  }
}

if (values.out) {
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, "today.json"), JSON.stringify(todayDoc, null, 2));
  writeFileSync(join(values.out, "plugin.json"), JSON.stringify(pluginDoc, null, 2));
  writeFileSync(join(values.out, "lint.txt"), `today:\n${todayLint.join("\n")}\n\nplugin:\n${pluginLint.join("\n")}\n`);
}

process.stdout.write(`@elysiajs/openapi ${PLUGIN_VERSION} against today's document (src/http/openapi.ts)\n\n`);
const same = (row: (typeof rows)[number]) => row.todayOnly.length + row.pluginOnly.length === 0;
for (const row of rows) {
  process.stdout.write(`${same(row) ? "same     " : "DIFFERENT"} ${row.check}\n`);
  for (const line of row.todayOnly) process.stdout.write(`  - today:  ${line}\n`);
  for (const line of row.pluginOnly) process.stdout.write(`  + plugin: ${line}\n`);
}
process.stdout.write(`\n${rows.filter(same).length} of ${rows.length} checks the same\n`);
today.close();
