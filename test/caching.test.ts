/**
 * HTTP caching: ETag and Cache-Control on the keyed answers, If-None-Match's 304 (free, still
 * rate-limited, with the limit headers), the PDF's 304 without rendering, and HEAD. A real
 * server on a snapshot of enwiki-2016-sample, with keys in a temporary data directory.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Access } from "../src/access";
import { createApp, serve, type RunningServer } from "../src/http";
import type { PdfArticle, PdfRenderService } from "../src/pdf";
import { noneMatchHits } from "../src/http/steps/conditional";
import { EN_2016, engineFor, newKey, tempDir } from "./helpers";

// Per file: the snapshot is built from the real dump.
setDefaultTimeout(120_000);

let running: RunningServer;
let key: string;
/** A free plan's key (10 requests a second) of scope read: its 403 and 429 are refusals before the routes. */
let freeReadKey: string;
/** How many searches the engine ran. */
let searches = 0;
/** The PDFs the stub renderer made: a 304 must not add to them. */
const rendered: number[] = [];
const renderer: PdfRenderService = {
  render: async (article: PdfArticle) => {
    rendered.push(article.pageId);
    return new TextEncoder().encode(`%PDF-1.7 ${article.title} ${rendered.length}`);
  },
};

beforeAll(async () => {
  const data = tempDir("tome-data-");
  key = (await newKey(data, "--name", "cache", "--account", "cache", "--plan", "business", "--scope", "full")).key;
  freeReadKey = (await newKey(data, "--name", "free", "--account", "free", "--plan", "free", "--scope", "read")).key;
  const engine = await engineFor({ dumps: [EN_2016] });
  const search = engine.search.bind(engine);
  engine.search = (...args) => {
    searches++;
    return search(...args);
  };
  running = serve(createApp(engine, { access: new Access({ dataDir: data }), pdf: renderer }), {
    port: 0,
    hostname: "127.0.0.1",
  });
});

afterAll(async () => {
  await running?.stop();
});

