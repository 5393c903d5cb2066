/**
 * The request pipeline decides once what a request's path is: the key check and the router read
 * the same path, however the request line and Host header are formed (raw sockets, HTTP/1.0
 * and 1.1), so no /v1 route answers without a key.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { EN_2006, EN_2016, newKey, snapshotFor, startServer, tempDir, type ServerProcess } from "./helpers";
import { compose, exchange, type Step } from "../src/http/pipeline";
import { KEYLESS_PER_ADDRESS } from "../src/http/steps/keyless";
import { rawGet, rawRequest, rawResponses, rawUpload } from "./raw-http";

setDefaultTimeout(120_000);

let server: ServerProcess;
let key: string;

beforeAll(async () => {
  server = await startServer({ TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2016, EN_2006] }) });
  key = server.key!;
});
afterAll(() => server?.stop());

/** Every keyed route, answering 200 with a valid key. */
const ROUTES = [
  "/v1/search?q=albedo",
  "/v1/page/39",
  "/v1/chunk/39_0",
  "/v1/changes",
  "/v1/lucky?q=Albedo",
  "/v1/pdf/39",
  "/v1/pdf/39.pdf",
  "/v1/license",
  "/v1/meta",
];

/**
 * Host header lines no request's URL can be read from: missing, empty, invalid or several, which Bun makes no absolute
 * URL of, and the last ones, which Bun makes one of but no URL parser reads.
 */
const UNREADABLE_HOSTS: [string, string[]][] = [
  ["no Host", []],
  ["Host: (empty)", ["Host:"]],
  ["Host: a/", ["Host: a/"]],
  ["Host: a b", ["Host: a b"]],
  ["Host: a?b", ["Host: a?b"]],
  ["Host: a@b", ["Host: a@b"]],
  // RFC 9112 3.2: more than one Host line is a 400. Bun joins them ("a, b") and reads the URL from the first.
  ["two Host lines", ["Host: a", "Host: b"]],
  ["two equal Host lines", ["Host: a", "Host: a"]],
  ["a Host line and an empty one", ["Host: a", "Host:"]],
  // Bun makes an absolute URL of these, but not a URL a reader can parse: its dot segments left as sent (/v1/./meta
  // was then no route), and new URL() of it throws (the dashboard's sign-in answered 500).
  ["Host: a:99999 (a port past 65535)", ["Host: a:99999"]],
  ["Host: [::1 (an unclosed IPv6 address)", ["Host: [::1"]],
  ["Host: a%zz (a % without two hex digits)", ["Host: a%zz"]],
  ["Host: 1.2.3.999 (an IPv4 address past 255)", ["Host: 1.2.3.999"]],
];
/**
 * Every route, and the paths that are not keyed routes, where an unreadable Host is refused all the same: the pages that
 * read their address, paths with dot segments, the open ones.
 */
const ANY_PATH = [
  ...ROUTES,
  "/dashboard/sign-in",
  "/dashboard/sign-in?signed-out",
  "/v1/./meta",
  "/docs/../v1/meta",
  "/healthz",
  "/",
];
/** Legitimate Host headers, short ones included. */
const READABLE_HOSTS: [string, string[]][] = [
  ["Host: ab", ["Host: ab"]],
  ["Host: x:1", ["Host: x:1"]],
  ["Host: api", ["Host: api"]],
  ["Host: a", ["Host: a"]],
  ["Host: tome.example.org", ["Host: tome.example.org"]],
  ["Host: [::1]:80", ["Host: [::1]:80"]],
];

