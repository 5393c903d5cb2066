/**
 * Contract tests: the real server (`bun run start`) on a snapshot of the shared English dumps
 * (enwiki-2016-sample + enwik8-head), checked over HTTP against api.md and docs/decisions/.
 * Expected values come from the snapshot itself, read independently of the server.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { lockDataFolder } from "../src/access/server-lock";
import { articleUrl, createApp, LICENSE } from "../src/http";
import { type ApiError, INTERNAL_ERROR } from "../src/http/errors";
import { readQuery } from "../src/http/params";
import { readSince } from "../src/http/routes/changes";
import { PageQuery, SearchQuery } from "../src/http/schemas";
import { type Engine, openUnguarded } from "../src/search";
import { openSnapshot, type Snapshot, type SnapshotPage } from "../src/snapshot";
import {
  dump,
  EN_2006,
  EN_2016,
  engineFor,
  ROOT,
  runToExit,
  type ServerProcess,
  snapshotFor,
  START,
  startServer,
  tempDir,
  wikiOf,
  startUnsearched,
} from "./helpers";

// Per file (bun applies it to the current file only): these tests build snapshots from the real dumps.
setDefaultTimeout(120_000);

const DUMPS = { dumps: [EN_2016, EN_2006] };

/**
 * startServer with no search threads (TOME_SEARCH_WORKERS=0, D101: searches on the request thread), for the servers
 * here asked for no search, lucky or MCP search: each search thread costs a server's start about 1.2 CPU-s (it loads
 * the engine and opens the snapshot). The file's shared server and SIGTERM's, searched, keep their threads.
 */
const MAX = Number.MAX_SAFE_INTEGER;

let server: ServerProcess;
let snap: Snapshot;
let engine: Engine;
let base: string;
let key: string;

/** fetch with the server's key. */
function api(path: string, init: RequestInit = {}, url = base, apiKey = key): Promise<Response> {
  return fetch(url + path, { ...init, headers: { "X-API-Key": apiKey, ...(init.headers as Record<string, string>) } });
}

beforeAll(async () => {
  const path = await snapshotFor(DUMPS);
  [snap, engine] = await Promise.all([openSnapshot(path), engineFor(DUMPS)]);
  server = await startServer({ TOME_SNAPSHOT: path });
  base = server.url;
  key = server.key!;
});

afterAll(async () => {
  await server?.stop();
});

type Json = Record<string, any>;

async function get(path: string, init?: RequestInit): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await api(path, init);
  const text = await res.text();
  let body: Json = {};
  if (text) body = JSON.parse(text);
  return { status: res.status, body, headers: res.headers };
}

async function ok(path: string): Promise<Json> {
  const r = await get(path);
  if (r.status !== 200) throw new Error(`${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A D1 error body with exactly this status and code. */
async function fails(path: string, status: number, code: string): Promise<Json> {
  const r = await get(path);
  expect({ path, status: r.status, error: r.body.error }).toEqual({ path, status, error: code });
  expect(typeof r.body.message).toBe("string");
  expect(r.body.message.length).toBeGreaterThan(0);
  const keys = Object.keys(r.body).sort();
  expect(keys.filter((k) => !["details", "error", "message"].includes(k))).toEqual([]);
  if (code === "invalid_parameter") {
    expect(Object.keys(r.body.details).sort()).toEqual(["constraint", "parameter", "value"]);
  }
  return r.body;
}

const page = (id: number) => snap.pages.list().find((p) => p.pageId === id)!;
const isInt = (v: unknown) => typeof v === "number" && Number.isInteger(v);
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const sectionOf = (p: SnapshotPage, i: number) => p.sections[p.chunks[i]!.section]?.heading ?? "";

function expectSource(source: Json, p: SnapshotPage) {
  expect(source).toEqual({
    project: "en.wikipedia.org",
    page_id: p.pageId,
    revision_id: p.revId,
    source_url: articleUrl("en.wikipedia.org", p.title),
    permalink: `https://en.wikipedia.org/w/index.php?curid=${p.pageId}&oldid=${p.revId}`,
  });
}

const SHORT_LICENSE = { name: LICENSE.name, url: LICENSE.url };

function expectAttribution(a: Json) {
  expect(Object.keys(a).sort()).toEqual([
    "attribution_notice",
    "license",
    "modifications",
    "modified",
    "wikimedia_terms",
  ]);
  expect(a.license).toEqual({ ...LICENSE });
  expect(a.modified).toBe(true);
  expect(a.modifications.length).toBeGreaterThan(2);
  for (const m of a.modifications) expect(typeof m).toBe("string");
  expect(a.attribution_notice).toContain("CC BY-SA 4.0");
  expect(a.wikimedia_terms).toBe("https://foundation.wikimedia.org/wiki/Terms_of_Use");
}

