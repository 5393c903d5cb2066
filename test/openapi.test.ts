/**
 * The API's documentation, checked for real: /v1/openapi.json against a validator (Redocly's
 * recommended rules) and against the server's own answers on enwiki-2016-sample (its examples,
 * headers and media types), and /docs opened in headless Chromium with no network but our
 * server, and Try it out with a key.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Access, type PlanName, type Scope } from "../src/access";
import { createApp, serve, type RunningServer } from "../src/http";
import type { Engine } from "../src/search";
import { openChromium, type Tab } from "./chromium";
import { PdfBusyError } from "../src/pdf";
import { ERRORS } from "../src/http/errors";
import { EN_2016, engineFor, keyMade, ROOT, tempDir } from "./helpers";

// Per file: the snapshot is built from the real dump.
setDefaultTimeout(120_000);

type Json = Record<string, any>;

const DUMPS = { dumps: [EN_2016] };
/** Declared headers sent only with some answers: X-PDF-Truncated with a PDF of a page longer than a PDF holds (D182), none of the fixtures'. */
const SOMETIMES = ["X-PDF-Truncated"];
let engine: Engine;
let running: RunningServer;
let base: string;
/** A business key (100 requests a second): the tests' own. */
let key: string;
/** A free key (10 a second), to be rate-limited. */
let freeKey: string;
/** A key of scope read, which may not render a PDF (D23). */
let readKey: string;
let doc: Json;

beforeAll(async () => {
  const data = tempDir("tome-data-");
  engine = await engineFor(DUMPS);
  // Made as `bun run keys create` makes them (test/keys.test.ts runs the command), in this process.
  const keyOf = async (name: string, plan: PlanName, scope: Scope) =>
    (await keyMade(data, { name, account: name, plan, scope })).key;
  key = await keyOf("docs", "business", "full");
  freeKey = await keyOf("free", "free", "full");
  readKey = await keyOf("read", "free", "read");
  // No work share: on a loaded machine the examples' requests could use up the key's time (test/work-share.test.ts tests it).
  running = serve(createApp(engine, { access: new Access({ dataDir: data, keyMsPerSecond: 0 }) }), {
    port: 0,
    hostname: "127.0.0.1",
  });
  base = running.url.origin;
  const r = await fetch(`${base}/v1/openapi.json`);
  expect(r.status).toBe(200);
  doc = (await r.json()) as Json;
});

afterAll(async () => {
  await running?.stop();
});

function get(path: string, apiKey: string | null = key): Promise<Response> {
  return fetch(base + path, { headers: apiKey ? { "X-API-Key": apiKey } : {} });
}

async function body(path: string): Promise<Json> {
  const r = await get(path);
  if (r.status !== 200) throw new Error(`${path} → ${r.status} ${await r.text()}`);
  return (await r.json()) as Json;
}

/** Every operation of the document, with its path and method. */
function operations(): { path: string; method: string; op: Json }[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ path, method, op })),
  );
}

/** The schema a $ref names, or the schema itself. */
function resolve(schema: Json): Json {
  return schema.$ref ? doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")] : schema;
}

/** Every schema object in the document (components and inline, nested ones included), with where it is. */
function schemas(): { at: string; schema: Json }[] {
  const out: { at: string; schema: Json }[] = [];
  const walk = (schema: Json, at: string) => {
    out.push({ at, schema });
    for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v as Json, `${at}.${k}`);
    if (schema.items) walk(schema.items, `${at}[]`);
    for (const [i, s] of (schema.anyOf ?? []).entries()) walk(s, `${at}|${i}`);
  };
  for (const [name, s] of Object.entries(doc.components.schemas as Json)) walk(s as Json, name);
  for (const { path, method, op } of operations()) {
    for (const p of op.parameters ?? []) walk(p.schema, `parameter ${method} ${path} ${p.name}`);
    for (const [status, r] of Object.entries(op.responses as Json)) {
      for (const [type, media] of Object.entries((r as Json).content ?? {}))
        walk((media as Json).schema, `${method} ${path} ${status} ${type}`);
    }
  }
  return out;
}

