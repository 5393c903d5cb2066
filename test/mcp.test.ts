/**
 * The MCP server, through the official SDK's client: over stdio (`bun src/cli/mcp.ts` on a
 * snapshot of the shared English dumps) and over HTTP (POST /mcp on the real server, with a
 * key). Each tool's structured content is checked against what the REST route answers for the
 * same question on the same snapshot; /mcp is checked for its key, credit, work share and methods.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { closeSync, copyFileSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { PassThrough } from "node:stream";
import { transportInput } from "../src/cli/mcp-serve";
import { Access, createKey, updateKeyFile, usagePath } from "../src/access";
import { writeUsage } from "../src/access/usage";
import { apiContext, createApp, mcpTools, serve } from "../src/http";
import { type Engine, open } from "../src/search";
import { ChangesQuery, ChunkParams, PageQuery, SearchQuery } from "../src/http/schemas";
import { toolsOf } from "../src/http/mcp/tools";
import { isServed } from "../src/http/mcp/server";
import { ClientRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  EN_2006,
  EN_2016,
  engineFor,
  ROOT,
  runToExit,
  snapshotFor,
  startServer,
  tempDir,
  type ServerProcess,
  wikiOf,
} from "./helpers";

setDefaultTimeout(120_000);

type Json = Record<string, any>;
const DUMPS = { dumps: [EN_2016, EN_2006] };
const TOOLS = ["search", "get_page", "get_chunk", "lucky", "changes"];

let snapshot: string;
let server: ServerProcess;
let key: string;

/** A key on its own account, on a plan with a monthly quota (so X-Quota-Remaining counts). */
function keyIn(dir: string, name: string, plan: "business" | "free" = "business"): string {
  return updateKeyFile(dir, (f) => createKey(f, { name, account: name, plan, scope: "read", now: Date.now() })).key;
}

/** What a JSON-RPC POST to /mcp sends beside its key (the Streamable HTTP transport's Accept). */
const MCP_HEADERS = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

beforeAll(async () => {
  snapshot = await snapshotFor(DUMPS);
  const dir = tempDir("tome-data-");
  key = keyIn(dir, "mcp");
  server = await startServer({ TOME_SNAPSHOT: snapshot, TOME_DATA: dir });
});

afterAll(async () => {
  await server?.stop();
});

async function rest(path: string): Promise<Json> {
  const r = await fetch(server.url + path, { headers: { "X-API-Key": key } });
  expect(r.status).toBe(200);
  return (await r.json()) as Json;
}

/** A page or lucky body as get_page and lucky answer it: the passages' text is in the text content only (D59). */
function textless(body: Json): Json {
  const { text: _, ...rest } = body;
  const out: Json = {
    ...rest,
    chunks: { ...body.chunks, results: body.chunks.results.map(({ text: _text, ...chunk }: Json) => chunk) },
  };
  if (body.search_context) {
    const { text: _matched, ...matched } = body.search_context.matched_chunk;
    out.search_context = { ...body.search_context, matched_chunk: matched };
  }
  return out;
}

/** A body without the times, which differ from one answer to the next. */
function timeless(body: Json): Json {
  const { processingTimeMs: _, ...rest } = body;
  if (rest.search_context) rest.search_context = { ...rest.search_context, search_time_ms: 0 };
  return rest;
}

/** `bun run mcp` over stdio, serving `file`; what it writes to stderr goes to `heard`. */
async function stdioClient(file = snapshot, heard?: (text: string) => void): Promise<Client> {
  const client = new Client({ name: "tome-test", version: "1" });
  const env = { ...(process.env as Record<string, string>), TOME_SNAPSHOT: file };
  const transport = new StdioClientTransport({
    command: "bun",
    args: [join(ROOT, "src/cli/mcp.ts")],
    cwd: ROOT,
    env,
    stderr: "pipe",
  });
  if (heard) transport.stderr?.on("data", (data: Buffer) => heard(data.toString()));
  await client.connect(transport);
  return client;
}

/** A client of `tools`' server in this process, linked in memory. */
async function inMemoryClient(tools: ReturnType<typeof mcpTools>): Promise<Client> {
  const [near, far] = InMemoryTransport.createLinkedPair();
  await tools.server().connect(far);
  const client = new Client({ name: "tome-test", version: "1" });
  await client.connect(near);
  return client;
}

/** An HTTP client with the key; `seen` collects every answer's status and X-Quota-Remaining. */
async function httpClient(seen: { method: string; status: number; quota: string | null }[] = []): Promise<Client> {
  const client = new Client({ name: "tome-test", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { "X-API-Key": key } },
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      seen.push({
        method: init?.method ?? "GET",
        status: response.status,
        quota: response.headers.get("x-quota-remaining"),
      });
      return response;
    },
  });
  await client.connect(transport);
  return client;
}

const text = (result: Json) => (result.content as { type: string; text: string }[]).map((c) => c.text).join("\n");