function get(path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Response> {
  return fetch(running.url.origin + path, { method, headers: { "X-API-Key": key, ...headers } });
}

const quotaLeft = (r: Response) => Number(r.headers.get("x-quota-remaining"));

/** A 304 as RFC 9110 wants it: no body, the ETag, and here the key's limits as on any answer. */
async function expectNotModified(r: Response, etag: string) {
  expect(r.status).toBe(304);
  expect(new Uint8Array(await r.arrayBuffer()).byteLength).toBe(0);
  expect(r.headers.get("etag")).toBe(etag);
  expect(r.headers.get("cache-control")).toBe("private, no-cache");
  for (const h of [
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "x-quota-limit",
    "x-quota-remaining",
    "x-quota-reset",
    "x-request-id",
  ]) {
    expect({ h, sent: r.headers.has(h) }).toEqual({ h, sent: true });
  }
}

describe("ETag and Cache-Control", () => {
  test("a page's ETag is stable across identical requests, and differs with the query string", async () => {
    const etags = new Map<string, string>();
    for (const query of ["", "?offset=1", "?max_chunks=1", "?format=concat", "?offset=1&max_chunks=1"]) {
      const [a, b] = [await get(`/v1/page/39${query}`), await get(`/v1/page/39${query}`)];
      expect(a.status).toBe(200);
      const etag = a.headers.get("etag")!;
      expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
      expect(b.headers.get("etag")).toBe(etag);
      expect(await a.text()).toBe(await b.text());
      expect(a.headers.get("cache-control")).toBe("private, no-cache");
      etags.set(query, etag);
    }
    expect(new Set(etags.values()).size).toBe(etags.size);
  });

  test("chunks, changes, license and meta have ETags; different resources differ", async () => {
    const paths = [
      "/v1/chunk/39_0",
      "/v1/chunk/39_1",
      "/v1/changes?since=0",
      "/v1/changes?since=0&limit=1",
      "/v1/license",
      "/v1/meta",
    ];
    const etags: string[] = [];
    for (const path of paths) {
      const r = await get(path);
      expect({ path, status: r.status, cache: r.headers.get("cache-control") }).toEqual({
        path,
        status: 200,
        cache: "private, no-cache",
      });
      etags.push(r.headers.get("etag")!);
      expect((await get(path)).headers.get("etag")).toBe(etags.at(-1)!);
    }
    expect(new Set(etags).size).toBe(paths.length);
  });

  test("searches and lucky answers (their processing time differs each time) and errors are never stored", async () => {
    for (const path of ["/v1/search?q=albedo", "/v1/lucky?q=albedo", "/v1/page/1", "/v1/page/abc", "/v1/chunk/39_99"]) {
      const r = await get(path);
      expect({ path, etag: r.headers.get("etag"), cache: r.headers.get("cache-control") }).toEqual({
        path,
        etag: null,
        cache: "no-store",
      });
    }
  });
});

describe("If-None-Match", () => {
  test("the current ETag gets a 304 without a body, which costs no credit", async () => {
    for (const path of [
      "/v1/page/39?max_chunks=2",
      "/v1/chunk/39_0",
      "/v1/changes?since=0&limit=3",
      "/v1/license",
      "/v1/meta",
    ]) {
      const first = await get(path);
      const etag = first.headers.get("etag")!;
      const left = quotaLeft(first);
      await expectNotModified(await get(path, { "If-None-Match": etag }), etag);
      const r = await get(path, { "If-None-Match": etag });
      expect({ path, left: quotaLeft(r) }).toEqual({ path, left });
      // The next full answer costs its credit, as before.
      expect({ path, left: quotaLeft(await get(path)) }).toEqual({ path, left: left - 1 });
    }
  });

  test("a 304 still counts against the rate limit", async () => {
    // The six requests must fall in one second's window (X-RateLimit-Reset, the window's end): one that began a new
    // window counted from a fresh allowance (a CI run failed so), so the round is made again then.
    for (let round = 0; ; round++) {
      const first = await get("/v1/license");
      const etag = first.headers.get("etag")!;
      const answers = await Promise.all(Array.from({ length: 5 }, () => get("/v1/license", { "If-None-Match": etag })));
      const window = first.headers.get("x-ratelimit-reset");
      if (round < 4 && answers.some((r) => r.headers.get("x-ratelimit-reset") !== window)) continue;
      const remaining = answers.map((r) => Number(r.headers.get("x-ratelimit-remaining")));
      expect(answers.every((r) => r.status === 304)).toBe(true);
      // Each 304 took one request of the second's allowance: five consecutive counts, each after the first answer's.
      const sorted = remaining.toSorted((a, b) => b - a);
      expect(sorted).toEqual(sorted.map((_r, i) => Number(first.headers.get("x-ratelimit-remaining")) - 1 - i));
      return;
    }
  });

  test("a stale or other ETag gets the full answer; a list, W/ and * are read as RFC 9110 says", async () => {
    const path = "/v1/page/39?max_chunks=1";
    const etag = (await get(path)).headers.get("etag")!;
    const other = (await get("/v1/page/39?max_chunks=2")).headers.get("etag")!;
    for (const stale of [other, `"0000000000000000"`, etag.slice(1, -1), "garbage", ""]) {
      const r = await get(path, { "If-None-Match": stale });
      expect({ stale, status: r.status }).toEqual({ stale, status: 200 });
      expect(r.headers.get("etag")).toBe(etag);
      expect(((await r.json()) as { page: { page_id: number } }).page.page_id).toBe(39);
    }
    for (const matching of [`${other}, ${etag}`, `W/${etag}`, `"x,y", W/"a" ,${etag}`, "*", ` * `]) {
      await expectNotModified(await get(path, { "If-None-Match": matching }), etag);
    }
  });

  test("searches have no ETag to match; only * gets a 304", async () => {
    const page = (await get("/v1/page/39")).headers.get("etag")!;
    expect((await get("/v1/search?q=albedo", { "If-None-Match": page })).status).toBe(200);
    const star = await get("/v1/search?q=albedo", { "If-None-Match": "*" });
    expect(star.status).toBe(304);
    expect(await star.text()).toBe("");
    // Free (D20), so nothing runs for it (D148): no search of the engine; its parameters are still read first (D2).
    const before = searches;
    expect((await get("/v1/search?q=albedo+climate", { "If-None-Match": "*" })).status).toBe(304);
    expect(searches).toBe(before);
    expect((await get("/v1/search?q=albedo&limit=0", { "If-None-Match": "*" })).status).toBe(400);
  });

  test("HEAD: the same ETag as GET, and a 304 for it", async () => {
    for (const path of ["/v1/page/39", "/v1/chunk/39_0", "/v1/meta"]) {
      const etag = (await get(path)).headers.get("etag")!;
      const head = await get(path, {}, "HEAD");
      expect({ path, status: head.status, etag: head.headers.get("etag") }).toEqual({ path, status: 200, etag });
      await expectNotModified(await get(path, { "If-None-Match": etag }, "HEAD"), etag);
    }
  });
});

describe("the PDF", () => {
  test("has a weak ETag known before rendering; its 304 renders nothing and costs nothing", async () => {
    const first = await get("/v1/pdf/39");
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^W\/"[0-9a-f]{16}"$/);
    expect(first.headers.get("cache-control")).toBe("private, no-cache");
    expect((await get("/v1/pdf/39.pdf")).headers.get("etag")).toBe(etag);
    const renders = rendered.length;
    const left = quotaLeft(await get("/v1/license"));

    await expectNotModified(await get("/v1/pdf/39", { "If-None-Match": etag }), etag);
    await expectNotModified(await get("/v1/pdf/39.pdf", { "If-None-Match": `"other", ${etag}` }), etag);
    await expectNotModified(await get("/v1/pdf/39", { "If-None-Match": etag }, "HEAD"), etag);
    expect(rendered.length).toBe(renders);
    expect(quotaLeft(await get("/v1/pdf/39", { "If-None-Match": etag }))).toBe(left);

    // A HEAD that renders nothing still gives the ETag; another page's ETag renders the PDF.
    expect((await get("/v1/pdf/39", {}, "HEAD")).headers.get("etag")).toBe(etag);
    const other = await get("/v1/pdf/12", { "If-None-Match": etag });
    expect(other.status).toBe(200);
    expect(other.headers.get("etag")).not.toBe(etag);
    expect(rendered.length).toBe(renders + 1);
    expect(quotaLeft(other)).toBe(left - 10);
  });
});