describe("/v1/openapi.json", () => {
  test("is valid OpenAPI 3.1: Redocly's recommended rules find no error", async () => {
    expect(doc.openapi).toBe("3.1.0");
    // Imported here, not at the top: imported there, this large package made a timing-sensitive
    // test of http.test.ts (HEAD's length of a search answer) fail when both files ran together.
    const { createConfig, lintFromString } = await import("@redocly/openapi-core");
    const problems = await lintFromString({
      source: JSON.stringify(doc),
      absoluteRef: "openapi.json",
      config: await createConfig({ extends: ["recommended"] }),
    });
    const found = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(found.filter((p) => p.startsWith("error"))).toEqual([]);
    // The warning left: api.md gives the service itself no license (the content's is in the description).
    expect(found).toEqual(["warn info-license: Info object should contain `license` field. at #/info"]);
  });

  test("is the same whether or not the routes have answered before", async () => {
    // Elysia adds to a route's schemas when the route first answers.
    const pdf = { render: async () => new Uint8Array() };
    const fresh = createApp(engine, { pdf });
    const before = await (await fresh.handle(new Request("http://localhost/v1/openapi.json"))).text();
    const used = createApp(engine, { pdf });
    for (const { path } of operations())
      await used.handle(
        new Request(`http://localhost${path.replace("{page_id}", "39").replace("{id}", "39_0")}?q=albedo`),
      );
    expect(await (await used.handle(new Request("http://localhost/v1/openapi.json"))).text()).toBe(before);
  });

  test("declares a server, and every route with a unique operationId", () => {
    expect(doc.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    const ops = operations();
    expect(ops.map((o) => `${o.method} ${o.path}`).sort()).toEqual(
      [
        "/healthz",
        "/v1/changes",
        "/v1/chunk/{id}",
        "/v1/license",
        "/v1/lucky",
        "/v1/meta",
        "/v1/page/{page_id}",
        "/v1/pdf/{page_id}",
        "/v1/pdf/{page_id}.pdf",
        "/v1/search",
      ].map((p) => `get ${p}`),
    );
    expect(new Set(ops.map((o) => o.op.operationId)).size).toBe(ops.length);
  });

  test("documents every parameter with its bounds and default, and every route's answers", () => {
    const param = (path: string, name: string) => doc.paths[path].get.parameters.find((p: Json) => p.name === name);
    expect(param("/v1/search", "q")).toMatchObject({
      in: "query",
      required: true,
      schema: { type: "string", maxLength: 500 },
    });
    expect(param("/v1/search", "limit")).toMatchObject({
      required: false,
      schema: { type: "integer", minimum: 1, maximum: 50, default: 10 },
    });
    expect(param("/v1/search", "offset").schema).toMatchObject({ minimum: 0, maximum: 1_000_000, default: 0 });
    expect(param("/v1/search", "crop_length").schema).toMatchObject({ minimum: 50, maximum: 2000, default: 400 });
    expect(param("/v1/search", "highlight").schema).toMatchObject({ type: "boolean", default: true });
    expect(param("/v1/search", "show_ranking_score").schema).toMatchObject({ type: "boolean", default: false });
    expect(param("/v1/search", "page_id").schema).toMatchObject({ type: "integer" });
    expect(param("/v1/page/{page_id}", "page_id")).toMatchObject({
      in: "path",
      required: true,
      schema: { type: "integer" },
    });
    expect(param("/v1/page/{page_id}", "max_chunks").schema).toMatchObject({
      minimum: 1,
      maximum: 200_000,
      default: 10_000,
    });
    expect(param("/v1/page/{page_id}", "format").schema.default).toBe("chunks");
    expect(param("/v1/lucky", "format").schema.default).toBe("concat");
    expect(param("/v1/changes", "limit").schema).toMatchObject({ minimum: 1, maximum: 1000, default: 100 });
    expect(param("/v1/changes", "since").schema.anyOf.length).toBe(2);
    // The id's parts are D3's integers, up to 2^53 - 1: the document's pattern is the one requests are read by.
    const chunkId = new RegExp(param("/v1/chunk/{id}", "id").schema.pattern);
    const MAX_INTEGER = Number.MAX_SAFE_INTEGER;
    for (const id of ["39_0", "0039_0", `${MAX_INTEGER}_${MAX_INTEGER}`])
      expect({ id, valid: chunkId.test(id) }).toEqual({ id, valid: true });
    for (const id of ["39", "39_", "_0", "39-0", `${MAX_INTEGER + 1}_0`, `0_${MAX_INTEGER + 1}`, "9999999999999999_0"])
      expect({ id, valid: chunkId.test(id) }).toEqual({ id, valid: false });
    const keyed = ["401", "403", "413", "429", "503"];
    const answers: Record<string, string[]> = {
      "/v1/search": ["200", "304", "400", "500", ...keyed],
      "/v1/page/{page_id}": ["200", "304", "400", "404", "500", ...keyed],
      "/v1/chunk/{id}": ["200", "304", "400", "404", "500", ...keyed],
      "/v1/changes": ["200", "304", "400", "500", ...keyed],
      "/v1/lucky": ["200", "304", "400", "404", "500", ...keyed],
      "/v1/license": ["200", "304", "400", ...keyed],
      "/v1/meta": ["200", "304", "400", ...keyed],
    };
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["apiKey", "bearer"]);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", in: "header", name: "X-API-Key" });
    for (const [path, statuses] of Object.entries(answers)) {
      const op = doc.paths[path].get;
      expect(op.security).toEqual([{ apiKey: [] }, { bearer: [] }]);
      expect(Object.keys(op.responses).sort()).toEqual(statuses.sort());
      for (const s of statuses) {
        expect(op.responses[s].description.length).toBeGreaterThan(5);
        // A 304 has no body.
        expect(Object.keys(op.responses[s].content ?? {})).toEqual(s === "304" ? [] : ["application/json"]);
      }
      expect(Object.keys(resolve(op.responses["429"].content["application/json"].schema).properties).sort()).toEqual([
        "error",
        "message",
        "quota_limit",
        "quota_used",
        "retry_after",
      ]);
    }
    // /healthz needs no key, and says so; its 503 is while the snapshot served is written over in place.
    expect(doc.paths["/healthz"].get.security).toEqual([]);
    expect(Object.keys(doc.paths["/healthz"].get.responses).sort()).toEqual(["200", "400", "413", "503"]);
    expect(doc.paths["/v1/search"].get.responses["400"].description).toContain("missing q");
    const hit = resolve(
      resolve(doc.paths["/v1/search"].get.responses["200"].content["application/json"].schema).properties.hits.items,
    );
    expect(Object.keys(hit.properties).sort()).toEqual(
      [
        "_formatted",
        "_rankingScore",
        "chunk_id",
        "id",
        "license",
        "page_id",
        "rev_id",
        "section",
        "source",
        "text",
        "title",
        "url",
      ].sort(),
    );
  });

  test("the PDF is application/pdf at both addresses, its errors JSON", async () => {
    for (const path of ["/v1/pdf/{page_id}", "/v1/pdf/{page_id}.pdf"]) {
      const responses = doc.paths[path].get.responses;
      expect(Object.keys(responses).sort()).toEqual([
        "200",
        "304",
        "400",
        "401",
        "403",
        "404",
        "413",
        "429",
        "500",
        "503",
      ]);
      expect(Object.keys(responses["200"].content)).toEqual(["application/pdf"]);
      expect(responses["200"].content["application/pdf"].schema).toMatchObject({ type: "string", format: "binary" });
      for (const status of ["400", "404", "429", "500", "503"])
        expect(Object.keys(responses[status].content)).toEqual(["application/json"]);
      expect(doc.paths[path].get.parameters).toEqual([
        expect.objectContaining({
          name: "page_id",
          in: "path",
          required: true,
          schema: expect.objectContaining({ type: "integer" }),
        }),
      ]);
    }
    for (const path of ["/v1/pdf/39", "/v1/pdf/39.pdf"]) {
      const r = await get(path);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/pdf");
    }
  });

  test("headers are declared as response headers, never inside a schema, and the server sends them", async () => {
    const inSchemas = schemas().filter(({ schema }) => "headers" in schema);
    expect(inSchemas.map((s) => s.at)).toEqual([]);
    const limits = [
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
      "X-Quota-Limit",
      "X-Quota-Remaining",
      "X-Quota-Reset",
    ];
    for (const { path, op } of operations()) {
      for (const [status, r] of Object.entries(op.responses as Json)) {
        const names = Object.keys((r as Json).headers);
        expect({ path, status, requestId: names.includes("X-Request-Id") }).toEqual({ path, status, requestId: true });
        // Answered before the key is admitted: its refusals, and a request that cannot be read (a route without
        // parameters has no 400 of its own); but a read key's 403 for a PDF is told its limits (D23).
        const refusal = ["401", "413"].includes(status) || (status === "403" && !path.startsWith("/v1/pdf/"));
        const beforeKey = refusal || (status === "400" && !op.parameters.length);
        const keyed = op.security.length > 0 && !beforeKey;
        expect({ path, status, limits: limits.filter((h) => names.includes(h)) }).toEqual({
          path,
          status,
          limits: keyed ? limits : [],
        });
      }
      if (op.security.length) expect(Object.keys(op.responses["429"].headers)).toContain("Retry-After");
    }
    const pdf = doc.paths["/v1/pdf/{page_id}"].get.responses["200"].headers;
    expect(Object.keys(pdf)).toEqual(expect.arrayContaining(["Content-Disposition", "X-Credit-Cost", ...limits]));
    // What the document promises, the server sends.
    for (const [path, documented] of [
      ["/v1/pdf/39", pdf],
      ["/v1/chunk/39_0", doc.paths["/v1/chunk/{id}"].get.responses["200"].headers],
    ] as const) {
      const sent = (await get(path)).headers;
      for (const name of Object.keys(documented).filter((h) => !SOMETIMES.includes(h)))
        expect({ path, name, sent: sent.has(name) }).toEqual({ path, name, sent: true });
    }
    const disposition = doc.components.headers[pdf["Content-Disposition"].$ref.replace("#/components/headers/", "")];
    expect((await get("/v1/pdf/39")).headers.get("content-disposition")).toBe(disposition.example);
  });

  test("speaks to users: no internal references (decision ids, api.md sections), no stray HTML in the Markdown", () => {
    const strings: string[] = [];
    const descriptions: string[] = [];
    const walk = (v: unknown, key?: string) => {
      if (typeof v === "string") (key === "description" ? descriptions : strings).push(v);
      else if (v && typeof v === "object") for (const [k, w] of Object.entries(v)) walk(w, k);
    };
    walk(doc);
    expect(
      [...strings, ...descriptions].filter((s) => /\bD\d{1,2}\b|api\.md|decisions\.md|\bsection \d/.test(s)),
    ).toEqual([]);
    // Descriptions are CommonMark: a tag outside a code span would vanish or format the text.
    expect(descriptions.filter((s) => /<[a-z]/i.test(s.replace(/`[^`]*`/g, "")))).toEqual([]);
  });

  test("every response field has an example: no bare `string` placeholders", () => {
    const leaves = schemas().filter(({ at, schema }) => {
      const leaf =
        ["string", "integer", "boolean", "number"].includes(schema.type) ||
        (schema.type === "array" && !schema.items?.$ref && !schema.items?.properties);
      // Parameters carry theirs beside the schema; an array's example covers its items; a
      // union's members are enum values; a PDF has no text to show.
      return (
        leaf &&
        !at.startsWith("parameter ") &&
        !at.includes("|") &&
        !at.endsWith("[]") &&
        schema.const === undefined &&
        schema.format !== "binary"
      );
    });
    expect(leaves.length).toBeGreaterThan(50);
    expect(leaves.filter(({ schema }) => schema.examples === undefined).map((l) => l.at)).toEqual([]);
  });

  test("the examples are real: what the server answers on enwiki-2016-sample", async () => {
    const [chunk, page, hits, search, lucky, changes, license, meta] = await Promise.all([
      body("/v1/chunk/39_0"),
      body("/v1/page/39"),
      body("/v1/search?q=albedo&page_id=39&limit=50"),
      body("/v1/search?q=albedo"),
      body("/v1/lucky?q=albedo"),
      body(
        `/v1/changes?since=${doc.paths["/v1/changes"].get.parameters.find((p: Json) => p.name === "since").example}`,
      ),
      body("/v1/license"),
      body("/v1/meta"),
    ]);
    const hit = hits.hits.find((h: Json) => h.id === "39_0");
    const compared: string[] = [];
    /** Each example in the schema equals the answer's value there (a long text: its start). */
    const check = (schema: Json, value: unknown, at: string) => {
      schema = resolve(schema);
      if (
        schema.examples !== undefined &&
        value !== undefined &&
        !VARYING.has(at.split(".").pop()!) &&
        !OTHER_NOTICE.test(at)
      ) {
        const example = schema.examples[0];
        if (typeof example === "string" && typeof value === "string" && at.endsWith(".text") && example.length > 100) {
          expect({ at, starts: value.startsWith(example) }).toEqual({ at, starts: true });
        } else expect({ at, value }).toEqual({ at, value: example });
        compared.push(at);
      }
      if (schema.properties && value && typeof value === "object") {
        for (const [k, s] of Object.entries(schema.properties)) check(s as Json, (value as Json)[k], `${at}.${k}`);
      }
      if (schema.items && Array.isArray(value) && schema.examples === undefined)
        check(schema.items, value[0], `${at}[0]`);
    };
    const component = (name: string) => doc.components.schemas[name];
    check(component("Chunk"), chunk, "chunk");
    check(component("PageResponse"), page, "page");
    check(component("SearchHit"), hit, "hit");
    check(component("SearchResponse"), { ...search, hits: [hit] }, "search");
    check(component("LuckyResponse"), { ...lucky, text: lucky.chunks.results[0].text }, "lucky");
    check(component("ChangesResponse"), changes, "changes");
    check(component("LicenseResponse"), license, "license");
    check(component("MetaResponse"), meta, "meta");
    // The varying ones: of the right form.
    expect(meta.search_engine_version.commitSha).toMatch(/^[0-9a-f]{64}$/);
    expect(component("MetaResponse").properties.search_engine_version.properties.commitSha.examples[0]).toMatch(
      /^[0-9a-f]{64}$/,
    );
    expect(compared.length).toBeGreaterThan(80);
    expect(compared).toEqual(
      expect.arrayContaining([
        "chunk.title",
        "chunk.text",
        "chunk.source.permalink",
        "hit._formatted.text",
        "license.attribution_requirements.credit",
        "meta.dataset.indexed_chunks",
      ]),
    );
    // Parameters: the example of each is a value the server accepts.
    for (const { path, op } of operations()) {
      for (const p of op.parameters.filter((p: Json) => p.example !== undefined)) {
        const url =
          p.in === "path"
            ? path.replace(`{${p.name}}`, String(p.example))
            : `${path.replace("{page_id}", "39").replace("{id}", "39_0")}?${p.name}=${encodeURIComponent(p.example)}`;
        if (url.includes("{")) continue;
        expect({ url, status: (await get(url)).status }).toEqual({ url, status: 200 });
      }
    }
  });

  test("the error examples are the server's own answers", async () => {
    // How to get each documented example from the server: [key, path], by operationId, status and name.
    const free = () => freeKey;
    const requests: Record<string, [(() => string) | string | null, string]> = {
      "search 400 missing q": [key, "/v1/search"],
      "search 400 invalid_parameter": [key, "/v1/search?q=albedo&limit=99"],
      "getPage 400 page_id must be an integer": [key, "/v1/page/abc"],
      "getPage 400 invalid_parameter": [key, "/v1/page/39?format=html"],
      "getPage 404 not found": [key, "/v1/page/1"],
      "getChunk 400 invalid_parameter": [key, "/v1/chunk/39-0"],
      "getChunk 404 not found": [key, "/v1/chunk/39_99"],
      "listChanges 400 since must be unix seconds or RFC3339": [key, "/v1/changes?since=yesterday"],
      "listChanges 400 invalid_parameter": [key, "/v1/changes?limit=0"],
      "lucky 400 missing q": [key, "/v1/lucky"],
      "lucky 400 invalid_parameter": [key, "/v1/lucky?q=a&format=x"],
      "lucky 404 no results found": [key, "/v1/lucky?q=qqqqzzzzxx"],
      "getPagePdf 400 page_id must be an integer": [key, "/v1/pdf/abc"],
      "getPagePdf 404 page not found": [key, "/v1/pdf/1"],
      "getPagePdfFile 400 page_id must be an integer": [key, "/v1/pdf/abc"],
      "getPagePdfFile 404 page not found": [key, "/v1/pdf/1.pdf"],
      "getPagePdf 403 read scope": [readKey, "/v1/pdf/39"],
      "getPagePdfFile 403 read scope": [readKey, "/v1/pdf/39.pdf"],
      "* 401 unauthorized": [null, "/v1/search?q=albedo"],
      "* 403 forbidden": [`wk_${"F".repeat(32)}`, "/v1/search?q=albedo"],
      "* 429 rate_limit_exceeded": [free, "/v1/chunk/39_0"],
    };
    const pdfFails = createApp(engine, {
      pdf: { render: () => Promise.reject(new Error("no fonts")) },
      logError: () => {},
    });
    const pdfBusy = createApp(engine, { pdf: { render: () => Promise.reject(new PdfBusyError(4)) } });
    const faulty = faultingApp();
    // A search pool with no room at all: every search is refused (D104).
    const searchBusy = createApp(engine, { searchWorkers: 1, searchQueue: 0 });
    let checked = 0;
    for (const { path, op } of operations()) {
      for (const [status, r] of Object.entries(op.responses as Json)) {
        for (const [name, { value }] of Object.entries(
          ((r as Json).content?.["application/json"]?.examples ?? {}) as Record<string, { value: Json }>,
        )) {
          const id = `${op.operationId} ${status} ${name}`;
          let answer: Response;
          if (status === "500" && name === ERRORS.internalError.code) {
            const at = path.replace("{page_id}", "39").replace("{id}", "39_0");
            const q = op.operationId === "search" || op.operationId === "lucky" ? "?q=albedo" : "";
            answer = await faulty.handle(new Request(`http://localhost${at}${q}`));
          } else if (status === "500") answer = await pdfFails.handle(new Request("http://localhost/v1/pdf/39"));
          else if (status === "413") {
            const long = { headers: { "content-length": "100000" } };
            answer = await pdfFails.handle(new Request(`http://localhost${path.replace("{page_id}", "39")}`, long));
          } else if (status === "503" && (op.operationId === "search" || op.operationId === "lucky")) {
            answer = await searchBusy.handle(new Request(`http://localhost/v1/${op.operationId}?q=albedo`));
            expect(answer.headers.get("retry-after")).toBe("1");
          } else if (status === "503") {
            answer = await pdfBusy.handle(new Request("http://localhost/v1/pdf/39"));
            expect(answer.headers.get("retry-after")).toBe("4");
          } else if (name === "quota_exceeded")
            continue; // needs a spent month: its shape is checked below
          else {
            const how = requests[id] ?? requests[`* ${status} ${name}`];
            if (!how) throw new Error(`no request in this test gives the example ${id}`);
            const [apiKey, path] = how;
            answer = await (typeof apiKey === "function" ? rateLimited(apiKey(), path) : get(path, apiKey));
          }
          expect({ id, status: answer.status, body: await answer.json() }).toEqual({
            id,
            status: Number(status),
            body: value,
          });
          checked++;
        }
      }
    }
    searchBusy.close();
    expect(checked).toBeGreaterThan(30);
    const quota =
      doc.paths["/v1/search"].get.responses["429"].content["application/json"].examples.quota_exceeded.value;
    expect(Object.keys(quota).sort()).toEqual(
      Object.keys(
        resolve(doc.paths["/v1/search"].get.responses["429"].content["application/json"].schema).properties,
      ).sort(),
    );
    expect(quota.message).toMatch(
      /^The monthly quota lacks the 10 credits this request costs: \d+ of \d+ remain until \d{4}-\d\d-01T00:00:00\.000Z\.$/,
    );
  });

  test("every answer is one its operation declares: its status, a body its schema takes whole, and its headers (D29)", async () => {
    /**
     * An answer, and who got it: a key (sent its limits), no key or a refused one, or a client of an app without
     * keys (its answers carry no limits, and its errors no X-Snapshot, as a refusal's).
     */
    interface Answer {
      at: string;
      status: number;
      headers: Headers;
      body: unknown;
      to: "key" | "refused" | "app without keys";
    }
    const answers: Answer[] = [];
    const record = async (at: string, answer: Response, to: Answer["to"]) => {
      const text = await answer.text();
      const json = answer.headers.get("content-type")?.startsWith("application/json");
      answers.push({ at, status: answer.status, headers: answer.headers, body: json ? JSON.parse(text) : text, to });
      return answer;
    };
    const emoji = encodeURIComponent("😀");
    const keyedPaths = [
      "/v1/search?q=albedo",
      `/v1/search?q=albedo&highlight=false&show_ranking_score=true&crop_length=50&limit=50`,
      "/v1/search?q=albedo&crop_length=2000&offset=1000000",
      `/v1/search?q=${emoji}`,
      "/v1/search?q=albedo&page_id=39&limit=1",
      "/v1/page/39?format=concat&max_chunks=1",
      "/v1/page/39?offset=100000&max_chunks=200000",
      "/v1/chunk/39_0",
      "/v1/changes?limit=1000",
      "/v1/changes?since=99999999999&offset=1000000",
      "/v1/lucky?q=albedo&format=chunks",
      "/v1/lucky?q=albedo",
      "/v1/license",
      "/v1/meta",
      "/v1/pdf/39.pdf",
      "/v1/search",
      `/v1/search?q=${"a".repeat(501)}`,
      "/v1/search?q=albedo&limit=0",
      "/v1/search?q=albedo&crop_length=2001",
      `/v1/search?q=albedo&page_id=${emoji}`,
      `/v1/page/${emoji}`,
      "/v1/page/39?max_chunks=200001",
      "/v1/page/1",
      `/v1/chunk/${emoji}`,
      "/v1/chunk/39_99",
      `/v1/changes?since=${emoji}`,
      "/v1/changes?limit=1001",
      `/v1/lucky?q=${emoji}`,
      "/v1/lucky?q=albedo&format=html",
      "/v1/pdf/abc",
      "/v1/pdf/1.pdf",
    ];
    for (const path of keyedPaths) await record(path, await get(path), "key");
    await record("/healthz", await get("/healthz", null), "refused");
    await record("/v1/search?q=albedo (no key)", await get("/v1/search?q=albedo", null), "refused");
    await record("/v1/meta (unknown key)", await get("/v1/meta", `wk_${"F".repeat(32)}`), "refused");
    await record("/v1/chunk/39_0 (over the rate)", await rateLimited(freeKey, "/v1/chunk/39_0"), "key");
    await record("/v1/pdf/39 (read key)", await get("/v1/pdf/39", readKey), "key");
    for (const path of ["/v1/chunk/39_0", "/v1/pdf/39"]) {
      const etag = (await get(path)).headers.get("etag")!;
      await record(
        `${path} (its ETag)`,
        await fetch(base + path, { headers: { "X-API-Key": key, "If-None-Match": etag } }),
        "key",
      );
    }
    const star = { "X-API-Key": key, "If-None-Match": "*" };
    // Lucky's too: it has a page for albedo (D34, D148).
    for (const path of ["/v1/search?q=albedo", "/v1/lucky?q=albedo"])
      await record(`${path} (*)`, await fetch(base + path, { headers: star }), "key");
    // The rarer answers, from apps without keys.
    const inProcess = async (at: string, app: { handle(r: Request): Response | Promise<Response> }) =>
      record(at, await app.handle(new Request(`http://localhost${at}`)), "app without keys");
    const pdfFails = createApp(engine, {
      pdf: { render: () => Promise.reject(new Error("no fonts")) },
      logError: () => {},
    });
    await inProcess("/v1/pdf/39", pdfFails);
    await inProcess(
      "/v1/pdf/39.pdf",
      createApp(engine, { pdf: { render: () => Promise.reject(new PdfBusyError(4)) } }),
    );
    // A fault of the server's met by a request that reads the snapshot (D1, D167: damage in it is one).
    const faulty = faultingApp();
    for (const path of [
      "/v1/search?q=albedo",
      "/v1/lucky?q=albedo",
      "/v1/page/39",
      "/v1/chunk/39_0",
      "/v1/changes",
      "/v1/pdf/39",
    ])
      await inProcess(path, faulty);
    const searchBusy = createApp(engine, { searchWorkers: 1, searchQueue: 0 });
    await inProcess("/v1/search?q=albedo", searchBusy);
    await inProcess("/v1/lucky?q=albedo", searchBusy);
    searchBusy.close();
    // While the file served is written over in place (D56).
    const suspended = createApp(engine, { pdf: { render: async () => new Uint8Array() } });
    suspended.suspend("The snapshot is being replaced; retry in a few seconds.");
    for (const path of ["/healthz", "/v1/page/39", "/v1/license"]) await inProcess(path, suspended);
    // Requests Tome cannot read (D28): a target holding a fragment, a body declared over 64 KiB.
    const unread = createApp(engine, { pdf: { render: async () => new Uint8Array() } });
    for (const path of ["/healthz", "/v1/meta", "/v1/search?q=albedo"]) {
      await record(path, await unread.handle(new Request(`http://localhost${path}#x`)), "app without keys");
      const long = { headers: { "content-length": "100000" } };
      await record(path, await unread.handle(new Request(`http://localhost${path}`, long)), "app without keys");
    }

    const ops = operations().map(({ path, op }) => ({
      op,
      path,
      pattern: new RegExp(`^${path.replace(/\./g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`),
    }));
    const copy = structuredClone(doc);
    const found: string[] = [];
    // Sent with any HTTP answer, and not a response header OpenAPI describes (Content-Type is the media type).
    const transport = new Set(["content-type", "content-length", "date", "connection"]);
    for (const [i, a] of answers.entries()) {
      const path = a.at.split(/[? ]/)[0]!;
      // The .pdf address is the more specific of the two that match it.
      const { op, path: documented } = ops.filter((o) => o.pattern.test(path)).pop()!;
      const response = op.responses[String(a.status)];
      if (!response) {
        found.push(`${a.at}: ${a.status} is not declared`);
        continue;
      }
      const declared = Object.keys(response.headers).map((h) => h.toLowerCase());
      for (const [name] of a.headers)
        if (!transport.has(name) && !declared.includes(name))
          found.push(`${a.at} ${a.status}: ${name} is sent, not declared`);
      // The limits go to a key's answers only; X-Snapshot to no error but to a key the rate limit let through (D2).
      const unadmitted = a.to === "app without keys" || (a.body as Json).error === ERRORS.rateLimitExceeded.code;
      for (const name of Object.keys(response.headers)) {
        if (a.to !== "key" && /^X-(RateLimit|Quota)-/.test(name)) continue;
        if (unadmitted && a.status >= 400 && name === "X-Snapshot") continue;
        if (SOMETIMES.includes(name)) continue;
        if (!a.headers.has(name)) found.push(`${a.at} ${a.status}: ${name} is declared, not sent`);
      }
      const media = Object.keys(response.content ?? {});
      const type = a.headers.get("content-type");
      if (media.length === 0 ? type !== null || a.body !== "" : !type?.startsWith(media[0]!))
        found.push(`${a.at} ${a.status}: ${type} is sent, ${media.join() || "no body"} declared`);
      if (media[0] === "application/json") {
        const content = copy.paths[documented].get.responses[String(a.status)].content["application/json"];
        content.examples = { ...content.examples, [`answer ${i}`]: { value: a.body } };
      }
      // Each header's value, as an example of its schema (whole numbers read as such).
      for (const [name, ref] of Object.entries(response.headers as Record<string, Json>)) {
        const value = a.headers.get(name);
        const schema = copy.components.headers[ref.$ref.split("/").pop()].schema;
        if (value !== null) schema.examples = [...(schema.examples ?? []), /^\d+$/.test(value) ? Number(value) : value];
      }
    }
    const { createConfig, lintFromString } = await import("@redocly/openapi-core");
    const problems = await lintFromString({
      source: JSON.stringify(copy),
      absoluteRef: "openapi.json",
      config: await createConfig({
        rules: {
          "no-invalid-media-type-examples": { severity: "error", allowAdditionalProperties: false },
          "no-invalid-schema-examples": { severity: "error", allowAdditionalProperties: false },
        },
      }),
    });
    found.push(...problems.map((p) => `${p.location[0]?.pointer}: ${p.message}`));
    expect(found).toEqual([]);
    expect(answers.length).toBeGreaterThan(40);
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200, 304, 400, 401, 403, 404, 413, 429, 500, 503]));
  });
});