for (const [name, connect] of [
  ["stdio", stdioClient],
  ["HTTP", () => httpClient()],
] as const) {
  describe(`over ${name}`, () => {
    let client: Client;
    beforeAll(async () => {
      client = await connect();
    });
    afterAll(async () => {
      await client?.close();
    });

    test("lists the five tools, each described for a model, with the REST routes' schemas as input", async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(TOOLS);
      for (const tool of tools) {
        expect(tool.description).toContain("attribution");
        expect(tool.annotations?.readOnlyHint).toBe(true);
        expect(tool.outputSchema?.type).toBe("object");
      }
      const input = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema as Json]));
      expect(input.search!.required).toEqual(["q"]);
      expect(input.search!.properties.limit).toMatchObject({
        type: "integer",
        minimum: 1,
        maximum: SearchQuery.properties.limit.maximum,
        default: 10,
      });
      expect(input.search!.properties.q).toMatchObject({
        type: "string",
        maxLength: SearchQuery.properties.q.maxLength,
      });
      expect(Object.keys(input.search!.properties)).toEqual(Object.keys(SearchQuery.properties));
      // The article tools answer a window of 10 passages by default, and take no format (D59).
      expect(Object.keys(input.get_page!.properties)).toEqual(["page_id", "max_chunks", "offset"]);
      expect(input.get_page!.properties.max_chunks).toMatchObject({
        type: "integer",
        minimum: 1,
        maximum: PageQuery.properties.max_chunks.maximum,
        default: 10,
      });
      expect(input.get_page!.required).toEqual(["page_id"]);
      // Its parts are D3 integers (D11), as the REST route reads them.
      expect(input.get_chunk!.properties.id.pattern).toBe(ChunkParams.properties.id.pattern);
      expect(Object.keys(input.lucky!.properties)).toEqual(["q", "max_chunks"]);
      expect(input.lucky!.properties.max_chunks.default).toBe(10);
      expect(Object.keys(input.changes!.properties)).toEqual(Object.keys(ChangesQuery.properties));
      expect(input.changes!.properties.since.anyOf).toHaveLength(2);
    });

    test("search: the REST body as structured content, the passages and their attribution as text", async () => {
      const result = (await client.callTool({ name: "search", arguments: { q: "albedo", limit: 3 } })) as Json;
      expect(result.isError).toBeFalsy();
      const expected = await rest("/v1/search?q=albedo&limit=3");
      expect(timeless(result.structuredContent)).toEqual(timeless(expected));
      const first = expected.hits[0];
      expect(first.title).toBe("Albedo");
      const shown = text(result);
      expect(shown).toContain(first.url);
      expect(shown).toContain(first.source.permalink);
      expect(shown).toContain(`passage ${first.id}`);
      expect(shown).toContain(first.text.slice(0, 200));
      expect(shown).toContain(expected.attribution.attribution_notice);
    });

    test("get_page: a window of the article, as /v1/page answers it, the passages' text in the text only", async () => {
      const result = (await client.callTool({
        name: "get_page",
        arguments: { page_id: 39, max_chunks: 2, offset: 1 },
      })) as Json;
      const expected = await rest("/v1/page/39?max_chunks=2&offset=1");
      expect(result.structuredContent).toEqual(textless(expected));
      const shown = text(result);
      expect(shown).toContain("Albedo (page_id 39");
      expect(shown).toContain("Passages 2 to 3 of");
      expect(shown).toContain(expected.chunks.results[1].text);
      expect(shown).toContain(`follow: get_page with page_id 39 and offset 3.`);
      expect(shown).toContain(expected.attribution.attribution_notice);
      // By default a window of 10 passages.
      const first = (await client.callTool({ name: "get_page", arguments: { page_id: 39 } })) as Json;
      expect(first.structuredContent).toEqual(textless(await rest("/v1/page/39?max_chunks=10")));
    });

    test("get_chunk: the chunk as /v1/chunk answers it, with the page's attribution", async () => {
      const result = (await client.callTool({ name: "get_chunk", arguments: { id: "39_0" } })) as Json;
      const chunk = await rest("/v1/chunk/39_0");
      const page = await rest("/v1/page/39?max_chunks=1");
      expect(result.structuredContent).toEqual({ ...chunk, attribution: page.attribution });
      expect(text(result)).toContain(chunk.text);
      expect(text(result)).toContain(page.attribution.attribution_notice);
    });

    test("lucky: the article's first 10 passages, as /v1/lucky answers them, their text in the text only", async () => {
      const result = (await client.callTool({ name: "lucky", arguments: { q: "albedo" } })) as Json;
      const whole = await rest("/v1/lucky?q=albedo&format=chunks");
      expect(whole.page.title).toBe("Albedo");
      expect(whole.chunks.total).toBeGreaterThan(10);
      const window = { ...whole, chunks: { ...whole.chunks, results: whole.chunks.results.slice(0, 10), limit: 10 } };
      expect(timeless(result.structuredContent)).toEqual(timeless(textless(window)));
      const shown = text(result);
      expect(shown).toContain('The article for "albedo"');
      for (const chunk of window.chunks.results) expect(shown).toContain(chunk.text);
      expect(shown).not.toContain(whole.chunks.results[10].text);
      expect(shown).toContain(`follow: get_page with page_id ${whole.page.page_id} and offset 10.`);
      expect(shown).toContain(whole.attribution.attribution_notice);
      // max_chunks asks for the article whole.
      const all = (await client.callTool({ name: "lucky", arguments: { q: "albedo", max_chunks: 1000 } })) as Json;
      expect(timeless(all.structuredContent)).toEqual(
        timeless(textless({ ...whole, chunks: { ...whole.chunks, limit: 1000 } })),
      );
      for (const chunk of whole.chunks.results) expect(text(all)).toContain(chunk.text);
    });

    test("changes: since as an RFC 3339 date, as /v1/changes answers it", async () => {
      const result = (await client.callTool({
        name: "changes",
        arguments: { since: "2016-04-18T23:12:22Z", limit: 3 },
      })) as Json;
      const expected = await rest("/v1/changes?since=2016-04-18T23:12:22Z&limit=3");
      expect(result.structuredContent).toEqual(expected);
      expect(expected.results[0].page_id).toBe(39);
      expect(text(result)).toContain(`- Albedo (page_id 39`);
      expect(text(result)).toContain(expected.attribution.attribution_notice);
    });

    test("a bad argument, or no such page, is a tool error with the route's message", async () => {
      const fails = async (tool: string, args: Json) => {
        const result = (await client.callTool({ name: tool, arguments: args })) as Json;
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toBeUndefined();
        return text(result);
      };
      expect(await fails("search", { q: "albedo", limit: 99 })).toBe(
        "invalid_parameter: limit must be an integer from 1 to 50 (base-10 digits).",
      );
      expect(await fails("search", { q: "albedo", limit: 2.5 })).toBe(
        "invalid_parameter: limit must be an integer from 1 to 50 (base-10 digits).",
      );
      expect(await fails("search", { q: "   " })).toBe("missing q: The argument q is required.");
      expect(await fails("search", { q: " \u0085 " })).toBe("missing q: The argument q is required.");
      expect(await fails("search", {})).toBe("missing q: The argument q is required.");
      expect(await fails("search", { q: "x".repeat(501) })).toBe(
        "invalid_parameter: q must be at most 500 characters.",
      );
      expect(await fails("search", { q: "albedo", limt: 5 })).toContain(
        "Unknown argument limt: this tool takes q, limit,",
      );
      expect(await fails("search", { q: ["albedo"] })).toBe(
        "invalid_parameter: q must be a string, a number or a boolean.",
      );
      expect(await fails("get_page", { page_id: "abc" })).toStartWith(
        "page_id must be an integer: page_id must be an integer from 0 to",
      );
      expect(await fails("get_page", { page_id: 1 })).toBe("not found: There is no page with id 1.");
      expect(await fails("get_page", { page_id: 39, format: "concat" })).toBe(
        "invalid_parameter: Unknown argument format: this tool takes page_id, max_chunks, offset.",
      );
      expect(await fails("get_page", { page_id: 39, max_chunks: 0 })).toStartWith(
        "invalid_parameter: max_chunks must be an integer from 1 to",
      );
      expect(await fails("get_chunk", { id: "39-0" })).toBe(
        "invalid_parameter: id must be of the form {page_id}_{chunk_id}, each an integer from 0 to 9007199254740991.",
      );
      expect(await fails("get_chunk", { id: "39_99999" })).toBe("not found: There is no chunk with id 39_99999.");
      expect(await fails("lucky", { q: "zzqxjv" })).toBe("no results found: No page matches this query.");
      expect(await fails("changes", { since: "yesterday" })).toStartWith("since must be unix seconds or RFC3339: ");
      // The server is still there.
      expect(((await client.callTool({ name: "get_chunk", arguments: { id: "39_0" } })) as Json).isError).toBeFalsy();
    });

    test('an unknown tool is a protocol error naming the tools, its message said once (not "MCP error -32602: MCP error -32602: …"); a long name quoted to 200 characters', async () => {
      const tools = "the tools are search, get_page, get_chunk, lucky, changes.";
      for (const [name, said] of [
        ["find", "find"],
        ["__proto__", "__proto__"],
        ["constructor", "constructor"],
        ["x".repeat(20_000), `${"x".repeat(200)}…`],
        // A lone half of a surrogate pair is said as U+FFFD: left out, "a" named a tool never sent.
        ["a\ud800", "a\ufffd"],
        ["\udc00b", "\ufffdb"],
      ]) {
        const error = await client.callTool({ name: name!, arguments: {} }).catch((e: Error) => e);
        expect(error).toMatchObject({ code: -32602, message: `MCP error -32602: There is no tool ${said}: ${tools}` });
      }
    });
  });
}

/** A raw JSON-RPC POST to /mcp (stateless: a tools/call needs no initialize first). */
function post(message: Json, headers: Record<string, string> = {}, url = server.url): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
  });
}

/** The JSON-RPC messages the stdio server wrote, a line each, read until `enough` holds of its output (or it ends). */
async function stdoutAnswers(proc: { stdout: ReadableStream<Uint8Array> }, enough: (out: string) => boolean) {
  const reader = proc.stdout.getReader();
  let out = "";
  while (!enough(out)) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  return out
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Json);
}

