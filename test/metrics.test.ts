/**
 * /metrics (Prometheus text): scraped from the real server with the admin token, before and
 * after requests of each kind; closed to everyone else; not served without TOME_ADMIN_TOKEN.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Access } from "../src/access";
import { createApp } from "../src/http/app";
import { serve } from "../src/http";
import {
  appWithAccounts,
  dashboardSignIn,
  engineFor,
  newKey,
  runToExit,
  type ServerProcess,
  snapshotFor,
  SQUAD,
  START,
  startServer,
  tempDir,
  NO_SEARCH_THREADS,
  accountsUpWhile,
} from "./helpers";

setDefaultTimeout(120_000);

const TOKEN = "metrics-test-token-0123456789abcdef";
const PAGE_ID = 5000001;
const SQUAD_OPTIONS = { dumps: [SQUAD] };

type Samples = Map<string, number>;

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL_VALUE = '"(?:[^"\\\\\\n]|\\\\["\\\\n])*"';
const LABELS = `\\{(?:[a-zA-Z_][a-zA-Z0-9_]*=${LABEL_VALUE}(?:,[a-zA-Z_][a-zA-Z0-9_]*=${LABEL_VALUE})*)?\\}`;
const VALUE = "(?:[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN)";
const SAMPLE = new RegExp(`^(${NAME})(${LABELS})? (${VALUE})(?: -?[0-9]+)?$`);
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const HISTOGRAM_SUFFIXES = ["_bucket", "_sum", "_count"];

/**
 * Reads the text format strictly (every line a HELP, a TYPE, a sample or empty; every sample
 * of a declared family, each family declared once): the samples, keyed by name and labels as
 * written.
 */
function parse(text: string): Samples {
  const types = new Map<string, string>();
  const samples: Samples = new Map();
  for (const line of text.split("\n")) {
    if (line === "" || HELP.test(line)) continue;
    const type = TYPE.exec(line);
    if (type) {
      if (types.has(type[1]!)) throw new Error(`family declared twice: ${line}`);
      types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`not a line of the Prometheus text format: ${JSON.stringify(line)}`);
    const name = sample[1]!;
    const family = types.has(name)
      ? name
      : HISTOGRAM_SUFFIXES.map((s) => (name.endsWith(s) ? name.slice(0, -s.length) : "")).find(
          (f) => types.get(f) === "histogram",
        );
    if (!family) throw new Error(`a sample of no declared family: ${line}`);
    const key = name + (sample[2] ?? "");
    if (samples.has(key)) throw new Error(`sample repeated: ${line}`);
    samples.set(key, Number(sample[3]));
  }
  return samples;
}

/** A sample's value, 0 when absent (a series appears with its first event). */
const value = (samples: Samples, key: string) => samples.get(key) ?? 0;

