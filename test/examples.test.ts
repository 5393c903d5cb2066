/**
 * The client examples in examples/ against the real server (`bun run start`) on a snapshot of the
 * shared English dumps: the Python client as a real python3 process, the TypeScript client in
 * process and as `bun examples/client.ts`, and the LangChain retriever. What a client returns must
 * be what the API answers; what the API answers for "albedo" comes from the snapshot.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TomeClient, TomeError } from "../examples/client";
import { TomeRetriever } from "../examples/langchain-retriever";
import { openSnapshot, type Snapshot } from "../src/snapshot";
import {
  EN_2006,
  EN_2016,
  newKey,
  ROOT,
  runToExit,
  type ServerProcess,
  snapshotFor,
  startServer,
  tempDir,
} from "./helpers";

setDefaultTimeout(180_000);

const DUMPS = { dumps: [EN_2016, EN_2006] };
const EXAMPLES = join(ROOT, "examples");

let server: ServerProcess;
let snap: Snapshot;
let key: string;
/** A free-plan key (10 requests per second), to meet the rate limit. */
let freeKey: string;

type Json = Record<string, any>;

beforeAll(async () => {
  const path = await snapshotFor(DUMPS);
  snap = openSnapshot(path);
  const data = tempDir("tome-data-");
  server = await startServer({ TOME_SNAPSHOT: path, TOME_DATA: data });
  key = server.key!;
  freeKey = (await newKey(data, "--name", "examples", "--account", "examples-free", "--plan", "free")).key;
});

afterAll(async () => {
  await server?.stop();
});

/** The API's own answer, fetched directly, for comparison with a client's. */
async function direct(path: string, apiKey = key): Promise<{ status: number; body: Json }> {
  const res = await fetch(server.url + path, { headers: apiKey ? { "X-API-Key": apiKey } : {} });
  return { status: res.status, body: (await res.json()) as Json };
}

/** A response without the fields that change from one call to the next. */
function stable(body: Json): Json {
  const { processingTimeMs, ...rest } = body;
  if (rest.search_context) rest.search_context = { ...rest.search_context, search_time_ms: 0 };
  return rest;
}

/** The page a search for its exact title must put first (D8), read from the snapshot. */
const albedo = () => {
  const page = snap.pages.list().find((p) => p.title === "Albedo");
  if (!page) throw new Error("the snapshot has no page titled Albedo");
  return page;
};

function python3(): string {
  const path = Bun.which("python3");
  if (!path)
    throw new Error(
      "python3 is not on PATH: the Python client example (examples/tome_client.py) needs Python 3.8 or later to be tested",
    );
  return path;
}

const run = (cmd: string[], env: Record<string, string>) => runToExit(cmd, env);

/** Checks a demo's printout: the top hits with their title, address, license and revision, then the notice. */
async function expectDemo(stdout: string, query: string) {
  const { body } = await direct(`/v1/search?q=${encodeURIComponent(query)}&limit=5`);
  expect(body.hits.length).toBeGreaterThan(0);
  const lines = stdout.split("\n");
  const total = body.estimatedTotalHits;
  const head = total === 1 ? `1 page matches "${query}"` : `${total} pages match "${query}"`;
  expect(lines[0]).toBe(body.hits.length < total ? `${head}; the top ${body.hits.length}:` : `${head}:`);
  body.hits.forEach((hit: Json, i: number) => {
    const at = lines.indexOf(`${i + 1}. ${hit.title}${hit.section ? ` / ${hit.section}` : ""}`);
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe(`   ${hit.url} (CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/)`);
    expect(lines[at + 2]).toBe(`   revision: ${hit.source.permalink}`);
  });
  expect(stdout.trimEnd().endsWith(body.attribution.attribution_notice)).toBe(true);
  return body;
}

describe("the demos of the Python and TypeScript clients", () => {
  const demos = () => [
    [python3(), join(EXAMPLES, "tome_client.py")],
    ["bun", join(EXAMPLES, "client.ts")],
  ];

  test("an empty query is sent as given, not replaced by the demo's: the API's missing q, exit 1", async () => {
    const { body } = await direct("/v1/search?q=");
    for (const demo of demos()) {
      const r = await run([...demo, ""], { TOME_URL: server.url, TOME_API_KEY: key });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`error: 400 missing q: ${body.message}\n`);
      expect(r.stdout).toBe("");
    }
  });

  test("a query nothing matches says so, in words, then the notice", async () => {
    const query = "zzqqxxjj";
    const { body } = await direct(`/v1/search?q=${query}`);
    expect(body.estimatedTotalHits).toBe(0);
    for (const demo of demos()) {
      const r = await run([...demo, query], { TOME_URL: server.url, TOME_API_KEY: key });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`No page matches "${query}".\n\n${body.attribution.attribution_notice}\n`);
    }
  });
});