describe("/mcp on the server", () => {
  test("needs a key: 401 without one", async () => {
    const r = await post({ id: 1, method: "tools/list" });
    expect(r.status).toBe(401);
    expect(((await r.json()) as Json).error).toBeString();
  });

  test("each answered call costs one credit (X-Quota-Remaining moves by one), a tool error included; the notification none (D32)", async () => {
    const seen: { method: string; status: number; quota: string | null }[] = [];
    const client = await httpClient(seen);
    try {
      await client.callTool({ name: "search", arguments: { q: "albedo" } });
      await client.callTool({ name: "search", arguments: { q: "albedo", limit: 99 } });
    } finally {
      await client.close();
    }
    const posts = seen.filter((s) => s.method === "POST");
    // initialize, notifications/initialized (202, asking for no work), then the two calls.
    expect(posts.map((p) => p.status)).toEqual([200, 202, 200, 200]);
    const quotas = posts.map((p) => Number(p.quota));
    expect(quotas.slice(1).map((q, i) => quotas[i]! - q)).toEqual([0, 1, 1]);
    // The client's GET for a server stream is refused (stateless), without a key and without a charge.
    expect(seen.filter((s) => s.method === "GET").map((s) => s.status)).toEqual([405]);
  });

  test("lucky for a long article is bounded by default, and sends each passage's text once (D59)", async () => {
    const call = async (args: Json) => {
      const r = await post(
        { id: 1, method: "tools/call", params: { name: "lucky", arguments: { q: "Abraham Lincoln", ...args } } },
        { "X-API-Key": key },
      );
      expect(r.status).toBe(200);
      const raw = await r.text();
      return { raw, result: JSON.parse(raw).result as Json };
    };
    const { raw, result } = await call({});
    expect(result.structuredContent.page.title).toBe("Abraham Lincoln");
    const pageId = result.structuredContent.page.page_id;
    const all = await rest(`/v1/page/${pageId}`);
    expect(all.chunks.total).toBeGreaterThan(10);
    const wholeBytes = all.chunks.results.reduce((n: number, c: Json) => n + c.text.length, 0);
    expect(raw.length).toBeLessThan(wholeBytes / 3);
    expect(result.structuredContent.chunks.results).toHaveLength(10);
    // Each passage shown appears once in the answer, in the text content.
    const times = (haystack: string, needle: string) => haystack.split(needle).length - 1;
    for (const chunk of all.chunks.results.slice(0, 10))
      expect(times(raw, JSON.stringify(chunk.text).slice(1, -1))).toBe(1);
    // The passage that matched is in the text once, in the window or after it.
    const one = await call({ max_chunks: 1 });
    const matched = one.result.structuredContent.search_context.matched_chunk;
    expect(matched.text).toBeUndefined();
    expect(times(one.raw, JSON.stringify(all.chunks.results[matched.chunk_id].text).slice(1, -1))).toBe(1);
    const more = await call({ max_chunks: 200_000 });
    expect(more.result.structuredContent.chunks.results).toHaveLength(all.chunks.total);
    for (const chunk of all.chunks.results) expect(times(more.raw, JSON.stringify(chunk.text).slice(1, -1))).toBe(1);
  });

  test("a tools/call answers JSON with the key's limits", async () => {
    const r = await post(
      { id: 7, method: "tools/call", params: { name: "get_chunk", arguments: { id: "39_0" } } },
      { "X-API-Key": key },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(r.headers.get("x-quota-remaining")).toMatch(/^[0-9]+$/);
    const body = (await r.json()) as Json;
    expect(body.id).toBe(7);
    expect(body.result.structuredContent.id).toBe("39_0");
  });

  test("the search tool's text counts its hits in words a model reads: 1 hit, 2 hits", async () => {
    for (const [limit, head] of [
      [1, '1 hit for "albedo", from 1'],
      [2, '2 hits for "albedo", from 1'],
    ] as const) {
      const r = await post(
        { id: 8, method: "tools/call", params: { name: "search", arguments: { q: "albedo", limit } } },
        { "X-API-Key": key },
      );
      const body = (await r.json()) as Json;
      expect(body.result.content[0].text).toStartWith(head);
    }
  });

  test("the tools' text quotes a query as a JSON string: a phrase's quotes escaped, not doubled", async () => {
    const said = async (name: string, q: string) => {
      const r = await post({ id: 9, method: "tools/call", params: { name, arguments: { q } } }, { "X-API-Key": key });
      return ((await r.json()) as Json).result.content[0].text as string;
    };
    expect(await said("search", '"black-sky albedo"')).toContain(' for "\\"black-sky albedo\\"", from 1');
    expect(await said("search", '"zzqxv wqpfj"')).toStartWith('No passage matches "\\"zzqxv wqpfj\\""');
    expect(await said("lucky", '"black-sky albedo"')).toStartWith('The article for "\\"black-sky albedo\\""');
  });

  test("If-None-Match is not a GET's here: a tool call's answer is sent and charged, never a free 304, and not stored", async () => {
    const call = (name: string, args: Json, headers: Record<string, string> = {}) =>
      post({ id: 1, method: "tools/call", params: { name, arguments: args } }, { "X-API-Key": key, ...headers });
    const quotaOf = (r: Response) => Number(r.headers.get("x-quota-remaining"));
    for (const [name, args] of [
      ["search", { q: "albedo" }],
      ["get_page", { page_id: 39 }],
    ] as const) {
      const before = await call("get_chunk", { id: "39_0" });
      const r = await call(name, args, { "If-None-Match": "*" });
      expect({ name, status: r.status, spent: quotaOf(before) - quotaOf(r) }).toEqual({ name, status: 200, spent: 1 });
      expect(((await r.json()) as Json).result.structuredContent).toBeDefined();
      expect([r.headers.get("etag"), r.headers.get("cache-control")]).toEqual([null, "no-store"]);
    }
  });

  test("takes POST (and OPTIONS) only; the REST routes still refuse POST", async () => {
    for (const method of ["GET", "HEAD", "DELETE", "PUT"]) {
      const r = await fetch(`${server.url}/mcp`, { method, headers: { "X-API-Key": key } });
      expect({ method, status: r.status, allow: r.headers.get("allow") }).toEqual({
        method,
        status: 405,
        allow: "POST, OPTIONS",
      });
    }
    const preflight = await fetch(`${server.url}/mcp`, { method: "OPTIONS" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("Mcp-Protocol-Version");
    const search = await fetch(`${server.url}/v1/search?q=albedo`, { method: "POST", headers: { "X-API-Key": key } });
    expect(search.status).toBe(405);
    expect(search.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });

  test("a request whose params its schema refuses is -32602 Invalid params saying what is wrong, not -32603", async () => {
    const cases: [Json, string][] = [
      [{ method: "initialize", params: {} }, "Invalid params for initialize: params.protocolVersion: Invalid input"],
      [{ method: "tools/call" }, "Invalid params for tools/call: params: Invalid input"],
      [{ method: "tools/call", params: { name: "search", arguments: ["albedo"] } }, "params.arguments: Invalid input"],
    ];
    for (const [message, said] of cases) {
      const r = await post({ id: "x", ...message }, { "X-API-Key": key });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const body = (await r.json()) as Json;
      expect(body).toEqual({
        jsonrpc: "2.0",
        id: "x",
        error: { code: -32602, message: expect.stringContaining(said) },
      });
    }
  });

  test("a notification whose params its schema refuses is 400 -32602 (id null), as MCP says of one the server cannot accept, not 202", async () => {
    const r = await post({ method: "notifications/cancelled", params: { requestId: {} } }, { "X-API-Key": key });
    expect({ status: r.status, body: await r.json() }).toEqual({
      status: 400,
      body: {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32602,
          message:
            "Invalid params: the notifications/cancelled notification's params are not as MCP says (params.requestId: Invalid input).",
        },
      },
    });
    for (const message of [
      { method: "notifications/initialized" },
      { method: "notifications/cancelled", params: { requestId: 7 } },
    ]) {
      const accepted = await post(message, { "X-API-Key": key });
      expect({ message, status: accepted.status }).toEqual({ message, status: 202 });
    }
  });

  test("an argument named __proto__ is refused (D33), not dropped unseen with the call run without it", async () => {
    const r = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, "X-API-Key": key },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"albedo","__proto__":{"limit":"x"}}}}',
    });
    const body = (await r.json()) as Json;
    expect(body.result).toBeUndefined();
    expect(body.error).toEqual({ code: -32602, message: expect.stringContaining("params.arguments.__proto__") });
  });

  test("a request asking for a task is answered as without: Tome declares no tasks, so it ignores it (MCP 2025-11-25)", async () => {
    const r = await post(
      { id: 3, method: "tools/call", params: { name: "get_chunk", arguments: { id: "39_0" }, task: { ttl: 60_000 } } },
      { "X-API-Key": key },
    );
    expect(r.status).toBe(200);
    const body = (await r.json()) as Json;
    expect(body.error).toBeUndefined();
    expect(body.result.structuredContent.id).toBe("39_0");
    const ping = await post({ id: 4, method: "ping", params: { task: {} } }, { "X-API-Key": key });
    expect(await ping.json()).toEqual({ jsonrpc: "2.0", id: 4, result: {} });
  });

  /** What `message` cost: X-Quota-Remaining after a charged tools/list, less after it; and its answer's status and JSON-RPC error code. */
  const spentOn = async (message: Json) => {
    const quotaOf = (r: Response) => Number(r.headers.get("x-quota-remaining"));
    const before = await post({ id: 0, method: "tools/list" }, { "X-API-Key": key });
    expect(before.status).toBe(200);
    const r = await post(message, { "X-API-Key": key });
    const text = await r.text();
    return { status: r.status, code: text && JSON.parse(text).error?.code, spent: quotaOf(before) - quotaOf(r) };
  };

  test("a call answered -32601 (method not found) costs no credit, as REST's 404 (D32)", async () => {
    expect(await spentOn({ id: 1, method: "resources/list" })).toEqual({ status: 200, code: -32601, spent: 0 });
  });

  test("a tools/call of a tool that is not costs no credit (-32602, D32)", async () => {
    const message = { id: 1, method: "tools/call", params: { name: "get_pages", arguments: { page_id: 39 } } };
    expect(await spentOn(message)).toEqual({ status: 200, code: -32602, spent: 0 });
  });

  test("a tools/call whose arguments are an array costs no credit (-32602, D32)", async () => {
    const message = { id: 1, method: "tools/call", params: { name: "get_page", arguments: [] } };
    expect(await spentOn(message)).toEqual({ status: 200, code: -32602, spent: 0 });
  });

  test("a notification costs no credit (202, D32)", async () => {
    const message = { method: "notifications/cancelled", params: { requestId: 7 } };
    expect(await spentOn(message)).toEqual({ status: 202, code: "", spent: 0 });
  });

  test("a JSON-RPC response sent to the server costs no credit (202, D32)", async () => {
    expect(await spentOn({ id: 7, result: {} })).toEqual({ status: 202, code: "", spent: 0 });
  });

  test("a tool call that ran costs one credit, a tool error included (D32)", async () => {
    const message = {
      id: 1,
      method: "tools/call",
      params: { name: "get_page", arguments: { page_id: 39, limit: -1 } },
    };
    expect(await spentOn(message)).toEqual({ status: 200, code: undefined, spent: 1 });
  });

  test("a JSON-RPC batch is refused whole (400, -32600), costing no credit: each call is its own request (D54)", async () => {
    const call = (i: number) => ({
      jsonrpc: "2.0",
      id: i,
      method: "tools/call",
      params: { name: "get_page", arguments: { page_id: 39 } },
    });
    const quotaOf = (r: Response) => Number(r.headers.get("x-quota-remaining"));
    const before = await post({ id: 0, method: "tools/list" }, { "X-API-Key": key });
    const batch = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, "X-API-Key": key },
      body: JSON.stringify(Array.from({ length: 100 }, (_, i) => call(i))),
    });
    expect(batch.status).toBe(400);
    const body = (await batch.json()) as Json;
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toContain("one message per request");
    expect(JSON.stringify(body)).not.toContain("structuredContent");
    // The tools/list cost one credit; the refused batch none.
    expect(quotaOf(batch)).toBe(quotaOf(before));
    const single = await post(call(1), { "X-API-Key": key });
    expect(single.status).toBe(200);
    expect(quotaOf(single)).toBe(quotaOf(before) - 1);
  });

  test("a body nested past 32 levels is refused (400) before it is parsed, a body over 64 KiB with 413, neither charged", async () => {
    const raw = (body: string) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, "X-API-Key": key },
        body,
      });
    const deep = await raw("[".repeat(30_000) + "]".repeat(30_000));
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as Json).error.message).toContain("nests deeper than 32");
    const hidden = await raw(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "search", arguments: { q: 1 } },
      }).replace("1}}}", `${"[".repeat(40)}1${"]".repeat(40)}}}}`),
    );
    expect(hidden.status).toBe(400);
    // A string full of brackets is not nesting.
    const quoted = await post(
      {
        id: 2,
        method: "tools/call",
        params: { name: "search", arguments: { q: "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[albedo" } },
      },
      { "X-API-Key": key },
    );
    expect(quoted.status).toBe(200);
    const large = await raw(
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(70_000) } }),
    );
    expect(large.status).toBe(413);
    expect(Number(large.headers.get("x-quota-remaining"))).toBe(Number(quoted.headers.get("x-quota-remaining")));
    expect(Number(hidden.headers.get("x-quota-remaining"))).toBe(Number(deep.headers.get("x-quota-remaining")));
  });

  test("a message of more than 256 members and elements in all is refused (400, -32600) uncharged; one of 256 is served (D155)", async () => {
    // get_chunk's call has 7 members (4, params' 2, arguments' 1); the rest widen its params, as the SDK lets them.
    const widened = (members: number) => {
      const params: Json = { name: "get_chunk", arguments: { id: "39_0" } };
      for (let i = 0; i < members - 7; i++) params[`k${i}`] = i % 2 ? [] : {};
      return { id: 1, method: "tools/call", params };
    };
    const quotaOf = (r: Response) => Number(r.headers.get("x-quota-remaining"));
    const at = await post(widened(256), { "X-API-Key": key });
    expect(at.status).toBe(200);
    expect(((await at.json()) as Json).result.structuredContent.id).toBe("39_0");
    const over = await post(widened(257), { "X-API-Key": key });
    expect(over.status).toBe(400);
    expect(await over.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: expect.stringContaining("more than 256 object members and array elements") },
    });
    expect(quotaOf(over)).toBe(quotaOf(at));
    // An array's elements count as an object's members do, and so do those of every level.
    const nested = await post(
      {
        id: 1,
        method: "tools/call",
        params: { name: "search", arguments: { q: "albedo" }, _meta: { x: [[...Array(250).keys()]] } },
      },
      { "X-API-Key": key },
    );
    expect(nested.status).toBe(400);
    expect(quotaOf(nested)).toBe(quotaOf(at));
    // A batch is still refused as one (D54), and its nesting still read to its end before it is parsed.
    const pings = Array.from({ length: 300 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" }));
    const raw = (body: string) =>
      fetch(`${server.url}/mcp`, { method: "POST", headers: { ...MCP_HEADERS, "X-API-Key": key }, body });
    const batch = (await (await raw(JSON.stringify(pings))).json()) as Json;
    expect(batch.error.message).toContain("JSON-RPC batches are not accepted");
    const deep = (await (
      await raw(`${JSON.stringify(pings).slice(0, -1)},${"[".repeat(40)}${"]".repeat(40)}]`)
    ).json()) as Json;
    expect(deep.error.message).toContain("nests deeper than 32");
  });

  /**
   * One server with a small work share for both tools' tests, each with keys of its own (the share is per key): 2 ms a
   * second, which get_page, answered from the page table and far cheaper than a search, needs to show it is counted.
   */
  const shared = { dir: tempDir("tome-data-"), server: undefined as Promise<ServerProcess> | undefined };
  afterAll(async () => {
    await (await shared.server)?.stop();
  });

  test.each(["search", "get_page"])(
    "%s calls count their time against the key's work share (429 rate_limit_exceeded)",
    async (tool) => {
      const dir = shared.dir;
      const heavy = keyIn(dir, `heavy-${tool}`);
      const other = keyIn(dir, `other-${tool}`);
      shared.server ??= startServer({ TOME_SNAPSHOT: snapshot, TOME_DATA: dir, TOME_KEY_MS_PER_SECOND: "2" });
      const small = await shared.server;
      const q = "the of and in to a is was for on as by with from that at his which";
      const args = tool === "search" ? { q, limit: 50 } : { page_id: 39 };
      // Warm the chunk route with a key of its own (a first answer also compiles the route), then let that activity age out.
      await (
        await fetch(`${small.url}/v1/chunk/39_0`, { headers: { "X-API-Key": keyIn(dir, `warm-${tool}`) } })
      ).arrayBuffer();
      await Bun.sleep(1100);
      const statuses: number[] = [];
      let refusal: Json | undefined;
      for (let i = 0; i < 40 && !refusal; i++) {
        // The share binds only while another key has been active in the last second (a few cheap chunks keep it within its own).
        if (i % 5 === 0)
          expect((await fetch(`${small.url}/v1/chunk/39_0`, { headers: { "X-API-Key": other } })).status).toBe(200);
        const r = await post(
          { id: i, method: "tools/call", params: { name: tool, arguments: args } },
          { "X-API-Key": heavy },
          small.url,
        );
        statuses.push(r.status);
        const body = (await r.json()) as Json;
        if (r.status === 429) refusal = body;
      }
      expect(statuses[0]).toBe(200);
      expect(refusal).toEqual({
        error: "rate_limit_exceeded",
        message: expect.stringContaining("share of the server's time"),
        retry_after: expect.any(Number),
      });
    },
  );
});