test("a snapshot of the same revisions chunked otherwise gives other ETags", async () => {
  const rechunked = createApp(await engineFor({ dumps: [EN_2016], chunkWords: 120 }), { pdf: renderer });
  for (const path of ["/v1/chunk/39_0", "/v1/page/39", "/v1/pdf/39"]) {
    const here = (await get(path)).headers.get("etag");
    const there = (await rechunked.handle(new Request(`http://localhost${path}`))).headers.get("etag");
    expect({ path, here: here !== null, there: there !== null, same: here === there }).toEqual({
      path,
      here: true,
      there: true,
      same: false,
    });
  }
});

test("a PDF's ETag names the renderer's version: a client's PDF from an older renderer is sent again, not a 304", async () => {
  const etagUnder = async (version: string) => {
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { pdf: { ...renderer, version } });
    return (await app.handle(new Request("http://localhost/v1/pdf/39", { method: "HEAD" }))).headers.get("etag");
  };
  const [one, again, two] = await Promise.all([etagUnder("1"), etagUnder("1"), etagUnder("2")]);
  expect(one).toMatch(/^W\/"[0-9a-f]{16}"$/);
  expect({ same: one === again, other: one !== two }).toEqual({ same: true, other: true });
});

test("a web page's script may send If-None-Match and read the ETag (CORS)", async () => {
  const preflight = await fetch(`${running.url.origin}/v1/page/39`, {
    method: "OPTIONS",
    headers: {
      Origin: "https://example.org",
      "Access-Control-Request-Method": "GET",
      "Access-Control-Request-Headers": "x-api-key, if-none-match",
    },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get("access-control-allow-headers")!.toLowerCase().split(/,\s*/)).toContain("if-none-match");
  const r = await get("/v1/page/39", { Origin: "https://example.org" });
  expect(r.headers.get("access-control-expose-headers")!.toLowerCase().split(/,\s*/)).toContain("etag");
});

test("If-None-Match is read as a list of entity tags", () => {
  expect(noneMatchHits(null, `"a"`)).toBe(false);
  expect(noneMatchHits(`"a"`, `W/"a"`)).toBe(true);
  expect(noneMatchHits(`"b" , "a"`, `"a"`)).toBe(true);
  expect(noneMatchHits(`, ,"a",`, `"a"`)).toBe(true);
  expect(noneMatchHits(`"a`, `"a"`)).toBe(false);
  expect(noneMatchHits(`a, "a"`, `"a"`)).toBe(false);
  expect(noneMatchHits(`"b", *`, `"a"`)).toBe(false);
});

// Last: a second key's burst shares the server's time with the first (D57), which would refuse the first's next requests.
describe("refusals", () => {
  test("refusals before the routes are errors too: 401, 403, 405 and 429 are never stored (D34)", async () => {
    const refusals: [string, Promise<Response>][] = [
      ["no key", fetch(`${running.url.origin}/v1/search?q=albedo`)],
      ["unknown key", get("/v1/meta", { "X-API-Key": `wk_${"a".repeat(32)}` })],
      ["read scope on a PDF", get("/v1/pdf/39", { "X-API-Key": freeReadKey })],
      ["POST", get("/v1/search?q=albedo", {}, "POST")],
      ["no route, no key", fetch(`${running.url.origin}/nothing`)],
    ];
    const seen = await Promise.all(refusals.map(async ([what, r]) => [what, (await r).status, (await r).headers]));
    expect(seen.map(([what, status]) => [what, status])).toEqual([
      ["no key", 401],
      ["unknown key", 403],
      ["read scope on a PDF", 403],
      ["POST", 405],
      ["no route, no key", 404],
    ]);
    for (const [what, , headers] of seen) {
      const h = headers as Headers;
      // Nor do they learn which snapshot would have answered (D2).
      expect({ what, cache: h.get("cache-control"), etag: h.get("etag"), snapshot: h.get("x-snapshot") }).toEqual({
        what,
        cache: "no-store",
        etag: null,
        snapshot: null,
      });
    }
    // The free plan allows 10 a second: of 15 at once, some are refused by the rate limit.
    const burst = await Promise.all(Array.from({ length: 15 }, () => get("/v1/license", { "X-API-Key": freeReadKey })));
    const limited = burst.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited)
      expect([r.headers.get("cache-control"), r.headers.get("etag")]).toEqual(["no-store", null]);
  });
});