/** An app whose every read of the snapshot fails (as a damaged one's does, D167): its routes answer D1's 500. */
function faultingApp() {
  const broken = Object.create(engine) as Engine;
  const fault = () => {
    throw new Error("a read of the snapshot failed");
  };
  Object.assign(broken, { search: fault, page: fault, changes: fault, lucky: fault });
  return createApp(broken, { logError: () => {} });
}

/**
 * The 429 a burst of requests past a free key's 10 a second gets. Windows are Unix seconds (D19): a second's end
 * may split a burst (15 at once got no 429 in a CI run on a loaded machine), so it holds more than three seconds' worth.
 */
async function rateLimited(apiKey: string, path: string): Promise<Response> {
  const answers = await Promise.all(Array.from({ length: 31 }, () => get(path, apiKey)));
  const refused = answers.find((a) => a.status === 429);
  if (!refused) throw new Error("31 requests at once were not rate-limited");
  return refused;
}

// Values that differ between requests or builds (checked for their form instead).
const VARYING = new Set([
  "processingTimeMs",
  "search_time_ms",
  "commitSha",
  "commitDate",
  "created_at",
  "snapshot",
  "loaded_at",
]);
// The attribution's example is one page's notice; lists and the dataset have their own wording.
const OTHER_NOTICE = /^(search|changes|meta)\.attribution\.attribution_notice$/;