/** `n` tools/call lines asking for a whole page (its every chunk): answers large enough to fill a pipe. */
const bigPageCalls = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "get_page", arguments: { page_id: 39, max_chunks: 1000 } },
    }),
  );

describe("bun run mcp", () => {
  /** bun run mcp on the English sample, its stdin a pipe: the options but stdout's and stderr's. */
  const mcpSpawn = async () => ({
    cmd: ["bun", join(ROOT, "src/cli/mcp.ts")],
    cwd: ROOT,
    env: { ...process.env, TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2016] }) },
    stdin: "pipe" as const,
  });
  const mcpOverStdio = async <E extends "pipe" | "ignore">(stderr: E) =>
    Bun.spawn({ ...(await mcpSpawn()), stdout: "pipe", stderr });
  const run = (args: string[], env: Record<string, string>, cwd = ROOT) =>
    runToExit(["bun", join(ROOT, "src/cli/mcp.ts"), ...args], env, cwd);

  test("--help says how to run it and which snapshot it serves", async () => {
    const r = await run(["--help"], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("TOME_SNAPSHOT");
    expect(r.stdout).toContain("/mcp");
  });

  test("a line it cannot read is answered and said on stderr; one over 10 MB closes it, said, exit 1 (stdout stays the protocol's)", async () => {
    const proc = await mcpOverStdio("pipe");
    // The server stops reading once past the bound: the rest of the write finds the pipe closed.
    try {
      proc.stdin.write("not json\n");
      proc.stdin.write("x".repeat(11 * 1024 * 1024));
      await proc.stdin.flush();
    } catch {}
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(code).toBe(1);
    expect(stdout.split("\n").map((line) => line && (JSON.parse(line) as Json).error?.code)).toEqual([-32700, ""]);
    expect(stderr).toContain("mcp: JSON Parse error");
    expect(stderr).toContain("mcp: the connection is closed (ReadBuffer exceeded maximum size");
  });

  test("a line that is not JSON is answered -32700 Parse error, JSON that is no message -32600 Invalid Request (id null, JSON-RPC 2.0), and it serves on; each said in one line on stderr", async () => {
    const proc = await mcpOverStdio("pipe");
    try {
      for (const line of ["not json", '{"jsonrpc":"2.0"', JSON.stringify({ method: "ping" }), "[]"])
        proc.stdin.write(`${line}\n`);
      proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
      await proc.stdin.flush();
      // Until the ping's answer: before, the lines it could not read had none, and the ping's came alone.
      const answers = await stdoutAnswers(proc, (out) => out.includes('"id":1'));
      const refusal = (code: number, message: string) => ({
        jsonrpc: "2.0",
        id: null,
        error: { code, message: expect.stringMatching(new RegExp(`^${message}: `)) },
      });
      expect(answers).toEqual([
        refusal(-32700, "Parse error"),
        refusal(-32700, "Parse error"),
        refusal(-32600, "Invalid Request"),
        refusal(-32600, "Invalid Request"),
        { jsonrpc: "2.0", id: 1, result: {} },
      ]);
    } finally {
      proc.kill();
    }
    // Before, each -32600 was the SDK's schema issues as indented JSON, some twenty lines.
    const said = (await new Response(proc.stderr).text()).split("\n").filter((line) => !line.includes("serving"));
    expect(said.filter(Boolean)).toEqual([
      expect.stringMatching(/^mcp: JSON Parse error: /),
      expect.stringMatching(/^mcp: JSON Parse error: /),
      "mcp: a line is JSON but no JSON-RPC 2.0 message (answered -32600 Invalid Request)",
      "mcp: a line is JSON but no JSON-RPC 2.0 message (answered -32600 Invalid Request)",
    ]);
  });

  test('a line whose "params" is an array or null is told so (-32600), as over HTTP, not what a request has', async () => {
    const proc = await mcpOverStdio("pipe");
    try {
      for (const params of [[], null, "x"])
        proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params })}\n`);
      proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
      await proc.stdin.flush();
      const answers = await stdoutAnswers(proc, (out) => out.includes('"id":1'));
      const told = (kind: string) => ({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: `Invalid Request: "params" is ${kind}, where MCP takes an object (named members, not JSON-RPC's by position), or no params at all.`,
        },
      });
      expect(answers).toEqual([
        told("an array"),
        told("null"),
        told("a string"),
        { jsonrpc: "2.0", id: 1, result: {} },
      ]);
    } finally {
      proc.kill();
    }
  });

  test("a line starting with a UTF-8 byte order mark (as some Windows clients write the first) is read as the JSON after it; a mark inside a line is still -32700", async () => {
    const proc = await mcpOverStdio("ignore");
    const bom = "\ufeff";
    const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
    try {
      proc.stdin.write(`${bom}${ping(1)}\n${bom}${ping(2)}\r\n`);
      // A mark split between writes, then one inside a line.
      proc.stdin.write(Buffer.from(bom).subarray(0, 2));
      await proc.stdin.flush();
      proc.stdin.write(Buffer.concat([Buffer.from(bom).subarray(2), Buffer.from(`${ping(3)}\n`)]));
      proc.stdin.write(`{${bom}"jsonrpc":"2.0","id":4,"method":"ping"}\n${ping(5)}\n`);
      await proc.stdin.flush();
      const answers = await stdoutAnswers(proc, (out) => out.includes('"id":5'));
      // A line it cannot read is answered at once, before the pings' answers: by id, not in order.
      expect(Object.fromEntries(answers.map((a) => [String(a.id), a.error?.code ?? "ok"]))).toEqual({
        1: "ok",
        2: "ok",
        3: "ok",
        null: -32700,
        5: "ok",
      });
      expect(answers).toHaveLength(5);
    } finally {
      proc.kill();
    }
  });

  test("stdin closed after the last request: it exits 0 with every answer written; a client gone from stdout ends it quietly", async () => {
    const calls = bigPageCalls(40);
    const proc = await mcpOverStdio("pipe");
    proc.stdin.write(`${calls.join("\n")}\n`);
    await proc.stdin.end();
    // A client reading slowly: the pipe is full before the answers are all written. (The wait only lets the server
    // reach stdin's end meanwhile; it does not decide what is asserted.)
    await Promise.race([proc.exited, Bun.sleep(2_000)]);
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    // Before, it exited on stdin's end at once, answers still queued lost (10 of 20 in one run of five).
    const lines = stdout.split("\n").filter(Boolean);
    expect({ code, answered: lines.length }).toEqual({ code: 0, answered: 40 });
    expect(lines.map((line) => (JSON.parse(line) as Json).result?.structuredContent?.page?.page_id)).toEqual(
      calls.map(() => 39),
    );
    // Its client gone from stdout (the pipe broken), stdin closed: it exits, with no EPIPE trace or listener warning.
    const gone = await mcpOverStdio("pipe");
    await gone.stdout.cancel();
    gone.stdin.write(`${calls.join("\n")}\n`);
    await gone.stdin.end();
    const [said, exited] = await Promise.all([new Response(gone.stderr).text(), gone.exited]);
    expect({ exited, said: said.split("\n").filter((line) => line && !line.includes("serving")) }).toEqual({
      exited: 0,
      said: [],
    });
  });

  test("an error reading stdin (EIO) reaches the transport's listener, not thrown uncaught through pipe()", () => {
    const stdin = new PassThrough();
    const input = transportInput(stdin);
    const heard: string[] = [];
    input.on("error", (error) => heard.push(error.message));
    stdin.emit("error", new Error("EIO: i/o error, read"));
    expect(heard).toEqual(["EIO: i/o error, read"]);
  });

  test("stdout failing for another reason than a client gone (ENOSPC) is said on stderr, exit 1, not a quiet exit 0", async () => {
    const full = openSync("/dev/full", "w");
    const proc = Bun.spawn({ ...(await mcpSpawn()), stdout: full, stderr: "pipe" });
    closeSync(full);
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
    await proc.stdin.flush();
    const [said, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect({ code, said: said.split("\n").filter((line) => line && !line.includes("serving")) }).toEqual({
      code: 1,
      said: ["mcp: stdout: ENOSPC: no space left on device, write"],
    });
  });

  test("stdin closed by a client that never reads stdout: it exits all the same (said on stderr), not waiting forever for the answers to drain", async () => {
    // A pipe no one reads, which the answers fill: a FIFO opened for reading and writing, so that opening it waits for no one.
    const fifo = join(tempDir(), "stdout");
    Bun.spawnSync(["mkfifo", fifo]);
    const unread = openSync(fifo, "r+");
    const proc = Bun.spawn({ ...(await mcpSpawn()), stdout: unread, stderr: "pipe" });
    try {
      proc.stdin.write(`${bigPageCalls(40).join("\n")}\n`);
      await proc.stdin.end();
      const [said, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      expect({ code, said: said.split("\n").filter((line) => line && !line.includes("serving")) }).toEqual({
        code: 0,
        said: ["mcp: stdin is closed and the client read no more of stdout in 5 s: exiting."],
      });
    } finally {
      proc.kill();
      closeSync(unread);
    }
  });

  test("a notification whose params its schema refuses is not answered, and said in one line on stderr, not as an uncaught error", async () => {
    const proc = await mcpOverStdio("pipe");
    try {
      for (const message of [
        { method: "notifications/cancelled", params: { requestId: {} } },
        { method: "notifications/progress", params: {} },
        // As MCP says: served as before, nothing said.
        { method: "notifications/initialized" },
        { method: "notifications/cancelled", params: { requestId: 7 } },
        { id: 1, method: "ping" },
      ])
        proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
      await proc.stdin.flush();
      expect(await stdoutAnswers(proc, (out) => out.includes('"id":1'))).toEqual([
        { jsonrpc: "2.0", id: 1, result: {} },
      ]);
    } finally {
      proc.kill();
    }
    // Before, each was "mcp: Uncaught error in notification handler: [" and the schema's issues, some thirty lines.
    const said = (await new Response(proc.stderr).text())
      .split("\n")
      .filter((line) => line && !line.includes("serving"));
    expect(said).toEqual([
      "mcp: a notifications/cancelled notification was ignored, its params not as MCP says (params.requestId: Invalid input).",
      "mcp: a notifications/progress notification was ignored, its params not as MCP says (params.progress: Invalid input: expected number, received undefined; params.progressToken: Invalid input).",
    ]);
  });

  test("as over HTTP: a request whose params its schema refuses is -32602 Invalid params; a call's task is ignored; an argument nested 100,000 deep is invalid_parameter", async () => {
    const proc = await mcpOverStdio("ignore");
    try {
      const task = { name: "get_chunk", arguments: { id: "39_0" }, task: { ttl: 60_000 } };
      proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call" })}\n`);
      proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: task })}\n`);
      // No D155 bound over stdio: echoing it overflowed JSON.stringify's stack, answered internal_error.
      const deep = "[".repeat(100_000) + "]".repeat(100_000);
      for (const [id, args] of [
        [3, `{"q":${deep}}`],
        [4, `{"q":"x","nested":${deep}}`],
      ])
        proc.stdin.write(
          `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"search","arguments":${args}}}\n`,
        );
      await proc.stdin.flush();
      const answers = await stdoutAnswers(proc, (out) => out.split("\n").length >= 5);
      for (const [id, error] of [
        [3, "invalid_parameter: q must be a string, a number or a boolean."],
        [4, "invalid_parameter: Unknown argument nested: this tool takes q,"],
      ] as const) {
        const text = answers.find((a) => a.id === id)?.result?.content?.[0]?.text;
        expect({ id, text: text?.slice(0, error.length) }).toEqual({ id, text: error });
      }
      const [invalid, called] = [1, 2].map((id) => answers.find((a) => a.id === id));
      expect(invalid).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32602, message: expect.stringContaining("Invalid params for tools/call") },
      });
      expect(called?.result?.structuredContent?.id).toBe("39_0");
    } finally {
      proc.kill();
    }
  });

  test("a copy over its snapshot: the next call opens it again; while it is open for writing, a tool error saying so, never internal_error", async () => {
    const source = await snapshotFor({ dumps: [EN_2016] });
    const file = join(tempDir(), "copied.tome");
    copyFileSync(source, file);
    const client = await stdioClient(file);
    const chunk = async () => (await client.callTool({ name: "get_chunk", arguments: { id: "39_0" } })) as Json;
    try {
      expect((await chunk()).structuredContent?.id).toBe("39_0");
      // cp opens the file to write it: the server lets it go (D84), then reads it again, whole.
      expect(Bun.spawnSync(["cp", source, file]).exitCode).toBe(0);
      expect((await chunk()).structuredContent?.id).toBe("39_0");
      const writing = openSync(file, "r+");
      try {
        const during = await chunk();
        expect(during.isError).toBe(true);
        expect(during.content[0].text).toStartWith(`service_unavailable: The snapshot ${file} was replaced`);
        expect(during.content[0].text).toContain("Try again once it is whole");
      } finally {
        closeSync(writing);
      }
      expect((await chunk()).structuredContent?.id).toBe("39_0");
    } finally {
      await client.close();
    }
  });

  test("a damaged file copied over its snapshot is said to be damaged, naming snapshot:verify, in the tool error and once on stderr; a whole one is served again; its name's ESC and line break \\u-escaped", async () => {
    const whole = (await wikiOf([{ title: "Albedo", text: "Albedo is the fraction of light reflected." }])).snapshot;
    const dir = tempDir();
    const file = join(dir, "served-\x1b[31mred\nline.tome");
    // As every other line names a path (printableName): the lines below named it raw, its ESC acted on, its line break
    // a line of their own.
    const shown = join(dir, "served-\\u001b[31mred\\u000aline.tome");
    copyFileSync(whole.path, file);
    const bytes = readFileSync(whole.path);
    // A text block's first byte (its zstd frame's): the file opens, the chunk cannot be read.
    const textDamaged = Buffer.from(bytes);
    textDamaged[whole.container.sections.find((s) => s.name.startsWith("text.blocks"))!.offset]! ^= 0xff;
    // A byte of the table: the file cannot be opened.
    const tableDamaged = Buffer.from(bytes);
    tableDamaged[bytes.length - 5]! ^= 0xff;
    const copyOver = (content: Buffer) => {
      const from = join(tempDir(), "from.tome");
      writeFileSync(from, content);
      expect(Bun.spawnSync(["cp", from, file]).exitCode).toBe(0);
    };
    let stderr = "";
    const client = await stdioClient(file, (text) => (stderr += text));
    const chunk = async () => (await client.callTool({ name: "get_chunk", arguments: { id: "1_0" } })) as Json;
    // The command in bash's $'…', its ESC and line break written as bytes: pasted, it names the file (shellWord).
    const verify = `\`bun run snapshot:verify $'${join(dir, "served-\\x1b[31mred\\x0aline.tome")}'\``;
    // As the server's line for damage says (D167); it named snapshot:build without the dump it needs.
    const rebuild = "`bun run snapshot:build --dump <dump>`";
    try {
      expect((await chunk()).structuredContent?.id).toBe("1_0");
      copyOver(textDamaged);
      for (const _ of [1, 2]) {
        const answer = await chunk();
        expect(answer.isError).toBe(true);
        expect(answer.content[0].text).toStartWith(`service_unavailable: The snapshot ${shown} is damaged (`);
        expect(answer.content[0].text).toContain(verify);
        expect(answer.content[0].text).toContain(rebuild);
        // Still held: a copy over it is opened on the next call (as below); a file moved over it needs a restart. It
        // said to restart in either case.
        expect(answer.content[0].text).toEndWith(
          "a file copied over it (cp) is opened on the next call, one moved over it (mv, or built to it) once the MCP server is restarted.",
        );
      }
      copyOver(tableDamaged);
      const unopened = await chunk();
      expect(unopened.content[0].text).toStartWith(
        `service_unavailable: The snapshot ${shown} was replaced by a file that cannot be served (`,
      );
      expect(unopened.content[0].text).toContain(verify);
      expect(unopened.content[0].text).toContain(rebuild);
      copyOver(bytes);
      expect((await chunk()).structuredContent?.id).toBe("1_0");
    } finally {
      await client.close();
    }
    // What it said of its snapshot: not its first line, nor its last (the connection closed, said or not before it exits).
    const lines = stderr.split("\n").filter((line) => /^mcp: (?!serving |the connection )/.test(line));
    expect(lines.map((line) => line.replace(/ \(.*/, ""))).toEqual([
      `mcp: ${shown} was replaced: serving it again`,
      `mcp: The snapshot ${shown} is damaged`,
      `mcp: The snapshot ${shown} was replaced by a file that cannot be served`,
      `mcp: ${shown} was replaced: serving it again`,
    ]);
    for (const line of lines.slice(1, 3)) expect(line).toContain(verify);
  });

  test("a file copied over twice within one call: the tool error says it was replaced and to try again, not the bare reason the read failed; its name's ESC and line break \\u-escaped", async () => {
    const whole = (await wikiOf([{ title: "Albedo", text: "Albedo is the fraction of light reflected." }])).snapshot;
    const dir = tempDir();
    const path = join(dir, "served-\x1b[31mred\nline.tome");
    // As the stdio MCP's own lines and every other tool error name it: this one named it raw.
    const shown = join(dir, "served-\\u001b[31mred\\u000aline.tome");
    copyFileSync(whole.path, path);
    // Every file opened is stopped reading at once, as a copy over it lets it go (D84): as when a copy comes again before
    // the call made again reads it. (Its sections still read the file, so the call comes as far as the text.)
    const opened: Engine[] = [];
    const replaced = () => {
      const engine = open(path);
      engine.snapshot.container.stopReading(`${shown} is let go`);
      opened.push(engine);
      return apiContext(engine);
    };
    const tools = mcpTools(replaced(), { logError: (error) => console.error(error), reopen: replaced });
    const client = await inMemoryClient(tools);
    try {
      const answer = (await client.callTool({ name: "get_chunk", arguments: { id: "1_0" } })) as Json;
      expect(answer.isError).toBe(true);
      // It answered "<path> is let go" alone.
      expect(answer.content[0].text).toBe(
        `service_unavailable: The snapshot ${shown} was replaced while this MCP server read it (${shown} is let go), twice within this call: it is opened again now. Try again.`,
      );
    } finally {
      await client.close();
      for (const engine of opened) engine.close();
    }
  });

  test("without a snapshot it says how to get one, on stderr, and exits 1 (stdout stays the protocol's)", async () => {
    const r = await run([], { TOME_SNAPSHOT: "" }, tempDir());
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("mcp: no snapshot in snapshots/");
    expect(r.stderr).toContain("TOME_SNAPSHOT");
  });
});