describe("the Python client (examples/tome_client.py)", () => {
  test("its demo prints the top hits with their attribution: Albedo first for albedo", async () => {
    const r = await run([python3(), join(EXAMPLES, "tome_client.py"), "albedo"], {
      TOME_URL: server.url,
      TOME_API_KEY: key,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const body = await expectDemo(r.stdout, "albedo");
    expect(body.hits[0].page_id).toBe(albedo().pageId);
    expect(r.stdout.split("\n")[1]).toMatch(/^1\. Albedo( \/ .+)?$/);
  });

  test("its demo without a key exits 1 with the API's 401 message", async () => {
    const r = await run([python3(), join(EXAMPLES, "tome_client.py"), "albedo"], {
      TOME_URL: server.url,
      TOME_API_KEY: "",
    });
    const { body } = await direct("/v1/search?q=albedo", "");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: 401 unauthorized: ${body.message}\n`);
  });

  test("every method returns the API's answer; errors carry the API's body; 429 is retried", async () => {
    const dir = tempDir("tome-python-");
    const script = join(dir, "check.py");
    writeFileSync(script, PYTHON_CHECK);
    const pdfPath = join(dir, "albedo.pdf");
    const r = await run([python3(), script, server.url, key, freeKey, pdfPath], { PYTHONPATH: EXAMPLES });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Json;
    const id = albedo().pageId;

    expect(out.search.hits[0].page_id).toBe(id);
    expect(stable(out.search)).toEqual(stable((await direct("/v1/search?q=albedo&limit=3&highlight=false")).body));
    expect(out.page).toEqual((await direct(`/v1/page/${id}?format=concat&max_chunks=2`)).body);
    expect(out.chunk).toEqual((await direct(`/v1/chunk/${id}_1`)).body);
    expect(out.changes).toEqual((await direct("/v1/changes?since=2016-01-01T00%3A00%3A00Z&limit=5")).body);
    expect(stable(out.lucky)).toEqual(stable((await direct("/v1/lucky?q=albedo")).body));
    expect(out.license).toEqual((await direct("/v1/license")).body);
    expect(out.meta).toEqual((await direct("/v1/meta")).body);

    expect(out.pdf.filename).toMatch(/\.pdf$/);
    expect(readFileSync(pdfPath).subarray(0, 5).toString()).toBe("%PDF-");

    expect(out.not_found).toMatchObject({
      status: 404,
      code: "not found",
      body: (await direct("/v1/page/999999999")).body,
    });
    expect(out.not_found.request_id).toBeString();
    expect(out.bad_chunk).toMatchObject({
      status: 400,
      code: "invalid_parameter",
      body: (await direct("/v1/chunk/abc")).body,
    });
    expect(out.bad_chunk.body.details.parameter).toBe("id");
    expect(out.no_key).toMatchObject({ status: 401, code: "unauthorized", body: (await direct("/v1/meta", "")).body });
    expect(out.bad_key).toMatchObject({ status: 403, code: "forbidden" });
    expect(out.unreachable).toMatchObject({ status: null, code: "connection_failed" });
    // What to do next, without a status the server never sent.
    expect(out.unreachable.message).toStartWith("connection_failed: cannot reach http://127.0.0.1:9: ");
    expect(out.unreachable.message).toEndWith("Is the server running there? Set TOME_URL to its address.");

    // 25 searches in a row on a 10-per-second key: each 429 waited out, none lost.
    expect(out.burst.results).toBe(25);
    expect(out.burst.waits.length).toBeGreaterThan(0);
    for (const wait of out.burst.waits) expect(wait).toBeGreaterThanOrEqual(1);
    // Without retries the 429 surfaces, with its body (D19); a wait longer than allowed is not waited.
    expect(out.no_retry).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    expect(out.no_retry.body.retry_after).toBe(out.no_retry.retry_after);
    expect(out.too_long).toMatchObject({ status: 429, code: "rate_limit_exceeded", waits: [] });
  });
});

// Run as `python3 check.py URL KEY FREE_KEY PDF_PATH` with examples/ on PYTHONPATH; prints JSON.
const PYTHON_CHECK = `
import json, sys
from tome_client import TomeClient, TomeError

url, key, free_key, pdf_path = sys.argv[1:]
tome = TomeClient(url, key)

def failure(call):
    try:
        call()
    except TomeError as e:
        return {"status": e.status, "code": e.code, "body": e.body, "request_id": e.request_id, "retry_after": e.retry_after, "message": str(e)}
    raise AssertionError("no TomeError")

out = {
    "search": tome.search("albedo", limit=3, highlight=False),
    "page": tome.page(39, format="concat", max_chunks=2),
    "chunk": tome.chunk("39_1"),
    "changes": tome.changes(since="2016-01-01T00:00:00Z", limit=5),
    "lucky": tome.lucky("albedo"),
    "license": tome.license(),
    "meta": tome.meta(),
    "pdf": {"filename": tome.pdf(39, pdf_path)},
    "not_found": failure(lambda: tome.page(999999999)),
    "bad_chunk": failure(lambda: tome.chunk("abc")),
    "no_key": failure(lambda: TomeClient(url, "").meta()),
    "bad_key": failure(lambda: TomeClient(url, "wk_" + "x" * 32).meta()),
    "unreachable": failure(lambda: TomeClient("http://127.0.0.1:9", key, timeout=5).meta()),
}

waits = []
free = TomeClient(url, free_key, max_retries=5, on_retry=lambda e, wait: waits.append(wait))
out["burst"] = {"results": sum(1 for _ in range(25) if free.search("albedo", limit=1)["hits"]), "waits": waits}

def burst_until_refused(client):
    for _ in range(30):
        client.meta()
    raise AssertionError("30 requests on a 10-per-second key were never refused")

out["no_retry"] = failure(lambda: burst_until_refused(TomeClient(url, free_key, max_retries=0)))
too_long = []
out["too_long"] = failure(lambda: burst_until_refused(TomeClient(url, free_key, max_retry_wait=0, on_retry=lambda e, w: too_long.append(w))))
out["too_long"]["waits"] = too_long
print(json.dumps(out))
`;

describe("the TypeScript client (examples/client.ts)", () => {
  const client = (options: ConstructorParameters<typeof TomeClient>[0] = {}) =>
    new TomeClient({ url: server.url, apiKey: key, ...options });

  async function failure(call: () => Promise<unknown>): Promise<TomeError> {
    const error = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TomeError);
    return error as TomeError;
  }

  test("bun examples/client.ts prints the top hits with their attribution: Albedo first for albedo", async () => {
    const r = await run(["bun", join(EXAMPLES, "client.ts"), "albedo"], { TOME_URL: server.url, TOME_API_KEY: key });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const body = await expectDemo(r.stdout, "albedo");
    expect(body.hits[0].page_id).toBe(albedo().pageId);
    expect(r.stdout.split("\n")[1]).toMatch(/^1\. Albedo( \/ .+)?$/);
  });

  test("every method returns the API's answer", async () => {
    const tome = client();
    const id = albedo().pageId;
    const search = await tome.search("albedo", { limit: 3, highlight: false });
    expect(search.hits[0]!.page_id).toBe(id);
    expect(stable(search)).toEqual(stable((await direct("/v1/search?q=albedo&limit=3&highlight=false")).body));
    expect(await tome.page(id, { format: "concat", max_chunks: 2 })).toEqual(
      (await direct(`/v1/page/${id}?format=concat&max_chunks=2`)).body as any,
    );
    expect(await tome.chunk(`${id}_1`)).toEqual((await direct(`/v1/chunk/${id}_1`)).body as any);
    const since = new Date("2016-01-01T00:00:00Z");
    expect(await tome.changes({ since, limit: 5 })).toEqual(
      (await direct(`/v1/changes?since=${since.toISOString()}&limit=5`)).body as any,
    );
    expect(await tome.changes({ since: since.getTime() / 1000, limit: 5 })).toEqual(
      await tome.changes({ since, limit: 5 }),
    );
    const lucky = await tome.lucky("albedo");
    expect(lucky.page.page_id).toBe(String(id));
    expect(stable(lucky)).toEqual(stable((await direct("/v1/lucky?q=albedo")).body));
    expect(await tome.license()).toEqual((await direct("/v1/license")).body as any);
    expect(await tome.meta()).toEqual((await direct("/v1/meta")).body as any);

    const path = join(tempDir("tome-ts-"), "albedo.pdf");
    const pdf = await tome.pdf(id, path);
    expect(pdf.filename).toMatch(/\.pdf$/);
    expect(pdf.bytes).toBe(readFileSync(path).length);
    expect(readFileSync(path).subarray(0, 5).toString()).toBe("%PDF-");
  });

  test("errors carry the API's body: 404, 400, 401 without a key, 403, an unreachable server", async () => {
    const notFound = await failure(() => client().page(999_999_999));
    expect({ status: notFound.status, code: notFound.code, body: notFound.body }).toEqual({
      status: 404,
      code: "not found",
      body: (await direct("/v1/page/999999999")).body as any,
    });
    expect(notFound.requestId).toBeString();
    const badChunk = await failure(() => client().chunk("abc"));
    expect({ status: badChunk.status, body: badChunk.body }).toEqual({
      status: 400,
      body: (await direct("/v1/chunk/abc")).body as any,
    });
    const noKey = await failure(() => client({ apiKey: "" }).meta());
    expect({ status: noKey.status, body: noKey.body }).toEqual({
      status: 401,
      body: (await direct("/v1/meta", "")).body as any,
    });
    expect(noKey.code).toBe("unauthorized");
    expect((await failure(() => client({ apiKey: `wk_${"x".repeat(32)}` }).meta())).code).toBe("forbidden");
    const unreachable = await failure(() => client({ url: "http://127.0.0.1:9" }).meta());
    expect({ status: unreachable.status, code: unreachable.code }).toEqual({ status: 0, code: "connection_failed" });
    expect(unreachable.message).toStartWith("connection_failed: cannot reach http://127.0.0.1:9: ");
    expect(unreachable.message).toEndWith("Is the server running there? Set TOME_URL to its address.");
  });

  test("a 429 is waited out for its Retry-After, a bounded number of times", async () => {
    const waits: number[] = [];
    const free = client({ apiKey: freeKey, maxRetries: 5, onRetry: (_, wait) => waits.push(wait) });
    const results = await Promise.all(Array.from({ length: 25 }, () => free.search("albedo", { limit: 1 })));
    expect(results.every((r) => r.hits.length === 1)).toBe(true);
    expect(waits.length).toBeGreaterThan(0);
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(1);

    const burst = async (tome: TomeClient) => {
      await Promise.all(Array.from({ length: 30 }, () => tome.meta()));
    };
    const refused = await failure(() => burst(client({ apiKey: freeKey, maxRetries: 0 })));
    expect(refused.code).toBe("rate_limit_exceeded");
    expect(refused.status).toBe(429);
    expect(refused.body.retry_after).toBe(refused.retryAfter!);
    const tooLong: number[] = [];
    const notWaited = await failure(() =>
      burst(client({ apiKey: freeKey, maxRetryWait: 0, onRetry: (_, wait) => tooLong.push(wait) })),
    );
    expect(notWaited.code).toBe("rate_limit_exceeded");
    expect(tooLong).toEqual([]);
  });
});

describe("the LangChain retriever (examples/langchain-retriever.ts)", () => {
  test("invoke returns Documents of whole chunk texts, with what it takes to cite them", async () => {
    const retriever = new TomeRetriever({ url: server.url, apiKey: key, k: 3 });
    const docs = await retriever.invoke("albedo");
    const { body } = await direct("/v1/search?q=albedo&limit=3");
    expect(docs.map((d) => d.id)).toEqual(body.hits.map((h: Json) => h.id));
    expect(docs[0]!.metadata.page_id).toBe(albedo().pageId);
    for (const doc of docs) {
      const chunk = (await direct(`/v1/chunk/${doc.id}`)).body;
      expect(doc.pageContent).toBe(chunk.text);
      expect(doc.metadata).toMatchObject({
        id: chunk.id,
        page_id: chunk.page_id,
        chunk_id: chunk.chunk_id,
        title: chunk.title,
        section: chunk.section,
        url: chunk.url,
        permalink: chunk.source.permalink,
        rev_id: chunk.rev_id,
        license: { name: "CC BY-SA 4.0", url: "https://creativecommons.org/licenses/by-sa/4.0/" },
        modifications: chunk.modifications,
      });
      expect(doc.metadata.attribution).toBe(
        `"${chunk.title}" from en.wikipedia.org (${chunk.url}, revision ${chunk.source.permalink}), by its contributors, ` +
          "under CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/). The text was modified: see modifications.",
      );
    }
  });

  test("a refused request rejects with the client's error", async () => {
    const error = await new TomeRetriever({ url: server.url, apiKey: "" }).invoke("albedo").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TomeError);
    expect((error as TomeError).status).toBe(401);
  });

  test("bun examples/langchain-retriever.ts without TOME_URL says so in one line and exits 1, as client.ts does (it printed a stack trace)", async () => {
    for (const example of ["client.ts", "langchain-retriever.ts"]) {
      const r = await run(["bun", join(EXAMPLES, example), "albedo"], { TOME_URL: "", TOME_API_KEY: key });
      expect({ example, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        example,
        code: 1,
        stdout: "",
        stderr: "error: no server address: pass url or set TOME_URL\n",
      });
    }
  });

  test("bun examples/langchain-retriever.ts prints the documents with their attribution", async () => {
    const r = await run(["bun", join(EXAMPLES, "langchain-retriever.ts"), "albedo"], {
      TOME_URL: server.url,
      TOME_API_KEY: key,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const { body } = await direct("/v1/search?q=albedo&limit=3");
    const headings = r.stdout.split("\n").filter((line) => line.startsWith("# "));
    expect(headings).toEqual(
      body.hits.map((h: Json) => `# ${h.title}${h.section ? ` / ${h.section}` : ""} (${h.url})`),
    );
    expect(r.stdout).toContain(
      `— "Albedo" from en.wikipedia.org (${body.hits[0].url}, revision ${body.hits[0].source.permalink})`,
    );
  });
});