describe("every route and Host form, over a raw socket", () => {
  for (const version of ["1.0", "1.1"] as const) {
    test(`HTTP/${version}: an unreadable Host gets a 400 JSON error and never data, with or without a key, on every path`, async () => {
      for (const [name, hostLines] of UNREADABLE_HOSTS) {
        if (version === "1.1" && !hostLines.length) continue; // Bun itself refuses HTTP/1.1 without Host (below)
        for (const route of ANY_PATH) {
          for (const withKey of [false, true]) {
            const lines = withKey ? [...hostLines, `X-API-Key: ${key}`] : hostLines;
            const r = await rawRequest(server.url, rawGet(route, version, lines));
            expect({ name, route, withKey, status: r.status, error: JSON.parse(r.body).error }).toEqual({
              name,
              route,
              withKey,
              status: 400,
              error: "bad_request",
            });
            // Several lines are said as several, not as a Host missing.
            expect(JSON.parse(r.body).message).toContain(hostLines.length > 1 ? "several Host lines" : "no valid Host");
            expect(r.headers["content-type"]).toBe("application/json; charset=utf-8");
            expect(r.headers["x-request-id"]).toBeTruthy();
            expect(r.headers["x-quota-remaining"]).toBeUndefined();
          }
        }
      }
    });

    test(`HTTP/${version}: a readable Host, however short, needs a key on every route and is routed by its real path`, async () => {
      for (const [name, hostLines] of READABLE_HOSTS) {
        for (const route of ROUTES) {
          const refused = await rawRequest(server.url, rawGet(route, version, hostLines));
          expect({ name, route, status: refused.status, error: JSON.parse(refused.body).error }).toEqual({
            name,
            route,
            status: 401,
            error: "unauthorized",
          });
          const served = await rawRequest(server.url, rawGet(route, version, [...hostLines, `X-API-Key: ${key}`]));
          expect({ name, route, status: served.status }).toEqual({ name, route, status: 200 });
          expect(served.headers["x-quota-limit"]).toBeTruthy();
        }
        // A path that only ends like a route is not that route, with or without a key (outside /v1, a 404 either way: D87).
        for (const path of ["/x/v1/search?q=albedo", "/ab/v1/chunk/39_0", "//v1/chunk/39_0", "/x/v1/pdf/39"]) {
          const refused = await rawRequest(server.url, rawGet(path, version, hostLines));
          expect({ name, path, status: refused.status, error: JSON.parse(refused.body).error }).toEqual({
            name,
            path,
            status: 404,
            error: "not found",
          });
          const keyed = await rawRequest(server.url, rawGet(path, version, [...hostLines, `X-API-Key: ${key}`]));
          expect({ name, path, status: keyed.status, error: JSON.parse(keyed.body).error }).toEqual({
            name,
            path,
            status: 404,
            error: "not found",
          });
        }
      }
    });
  }

  test("the open paths answer without a key under a short Host", async () => {
    for (const path of ["/healthz", "/v1/openapi.json", "/docs"]) {
      const r = await rawRequest(server.url, rawGet(path, "1.1", ["Host: ab"]));
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
    }
  });

  test("paths that only resemble an open one are not open: under /v1 they need a key, outside it they are no route (D87)", async () => {
    for (const [path, status] of [
      ["/healthz/x", 404],
      ["/v1/openapi.json/x", 401],
      ["/docsx", 404],
      ["/x/healthz", 404],
      ["/x/docs", 404],
      ["//", 404],
      ["/%761/chunk/39_0", 404],
      ["/V1/chunk/39_0", 404],
      ["/v1/openapi.json/../chunk/39_0", 401],
    ] as const) {
      const r = await rawRequest(server.url, rawGet(path, "1.1", ["Host: localhost"]));
      expect({ path, status: r.status }).toEqual({ path, status });
    }
  });

  test("a CONNECT, whose target is a host and port, is D1's 405 for a method the API does not take, not a Host it cannot read", async () => {
    const connect = "CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\nConnection: close\r\n\r\n";
    const r = await rawRequest(server.url, connect);
    expect([r.status, JSON.parse(r.body).error, r.headers.allow]).toEqual([
      405,
      "method not allowed",
      "GET, HEAD, OPTIONS",
    ]);
  });
});