describe("a key whose quota is spent", () => {
  test("a body /mcp cannot take is still its 400 or 413 (D2: validation before the quota); a message it takes, 429", async () => {
    const data = tempDir("tome-data-");
    const key = keyIn(data, "k", "free");
    writeUsage(usagePath(data), { months: { [new Date().toISOString().slice(0, 7)]: { k: 5000 } }, last_used: {} });
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: new Access({ dataDir: data }) });
    const headers = { ...MCP_HEADERS, "X-API-Key": key };
    const answer = async (body: string) => {
      const r = await app.handle(new Request("http://localhost/mcp", { method: "POST", headers, body }));
      const json = (await r.json()) as Json;
      return [r.status, json.error?.code ?? json.error];
    };
    try {
      expect(await answer(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping" }]))).toEqual([400, -32600]);
      expect(await answer("{")).toEqual([400, -32700]);
      expect(await answer("[".repeat(40))).toEqual([400, -32600]);
      expect(await answer(JSON.stringify({ pad: "x".repeat(70_000) }))).toEqual([413, -32600]);
      // A ping whose params widen past D155's 256 members: the SDK takes them, the quota would have answered 429.
      const wide = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, 0]));
      expect(await answer(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: wide }))).toEqual([
        400, -32600,
      ]);
      expect(await answer(JSON.stringify({ jsonrpc: "2.0", id: { a: 1 }, method: "ping" }))).toEqual([400, -32600]);
      expect(await answer(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }))).toEqual([429, "quota_exceeded"]);
    } finally {
      app.close();
    }
  });

  test("a protocol error or a notification is still answered, free (D32), not the quota's 429: as REST's 400 before it (D2)", async () => {
    const data = tempDir("tome-data-");
    const key = keyIn(data, "k", "free");
    writeUsage(usagePath(data), { months: { [new Date().toISOString().slice(0, 7)]: { k: 5000 } }, last_used: {} });
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: new Access({ dataDir: data }) });
    const answer = async (message: Json) => {
      const body = JSON.stringify({ jsonrpc: "2.0", ...message });
      const headers = { ...MCP_HEADERS, "X-API-Key": key };
      const r = await app.handle(new Request("http://localhost/mcp", { method: "POST", headers, body }));
      const text = await r.text();
      return [r.status, text && (JSON.parse(text).error?.code ?? JSON.parse(text).error)];
    };
    try {
      expect(await answer({ id: 1, method: "resources/list" })).toEqual([200, -32601]);
      expect(await answer({ id: 1, method: "tools/call", params: { name: "nope", arguments: {} } })).toEqual([
        200, -32602,
      ]);
      expect(await answer({ id: 1, method: "tools/call", params: { name: "get_page", arguments: [] } })).toEqual([
        200, -32602,
      ]);
      expect(await answer({ method: "notifications/initialized" })).toEqual([202, ""]);
      expect(
        await answer({ id: 1, method: "tools/call", params: { name: "get_page", arguments: { page_id: 39 } } }),
      ).toEqual([429, "quota_exceeded"]);
    } finally {
      app.close();
    }
  });

  test("a header the transport refuses is still its 406, 415 or 400 (D2), not the quota's 429", async () => {
    const data = tempDir("tome-data-");
    const key = keyIn(data, "k", "free");
    writeUsage(usagePath(data), { months: { [new Date().toISOString().slice(0, 7)]: { k: 5000 } }, last_used: {} });
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: new Access({ dataDir: data }) });
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const status = async (headers: Record<string, string>, body = ping) => {
      const r = await app.handle(
        new Request("http://localhost/mcp", {
          method: "POST",
          headers: { ...MCP_HEADERS, "X-API-Key": key, ...headers },
          body,
        }),
      );
      await r.body?.cancel();
      return [r.status, r.headers.has("retry-after")];
    };
    try {
      expect(await status({ Accept: "application/json" })).toEqual([406, false]);
      expect(await status({ "Content-Type": "text/plain" })).toEqual([415, false]);
      // A compressed body: refused by its coding, not read as JSON that fails to parse (400).
      expect(await status({ "Content-Encoding": "gzip" }, Bun.gzipSync(ping) as unknown as string)).toEqual([
        415,
        false,
      ]);
      expect(await status({ "Mcp-Protocol-Version": "1999-01-01" })).toEqual([400, false]);
      // An initialize names its version in its params: the header is not read, and the quota refuses it.
      expect(await status({ "Mcp-Protocol-Version": "1999-01-01" }, initialize)).toEqual([429, true]);
      expect(await status({})).toEqual([429, true]);
    } finally {
      app.close();
    }
  });
});