describe("/metrics on the real server, with TOME_ADMIN_TOKEN", () => {
  let server: ServerProcess;
  let free: string;
  let growth: string;
  const scrape = async () => {
    const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    return parse(await response.text());
  };
  const get = (path: string, key?: string) => fetch(server.url + path, { headers: key ? { "X-API-Key": key } : {} });

  beforeAll(async () => {
    const data = tempDir("tome-data-");
    free = (await newKey(data, "--name", "f", "--account", "a-free", "--plan", "free", "--scope", "full")).key;
    growth = (await newKey(data, "--name", "g", "--account", "a-growth", "--plan", "growth")).key;
    server = await startServer({
      TOME_SNAPSHOT: await snapshotFor(SQUAD_OPTIONS),
      TOME_DATA: data,
      TOME_ADMIN_TOKEN: TOKEN,
      // Never cut off by its time limit on a loaded machine: its work is compared with the engine's.
      TOME_SEARCH_TIMEOUT_MS: "4000",
    });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  test("the counters move by what was asked: requests by route template and status, latency, search work, credits by plan, PDFs", async () => {
    const engine = await engineFor(SQUAD_OPTIONS);
    const query = engine.page(PAGE_ID)!.title;
    const before = await scrape();

    const statuses = [
      (await get(`/v1/search?q=${encodeURIComponent(query)}`, free)).status,
      (await get(`/v1/search?q=${encodeURIComponent(query)}`)).status, // no key: refused before the engine
      (await get(`/v1/page/${PAGE_ID}`, free)).status,
      (await get(`/v1/page/${PAGE_ID}`, growth)).status,
      (await get("/v1/page/999999999", free)).status,
      (await get("/no/such/route/4711", free)).status,
      (await get(`/v1/pdf/${PAGE_ID}`, free)).status,
      (await get(`/v1/pdf/${PAGE_ID}.pdf`, free)).status, // the same revision: the kept PDF
    ];
    expect(statuses).toEqual([200, 401, 200, 200, 404, 404, 200, 200]);
    const after = await scrape();
    const delta = (key: string) => value(after, key) - value(before, key);

    const requests = (route: string, status: number) =>
      delta(`tome_http_requests_total{route="${route}",status="${status}"}`);
    expect({
      search200: requests("/v1/search", 200),
      search401: requests("/v1/search", 401),
      page200: requests("/v1/page/{page_id}", 200),
      page404: requests("/v1/page/{page_id}", 404),
      unmatched404: requests("unmatched", 404),
      pdf200: requests("/v1/pdf/{page_id}", 200),
    }).toEqual({ search200: 1, search401: 1, page200: 2, page404: 1, unmatched404: 1, pdf200: 2 });
    // No raw path is a label (the snapshot's content hash, hex, may hold any digits).
    const labels = [...after.keys()].filter((k) => !k.startsWith("tome_snapshot_info"));
    expect(labels.filter((k) => k.includes(String(PAGE_ID)) || k.includes("4711"))).toEqual([]);

    const latency = (route: string) => delta(`tome_http_request_duration_seconds_count{route="${route}"}`);
    expect([
      latency("/v1/search"),
      latency("/v1/page/{page_id}"),
      latency("unmatched"),
      latency("/v1/pdf/{page_id}"),
    ]).toEqual([2, 3, 1, 2]);
    expect(delta('tome_http_request_duration_seconds_bucket{le="+Inf",route="/v1/search"}')).toBe(2);
    expect(delta('tome_http_request_duration_seconds_sum{route="/v1/pdf/{page_id}"}')).toBeGreaterThan(0);

    // One search reached the engine; its work is the engine's for that query on the same snapshot.
    const { work } = engine.search(query, { budgetMs: Infinity });
    expect(work.candidates).toBeGreaterThan(0);
    expect(work.postings).toBeGreaterThanOrEqual(work.candidates);
    expect([delta("tome_search_candidates_count"), delta("tome_search_candidates_sum")]).toEqual([1, work.candidates]);
    expect([delta("tome_search_postings_count"), delta("tome_search_postings_sum")]).toEqual([1, work.postings]);

    // Free: a search, a page and two PDFs (1 + 1 + 10 + 10); growth: a page; the 404s and the 401 cost nothing.
    expect([
      delta('tome_credits_spent_total{plan="free"}'),
      delta('tome_credits_spent_total{plan="growth"}'),
      delta('tome_credits_spent_total{plan="enterprise"}'),
    ]).toEqual([22, 1, 0]);
    // Work charged to the shares (D57): every keyed answer (a PDF's render aside: its own queue), none to a plan that made no request.
    expect(delta('tome_work_charged_seconds_total{plan="free"}')).toBeGreaterThan(0);
    expect(delta('tome_work_charged_seconds_total{plan="growth"}')).toBeGreaterThan(0);
    expect(delta('tome_work_charged_seconds_total{plan="enterprise"}')).toBe(0);

    expect({
      renders: delta("tome_pdf_renders_total"),
      hits: delta("tome_pdf_cache_hits_total"),
      failures: delta("tome_pdf_render_failures_total"),
      refused: delta("tome_pdf_refused_total"),
      abandoned: delta("tome_pdf_renders_abandoned_total"),
    }).toEqual({ renders: 1, hits: 1, failures: 0, refused: 0, abandoned: 0 });
    expect(value(after, 'tome_pdf_queue{state="queued"}')).toBe(0);
  });

  test("the snapshot gauges are the snapshot's", async () => {
    const meta = (await engineFor(SQUAD_OPTIONS)).snapshot.meta;
    const samples = await scrape();
    expect(samples.get("tome_snapshot_pages")).toBe(meta.indexedPages);
    expect(samples.get("tome_snapshot_chunks")).toBe(meta.indexedChunks);
    expect(samples.get("tome_snapshot_built_at_seconds")).toBe(Date.parse(meta.createdAt) / 1000);
    const info = `tome_snapshot_info{wiki="${meta.wiki.host}",lang="${meta.wiki.lang}",built_at="${meta.createdAt}",content_hash="${meta.contentHash}"}`;
    expect(samples.get(info)).toBe(1);
    expect(samples.get("process_start_time_seconds")).toBeGreaterThan(0);
  });

  test("without the admin token: 401 with nothing or only an API key, 403 with a wrong token or an API key as the bearer", async () => {
    const metrics = (headers: Record<string, string>) => fetch(`${server.url}/metrics`, { headers });
    const answers = [
      await metrics({}),
      await metrics({ "X-API-Key": free }),
      await metrics({ authorization: `Basic ${btoa(`admin:${TOKEN}`)}` }),
      await metrics({ authorization: `Bearer ${TOKEN}x` }),
      await metrics({ authorization: `Bearer ${free}` }),
      await metrics({ authorization: `Bearer ${TOKEN.slice(0, -1)}` }),
    ];
    const seen = await Promise.all(answers.map(async (r) => [r.status, ((await r.json()) as { error: string }).error]));
    expect(seen).toEqual([
      [401, "unauthorized"],
      [401, "unauthorized"],
      [401, "unauthorized"],
      [403, "forbidden"],
      [403, "forbidden"],
      [403, "forbidden"],
    ]);
    expect(answers[0]!.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
  });
});

describe("/metrics without TOME_ADMIN_TOKEN", () => {
  test("is not served: 404, with or without a key or a bearer", async () => {
    const data = tempDir("tome-data-");
    const { key } = await newKey(data, "--name", "k", "--plan", "enterprise");
    // Asked for no search (D101): no search threads, each of which costs the start about 1.2 CPU-s.
    const server = await startServer({
      TOME_SNAPSHOT: await snapshotFor(SQUAD_OPTIONS),
      TOME_DATA: data,
      TOME_ADMIN_TOKEN: "",
      ...NO_SEARCH_THREADS,
    });
    try {
      const statuses = [];
      for (const headers of [{}, { "X-API-Key": key }, { authorization: `Bearer ${TOKEN}` }] as Record<
        string,
        string
      >[]) {
        const r = await fetch(`${server.url}/metrics`, { headers });
        const body = (await r.json()) as { error: string; message: string };
        statuses.push([r.status, body.error, body.message]);
      }
      const noRoute = [404, "not found", "There is no such route. The API is described at /v1/openapi.json."];
      expect(statuses).toEqual([noRoute, noRoute, noRoute]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("a token too short to be safe is refused at start", async () => {
    const { code, stderr } = await runToExit(["bun", START], {
      TOME_ADMIN_TOKEN: "short",
      TOME_SNAPSHOT: "/nonexistent.tome",
      TOME_DATA: tempDir("tome-data-"),
    });
    expect(code).toBe(2);
    expect(stderr).toContain("TOME_ADMIN_TOKEN must be at least 16");
  });
});

describe("route labels", () => {
  test("every path is labelled by its route's template, and paths no route serves share one label", async () => {
    const app = createApp(await engineFor(SQUAD_OPTIONS), { adminToken: TOKEN });
    try {
      const paths = [
        "/v1/chunk/5000001_0",
        "/v1/chunk/x",
        "/v1/pdf/7.pdf",
        "/v1/meta/",
        "/healthz",
        "/docs/assets/swagger-ui.css",
      ];
      for (let i = 0; i < 50; i++) paths.push(`/random/${i}/${"x".repeat(i)}`, `/v1/page/${i}/extra`);
      for (const path of paths)
        await app.handle(new Request(`http://tome${path}`, { method: path.startsWith("/docs") ? "HEAD" : "GET" }));
      const text = await (
        await app.handle(new Request("http://tome/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }))
      ).text();
      const routes = new Set(
        [...parse(text).keys()]
          .filter((k) => k.startsWith("tome_http_requests_total"))
          .map((k) => /route="([^"]*)"/.exec(k)![1])
          .filter((r) => r !== "/metrics"),
      );
      expect([...routes].sort()).toEqual([
        "/docs/assets/swagger-ui.css",
        "/healthz",
        "/v1/chunk/{id}",
        "/v1/meta",
        "/v1/pdf/{page_id}",
        "unmatched",
      ]);
    } finally {
      app.close();
    }
  });
});

describe("the admin token's header", () => {
  test("only spaces and tabs are taken off around the token: one wrapped in U+00A0, a vertical tab or a form feed is a wrong token", async () => {
    const app = createApp(await engineFor(SQUAD_OPTIONS), { adminToken: TOKEN });
    const scrape = async (authorization: string) => {
      const r = await app.handle(new Request("http://tome/metrics", { headers: { authorization } }));
      await r.arrayBuffer();
      return r.status;
    };
    try {
      expect(await scrape(`Bearer \t${TOKEN}\t `)).toBe(200);
      for (const space of ["\u00a0", "\u000b", "\u000c"]) {
        expect({ space, status: await scrape(`Bearer ${space}${TOKEN}${space}`) }).toEqual({ space, status: 403 });
        expect({ space, status: await scrape(`Bearer ${TOKEN}${space}`) }).toEqual({ space, status: 403 });
        expect({ space, status: await scrape(`Bearer${space}${TOKEN}`) }).toEqual({ space, status: 401 });
      }
    } finally {
      app.close();
    }
  });
});

describe("guesses at the admin token (D147)", () => {
  test("20 wrong tokens a window from one address, 100 from all; then refused but where the right one was given", async () => {
    const app = createApp(await engineFor(SQUAD_OPTIONS), { adminToken: TOKEN, trustedProxies: ["unknown"] });
    const scrape = async (from: string, token: string) => {
      const r = await app.handle(
        new Request("http://tome/metrics", {
          headers: { authorization: `Bearer ${token}`, "x-forwarded-for": from },
        }),
      );
      await r.arrayBuffer();
      return r.status === 429 ? [429, r.headers.get("retry-after") !== null] : r.status;
    };
    const scraper = "192.0.2.1";
    expect(await scrape(scraper, TOKEN)).toBe(200);
    const guesser = "198.51.100.1";
    for (let i = 0; i < 20; i++) expect(await scrape(guesser, `${TOKEN}${i}`)).toBe(403);
    // Past the address's 20, its next token is refused unread, the right one too.
    expect(await scrape(guesser, TOKEN)).toEqual([429, true]);
    for (let a = 2; a <= 5; a++)
      for (let i = 0; i < 20; i++) expect(await scrape(`198.51.100.${a}`, `guess${i}`)).toBe(403);
    // 100 wrong tokens from all addresses: a new address is refused, whatever it sends.
    expect(await scrape("203.0.113.9", "guess")).toEqual([429, true]);
    expect(await scrape("203.0.113.9", TOKEN)).toEqual([429, true]);
    // The address that scraped before goes on scraping.
    expect(await scrape(scraper, TOKEN)).toBe(200);
  });

  test("a HEAD's wrong tokens are its client address's, as a GET's are (they were all counted as from one unknown address)", async () => {
    // Over a server: the address is the socket's (Bun's requestIP), which knew nothing of the GET a HEAD is made into.
    const app = createApp(await engineFor(SQUAD_OPTIONS), { adminToken: TOKEN, trustedProxies: ["127.0.0.1"] });
    const running = serve(app, { port: 0, hostname: "127.0.0.1" });
    try {
      const scrape = async (method: string, token: string) => {
        const r = await fetch(new URL("/metrics", running.url), {
          method,
          headers: { authorization: `Bearer ${token}`, "x-forwarded-for": "198.51.100.1" },
        });
        await r.arrayBuffer();
        return r.status;
      };
      for (let i = 0; i < 20; i++) expect(await scrape("HEAD", `${TOKEN}${i}`)).toBe(403);
      // The address's 20 spent: its GET is refused too.
      expect(await scrape("GET", TOKEN)).toBe(429);
    } finally {
      await running.stop();
    }
  });

  test("counted with the dashboard's failed sign-ins where the server has an account store: 20 in all from an address, not 20 on each", async () => {
    const app = await appWithAccounts(tempDir("tome-data-"), SQUAD_OPTIONS, {
      adminToken: TOKEN,
      trustedProxies: ["unknown"],
    });
    const from = (address: string) => ({ "x-forwarded-for": address });
    const signIn = async (address: string, token: string) => {
      const r = await dashboardSignIn(app, token, from(address));
      await r.arrayBuffer();
      return r.status;
    };
    const scrape = async (address: string, token: string) => {
      const r = await app.handle(
        new Request("http://tome/metrics", { headers: { ...from(address), authorization: `Bearer ${token}` } }),
      );
      await r.arrayBuffer();
      return r.status;
    };
    // Ten wrong tokens on /metrics and ten on the sign-in page: the address's 20.
    for (let i = 0; i < 10; i++) expect(await scrape("198.51.100.7", `guess${i}`)).toBe(403);
    for (let i = 0; i < 10; i++) expect(await signIn("198.51.100.7", `guess${i}`)).toBe(401);
    expect(await signIn("198.51.100.7", TOKEN)).toBe(429);
    expect(await scrape("198.51.100.7", TOKEN)).toBe(429);
    // The operator's sign-in from an address makes it known to /metrics' global limit too.
    expect(await signIn("192.0.2.50", TOKEN)).toBe(303);
    // 20 wrong operator tokens so far; 80 more make the 100 from all addresses.
    for (let a = 1; a <= 4; a++)
      for (let i = 0; i < 20; i++) expect(await scrape(`203.0.113.${a}`, `guess${i}`)).toBe(403);
    expect(await scrape("203.0.113.99", TOKEN)).toBe(429);
    expect(await scrape("192.0.2.50", TOKEN)).toBe(200);
    app.close();
  });

  test("while the account store cannot answer (Redis unreachable), /metrics answers and counts in its own memory, and says so once a failure", async () => {
    const access = new Access({ dataDir: tempDir("tome-data-"), keyMsPerSecond: 0 });
    const store = access.accounts();
    let up = false;
    const notices: string[] = [];
    const app = createApp(await engineFor(SQUAD_OPTIONS), {
      access,
      accounts: accountsUpWhile(store, () => up),
      adminToken: TOKEN,
      trustedProxies: ["unknown"],
      notice: (line) => notices.push(line),
    });
    const scrape = async (token: string) => {
      const r = await app.handle(
        new Request("http://tome/metrics", {
          headers: { "x-forwarded-for": "198.51.100.9", authorization: `Bearer ${token}` },
        }),
      );
      await r.arrayBuffer();
      return r.status;
    };
    expect(await scrape(TOKEN)).toBe(200);
    for (let i = 0; i < 20; i++) expect(await scrape(`guess${i}`)).toBe(403);
    expect(await scrape(TOKEN)).toBe(429);
    const failed =
      "/metrics: the account store cannot answer (connect ECONNREFUSED): wrong admin tokens are counted in this server's memory until it answers again.";
    expect(notices).toEqual([failed]);
    // It answers again (its own counts: none from this address), then fails again (memory's 20 stand): a line each.
    up = true;
    expect(await scrape(TOKEN)).toBe(200);
    expect(await scrape(TOKEN)).toBe(200);
    up = false;
    expect(await scrape(TOKEN)).toBe(429);
    expect(await scrape(TOKEN)).toBe(429);
    expect(notices).toHaveLength(3);
    expect(notices[1]).toMatch(
      /^\/metrics: the account store answers again \(after \d+\.\d s\): wrong admin tokens are counted in it again\.$/,
    );
    expect(notices[2]).toBe(failed);
    app.close();
  });
});