test("the dashboard's 308 for an address ending in a slash always sends to a path of its own, never another origin", async () => {
  const targets: [target: string, host: string][] = [
    ["/dashboard//evil.example/", "localhost"],
    ["/dashboard/%2F%2Fevil.example/", "localhost"],
    ["/dashboard/..%2F/", "localhost"],
    ["/dashboard/\\evil.example/", "localhost"],
    ["/dashboard/\\\\evil.example/", "localhost"],
    ["/dashboard/%5Cevil.example/", "localhost"],
    ["/dashboard/../..//evil.example/", "localhost"],
    ["/dashboard/?//evil.example", "localhost"],
    ["/dashboard/?\\evil.example", "localhost"],
    ["http://evil.example/dashboard/", "localhost"],
    ["http://evil.example//dashboard/", "localhost"],
    ["//evil.example/dashboard/", "localhost"],
    ["/dashboard/", "evil.example"],
    ["/dashboard/sign-in/", "evil.example:80"],
    ["/dashboard/./", "localhost"],
  ];
  const answers: string[] = [];
  for (const [target, host] of targets) {
    const r = await rawRequest(server.url, rawGet(target, "1.1", [`Host: ${host}`]));
    const location = r.headers.location;
    answers.push(`${target} ${host} ${r.status} ${location ?? ""}`);
    if (location !== undefined) expect(location).toMatch(/^\/dashboard(\/[A-Za-z0-9._-]+)*(\?[^#]*)?$/);
  }
  // A backslash in the query is the query's (browsers turn it into a slash in the path only). Some are sent on: the check met redirects.
  expect(answers.filter((a) => / 308 \/dashboard/.test(a)).length, answers.join("\n")).toBeGreaterThan(3);
});

test("a request target holding a fragment (#…, which only raw clients send) is 400 bad_request, not read as part of the path or the query (D28)", async () => {
  const keyed = ["Host: localhost", `X-API-Key: ${key}`];
  for (const path of [
    "/v1/chunk/39_0#x",
    "/v1/search?q=albedo#x",
    "/healthz#",
    "/dashboard/sign-in#x",
    "/dashboard/?a#b",
    "/#x",
  ]) {
    const r = await rawRequest(server.url, rawGet(path, "1.1", keyed));
    expect({ path, status: r.status, body: JSON.parse(r.body) }).toEqual({
      path,
      status: 400,
      body: { error: "bad_request", message: expect.stringContaining("holds a fragment (#…)") },
    });
  }
  // A # that belongs to a value is sent encoded, and read.
  expect((await rawRequest(server.url, rawGet("/v1/search?q=albedo%23x", "1.1", keyed))).status).toBe(200);
});

describe("request bodies (D28): Tome's own 413, and no body read past what a route takes", () => {
  const head = (method: string, path: string, lines: string[]) =>
    [`${method} ${path} HTTP/1.1`, "Host: a", ...lines, "", ""].join("\r\n");
  const CHUNK = `1000\r\n${"a".repeat(4096)}\r\n`;

  test("a body declared over 64 KiB, 1 GB here, is D1's 413 with a request id before it is read, on every method, and the server hangs up", async () => {
    for (const [method, path] of [
      ["GET", "/v1/search?q=albedo"],
      ["PUT", "/v1/search?q=albedo"],
      ["POST", "/v1/page/39"],
      ["OPTIONS", "/v1/chunk/39_0"],
      ["DELETE", "/nope"],
    ] as const) {
      for (const keyed of [false, true]) {
        const lines = ["Content-Length: 1000000000", ...(keyed ? [`X-API-Key: ${key}`] : [])];
        const { answer, hungUp } = await rawUpload(server.url, head(method, path, lines), "a".repeat(4096));
        expect({ method, path, keyed, status: answer.status, hungUp, error: JSON.parse(answer.body).error }).toEqual({
          method,
          path,
          keyed,
          status: 413,
          hungUp: true,
          error: "content_too_large",
        });
        expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
        expect(answer.headers["x-request-id"]).toBeTruthy();
        expect(answer.headers["access-control-allow-origin"]).toBe("*");
        expect(answer.headers.connection).toBe("close");
      }
    }
    // 64 KiB is taken, and read and dropped by Bun: a GET's answer as without it.
    const within = await rawRequest(
      server.url,
      head("GET", "/v1/chunk/39_0", [`X-API-Key: ${key}`, "Content-Length: 65536", "Connection: close"]) +
        "a".repeat(65536),
    );
    expect(within.status).toBe(200);
  });

  test("a chunked body, which Bun would drop as it comes without end, is not read on: the answer closes the connection", async () => {
    for (const [method, path, status] of [
      ["GET", "/v1/search?q=albedo", 200],
      ["PUT", "/v1/search?q=albedo", 405],
      ["OPTIONS", "/v1/search?q=albedo", 204],
    ] as const) {
      const lines = [`X-API-Key: ${key}`, "Transfer-Encoding: chunked"];
      const { answer, hungUp } = await rawUpload(server.url, head(method, path, lines), CHUNK);
      expect({ method, status: answer.status, hungUp, connection: answer.headers.connection }).toEqual({
        method,
        status,
        hungUp: true,
        connection: "close",
      });
      expect(answer.headers["x-request-id"]).toBeTruthy();
    }
  });

  test("/mcp: a chunked body past 64 KiB is its 413 (D54) and no more is read; a body declared past it, refused before it is read", async () => {
    const mcp = ["Content-Type: application/json", "Accept: application/json, text/event-stream"];
    const chunked = await rawUpload(
      server.url,
      head("POST", "/mcp", [...mcp, `X-API-Key: ${key}`, "Transfer-Encoding: chunked"]),
      CHUNK,
    );
    expect({ status: chunked.answer.status, hungUp: chunked.hungUp }).toEqual({ status: 413, hungUp: true });
    expect(JSON.parse(chunked.answer.body).error.code).toBe(-32600);
    expect(chunked.answer.headers["x-request-id"]).toBeTruthy();
    for (const keyed of [false, true]) {
      const lines = [...mcp, "Content-Length: 1000000000", ...(keyed ? [`X-API-Key: ${key}`] : [])];
      const { answer, hungUp } = await rawUpload(server.url, head("POST", "/mcp", lines), "a".repeat(4096));
      expect({ keyed, status: answer.status, hungUp }).toEqual({ keyed, status: keyed ? 413 : 401, hungUp: true });
      expect(answer.headers["x-request-id"]).toBeTruthy();
    }
  });
});

describe("pipelined requests", () => {
  let own: ServerProcess;
  let acme: string;
  let beta: string;
  let flood: string;
  let wide: string;
  beforeAll(async () => {
    const data = tempDir("tome-data-");
    [acme, beta, flood, wide] = await Promise.all(
      [
        ["acme", "starter"],
        ["beta", "starter"],
        ["flood", "starter"],
        ["wide", "enterprise"],
      ].map(
        async ([account, plan]) => (await newKey(data, "--name", account!, "--account", account!, "--plan", plan!)).key,
      ),
    );
    own = await startServer({
      TOME_DATA: data,
      TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2016, EN_2006] }),
      TOME_TRUSTED_PROXIES: "127.0.0.1",
    });
  });
  afterAll(() => own?.stop());

  /** The requests written at once on one connection, the last closing it. */
  const pipelined = (asked: [string, string][]) =>
    rawResponses(
      own.url,
      asked
        .map(([path, key], i) => {
          const request = rawGet(path, "1.1", ["Host: a", `X-API-Key: ${key}`]);
          return i < asked.length - 1 ? request.replace("Connection: close\r\n", "") : request;
        })
        .join(""),
    );
  const quotaOf = async (key: string) =>
    Number((await fetch(`${own.url}/v1/license`, { headers: { "X-API-Key": key } })).headers.get("x-quota-remaining"));

  test("requests sent at once on one connection, with keys of two accounts, are answered in order, each charged to its own key", async () => {
    const [acmeBefore, betaBefore] = [await quotaOf(acme), await quotaOf(beta)];
    const answers = await pipelined([
      ["/v1/meta", acme],
      ["/v1/chunk/39_0", beta],
      ["/v1/page/39", acme],
      ["/v1/changes?limit=1", beta],
      ["/v1/license", acme],
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // In order: each answer is its own request's.
    expect(JSON.parse(answers[1]!.body).id).toBe("39_0");
    expect(JSON.parse(answers[2]!.body).page.page_id).toBe(39);
    // Each account's quota counts its own requests alone.
    expect(answers.map((a) => Number(a.headers["x-quota-remaining"]))).toEqual([
      acmeBefore - 1,
      betaBefore - 1,
      acmeBefore - 2,
      betaBefore - 2,
      acmeBefore - 3,
    ]);
  });

  test("a refusal of the key or its rate ends the connection: the requests written behind it are not answered (D183)", async () => {
    for (const refused of [`wk_${"a".repeat(32)}`, ""]) {
      const answers = await pipelined([
        ["/v1/license", refused],
        ["/v1/license", acme],
      ]);
      expect(answers.map((a) => [a.status, a.headers.connection])).toEqual([[refused ? 403 : 401, "close"]]);
    }
    // 60 at once past a rate of 25 a second: answered until the first 429, the rest dropped unread.
    const answers = await pipelined(Array.from({ length: 60 }, (): [string, string] => ["/v1/license", flood]));
    expect(answers.at(-1)?.status).toBe(429);
    expect(answers.filter((a) => a.status !== 200)).toHaveLength(1);
    expect(answers.length).toBeLessThan(60);
  });

  test("an answer the routes give a key in good standing (a 400, a 404 of an API path) does not end the connection (D183)", async () => {
    const answers = await pipelined([
      ["/v1/changes?limit=abc", acme],
      ["/v1/chunk/999999999_0", acme],
      ["/v1/license", acme],
    ]);
    expect(answers.map((a) => [a.status, a.headers.connection])).toEqual([
      [400, undefined],
      [404, undefined],
      [200, undefined],
    ]);
  });

  /** `count` requests written at once on one connection, the last asking to close it (Bun's answer does not say so): `line` their request line, `lines` their headers. */
  const repeated = (line: string, count: number, lines: string[] = []) =>
    rawResponses(
      own.url,
      Array.from({ length: count }, (_, i) =>
        [line, "Host: a", ...lines, ...(i === count - 1 ? ["Connection: close"] : []), "", ""].join("\r\n"),
      ).join(""),
    );

  // Each test's clients are told apart by the address a proxy (the test, from 127.0.0.1, trusted) says they came from:
  // the counts of keyless answers are an address's (D188).
  test("300 answers without a key pipelined on one connection (preflights, health checks): it ends at the address's 100th, and each after it ends its connection (D188)", async () => {
    for (const [line, status, from] of [
      ["OPTIONS /v1/search HTTP/1.1", 204, "203.0.113.1"],
      ["GET /healthz HTTP/1.1", 200, "203.0.113.2"],
    ] as const) {
      const answers = await repeated(line, 300, [`X-Forwarded-For: ${from}`]);
      expect({ line, count: answers.length }).toEqual({ line, count: KEYLESS_PER_ADDRESS });
      expect(answers.every((a) => a.status === status)).toBe(true);
      expect(answers.map((a) => a.headers.connection).filter(Boolean)).toEqual(["close"]);
      // A new connection from the same address: its first answer ends it.
      const again = await repeated(line, 3, [`X-Forwarded-For: ${from}`]);
      expect(again.map((a) => [a.status, a.headers.connection])).toEqual([[status, "close"]]);
    }
  });

  test("300 HEAD /healthz pipelined on one connection are counted as their GETs are (D188)", async () => {
    // A HEAD's answers say a length and send no body: told apart by their status lines, not by rawResponses.
    const requests = Array.from({ length: 300 }, (_, i) =>
      [
        "HEAD /healthz HTTP/1.1",
        "Host: a",
        "X-Forwarded-For: 203.0.113.5",
        ...(i === 299 ? ["Connection: close"] : []),
        "",
        "",
      ].join("\r\n"),
    ).join("");
    const { status, headers, body } = await rawRequest(own.url, requests);
    expect(status).toBe(200);
    const all = `${JSON.stringify(headers)}${body}`;
    expect(1 + body.split("HTTP/1.1 200 ").length - 1).toBe(KEYLESS_PER_ADDRESS);
    expect(all.match(/connection"?: ?"?close/gi)).toHaveLength(1);
  });

  test("a 405 without a key ends its connection, as a refusal of the key does (D188)", async () => {
    const answers = await repeated("DELETE /v1/license HTTP/1.1", 3, ["X-Forwarded-For: 203.0.113.3"]);
    expect(answers.map((a) => [a.status, a.headers.connection])).toEqual([[405, "close"]]);
  });

  test("a few health checks on one connection, and a key's 300 requests on another, are all answered on it (D188)", async () => {
    const checks = await repeated("GET /healthz HTTP/1.1", 5, ["X-Forwarded-For: 203.0.113.4"]);
    expect(checks.map((a) => [a.status, a.headers.connection])).toEqual(
      Array.from({ length: 5 }, () => [200, undefined]),
    );
    const keyed = await repeated("GET /v1/license HTTP/1.1", 300, [`X-API-Key: ${wide}`]);
    expect(keyed).toHaveLength(300);
    expect(keyed.filter((a) => a.status !== 200 || a.headers.connection)).toEqual([]);
  });

  // Bun (uWS) closes a connection on which a request arrives while the answer before it waits ("denying async
  // pipelining"): that answer and the requests behind it are never sent, and no hook reaches it (D28). What matters is
  // that nothing is charged for them, and that this test says so if Bun ever changes it.
  test("behind an answer that waits (a search in a worker), Bun closes the connection: the rest is not answered, nor charged", async () => {
    const [acmeBefore, betaBefore] = [await quotaOf(acme), await quotaOf(beta)];
    const answers = await pipelined([
      ["/v1/meta", acme],
      ["/v1/search?q=albedo", beta],
      ["/v1/meta", acme],
    ]);
    expect(answers.map((a) => a.status)).toEqual([200]);
    // The search was sent to a worker before Bun closed: it runs to its end, then is logged as its client's, gone (D28).
    while (!own.stdout().includes("GET /v1/search ")) await Bun.sleep(10);
    expect(own.stdout()).toMatch(/^GET \/v1\/search 499 /m);
    expect([await quotaOf(acme), await quotaOf(beta)]).toEqual([acmeBefore - 2, betaBefore - 1]);
  });
});

describe("answers Bun's HTTP parser makes itself, before the pipeline sees a request", () => {
  // Bun (uWS) answers these with a fixed status line and "Connection: close", no body: no
  // hook lets Tome make them JSON or give them an X-Request-Id (docs/api.md, "The HTTP API"). What
  // matters is that they carry no data, and that this test says so if Bun ever changes them.
  test("oversized headers, a broken request line, an unknown version, HTTP/1.1 without Host, a body's length said two ways, a target not a path (*, no leading slash, a bare query), an unknown method", async () => {
    const cases: [string, string, number][] = [
      [
        "headers over 128 KiB (D88)",
        `GET /v1/chunk/39_0 HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${key}\r\nX-Big: ${"a".repeat(140_000)}\r\n\r\n`,
        431,
      ],
      ["a request line that is not one", "GARBAGE\r\n\r\n", 400],
      ["HTTP/3.0 on a socket", `GET /v1/chunk/39_0 HTTP/3.0\r\nHost: a\r\nX-Api-Key: ${key}\r\n\r\n`, 505],
      ["HTTP/1.1 without Host", `GET /v1/chunk/39_0 HTTP/1.1\r\nX-Api-Key: ${key}\r\nConnection: close\r\n\r\n`, 400],
      // D88: the ways a body's end could be read two ways.
      [
        "Content-Length beside Transfer-Encoding",
        `POST /mcp HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${key}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
        400,
      ],
      [
        "Content-Length twice",
        `GET /v1/chunk/39_0 HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${key}\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab`,
        400,
      ],
      ["Content-Length not digits", `GET /v1/chunk/39_0 HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n`, 400],
      [
        "more than 198 header lines (D88)",
        `GET /v1/chunk/39_0 HTTP/1.1\r\nHost: a\r\n${"X-A: b\r\n".repeat(198)}\r\n`,
        431,
      ],
      ["the asterisk form, for OPTIONS too", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 400],
      // D88: a target that is neither a path from its slash nor an absolute URL (the latter reaches Tome).
      ["the asterisk form for GET", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400],
      ["the asterisk form for HEAD", "HEAD * HTTP/1.1\r\nHost: a\r\n\r\n", 400],
      [
        "a path without its leading slash",
        `GET v1/search?q=albedo HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${key}\r\n\r\n`,
        400,
      ],
      ["a bare query", `GET ?q=1 HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${key}\r\n\r\n`, 400],
      ["a bare fragment", "GET #x HTTP/1.1\r\nHost: a\r\n\r\n", 400],
      [
        "Transfer-Encoding other than chunked",
        `POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`,
        400,
      ],
    ];
    for (const [name, text, status] of cases) {
      const r = await rawRequest(server.url, text);
      // Bun's: no body, no X-Request-Id (D22), only Connection: close.
      expect({ name, status: r.status, body: r.body, headers: r.headers }).toEqual({
        name,
        status,
        body: "",
        headers: { connection: "close" },
      });
    }
    // The absolute form is a target Bun accepts: Tome reads its path, and its key check with it (D88).
    const absolute = (lines: string[]) => rawRequest(server.url, rawGet("http://a/v1/chunk/39_0", "1.1", lines));
    const served = await absolute(["Host: a", `X-Api-Key: ${key}`]);
    expect([served.status, JSON.parse(served.body).id, Boolean(served.headers["x-request-id"])]).toEqual([
      200,
      "39_0",
      true,
    ]);
    const unkeyed = await absolute(["Host: a"]);
    expect([unkeyed.status, JSON.parse(unkeyed.body).error]).toEqual([401, "unauthorized"]);
    // A method Bun does not know (or in lower case): the connection is closed without an answer.
    for (const method of ["FOO", "get"]) {
      const r = await rawRequest(
        server.url,
        `${method} /v1/chunk/39_0 HTTP/1.1\r\nHost: a\r\nX-Api-Key: ${key}\r\n\r\n`,
      );
      expect({ method, answer: r.status || r.body || "none" }).toEqual({ method, answer: "none" });
    }
  });
});

describe("compose", () => {
  const trace: string[] = [];
  const step = (name: string, answer?: "answer" | "throw"): Step => ({
    before: () => {
      trace.push(`${name}>`);
      if (answer === "throw") throw new Error(name);
      return answer ? new Response(name) : undefined;
    },
    after: (_x, response) => {
      trace.push(`<${name}`);
      return response;
    },
  });
  const fault = () => new Response("fault", { status: 500 });
  const run = async (steps: Step[], routes: () => Response | Promise<Response>) => {
    trace.length = 0;
    const response = await compose(
      steps,
      routes,
      fault,
    )(
      exchange(new Request("http://localhost/"), undefined, {
        view: undefined,
        id: "",
        path: "",
        inFlight: 0,
        retired: false,
      }),
    );
    return { body: await response.text(), trace: [...trace] };
  };

  test("steps run in order before the routes and in reverse after them, around one await of the routes", async () => {
    expect(await run([step("a"), step("b")], async () => new Response("routes"))).toEqual({
      body: "routes",
      trace: ["a>", "b>", "<b", "<a"],
    });
  });

  test("a step that answers ends the request: only the steps before it see the answer on the way out", async () => {
    expect(await run([step("a"), step("b", "answer"), step("c")], () => new Response("routes"))).toEqual({
      body: "b",
      trace: ["a>", "b>", "<a"],
    });
  });

  test("a fault, in a step or in the routes (thrown or rejected), is the fault answer, seen on the way out", async () => {
    expect(await run([step("a"), step("b", "throw"), step("c")], () => new Response("routes"))).toEqual({
      body: "fault",
      trace: ["a>", "b>", "<a"],
    });
    expect(
      await run([step("a")], () => {
        throw new Error("sync");
      }),
    ).toEqual({ body: "fault", trace: ["a>", "<a"] });
    expect(
      await run([step("a")], async () => {
        throw new Error("async");
      }),
    ).toEqual({ body: "fault", trace: ["a>", "<a"] });
  });
});

describe("D195: one slash at a path's end", () => {
  test("is the route without it: the same answer, ETag and cost, keyless where the route is; two slashes or more are no route", async () => {
    const get = async (path: string, headers: Record<string, string> = { "X-API-Key": key }) => {
      const r = await fetch(server.url + path, { headers });
      // The time a search took is the one field two answers to one request may differ in.
      const body = (await r.text()).replace(/"(search_time_ms|processing_time_ms|processingTimeMs)":\d+/g, "");
      return { status: r.status, etag: r.headers.get("etag"), headers: [...r.headers.keys()].join(), body };
    };
    for (const route of ROUTES) {
      const [path, query] = route.split("?");
      const slashed = `${path}/${query ? `?${query}` : ""}`;
      const plain = await get(route);
      const other = await get(slashed);
      // The same headers too: the key's rate and quota counted as for the route (D2).
      expect({ slashed, ...other, body: other.body === plain.body }).toEqual({ slashed, ...plain, body: true });
      // The route's ETag gets a 304 at the slashed address (a search has none: D148).
      if (plain.etag) {
        const again = await fetch(server.url + slashed, { headers: { "X-API-Key": key, "If-None-Match": plain.etag } });
        expect({ slashed, status: again.status }).toEqual({ slashed, status: 304 });
      }
      // Refused without a key as the route is.
      expect({ slashed, status: (await get(slashed, {})).status }).toEqual({ slashed, status: 401 });
    }
    for (const path of ["/healthz/", "/v1/openapi.json/", "/docs/"])
      expect({ path, status: (await get(path, {})).status }).toEqual({ path, status: 200 });
    // Only one slash: more, or a slash inside, is a path no route has (D1's 404 with a key).
    for (const path of ["/v1/search//?q=albedo", "/v1//search?q=albedo", "/v1/page/39//", "/healthz//"]) {
      const r = await get(path);
      expect({ path, status: r.status, error: JSON.parse(r.body).error }).toEqual({
        path,
        status: 404,
        error: "not found",
      });
    }
    // The API's description names each route once, without the slash.
    const paths = Object.keys((JSON.parse((await get("/v1/openapi.json")).body) as { paths: object }).paths);
    expect(paths.filter((p) => p.endsWith("/"))).toEqual([]);
  });
});