describe("the methods served", () => {
  test("isServed, which says a request is free before the SDK answers it (D32), agrees with the server: -32601 for every MCP client request it says is not served", async () => {
    const app = createApp(await engineFor({ dumps: [EN_2016] }));
    const methods = (ClientRequestSchema.options as unknown as { shape: { method: { value: string } } }[]).map(
      (schema) => schema.shape.method.value,
    );
    const answered: [string, boolean][] = [];
    try {
      for (const method of methods) {
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: {} });
        const r = await app.handle(new Request("http://localhost/mcp", { method: "POST", headers: MCP_HEADERS, body }));
        answered.push([method, ((await r.json()) as { error?: { code: number } }).error?.code !== -32601]);
      }
    } finally {
      app.close();
    }
    expect(answered).toEqual(methods.map((method) => [method, isServed(method)]));
    expect(methods.filter(isServed).sort()).toEqual(["initialize", "ping", "tools/call", "tools/list"]);
  });
});

describe("/mcp/, with a slash at its end", () => {
  test("is /mcp, as the router serves /v1/meta/ as /v1/meta: a POST was refused, 405 (the API is read-only) with a key and 404 without", async () => {
    const data = tempDir("tome-data-");
    const key = keyIn(data, "k");
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: new Access({ dataDir: data }) });
    const ask = async (method: string, headers: Record<string, string> = {}) => {
      const r = await app.handle(
        new Request("http://localhost/mcp/", {
          method,
          headers: { ...MCP_HEADERS, ...headers },
          body: method === "POST" ? JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" }) : undefined,
        }),
      );
      const text = await r.text();
      return [
        r.status,
        text ? JSON.parse(text) : null,
        r.headers.get("access-control-allow-methods") ?? r.headers.get("allow"),
      ];
    };
    try {
      expect(await ask("POST", { "X-API-Key": key })).toEqual([200, { jsonrpc: "2.0", id: 7, result: {} }, null]);
      expect((await ask("POST"))[0]).toBe(401);
      expect((await ask("OPTIONS"))[2]).toBe("POST, OPTIONS");
      expect([(await ask("GET", { "X-API-Key": key }))[0], (await ask("GET", { "X-API-Key": key }))[2]]).toEqual([
        405,
        "POST, OPTIONS",
      ]);
    } finally {
      app.close();
    }
  });
});