function expectHit(h: Json) {
  expect(Object.keys(h).sort()).toEqual(
    [
      "_formatted",
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
  const p = page(h.page_id);
  expect(isInt(h.page_id) && isInt(h.rev_id) && isInt(h.chunk_id)).toBe(true);
  expect(h.id).toBe(`${p.pageId}_${h.chunk_id}`);
  expect(h.rev_id).toBe(p.revId);
  expect(h.title).toBe(p.title);
  expect(h.section).toBe(sectionOf(p, h.chunk_id));
  // D9: text is the whole chunk.
  expect(h.text).toBe(p.chunks[h.chunk_id]!.text);
  expect(h.url).toBe(articleUrl("en.wikipedia.org", p.title));
  expectSource(h.source, p);
  expect(h.license).toEqual(SHORT_LICENSE);
  expect(Object.keys(h._formatted).sort()).toEqual(["text", "title"]);
}

function expectPage(pg: Json, p: SnapshotPage) {
  expect(pg).toEqual({
    id: String(p.pageId),
    page_id: p.pageId,
    rev_id: p.revId,
    title: p.title,
    url: articleUrl("en.wikipedia.org", p.title),
    timestamp: p.timestamp,
    ts_unix: p.tsUnix,
    source: pg.source,
    license: SHORT_LICENSE,
  });
  expect(pg.timestamp).toMatch(ISO_UTC);
  expect(Date.parse(pg.timestamp) / 1000).toBe(pg.ts_unix);
  expectSource(pg.source, p);
}

const longest = () => snap.pages.list().reduce((a, b) => (b.chunks.length > a.chunks.length ? b : a));

describe("D22: every response", () => {
  test("JSON with charset, CORS and a request id, on success and on every kind of error", async () => {
    for (const path of ["/healthz", "/v1/meta", "/v1/search", "/v1/page/abc", "/nope", "/v1/chunk/1_99999"]) {
      const r = await api(path);
      expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      expect(r.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      await r.text();
    }
    const ids = await Promise.all([1, 2, 3].map(async () => (await api("/healthz")).headers.get("x-request-id")));
    expect(new Set(ids).size).toBe(3);
  });

  test("X-Request-Id: a client's safe id is kept, an unsafe one replaced", async () => {
    const kept = await api("/healthz", { headers: { "X-Request-Id": "trace-42.a:b" } });
    expect(kept.headers.get("x-request-id")).toBe("trace-42.a:b");
    const replaced = await api("/healthz", { headers: { "X-Request-Id": "<script>" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("HEAD works wherever GET does: same status and headers, no body, the GET body's length", async () => {
    for (const path of [
      "/v1/chunk/39_2",
      "/v1/search?q=albedo",
      "/v1/page/39?format=concat",
      "/v1/page/abc",
      "/nope",
    ]) {
      const [g, h] = await Promise.all([api(path), api(path, { method: "HEAD" })]);
      const body = await g.arrayBuffer();
      expect(h.status).toBe(g.status);
      expect(h.headers.get("content-type")).toBe(g.headers.get("content-type"));
      // A search's body holds its processingTimeMs, whose digits may differ between the two requests.
      const slack = path.includes("search") ? 2 : 0;
      expect(Math.abs(Number(h.headers.get("content-length")) - body.byteLength)).toBeLessThanOrEqual(slack);
      expect((await h.arrayBuffer()).byteLength).toBe(0);
    }
  });

  test("OPTIONS preflight is answered without a key, allowing any origin and the key headers", async () => {
    const r = await fetch(`${base}/v1/search?q=x`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://example.org",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-api-key",
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    const allowed = r.headers.get("access-control-allow-headers")!.toLowerCase();
    expect(allowed).toContain("x-api-key");
    expect(allowed).toContain("authorization");
    expect(r.headers.get("access-control-allow-methods")).toContain("GET");
    expect(r.headers.get("x-request-id")).toBeTruthy();
  });

  test("other methods: 405 with Allow; unknown routes: 404 not found (D1)", async () => {
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const r = await api("/v1/search?q=x", { method });
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      expect(((await r.json()) as Json).error).toBe("method not allowed");
    }
    for (const path of [
      "/nope",
      "/v1",
      "/v1/",
      "/v2/search?q=x",
      "/v1/page/39/extra",
      "/v1/searchx?q=x",
      "/v1/page/",
    ]) {
      expect((await fails(path, 404, "not found")).message).toBe(
        "There is no such route. The API is described at /v1/openapi.json.",
      );
    }
  });

  test("GET / without a key points a person to the docs, the API's description, the dashboard and the liveness check (D87)", async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({
      name: "Tome",
      docs: "/docs",
      openapi: "/v1/openapi.json",
      dashboard: "/dashboard",
      mcp: "/mcp",
      health: "/healthz",
    });
    expect(body.description).toContain("X-API-Key");
    // Each place it names answers without a key (/mcp takes an MCP client's POST with a key).
    for (const link of [body.docs, body.openapi, body.dashboard, body.health])
      expect({ link, status: (await fetch(`${base}${link}`)).status }).toEqual({ link, status: 200 });
    const head = await fetch(`${base}/`, { method: "HEAD" });
    expect({ status: head.status, body: await head.text() }).toEqual({ status: 200, body: "" });
    expect((await fetch(`${base}/`, { method: "POST" })).status).toBe(405);
  });

  test("without a key: a path outside /v1 that nothing serves is 404 not found, every /v1 route and /mcp 401 (D87)", async () => {
    for (const path of [
      "/nope",
      "/index.html",
      "/favicon.ico",
      "/v1x",
      "/V1/search?q=albedo",
      "/v1%2Fsearch?q=albedo",
    ]) {
      const res = await fetch(`${base}${path}`);
      const body = (await res.json()) as Json;
      expect({ path, status: res.status, body }).toEqual({
        path,
        status: 404,
        body: { error: "not found", message: "There is no such route. The API is described at /v1/openapi.json." },
      });
    }
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as Json;
    const routes = Object.keys(doc.paths).filter((p) => p.startsWith("/v1/"));
    expect(routes.length).toBeGreaterThan(7);
    for (const route of [...routes, "/v1", "/v1/", "/v1/nope"]) {
      const path = route.replace("{page_id}", "39").replace("{id}", "39_0");
      const res = await fetch(`${base}${path}?q=albedo`);
      expect({ path, status: res.status, error: ((await res.json()) as Json).error }).toEqual({
        path,
        status: 401,
        error: "unauthorized",
      });
    }
    const mcp = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(401);
  });

  test("one log line per request: method, path, status, milliseconds", async () => {
    await api("/v1/chunk/39_2?trace=log-check");
    await Bun.sleep(50);
    expect(server.stdout()).toMatch(/^GET \/v1\/chunk\/39_2 200 \d+\.\dms [0-9a-f-]{36}$/m);
    // The query string (users' text) is not logged.
    expect(server.stdout()).not.toContain("log-check");
  });
});

describe("/healthz", () => {
  test("answers ok", async () => {
    expect(await ok("/healthz")).toEqual({ status: "ok" });
  });
});

describe("GET /v1/search", () => {
  test("every field and its type; hits are the engine's, one per page (D7)", async () => {
    const body = await ok("/v1/search?q=albedo%20of%20snow&limit=20");
    expect(Object.keys(body).sort()).toEqual([
      "attribution",
      "estimatedTotalHits",
      "hits",
      "limit",
      "offset",
      "processingTimeMs",
      "query",
      "timedOut",
    ]);
    expect(body.query).toBe("albedo of snow");
    expect(body.timedOut).toBe(false);
    expect(body.limit).toBe(20);
    expect(body.offset).toBe(0);
    expect(isInt(body.processingTimeMs) && body.processingTimeMs >= 0).toBe(true);
    expect(isInt(body.estimatedTotalHits)).toBe(true);
    expectAttribution(body.attribution);
    expect(body.attribution.attribution_notice).toContain("Each result links to its source");
    const expected = engine.search("albedo of snow", { limit: 20, budgetMs: Infinity });
    expect(body.hits.map((h: Json) => h.id)).toEqual(expected.hits.map((h) => `${h.page.pageId}_${h.chunk}`));
    expect(body.estimatedTotalHits).toBe(expected.estimatedTotalHits);
    expect(body.hits.length).toBe(20);
    expect(new Set(body.hits.map((h: Json) => h.page_id)).size).toBe(body.hits.length);
    for (const h of body.hits) expectHit(h);
  });

  test("defaults: limit 10, offset 0, crop 400, highlight on; q is trimmed (D6)", async () => {
    const body = await ok("/v1/search?q=%20%20albedo%20%20");
    expect(body.query).toBe("albedo");
    expect(body.limit).toBe(10);
    expect(body.offset).toBe(0);
    expect(body.hits[0].page_id).toBe(39);
    expect(body.hits[0]._formatted.title).toBe("<em>Albedo</em>");
    const crop = body.hits.map((h: Json) => [...h._formatted.text.replace(/<\/?em>/g, "").replace(/…/g, "")].length);
    expect(Math.max(...crop)).toBeLessThanOrEqual(400);
    expect(Math.max(...crop)).toBeGreaterThan(300);
  });

  test("highlight=false keeps _formatted, cropped, without tags (D9)", async () => {
    for (const v of ["false", "FALSE", "0", "False"]) {
      const body = await ok(`/v1/search?q=albedo&crop_length=80&highlight=${v}`);
      for (const h of body.hits) {
        expect(h._formatted.text).not.toContain("<em>");
        expect(h._formatted.title).toBe(h.title.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"));
        expect([...h._formatted.text.replace(/…/g, "")].length).toBeLessThanOrEqual(80);
      }
    }
    for (const v of ["true", "TRUE", "1", "True"]) {
      expect((await ok(`/v1/search?q=albedo&highlight=${v}`)).hits[0]._formatted.text).toContain("<em>");
    }
  });

  test("docs/api.md says what the boolean parameters take, as the code reads them: true, false, 1 or 0 in any case (D4)", async () => {
    const booleans = Object.entries(SearchQuery.properties)
      .filter(([, schema]) => (schema as { type?: string }).type === "boolean")
      .map(([name]) => name);
    expect(booleans).toEqual(["highlight", "show_ranking_score"]);
    const docs = readFileSync(join(ROOT, "docs/api.md"), "utf8").replace(/\s+/g, " ");
    expect(docs).toContain(
      "the booleans `highlight` and `show_ranking_score` take `true`, `false`, `1` or `0`, in any case (`TRUE`, `False`)",
    );
    for (const name of booleans) {
      for (const v of ["true", "TRUE", "False", "1", "0"]) await ok(`/v1/search?q=albedo&${name}=${v}`);
      await fails(`/v1/search?q=albedo&${name}=yes`, 400, "invalid_parameter");
    }
  });

  test("crop_length at both bounds (D9)", async () => {
    for (const n of [50, 2000]) {
      const body = await ok(`/v1/search?q=albedo&crop_length=${n}`);
      for (const h of body.hits)
        expect([...h._formatted.text.replace(/<\/?em>/g, "").replace(/…/g, "")].length).toBeLessThanOrEqual(n);
    }
    await fails("/v1/search?q=albedo&crop_length=49", 400, "invalid_parameter");
    await fails("/v1/search?q=albedo&crop_length=2001", 400, "invalid_parameter");
  });

  test("limit and offset at both bounds; paging over pages", async () => {
    expect((await ok("/v1/search?q=the&limit=1")).hits.length).toBe(1);
    const all = await ok("/v1/search?q=the&limit=50");
    expect(all.hits.length).toBe(50);
    const second = await ok("/v1/search?q=the&limit=10&offset=10");
    expect(second.hits.map((h: Json) => h.id)).toEqual(all.hits.slice(10, 20).map((h: Json) => h.id));
    const far = await ok("/v1/search?q=the&offset=1000000");
    expect(far.hits).toEqual([]);
    expect(far.offset).toBe(1000000);
    expect(far.estimatedTotalHits).toBe(all.estimatedTotalHits);
    await fails("/v1/search?q=the&limit=0", 400, "invalid_parameter");
    await fails("/v1/search?q=the&limit=51", 400, "invalid_parameter");
    await fails("/v1/search?q=the&offset=1000001", 400, "invalid_parameter");
  });

  test("page_id: that page's matching chunks, each a hit, counted (D7)", async () => {
    const body = await ok("/v1/search?q=albedo&page_id=39&limit=50");
    const p = page(39);
    const matching = p.chunks.filter((c) => /albedo/i.test(`${c.text} ${p.title}`)).length;
    expect(body.hits.length).toBeGreaterThan(1);
    expect(body.estimatedTotalHits).toBe(body.hits.length);
    expect(body.hits.length).toBeLessThanOrEqual(p.chunks.length);
    expect(body.hits.length).toBeGreaterThanOrEqual(Math.min(50, matching));
    for (const h of body.hits) expect(h.page_id).toBe(39);
    expect(new Set(body.hits.map((h: Json) => h.chunk_id)).size).toBe(body.hits.length);
    // offset and limit page over the page's chunks (D7): the pages put together are the whole list, in its order.
    const ids = (hits: Json[]) => hits.map((h) => h.chunk_id);
    const paged: number[] = [];
    for (let offset = 0; offset < body.hits.length; offset += 2) {
      const part = await ok(`/v1/search?q=albedo&page_id=39&limit=2&offset=${offset}`);
      expect(part.estimatedTotalHits).toBe(body.hits.length);
      paged.push(...ids(part.hits));
    }
    expect(paged).toEqual(ids(body.hits));
    expect((await ok(`/v1/search?q=albedo&page_id=${MAX}`)).hits).toEqual([]);
    await fails(`/v1/search?q=albedo&page_id=${MAX + 1}`, 400, "invalid_parameter");
    await fails("/v1/search?q=albedo&page_id=-1", 400, "invalid_parameter");
  });

  test("title priority: an exact title or redirect ranks first (D8)", async () => {
    const redirect = snap.redirects.find((r) =>
      snap.pages.list().some((p) => p.title === r.target && p.chunks.length),
    )!;
    const target = snap.pages.list().find((p) => p.title === redirect.target)!;
    expect((await ok(`/v1/search?q=${encodeURIComponent(redirect.title)}`)).hits[0].page_id).toBe(target.pageId);
    expect((await ok(`/v1/search?q=${encodeURIComponent(target.title.toUpperCase())}`)).hits[0].page_id).toBe(
      target.pageId,
    );
  });

  test("a quoted phrase must match as a phrase (D6)", async () => {
    const body = await ok(`/v1/search?q=${encodeURIComponent('"solar zenith angle"')}&limit=50`);
    expect(body.hits.length).toBeGreaterThan(0);
    for (const h of body.hits) {
      const text = page(h.page_id)
        .chunks.map((c) => c.text)
        .join(" ")
        .toLowerCase()
        .replace(/\s+/g, " ");
      expect(text).toContain("solar zenith angle");
      // The hit's own passage is the one holding it (D62: a phrase's page shows its chunk holding the phrase).
      expect(`${h.section} ${h.text}`.toLowerCase().replace(/\s+/g, " ")).toContain("solar zenith angle");
    }
  });

  test("missing q: absent, empty or blank (D6)", async () => {
    for (const path of [
      "/v1/search",
      "/v1/search?q=",
      "/v1/search?q=%20%09%20",
      "/v1/search?limit=5",
      "/v1/search?Q=albedo",
      // Unicode's other spaces: no-break, ideographic, em, line separator, and NEL (U+0085), which JavaScript's trim()
      // keeps (it was searched, 200 with no hits, and lucky's 404 no results found).
      "/v1/search?q=%C2%A0%E3%80%80%E2%80%83%E2%80%A8",
      "/v1/search?q=%C2%85",
      "/v1/lucky?q=%C2%85",
      "/v1/search?q=%20%C2%85%09",
    ])
      await fails(path, 400, "missing q");
  });

  test("q up to 500 characters; 501 is refused (D6)", async () => {
    const word = "albedo ";
    const q500 = word.repeat(80).slice(0, 500);
    expect([...q500].length).toBe(500);
    await ok(`/v1/search?q=${encodeURIComponent(q500)}`);
    const body = await fails(`/v1/search?q=${encodeURIComponent(`${q500}x`)}`, 400, "invalid_parameter");
    expect(body.details.parameter).toBe("q");
    // Counted in characters: 500 emoji (1000 UTF-16 units) are 500 characters.
    await ok(`/v1/search?q=${encodeURIComponent("😀".repeat(500))}`);
  });

  test("a q of 17,000 or 100,000 characters gets D6's JSON 400, not a bare 431 (D88)", async () => {
    for (const length of [17_000, 100_000]) {
      const body = await fails(`/v1/search?q=${"a".repeat(length)}`, 400, "invalid_parameter");
      expect({ length, parameter: body.details.parameter }).toEqual({ length, parameter: "q" });
    }
    // Past the limit, Bun answers before any of Tome's code runs: the one refusal that is not D1's body.
    expect((await api(`/v1/search?q=${"a".repeat(140_000)}`)).status).toBe(431);
  });

  test("hostile queries never produce a 500 (D6)", async () => {
    const hostile = [
      '"',
      '"""',
      '"unbalanced',
      "((((",
      "[a-z]+$",
      ".*",
      "\\",
      "%",
      "%%",
      "a:b",
      "*",
      "?",
      "+-!",
      "&&||",
      "<script>alert(1)</script>",
      "\u0000",
      "a\u0000b",
      "\u202eevil",
      "مرحبا بالعالم",
      "😀🎉",
      "'; DROP TABLE pages; --",
      "{{template}}",
      "[[link]]",
      "NOT AND OR",
      "a".repeat(500),
      "\u200b\u200b",
      "日本語の検索",
      "ά έ ή",
      "-1e308",
      "__proto__",
      "constructor",
      "hasOwnProperty",
    ];
    for (const q of hostile) {
      const r = await get(`/v1/search?q=${encodeURIComponent(q)}&limit=50&crop_length=50`);
      expect([200, 400]).toContain(r.status);
      if (r.status === 400) expect(["missing q", "invalid_parameter"]).toContain(r.body.error);
      else for (const h of r.body.hits) expect(h._formatted.text).not.toMatch(/<(?!\/?em>)/);
    }
    // Raw, malformed percent-encoding in the query string.
    for (const raw of [
      "q=%ED%A0%80",
      "q=%C0%AF",
      "q=%",
      "q=%zz",
      "q=%E0%A4%A",
      "q=a&&&limit=2",
      "q=a&=b&limit=3",
      "&&q=albedo",
    ]) {
      const r = await get(`/v1/search?${raw}`);
      expect([200, 400]).toContain(r.status);
    }
  });
});

describe("D3–D5: parameter rules", () => {
  test("integers are base-10 digits only, never clamped (D3)", async () => {
    for (const v of [
      " 5",
      "5 ",
      "+5",
      "-1",
      "1e1",
      "0x10",
      "5.0",
      "5.",
      ".5",
      "",
      "five",
      "1_000",
      "٥",
      "Infinity",
      "NaN",
    ]) {
      const body = await fails(`/v1/search?q=albedo&limit=${encodeURIComponent(v)}`, 400, "invalid_parameter");
      expect(body.details).toEqual({
        parameter: "limit",
        value: v,
        constraint: "an integer from 1 to 50 (base-10 digits)",
      });
    }
    // Leading zeros are still base-10 digits.
    expect((await ok("/v1/search?q=albedo&limit=05")).limit).toBe(5);
    await fails(`/v1/page/39?offset=${MAX + 1}`, 400, "invalid_parameter");
    expect((await ok(`/v1/page/39?offset=${MAX}`)).chunks.results).toEqual([]);
    await fails("/v1/page/39?offset=99999999999999999999999", 400, "invalid_parameter");
  });

  test("a parameter given twice is refused; unknown parameters are ignored (D3)", async () => {
    const body = await fails("/v1/search?q=albedo&limit=1&limit=2", 400, "invalid_parameter");
    expect(body.details.parameter).toBe("limit");
    await fails("/v1/search?q=albedo&q=snow", 400, "invalid_parameter");
    await fails("/v1/page/39?format=chunks&format=chunks", 400, "invalid_parameter");
    await fails("/v1/changes?since=1&since=2", 400, "invalid_parameter");
    const ignored = await ok("/v1/search?q=albedo&foo=bar&foo=baz&LIMIT=99");
    expect(ignored.limit).toBe(10);
  });

  test("a query is read as URLSearchParams reads it: escaped names and values, +, a leading ?, empty pairs", () => {
    const queries = [
      "q=black+sky%20albedo&limit=3",
      "%71=albedo&%6c%69%6d%69%74=5",
      "q=a&&&limit=1&",
      "?q=a",
      "??limit=2&q=a",
      "q=%E2%82%AC%ZZ%FF%&crop_length=100",
      "q=a=b&highlight",
      "q+=x&q=y&+q=z&q%20=w",
      "q=%26&limit=%31",
      "LIMIT=9&Q=x&q=y",
      "q=%C3%A9&q=é",
    ];
    for (const query of queries) {
      const reader = new URLSearchParams(query);
      const expected: Record<string, string[]> = {};
      for (const name of Object.keys(SearchQuery.properties))
        if (reader.getAll(name).length) expected[name] = reader.getAll(name);
      const got: Record<string, string[]> = {};
      const keep = (name: string) => (raw: string) => (got[name] ??= []).push(raw);
      const readers = Object.fromEntries(Object.keys(SearchQuery.properties).map((name) => [name, keep(name)]));
      try {
        readQuery(SearchQuery, `http://x/v1/search?${query}`, { readers });
      } catch (error) {
        // Given twice: the values in the refusal (q absent, "??q=a", is missing q: no values).
        const details = (error as ApiError).details;
        if (details) got[details.parameter] = details.value.split(",");
      }
      expect({ query, got }).toEqual({ query, got: expected });
    }
  });

  test("a query of 60,000 parameters is read for the route's own: the others are not decoded", () => {
    const read: string[] = [];
    const platform = globalThis.URLSearchParams;
    globalThis.URLSearchParams = class extends platform {
      constructor(init?: ConstructorParameters<typeof URLSearchParams>[0]) {
        super(init);
        read.push(String(init ?? ""));
      }
    };
    try {
      const url = `http://x/v1/page/39?${"a&".repeat(60_000)}max_chunks=2&offset=%31`;
      expect(readQuery(PageQuery, url)).toEqual({ format: "chunks", max_chunks: 2, offset: 1 });
    } finally {
      globalThis.URLSearchParams = platform;
    }
    // The one escaped value, not the 120 KB of the query.
    expect(read.join("").length).toBeLessThan(10);
  });

  test("booleans: true|false|1|0 in any case (D4)", async () => {
    for (const v of ["yes", "no", "on", "2", "", "t", "truee"]) {
      const body = await fails(`/v1/search?q=albedo&highlight=${v}`, 400, "invalid_parameter");
      expect(body.details.parameter).toBe("highlight");
    }
  });

  test("an unknown format names the allowed values (D5)", async () => {
    for (const path of ["/v1/page/39?format=xml", "/v1/lucky?q=albedo&format=CONCAT", "/v1/page/39?format="]) {
      const body = await fails(path, 400, "invalid_parameter");
      expect(body.details.parameter).toBe("format");
      expect(body.message).toContain("chunks");
      expect(body.message).toContain("concat");
    }
  });

  test("parameters are read once, strictly: Elysia parses no query string, headers or cookies for a route, nor checks them again", async () => {
    const app = createApp(engine);
    const routes = (app.routes as unknown as { routes: { method: string; path: string; composed?: unknown }[] }).routes;
    const asked = {
      "/v1/search": "/v1/search?q=albedo",
      "/v1/page/:page_id": "/v1/page/39",
      "/v1/chunk/:id": "/v1/chunk/39_0",
      "/v1/changes": "/v1/changes",
      "/v1/lucky": "/v1/lucky?q=albedo",
    };
    for (const [path, request] of Object.entries(asked)) {
      expect((await app.handle(new Request(`http://localhost${request}`))).status).toBe(200);
      // Elysia compiles a route's handler at its first request, from what the route's hooks and handler read.
      const compiled = String(routes.find((r) => r.method === "GET" && r.path === path)?.composed);
      expect(compiled).toContain("handler(c)");
      for (const work of ["parseQueryFromURL", "parseCookie", "headers.toJSON", "validator.query", "validator.params"])
        expect(compiled).not.toContain(work);
    }
    app.close();
  });
});

describe("GET /v1/page/{page_id}", () => {
  test("every field and its type (format=chunks is the default)", async () => {
    const p = page(39);
    const body = await ok("/v1/page/39");
    expect(Object.keys(body).sort()).toEqual(["attribution", "chunks", "page"]);
    expectPage(body.page, p);
    expect(body.chunks.offset).toBe(0);
    expect(body.chunks.limit).toBe(10000);
    expect(body.chunks.total).toBe(p.chunks.length);
    expect(body.chunks.results.length).toBe(p.chunks.length);
    body.chunks.results.forEach((c: Json, i: number) => {
      expect(c).toEqual({
        id: `39_${i}`,
        page_id: 39,
        title: "Albedo",
        section: sectionOf(p, i),
        text: p.chunks[i]!.text,
        chunk_id: i,
      });
    });
    expectAttribution(body.attribution);
    // D16: for one page the notice names the article and its address.
    expect(body.attribution.attribution_notice).toContain('"Albedo"');
    expect(body.attribution.attribution_notice).toContain("https://en.wikipedia.org/wiki/Albedo");
  });

  test("format=concat: text joins the returned window with a blank line; results stay (D10)", async () => {
    const p = page(39);
    const body = await ok("/v1/page/39?format=concat&offset=2&max_chunks=3");
    expect(body.chunks.results.map((c: Json) => c.chunk_id)).toEqual([2, 3, 4]);
    expect(body.chunks.limit).toBe(3);
    expect(body.chunks.offset).toBe(2);
    expect(body.text).toBe(
      p.chunks
        .slice(2, 5)
        .map((c) => c.text)
        .join("\n\n"),
    );
    const whole = await ok("/v1/page/39?format=concat");
    expect(whole.text).toBe(p.chunks.map((c) => c.text).join("\n\n"));
  });

  test("max_chunks at both bounds; an offset past the end is empty, not an error (D10)", async () => {
    const p = longest();
    expect((await ok(`/v1/page/${p.pageId}?max_chunks=1`)).chunks.results.length).toBe(1);
    const max = await ok(`/v1/page/${p.pageId}?max_chunks=200000`);
    expect(max.chunks.results.length).toBe(p.chunks.length);
    expect(max.chunks.limit).toBe(200000);
    await fails("/v1/page/39?max_chunks=0", 400, "invalid_parameter");
    await fails("/v1/page/39?max_chunks=200001", 400, "invalid_parameter");
    const past = await ok(`/v1/page/39?offset=${p.chunks.length + 5}&format=concat`);
    expect(past.chunks.results).toEqual([]);
    expect(past.chunks.total).toBe(page(39).chunks.length);
    expect(past.text).toBe("");
  });

  test("a page with no chunks is still a page (mrwiki's infobox-only stubs)", async () => {
    // The English dumps have none: serve the Marathi one in process.
    const mr = await engineFor({ dumps: [dump("mrwiki-head-truncated.xml.xz")], allowTruncated: true });
    const empty = mr.snapshot.pages.list().find((p) => p.chunks.length === 0)!;
    expect(empty).toBeDefined();
    const res = await createApp(mr).handle(new Request(`http://localhost/v1/page/${empty.pageId}?format=concat`));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.page.page_id).toBe(empty.pageId);
    expect(body.page.title).toBe(empty.title);
    expect(body.chunks).toEqual({ results: [], offset: 0, limit: 10000, total: 0 });
    expect(body.text).toBe("");
  });

  test("page_id must be an integer; an absent page is not found", async () => {
    for (const id of [
      "abc",
      "-1",
      "1.5",
      "1e3",
      "0x1F",
      "%20%2039",
      "39abc",
      String(MAX + 1),
      "99999999999999999999",
    ]) {
      await fails(`/v1/page/${id}`, 400, "page_id must be an integer");
    }
    await fails("/v1/page/999999999", 404, "not found");
    await fails(`/v1/page/${MAX}`, 404, "not found");
    await fails("/v1/page/0", 404, "not found");
    // Percent-encoded digits are digits.
    expect((await ok("/v1/page/%33%39?max_chunks=1")).page.page_id).toBe(39);
  });

  test("titles are percent-encoded in URLs as Wikipedia does (D14)", async () => {
    expect(articleUrl("en.wikipedia.org", "Ender's Game")).toBe("https://en.wikipedia.org/wiki/Ender%27s_Game");
    expect(articleUrl("en.wikipedia.org", "Abstract (law)")).toBe("https://en.wikipedia.org/wiki/Abstract_(law)");
    expect(articleUrl("en.wikipedia.org", "AC/DC")).toBe("https://en.wikipedia.org/wiki/AC/DC");
    expect(articleUrl("en.wikipedia.org", "C++")).toBe("https://en.wikipedia.org/wiki/C%2B%2B");
    expect(articleUrl("en.wikipedia.org", "What? & Why: 100%")).toBe(
      "https://en.wikipedia.org/wiki/What%3F_%26_Why:_100%25",
    );
    expect(articleUrl("el.wikipedia.org", "Ελλάδα")).toBe(
      "https://el.wikipedia.org/wiki/%CE%95%CE%BB%CE%BB%CE%AC%CE%B4%CE%B1",
    );
    const withParens = snap.pages.list().find((p) => p.title.includes("("))!;
    const body = await ok(`/v1/page/${withParens.pageId}?max_chunks=1`);
    expect(body.page.url).toBe(`https://en.wikipedia.org/wiki/${withParens.title.replaceAll(" ", "_")}`);
    // MediaWiki's wfUrlencode (rawurlencode, then ; @ $ ! * ( ) , / ~ : left readable), on every
    // printable ASCII character, and on each title of the snapshot.
    const wfUrlencode = (title: string) =>
      [...new TextEncoder().encode(title.replaceAll(" ", "_"))]
        .map((b) =>
          /[A-Za-z0-9_.~;@$!*(),/:-]/.test(String.fromCharCode(b)) && b < 128
            ? String.fromCharCode(b)
            : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
        )
        .join("");
    const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
    for (const title of [...ascii.map((c) => `A${c}b`), ascii.join(""), ...snap.pages.list().map((p) => p.title)]) {
      expect(articleUrl("en.wikipedia.org", title)).toBe(`https://en.wikipedia.org/wiki/${wfUrlencode(title)}`);
    }
  });
});

describe("GET /v1/chunk/{id}", () => {
  test("every field and its type", async () => {
    const p = page(39);
    const body = await ok("/v1/chunk/39_2");
    expect(body).toEqual({
      id: "39_2",
      page_id: 39,
      rev_id: p.revId,
      title: "Albedo",
      section: sectionOf(p, 2),
      text: p.chunks[2]!.text,
      chunk_id: 2,
      url: "https://en.wikipedia.org/wiki/Albedo",
      timestamp: p.timestamp,
      source: body.source,
      license: { ...LICENSE },
      modified: true,
      modifications: body.modifications,
    });
    expect(body.section).toBe("White-sky and black-sky albedo");
    expect(body.timestamp).toMatch(ISO_UTC);
    expectSource(body.source, p);
    expect(body.modifications.length).toBeGreaterThan(2);
    const last = p.chunks.length - 1;
    expect((await ok(`/v1/chunk/39_${last}`)).chunk_id).toBe(last);
  });

  test("malformed ids are 400 invalid_parameter; well-formed but absent are 404 (D11)", async () => {
    for (const id of ["39", "39_", "_2", "39_x", "39-2", "39_2_1", "a_b", "39_-1", "39_%202", "-39_2"]) {
      const body = await fails(`/v1/chunk/${id}`, 400, "invalid_parameter");
      expect(body.details.parameter).toBe("id");
    }
    await fails(`/v1/chunk/39_${page(39).chunks.length}`, 404, "not found");
    await fails("/v1/chunk/999999999_0", 404, "not found");
    // Each part is an integer of D3, as /v1/page/{page_id} is: up to 2^53 - 1 (past MediaWiki's 32 bits, absent).
    await fails(`/v1/chunk/${MAX}_${MAX}`, 404, "not found");
    await fails(`/v1/chunk/${2 ** 32}_0`, 404, "not found");
    await fails(`/v1/chunk/000${MAX}_0`, 404, "not found");
    for (const id of [
      `${MAX + 1}_0`,
      `39_${MAX + 1}`,
      "9999999999999999_0",
      "99999999999999999_0",
      "99999999999999999999_0",
      `${"9".repeat(16)}_${"9".repeat(16)}`,
    ]) {
      const body = await fails(`/v1/chunk/${id}`, 400, "invalid_parameter");
      expect(body.details).toEqual({
        parameter: "id",
        value: id,
        constraint: "of the form {page_id}_{chunk_id}, each an integer from 0 to 9007199254740991",
      });
    }
    await fails(`/v1/page/${MAX + 1}`, 400, "page_id must be an integer");
    // Longer than two 16-digit integers and the "_": refused, not echoed whole in a 404's message.
    const r = await api(`/v1/chunk/${"9".repeat(100_000)}_1`);
    const text = await r.text();
    expect([r.status, JSON.parse(text).error, text.length < 1000]).toEqual([400, "invalid_parameter", true]);
  });

  test("a path parameter whose escapes are no UTF-8 is refused echoing it as sent, not as an empty value", async () => {
    const cases: [string, string, string][] = [
      ["/v1/chunk/39_%E0%A4%A", "invalid_parameter", "39_%E0%A4%A"],
      ["/v1/chunk/%FF_0/", "invalid_parameter", "%FF_0"],
      ["/v1/page/%E0%A4%A", "page_id must be an integer", "%E0%A4%A"],
      ["/v1/page/3%zz9", "page_id must be an integer", "3%zz9"],
      ["/v1/pdf/%ED%A0%80.pdf", "page_id must be an integer", "%ED%A0%80.pdf"],
    ];
    for (const [path, code, value] of cases) {
      const body = await fails(path, 400, code);
      expect({ path, value: body.details.value }).toEqual({ path, value });
    }
  });
});

describe("GET /v1/changes", () => {
  const order = () => snap.pages.list().sort((a, b) => a.tsUnix - b.tsUnix || a.pageId - b.pageId);

  test("every field; since omitted is 0: every page, by ts_unix then page_id (D12)", async () => {
    const body = await ok("/v1/changes?limit=1000");
    expect(Object.keys(body).sort()).toEqual(["attribution", "limit", "offset", "results", "total"]);
    expect(body.total).toBe(snap.pages.length);
    expect(body.limit).toBe(1000);
    expect(body.offset).toBe(0);
    expect(body.results.map((p: Json) => p.page_id)).toEqual(order().map((p) => p.pageId));
    for (const r of body.results) expectPage(r, page(r.page_id));
    expectAttribution(body.attribution);
    const byDefault = await ok("/v1/changes");
    expect(byDefault.limit).toBe(100);
    expect(byDefault.results.length).toBe(100);
  });

  test("since includes ts_unix >= since, as Unix seconds or RFC 3339 with any zone (D12)", async () => {
    const pivot = order()[150]!;
    const expected = order().filter((p) => p.tsUnix >= pivot.tsUnix);
    const iso = new Date(pivot.tsUnix * 1000).toISOString();
    const at = (d: number) => new Date((pivot.tsUnix + d) * 1000).toISOString().replace(".000Z", "");
    const forms = [
      String(pivot.tsUnix),
      iso,
      iso.replace(".000Z", "Z"),
      iso.replace("T", "t").replace("Z", "z"),
      `${at(2 * 3600)}+02:00`,
      `${at(-(5 * 3600 + 30 * 60))}-05:30`,
    ];
    for (const since of forms) {
      const body = await ok(`/v1/changes?limit=1000&since=${encodeURIComponent(since)}`);
      expect({ since, total: body.total }).toEqual({ since, total: expected.length });
      expect(body.results.map((p: Json) => p.page_id)).toEqual(expected.map((p) => p.pageId));
    }
    // A fraction of a second after the pivot excludes it.
    const after = await ok(`/v1/changes?limit=1000&since=${encodeURIComponent(iso.replace(".000Z", ".5Z"))}`);
    expect(after.total).toBe(order().filter((p) => p.tsUnix > pivot.tsUnix).length);
    expect((await ok(`/v1/changes?since=${MAX}`)).total).toBe(0);
    expect((await ok("/v1/changes?since=0")).total).toBe(snap.pages.length);
    expect((await ok("/v1/changes?since=1900-01-01T00:00:00Z")).total).toBe(snap.pages.length);
  });

  test("polling with offset walks the same order", async () => {
    const all = (await ok("/v1/changes?limit=1000")).results.map((p: Json) => p.page_id);
    const second = await ok("/v1/changes?limit=7&offset=7");
    expect(second.results.map((p: Json) => p.page_id)).toEqual(all.slice(7, 14));
    expect((await ok("/v1/changes?offset=100000")).results).toEqual([]);
  });

  test("limit at both bounds", async () => {
    expect((await ok("/v1/changes?limit=1")).results.length).toBe(1);
    expect((await ok("/v1/changes?limit=1000")).results.length).toBe(snap.pages.length);
    await fails("/v1/changes?limit=0", 400, "invalid_parameter");
    await fails("/v1/changes?limit=1001", 400, "invalid_parameter");
  });

  test("a date's year is the year written, 0000 to 0099 too (Date.UTC reads them as 1900 to 1999)", async () => {
    // Every page changed since the year 99: since 0, not 1999-01-01 (915148800), which left out 1970 to 1998.
    expect(readSince("0099-01-01T00:00:00Z")).toBe(0);
    expect(readSince("0070-06-01T00:00:00Z")).toBe(0);
    // Year 0 is a leap year (1900, which it was read as, is not): a date, not a 400.
    expect(readSince("0000-02-29T00:00:00Z")).toBe(0);
    expect(() => readSince("0001-02-29T00:00:00Z")).toThrow("since must be");
    expect(readSince("1999-01-01T00:00:00Z")).toBe(915148800);
    expect(readSince("2016-02-29T12:00:00.5+01:00")).toBe(Date.UTC(2016, 1, 29, 11) / 1000 + 1);
    expect((await ok("/v1/changes?since=0099-01-01T00:00:00Z&limit=1000")).total).toBe(snap.pages.length);
  });

  test("D12: a leap second (:60) is read only where UTC had one, in any zone; on a day without, 400", async () => {
    // 2016-12-31 ended with one (its :60 is 2017-01-01T00:00:00Z), and 1972-06-30 the first; 2016-04-01 and
    // 2016-06-30 had none, and :60 is never a minute's but 23:59's.
    expect(readSince("2016-12-31T23:59:60Z")).toBe(Date.UTC(2017, 0, 1) / 1000);
    expect(readSince("2016-12-31T23:59:60.5Z")).toBe(Date.UTC(2017, 0, 1) / 1000 + 1);
    expect(readSince("2017-01-01T08:59:60+09:00")).toBe(Date.UTC(2017, 0, 1) / 1000);
    expect(readSince("2016-12-31T18:29:60-05:30")).toBe(Date.UTC(2017, 0, 1) / 1000);
    expect(readSince("1972-06-30T23:59:60Z")).toBe(Date.UTC(1972, 6, 1) / 1000);
    for (const raw of [
      "2016-04-01T23:59:60Z",
      "2016-06-30T23:59:60Z",
      "2016-12-31T23:58:60Z",
      "2016-12-31T22:59:60Z",
      "2017-01-01T00:00:60Z",
      "2016-12-31T23:59:60+01:00",
      "2017-12-31T23:59:60Z",
    ])
      expect(() => readSince(raw), raw).toThrow("since must be");
    await fails("/v1/changes?since=2016-04-01T23:59:60Z", 400, "since must be unix seconds or RFC3339");
  });

  test("since in neither format (D12)", async () => {
    const bad = [
      "",
      "yesterday",
      "-5",
      "+5",
      "1e9",
      "1.5",
      " 5",
      "2016-01-01",
      "2016-01-01T00:00:00",
      "2016-01-01 00:00:00Z",
      "2016-13-01T00:00:00Z",
      "2016-02-30T00:00:00Z",
      "2016-01-01T24:00:00Z",
      "2016-01-01T00:60:00Z",
      "2016-01-01T00:00:00+25:00",
      "2016-01-01T00:00Z",
      "20160101T000000Z",
      "2016-01-01T00:00:00.Z",
      String(MAX + 1),
      "Mon, 01 Jan 2016 00:00:00 GMT",
    ];
    for (const since of bad) {
      const body = await fails(
        `/v1/changes?since=${encodeURIComponent(since)}`,
        400,
        "since must be unix seconds or RFC3339",
      );
      expect(body.details.parameter).toBe("since");
    }
  });

  test("since whose zone's + the query string read as a space (`date -Iseconds` unescaped) is refused saying to send %2B (D12)", async () => {
    const body = await fails(
      "/v1/changes?since=2016-01-31T12:00:00+01:00",
      400,
      "since must be unix seconds or RFC3339",
    );
    expect(body.details.value).toBe("2016-01-31T12:00:00 01:00");
    expect(body.message).toEndWith(
      "Its zone's + was read as a space, as a query string reads one: send it as %2B (2016-01-31T12:00:00%2B01:00).",
    );
    expect((await ok("/v1/changes?since=2016-01-31T12:00:00%2B01:00")).total).toBe(
      (await ok("/v1/changes?since=2016-01-31T11:00:00Z")).total,
    );
    // A space elsewhere, or a zone that would still be wrong with its +, gets D12's message alone.
    for (const since of ["2016-01-31 12:00:00Z", "2016-01-31T12:00:00 25:00", "2016-02-30T12:00:00 01:00"]) {
      const other = await fails(
        `/v1/changes?since=${encodeURIComponent(since)}`,
        400,
        "since must be unix seconds or RFC3339",
      );
      expect(other.message).not.toContain("%2B");
    }
  });
});

describe("GET /v1/lucky", () => {
  test("an exact title wins; every field and its type; concat by default (D13)", async () => {
    const p = page(39);
    const body = await ok("/v1/lucky?q=albedo");
    expect(Object.keys(body).sort()).toEqual([
      "attribution",
      "chunks",
      "page",
      "processingTimeMs",
      "search_context",
      "text",
    ]);
    expect(body.page).toEqual({
      page_id: "39",
      title: "Albedo",
      url: "https://en.wikipedia.org/wiki/Albedo",
      rev_id: p.revId,
      timestamp: p.timestamp,
      source: body.page.source,
      license: SHORT_LICENSE,
    });
    expectSource(body.page.source, p);
    expect(body.chunks).toEqual({ results: body.chunks.results, offset: 0, limit: 10000, total: p.chunks.length });
    expect(body.chunks.results.length).toBe(p.chunks.length);
    expect(body.text).toBe(p.chunks.map((c) => c.text).join("\n\n"));
    const ctx = body.search_context;
    expect(Object.keys(ctx).sort()).toEqual(["matched_chunk", "query", "search_time_ms", "timed_out", "total_results"]);
    expect(ctx.timed_out).toBe(false);
    expect(ctx.query).toBe("albedo");
    expect(isInt(ctx.search_time_ms) && isInt(ctx.total_results) && isInt(body.processingTimeMs)).toBe(true);
    expect(ctx.total_results).toBe(engine.search("albedo").estimatedTotalHits);
    expectHit(ctx.matched_chunk);
    // Chunk 0 for an exact title match.
    expect(ctx.matched_chunk.id).toBe("39_0");
    expectAttribution(body.attribution);
    expect(body.attribution.attribution_notice).toContain("Albedo");
  });

  test("format=chunks: no text field", async () => {
    const body = await ok("/v1/lucky?q=albedo&format=chunks");
    expect(body.text).toBeUndefined();
    expect(body.chunks.results[0]).toEqual({
      id: "39_0",
      page_id: 39,
      title: "Albedo",
      section: "",
      text: page(39).chunks[0]!.text,
      chunk_id: 0,
    });
  });

  test("redirects resolve to their target; without a title match, the best hit's page", async () => {
    const redirect = snap.redirects.find((r) =>
      snap.pages.list().some((p) => p.title === r.target && p.chunks.length),
    )!;
    const target = snap.pages.list().find((p) => p.title === redirect.target)!;
    expect((await ok(`/v1/lucky?q=${encodeURIComponent(redirect.title)}`)).page.page_id).toBe(String(target.pageId));
    const q = "reflectivity of fresh snow";
    const best = engine.search(q, { limit: 1 }).hits[0]!;
    const body = await ok(`/v1/lucky?q=${encodeURIComponent(q)}`);
    expect(body.page.page_id).toBe(String(best.page.pageId));
    expect(body.search_context.matched_chunk.id).toBe(`${best.page.pageId}_${best.chunk}`);
  });

  test("missing q, too long, nothing found", async () => {
    for (const path of ["/v1/lucky", "/v1/lucky?q=", "/v1/lucky?q=%20", "/v1/lucky?format=chunks"])
      await fails(path, 400, "missing q");
    await fails(`/v1/lucky?q=${"a".repeat(501)}`, 400, "invalid_parameter");
    await fails("/v1/lucky?q=qqqzzzxxyyqq", 404, "no results found");
    await fails(`/v1/lucky?q=${encodeURIComponent('"!!!"')}`, 404, "no results found");
  });
});

describe("GET /v1/license and /v1/meta", () => {
  test("license: every key of api.md 4.7, with real text", async () => {
    const body = await ok("/v1/license");
    expect(Object.keys(body).sort()).toEqual([
      "api_service_note",
      "attribution_requirements",
      "content_license",
      "modifications",
      "source",
      "trademark_disclaimer",
    ]);
    expect(Object.keys(body.content_license).sort()).toEqual(["full_name", "name", "summary", "url"]);
    expect(body.content_license).toMatchObject({ ...LICENSE });
    expect(Object.keys(body.source).sort()).toEqual(["name", "project", "reuse_info", "terms_url"]);
    expect(body.source.project).toBe("en.wikipedia.org");
    expect(body.source.terms_url).toBe("https://foundation.wikimedia.org/wiki/Terms_of_Use");
    expect(body.modifications.modified).toBe(true);
    expect(body.modifications.changes_made.length).toBeGreaterThan(2);
    for (const change of body.modifications.changes_made) expect(typeof change).toBe("string");
    expect(Object.keys(body.attribution_requirements).sort()).toEqual([
      "changes",
      "credit",
      "license_notice",
      "no_additional_restrictions",
      "share_alike",
    ]);
    const strings = [
      body.content_license.summary,
      body.source.name,
      body.source.reuse_info,
      body.modifications.note,
      ...Object.values(body.attribution_requirements),
      body.api_service_note,
      body.trademark_disclaimer,
    ];
    for (const s of strings) expect(s).toBeString();
    for (const s of [
      body.content_license.summary,
      body.modifications.note,
      ...Object.values(body.attribution_requirements),
      body.api_service_note,
      body.trademark_disclaimer,
    ]) {
      expect((s as string).split(" ").length).toBeGreaterThan(8);
    }
    expect(body.source.reuse_info).toMatch(/^https:\/\/en\.wikipedia\.org\//);
    expect(body.attribution_requirements.share_alike).toContain("same license");
    expect(body.trademark_disclaimer).toContain("Wikimedia Foundation");
  });

  test("meta: D17 from the loaded snapshot, with Tome's own version as the engine's (D76)", async () => {
    const body = await ok("/v1/meta");
    const tome = JSON.parse(await Bun.file(`${ROOT}/package.json`).text()).version;
    expect(body.search_engine_version).toEqual({
      commitSha: snap.meta.contentHash,
      commitDate: snap.meta.createdAt,
      pkgVersion: tome,
    });
    expect(body.search_engine_version.commitSha).toMatch(/^[0-9a-f]{64}$/);
    expect(body.indexes).toEqual({ pages: "enwiki-pages", chunks: "enwiki-chunks" });
    expect(body.content_source).toEqual({ name: "Wikipedia", project: "en.wikipedia.org", license: { ...LICENSE } });
    expect(body.dataset).toEqual({
      created_at: snap.meta.createdAt,
      indexed_pages: snap.pages.length,
      indexed_chunks: snap.pages.list().reduce((n, p) => n + p.chunks.length, 0),
      skipped_redirects: snap.redirects.length,
      snapshot: basename(snap.path),
      loaded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Date.parse(body.dataset.loaded_at)).toBeGreaterThanOrEqual(Date.parse(snap.meta.createdAt));
    expectAttribution(body.attribution);
  });
});

describe("server faults", () => {
  test("a 500 is D1's internal_error, with no stack trace or path, and is logged", async () => {
    const broken = Object.create(engine) as Engine;
    broken.search = () => {
      throw new Error(`boom at ${ROOT}/src/search/engine.ts:1`);
    };
    const logged: unknown[] = [];
    const app = createApp(broken, { logError: (e) => logged.push(e) });
    const res = await app.handle(new Request("http://localhost/v1/search?q=albedo"));
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: "internal_error", message: expect.any(String) });
    expect(text).not.toContain("boom");
    expect(text).not.toContain("/src/");
    expect(logged.length).toBe(1);
  });

  test("damage in the snapshot (D119, D163): every route and /mcp answer D1's 500 internal_error, and the log says once which file and `snapshot:verify`, not a stack trace a request", async () => {
    const whole = (await wikiOf([{ title: "Albedo", text: "Albedo is the fraction of light reflected." }])).snapshot;
    const bytes = Buffer.from(readFileSync(whole.path));
    // A text block's first byte (its zstd frame's): the file opens; every read of the page's text fails.
    bytes[whole.container.sections.find((s) => s.name.startsWith("text.blocks"))!.offset]! ^= 0xff;
    const path = join(tempDir(), "served.tome");
    writeFileSync(path, bytes);
    const faults: unknown[] = [];
    const lines: string[] = [];
    // As the server serves: a search worker searches (its SnapshotError crosses to the request thread).
    const app = createApp(openUnguarded(path), {
      searchWorkers: 1,
      logError: (error) => faults.push(error),
      notice: (line) => lines.push(line),
      pdf: { render: async () => new Uint8Array() },
    });
    await app.ready();
    const mcp = (name: string, args: object) =>
      new Request("http://tome/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
      });
    try {
      for (const route of ["/v1/search?q=albedo", "/v1/lucky?q=albedo", "/v1/page/1", "/v1/chunk/1_0", "/v1/pdf/1"]) {
        const answer = await app.handle(new Request(`http://tome${route}`));
        expect([route, answer.status, await answer.json()]).toEqual([route, 500, INTERNAL_ERROR]);
      }
      for (const [name, args] of [
        ["search", { q: "albedo" }],
        ["get_chunk", { id: "1_0" }],
      ] as const) {
        const answer = (await (await app.handle(mcp(name, args))).json()) as {
          result: { isError: boolean; content: { text: string }[] };
        };
        expect(answer.result.isError).toBe(true);
        expect(answer.result.content[0]?.text).toBe(`${INTERNAL_ERROR.error}: ${INTERNAL_ERROR.message}`);
      }
    } finally {
      app.close();
    }
    expect(faults).toEqual([]);
    expect(lines).toEqual([
      `serve: a request met damage in the snapshot served: ${path} cannot be read (a text block is damaged: zstd says "Unknown frame descriptor"): is it damaged? \`bun run snapshot:verify ${path}\` checks every section against its hash; rebuild it with \`bun run snapshot:build --dump <dump>\` if one does not match. Requests that read the damage are answered 500 internal_error meanwhile (said once for this snapshot).`,
    ]);
  });
});

describe("bun run start", () => {
  test("Ctrl-C passed on twice (npm start, bun run start) still stops gracefully; two servers never share a data folder", async () => {
    const data = tempDir("tome-data-");
    const server = await startUnsearched({ TOME_SNAPSHOT: await snapshotFor(DUMPS), TOME_DATA: data });
    // A second server on the same data folder would write over the first's usage counts: refused, told what to do.
    const second = await runToExit(["bun", START], {
      TOME_SNAPSHOT: await snapshotFor(DUMPS),
      TOME_DATA: data,
      PORT: "0",
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another Tome server (process ${server.proc.pid}) uses the data folder`);
    expect(second.stderr).toContain("TOME_REDIS_URL");
    expect(second.stderr).not.toContain("    at ");
    server.proc.kill("SIGINT");
    await Bun.sleep(20);
    server.proc.kill("SIGINT");
    expect(await server.proc.exited).toBe(0);
    expect(server.stderr()).toContain("Stopped: 0 request(s) answered after SIGINT.");
    // The folder is let go with the server: the next start takes it.
    const next = await startUnsearched({ TOME_SNAPSHOT: await snapshotFor(DUMPS), TOME_DATA: data });
    expect(await next.stop()).toBe(0);
  });

  test("SIGTERM lets in-flight requests finish, then exits 0", async () => {
    // The searches' time limit out of the way: 40 at once in the search pool's workers, on a busy machine, can pass
    // 100 ms of wall time each and be cut off (D91, D101), which is not what this test is about.
    const other = await startServer({ TOME_SNAPSHOT: await snapshotFor(DUMPS), TOME_SEARCH_TIMEOUT_MS: "4000" });
    const otherKey = other.key!;
    const p = longest();
    const pending = Array.from({ length: 40 }, (_, i) =>
      api(`/v1/search?q=the%20of%20and%20${i}&limit=50&crop_length=2000`, {}, other.url, otherKey).then(async (r) => [
        r.status,
        ((await r.json()) as Json).hits.length,
      ]),
    );
    const concat = api(`/v1/page/${p.pageId}?format=concat`, {}, other.url, otherKey).then((r) => r.status);
    // A PDF renders in a worker for a second or so: certainly in flight when SIGTERM comes.
    const pdf = api(`/v1/pdf/${p.pageId}`, {}, other.url, otherKey).then(async (r) => [
      r.status,
      (await r.arrayBuffer()).byteLength,
    ]);
    // Long enough for the connections to be accepted, not for 40 such searches to be answered.
    await Bun.sleep(150);
    const code = await other.stop();
    const results = await Promise.all(pending);
    expect(await concat).toBe(200);
    const [pdfStatus, pdfBytes] = await pdf;
    expect(pdfStatus).toBe(200);
    expect(pdfBytes).toBeGreaterThan(10_000);
    expect(
      Number(/Stopped: (\d+) request\(s\) answered after SIGTERM\./.exec(other.stderr())?.[1]),
    ).toBeGreaterThanOrEqual(1);
    // Its log line was written before the exit (the log is buffered).
    await Bun.sleep(50);
    expect(other.stdout()).toMatch(new RegExp(`^GET /v1/pdf/${p.pageId} 200 `, "m"));
    for (const [status, hits] of results) {
      expect(status).toBe(200);
      expect(hits).toBe(50);
    }
    expect(code).toBe(0);
    expect(other.stderr()).toMatch(/Stopped: \d+ request\(s\) answered after SIGTERM\./);
    // And it is gone.
    expect(
      await fetch(`${other.url}/healthz`).then(
        () => "answered",
        () => "refused",
      ),
    ).toBe("refused");
  });

  test("a bad PORT is refused with a clear message", async () => {
    const { code, stderr } = await runToExit(["bun", START], {
      PORT: "eighty",
      TOME_SNAPSHOT: await snapshotFor(DUMPS),
    });
    expect(code).toBe(2);
    expect(stderr).toContain("PORT must be a number");
  });

  test.each([
    [{ PORT: "abc" }, 2, 'start: PORT must be a number from 0 to 65535 (0 picks a free port), not "abc".'],
    [{ HOST: "127.0.0.1:8080" }, 2, 'start: HOST "127.0.0.1:8080" holds a port'],
    [{ TOME_SNAPSHOT: "missing.tome" }, 1, "start: snapshot not found: missing.tome."],
    [{ TOME_DUMP: "missing.xml.bz2" }, 1, "start: TOME_DUMP is missing.xml.bz2, which does not exist."],
  ])("a wrong %o is said before the data folder is touched: a fresh one is left empty", async (setting, exit, said) => {
    // Run where there is no snapshots/: TOME_DUMP is then read (a snapshot there would be served instead).
    const dir = tempDir("tome-wrong-setting-");
    const data = join(dir, "data");
    mkdirSync(data);
    const { code, stderr } = await runToExit(["bun", START], { TOME_DATA: data, ...setting }, dir);
    expect(stderr).toContain(said);
    expect(code).toBe(exit);
    // Before, keys.gen and a server.lock: the lock was taken, and the setting read, after.
    expect(readdirSync(data)).toEqual([]);
  });

  test("what start finds in snapshots/ is said once it holds the data folder: refused, it says only the refusal", async () => {
    const dir = tempDir("tome-held-folder-");
    mkdirSync(join(dir, "snapshots"));
    copyFileSync(await snapshotFor(DUMPS), join(dir, "snapshots", "served.tome"));
    writeFileSync(join(dir, "snapshots", "empty.tome"), "");
    const data = join(dir, "data");
    mkdirSync(data);
    // Held by this (live) process, as by another server.
    const release = lockDataFolder(data);
    try {
      const { code, stderr } = await runToExit(["bun", START], { TOME_DATA: data, TOME_DUMP: "simple" }, dir);
      expect(code).toBe(1);
      expect(stderr).toContain(`another Tome server (process ${process.pid}) uses the data folder`);
      // Before: "TOME_DUMP is set, but snapshots/served.tome exists: serving it", and the empty file skipped, said first.
      expect(stderr).not.toContain("serving it");
      expect(stderr).not.toContain("start: skipped");
    } finally {
      release();
    }
  });

  test("a snapshot written into snapshots/ while start connects to Redis is served, not built over", async () => {
    const dir = tempDir("tome-late-snapshot-");
    const snapshot = await snapshotFor(DUMPS);
    // A "Redis" that, once start connects (what to serve already planned), gets a snapshot written, as snapshot:build
    // would, then hangs up: an outage, which start rides out.
    const redis = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(socket) {
          mkdirSync(join(dir, "snapshots"), { recursive: true });
          copyFileSync(snapshot, join(dir, "snapshots", "late.tome"));
          socket.end();
        },
        data() {},
      },
    });
    try {
      const started = await startUnsearched({ CWD: dir, TOME_REDIS_URL: `redis://127.0.0.1:${redis.port}` });
      expect(await started.stop()).toBe(0);
      // Before: snapshots/ was listed before Redis was reached, found empty, and the sample built.
      expect(started.stderr()).not.toContain("building the sample");
      expect(started.stderr()).toContain("Loaded snapshots/late.tome:");
    } finally {
      redis.stop(true);
    }
  });

  test("a busy port is said before the data folder is touched; a server holding that folder too is said first", async () => {
    const other = Bun.listen({ hostname: "0.0.0.0", port: 0, socket: { data() {} } });
    const data = tempDir("tome-busy-port-");
    const run = async () =>
      runToExit(["bun", START], { TOME_DATA: data, TOME_SNAPSHOT: await snapshotFor(DUMPS), PORT: String(other.port) });
    try {
      const fresh = await run();
      expect(fresh.code).toBe(1);
      expect(fresh.stderr).toContain(`start: port ${other.port} is already in use`);
      // Before, keys.gen and a server.lock: the port was checked after the lock.
      expect(readdirSync(data)).toEqual([]);
      // Held by this (live) process, as by the Tome that has the port too: the lock is what keeps this one out.
      const release = lockDataFolder(data);
      try {
        const held = await run();
        expect(held.code).toBe(1);
        expect(held.stderr).toContain(`start: another Tome server (process ${process.pid}) uses the data folder`);
        expect(held.stderr).toContain(`server.lock. And port ${other.port} is already in use`);
      } finally {
        release();
      }
    } finally {
      other.stop(true);
    }
  });
});