describe("/docs", () => {
  // One Chromium for the tests that open /docs (each navigates afresh, which loads the page anew): opened when first
  // asked for.
  let opened: Promise<Tab> | undefined;
  const docsTab = () => (opened ??= openChromium());
  afterAll(async () => {
    await (await opened)?.close();
  });

  test("needs no key: the page, the UI's files and the document", async () => {
    for (const path of ["/docs", "/docs/"]) {
      const r = await get(path, null);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await r.text();
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      expect(assets.length).toBe(3);
      for (const asset of assets) {
        expect(asset.startsWith("/docs/assets/")).toBe(true);
        expect({ asset, status: (await get(asset, null)).status }).toEqual({ asset, status: 200 });
      }
      expect(html).toContain('"/v1/openapi.json"');
    }
    expect((await get("/v1/openapi.json", null)).status).toBe(200);
    expect((await get("/docs/assets/package.json", null)).status).toBe(404);
  });

  test("still answers while the snapshot served may not be read (D84, D165): the page, its files and the document; a path that is no route its 404 (D169); the routes and /healthz get 503", async () => {
    const app = createApp(engine, { pdf: { render: async () => new Uint8Array() } });
    const status = async (path: string, method = "GET") =>
      (await app.handle(new Request(`http://localhost${path}`, { method }))).status;
    const document = await (await app.handle(new Request(`http://localhost/v1/openapi.json`))).text();
    const answer = async (path: string) => {
      const r = await app.handle(new Request(`http://localhost${path}`));
      return { path, status: r.status, body: await r.text() };
    };
    // Paths that are no route, told from the path alone (D169): the router's 404, as before; they were 503.
    const noRoute = ["/nope", "/favicon.ico", "/docsx", "/healthz/x"];
    const unrouted = await Promise.all(noRoute.map(answer));
    expect(unrouted.map((a) => a.status)).toEqual([404, 404, 404, 404]);
    app.suspend("The snapshot is being replaced; retry in a few seconds.");
    expect(await Promise.all(noRoute.map(answer))).toEqual(unrouted);
    const open = ["/v1/openapi.json", "/v1/openapi.json/", "/docs", "/docs/", "/docs/assets/swagger-ui.css"];
    for (const path of open)
      for (const method of ["GET", "HEAD"])
        expect({ path, method, status: await status(path, method) }).toEqual({ path, method, status: 200 });
    expect(await (await app.handle(new Request(`http://localhost/v1/openapi.json`))).text()).toBe(document);
    for (const path of ["/healthz", "/v1/meta", "/v1/openapi.jsonx", "/v1/nope"])
      expect({ path, status: await status(path) }).toEqual({ path, status: 503 });
    app.close();
  });

  test("the UI's script is sent gzipped to a client that takes it (a third of its size), as it is to one that does not", async () => {
    const path = "/docs/assets/swagger-ui-bundle.js";
    const file = readFileSync(join(ROOT, "node_modules/swagger-ui-dist/swagger-ui-bundle.js"));
    const plain = await fetch(base + path, { headers: { "accept-encoding": "identity" } });
    expect([plain.headers.get("content-encoding"), plain.headers.get("vary")]).toEqual([null, "Accept-Encoding"]);
    expect(Buffer.from(await plain.arrayBuffer()).equals(file)).toBe(true);
    const zipped = await fetch(base + path, { headers: { "accept-encoding": "br, gzip;q=0.8" }, decompress: false });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    const wire = new Uint8Array(await zipped.arrayBuffer());
    expect(wire.byteLength).toBeLessThan(file.byteLength / 2);
    expect(Buffer.from(Bun.gunzipSync(wire)).equals(file)).toBe(true);
    // gzip;q=0 refuses it.
    const refused = await fetch(base + path, { headers: { "accept-encoding": "gzip;q=0, deflate" } });
    expect(refused.headers.get("content-encoding")).toBeNull();
  });

  test("the OpenAPI document is sent gzipped to a client that takes it, the same bytes each time (it is served without a key: D25)", async () => {
    const path = "/v1/openapi.json";
    const plain = await fetch(base + path, { headers: { "accept-encoding": "identity" } });
    expect([plain.headers.get("content-encoding"), plain.headers.get("vary")]).toEqual([null, "Accept-Encoding"]);
    const bytes = Buffer.from(await plain.arrayBuffer());
    expect(JSON.parse(bytes.toString()).openapi).toBe("3.1.0");
    for (let i = 0; i < 2; i++) {
      const zipped = await fetch(base + path, { headers: { "accept-encoding": "gzip, deflate" }, decompress: false });
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      const wire = new Uint8Array(await zipped.arrayBuffer());
      expect(wire.byteLength).toBeLessThan(bytes.byteLength / 4);
      expect(Buffer.from(Bun.gunzipSync(wire)).equals(bytes)).toBe(true);
    }
  });

  test("renders every operation and the examples in headless Chromium, from our server alone", async () => {
    const tab = await docsTab();
    const documented = operations()
      .map((o) => `${o.method.toUpperCase()} ${o.path}`)
      .sort();
    for (const path of ["/docs", "/docs/"]) {
      // The anchor opens /v1/chunk/{id}, whose example answer is page 39's first chunk.
      await tab.navigate(`${base}${path}#/Pages/getChunk`);
      await tab.waitFor("document.querySelectorAll('.opblock').length > 0");
      const shown = await tab.evaluate<string[]>(
        "[...document.querySelectorAll('.opblock')].map(o => o.querySelector('.opblock-summary-method').textContent + ' ' + o.querySelector('.opblock-summary-path').dataset.path)",
      );
      expect(shown.sort()).toEqual(documented);
      await tab.waitFor(
        "document.querySelector('#operations-Pages-getChunk .responses-wrapper')?.innerText.includes('Albedo or reflection coefficient')",
      );
      expect(tab.requests.filter((url) => !url.startsWith(`${base}/`) && !url.startsWith("data:"))).toEqual([]);
      expect(tab.requests).toContain(`${base}/v1/openapi.json`);
    }
    // To look at it: TOME_DOCS_SCREENSHOT=/tmp/docs.png bun test test/openapi.test.ts
    if (process.env.TOME_DOCS_SCREENSHOT) await tab.screenshot(process.env.TOME_DOCS_SCREENSHOT);
  });

  test("Try it out: with a key given to Authorize, the page calls the API and shows its answer", async () => {
    const tab = await docsTab();
    const op = "#operations-Pages-getChunk";
    /** Types into a React-controlled input, as a person would: its value, then the input event. */
    const type = (selector: string, value: string) =>
      tab.evaluate(
        `(() => { const el = document.querySelector(${JSON.stringify(selector)}); Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(el, ${JSON.stringify(value)}); el.dispatchEvent(new Event("input", { bubbles: true })); return true; })()`,
      );
    const click = (selector: string) =>
      tab.evaluate(`(document.querySelector(${JSON.stringify(selector)}).click(), true)`);
    await tab.navigate(`${base}/docs#/Pages/getChunk`);
    await tab.waitFor(`document.querySelector('${op} .try-out__btn') !== null`);
    // Without a key: the page's call is refused, as any other client's.
    await click(`${op} .try-out__btn`);
    await tab.waitFor(`document.querySelector('${op} .execute') !== null`);
    // The id is filled in with the document's example.
    expect(await tab.evaluate<string>(`document.querySelector('${op} input[placeholder="id"]').value`)).toBe("39_0");
    await click(`${op} .execute`);
    await tab.waitFor(
      `document.querySelector('${op} .live-responses-table tbody .response-col_status')?.textContent.trim() === "401"`,
    );
    // Authorize with the key (the X-API-Key scheme), then call again.
    await click(".auth-wrapper .authorize");
    await tab.waitFor("document.querySelector('#api_key_value') !== null");
    await type("#api_key_value", key);
    await click(".auth-container .auth-btn-wrapper .authorize");
    await tab.waitFor(
      "[...document.querySelectorAll('.auth-container button')].some((b) => b.textContent === 'Logout')",
    );
    await click(".auth-btn-wrapper .btn-done");
    await click(`${op} .execute`);
    await tab.waitFor(
      `document.querySelector('${op} .live-responses-table tbody .response-col_status')?.textContent.trim() === "200"`,
    );
    const shown = await tab.evaluate<string>(`document.querySelector('${op} .live-responses-table').innerText`);
    expect(shown).toContain("Albedo or reflection coefficient");
    expect(shown).toContain("x-ratelimit-remaining");
    expect(tab.requests.filter((url) => url === `${base}/v1/chunk/39_0`).length).toBe(2);
  });
});