describe("JSON that is no JSON-RPC message", () => {
  test("is -32600 Invalid Request, saying what a request has; -32700 Parse error is for a body that is not JSON", async () => {
    const data = tempDir("tome-data-");
    const key = keyIn(data, "k");
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: new Access({ dataDir: data }) });
    const headers = { ...MCP_HEADERS, "X-API-Key": key };
    const answer = async (body: string) => {
      const r = await app.handle(new Request("http://localhost/mcp", { method: "POST", headers, body }));
      const json = (await r.json()) as Json;
      return [r.status, json.error?.code, json.error?.message];
    };
    const invalid = [
      400,
      -32600,
      'Invalid Request: the body is JSON but no JSON-RPC 2.0 message: a request has "jsonrpc": "2.0", an "id" (a string or an integer) and a "method".',
    ];
    try {
      for (const message of [
        { jsonrpc: "2.0", id: { a: 1 }, method: "ping" },
        { jsonrpc: "2.0", id: [1], method: "ping" },
        { jsonrpc: "2.0", id: 1.5, method: "ping" },
        { jsonrpc: "1.0", id: 1, method: "ping" },
        { id: 1, method: "ping" },
        {},
        null,
        "ping",
        5,
      ])
        expect({ message, answer: await answer(JSON.stringify(message)) }).toEqual({ message, answer: invalid });
      expect((await answer("{"))[1]).toBe(-32700);
      // A message is answered as before.
      const ping = await app.handle(
        new Request("http://localhost/mcp", {
          method: "POST",
          headers,
          body: JSON.stringify({ jsonrpc: "2.0", id: "a", method: "ping" }),
        }),
      );
      expect([ping.status, await ping.json()]).toEqual([200, { jsonrpc: "2.0", id: "a", result: {} }]);
    } finally {
      app.close();
    }
  });
  test('params given as an array (JSON-RPC\'s by position) is -32600 saying "params" must be an object, not that an id or method is missing', async () => {
    const data = tempDir("tome-data-");
    const key = keyIn(data, "k");
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: new Access({ dataDir: data }) });
    const headers = { ...MCP_HEADERS, "X-API-Key": key };
    const answer = async (message: Json) => {
      const body = JSON.stringify(message);
      const r = await app.handle(new Request("http://localhost/mcp", { method: "POST", headers, body }));
      const json = (await r.json()) as Json;
      return [r.status, json.error?.code, json.error?.message];
    };
    const params = (kind: string) => [
      400,
      -32600,
      `Invalid Request: "params" is ${kind}, where MCP takes an object (named members, not JSON-RPC's by position), or no params at all.`,
    ];
    try {
      expect(await answer({ jsonrpc: "2.0", id: 1, method: "tools/list", params: [] })).toEqual(params("an array"));
      expect(
        await answer({ jsonrpc: "2.0", id: 1, method: "tools/call", params: ["search", { q: "albedo" }] }),
      ).toEqual(params("an array"));
      expect(await answer({ jsonrpc: "2.0", method: "notifications/initialized", params: [] })).toEqual(
        params("an array"),
      );
      expect(await answer({ jsonrpc: "2.0", id: 1, method: "ping", params: null })).toEqual(params("null"));
      expect(await answer({ jsonrpc: "2.0", id: 1, result: [] })).toEqual([
        400,
        -32600,
        `Invalid Request: "result" is an array, where MCP takes an object (named members, not JSON-RPC's by position).`,
      ]);
      // Something else wrong too: what a request has, as before.
      expect((await answer({ jsonrpc: "2.0", method: 5, params: [] }))[2]).toContain('a request has "jsonrpc": "2.0"');
    } finally {
      app.close();
    }
  });
  test('"params" that is no object is one answer for every method, served or not, request or notification (400 -32600, id null), and costs no credit (D32, D54)', async () => {
    const data = tempDir("tome-data-");
    const key = keyIn(data, "k");
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: new Access({ dataDir: data }) });
    const headers = { ...MCP_HEADERS, "X-API-Key": key };
    const post = (message: Json) =>
      app.handle(new Request("http://localhost/mcp", { method: "POST", headers, body: JSON.stringify(message) }));
    const ping = async () =>
      Number((await post({ jsonrpc: "2.0", id: 0, method: "ping" })).headers.get("x-quota-remaining"));
    const methods = ["initialize", "ping", "tools/list", "tools/call", "resources/list", "completion/complete"];
    const notifications = [
      "notifications/initialized",
      "notifications/cancelled",
      "notifications/progress",
      "notifications/x",
    ];
    const kinds: [unknown, string][] = [
      [[], "an array"],
      [["search", { q: "albedo" }], "an array"],
      ["albedo", "a string"],
      [null, "null"],
      [5, "a number"],
      [true, "a boolean"],
    ];
    try {
      const before = await ping();
      const answered: Json[] = [];
      for (const method of [...methods, ...notifications])
        for (const [params, kind] of kinds) {
          const message: Json = { jsonrpc: "2.0", method, params };
          if (!method.startsWith("notifications/")) message.id = 7;
          const r = await post(message);
          answered.push({ method, params, status: r.status, body: await r.json() });
          const expected = {
            jsonrpc: "2.0",
            id: null,
            error: {
              code: -32600,
              message: `Invalid Request: "params" is ${kind}, where MCP takes an object (named members, not JSON-RPC's by position), or no params at all.`,
            },
          };
          expect(answered.at(-1)).toEqual({ method, params, status: 400, body: expected });
        }
      expect(answered).toHaveLength((methods.length + notifications.length) * kinds.length);
      // The ping after them is the only credit spent since the one before.
      expect(await ping()).toBe(before - 1);
    } finally {
      app.close();
    }
  });
});

describe("a body that never arrives", () => {
  test("the client left: logged 499, neither a fault reported nor a 500 counted (D28)", async () => {
    const data = tempDir("tome-data-");
    const key = keyIn(data, "k", "free");
    const lines: string[] = [];
    const faults: unknown[] = [];
    const app = createApp(await engineFor({ dumps: [EN_2016] }), {
      access: new Access({ dataDir: data }),
      log: (line) => lines.push(line),
      logError: (error) => faults.push(error),
    });
    const running = serve(app, { port: 0, hostname: "127.0.0.1" });
    try {
      const socket = connect(Number(running.url.port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      // The headers and the body's first byte of the 100 it declares; then the client goes.
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      );
      await Bun.sleep(100);
      socket.destroy();
      for (let i = 0; i < 100 && !lines.length; i++) await Bun.sleep(20);
      expect(lines.map((l) => l.split(" ").slice(0, 3).join(" "))).toEqual(["POST /mcp 499"]);
      expect(faults).toEqual([]);
    } finally {
      await running.stop();
    }
  });
});

describe("an argument a tool refuses on its own (unknown, or an object or array)", () => {
  test("is its code and message, all a tool error sends: no D1 details, no quote of the value built (D173); an unknown name is quoted to 200 characters", async () => {
    const engine = open(snapshot);
    const tools = mcpTools(apiContext(engine), { logError: () => {} });
    const client = await inMemoryClient(tools);
    const search = toolsOf(apiContext(engine)).find((tool) => tool.name === "search")!;
    const huge = "x".repeat(5_000_000);
    const refusal = (args: Record<string, unknown>) => {
      try {
        search.call(args, undefined);
      } catch (error) {
        const { code, message, details } = error as { code: string; message: string; details?: unknown };
        return { code, message: message.slice(0, 60), length: message.length, details };
      }
      return "not refused";
    };
    try {
      const takes = "q, limit, offset, page_id, crop_length, highlight, show_ranking_score";
      const cases: [Record<string, unknown>, string][] = [
        [{ q: [huge] }, "q must be a string, a number or a boolean."],
        [{ q: Array.from({ length: 100_000 }, () => ({ a: [1, "b"] })) }, "q must be a string, a number or a boolean."],
        [{ q: "albedo", extra: { [huge]: 1 } }, `Unknown argument extra: this tool takes ${takes}.`],
        [{ q: "albedo", [huge]: 1 }, `Unknown argument ${"x".repeat(200)}…: this tool takes ${takes}.`],
      ];
      for (const [args, message] of cases) {
        expect(refusal(args)).toEqual({
          code: "invalid_parameter",
          message: message.slice(0, 60),
          length: message.length,
          details: undefined,
        });
        // What the client is sent: the code and message as text, nothing else.
        const result = await client.callTool({ name: "search", arguments: args });
        expect(result).toEqual({ isError: true, content: [{ type: "text", text: `invalid_parameter: ${message}` }] });
      }
    } finally {
      await client.close();
      engine.close();
    }
  });
});
