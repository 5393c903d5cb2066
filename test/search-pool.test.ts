/**
 * The search pool (issue 60, D101): searches, lucky and the MCP search tools answered in worker
 * threads give every route the very answer the request thread gives; a full pool answers 503
 * with Retry-After; a worker that dies is replaced and its requests answered 503, never left
 * waiting. (The swap with the pool, and its unmapping in every worker: swap.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Access, createKey, updateKeyFile } from "../src/access";
import { apiContext, createApp, type App } from "../src/http";
import { ApiError } from "../src/http/errors";
import { FairQueue } from "../src/http/pool/fair-queue";
import {
  packAnswer,
  packAnswers,
  unpackAnswer,
  unpackAnswers,
  type WorkerReply,
  type WorkerRequest,
} from "../src/http/pool/messages";
import { ClientGone, SearchPool } from "../src/http/pool/pool";
import { open } from "../src/search";
import { threadsOf } from "../bench/servers";
import { pinned, SnapshotSwapper } from "../src/cli/swap";
import { copyFileSync, readdirSync, readFileSync, readlinkSync, utimesSync, writeFileSync } from "node:fs";
import { getPriority } from "node:os";
import { join } from "node:path";
import { EN_2006, EN_2016, ingested, snapshotFor, startServer, tempDir, writeSnapshot } from "./helpers";

setDefaultTimeout(120_000);

const DUMPS = { dumps: [EN_2016, EN_2006] };
let path: string;
let single: App;
let pooled: App;

beforeAll(async () => {
  path = await snapshotFor(DUMPS);
  // No time limit that a loaded machine could reach in one app and not the other (D91 answers with what it found).
  single = createApp(open(path), { searchTimeoutMs: 60_000 });
  pooled = createApp(open(path), { searchWorkers: 2, searchTimeoutMs: 60_000 });
});

afterAll(() => {
  single?.close();
  pooled?.close();
});

type Json = Record<string, unknown>;

const TIMES = ["processingTimeMs", "search_time_ms", "loaded_at"];

async function answer(app: App, path: string, init?: RequestInit) {
  const r = await app.handle(new Request(`http://localhost${path}`, init));
  const text = await r.text();
  // The times in an answer differ from run to run: set to 0, and then its ETag (a hash of the bytes) is not compared.
  let timed = false;
  const body = text ? JSON.parse(text, (key, value) => (TIMES.includes(key) && (timed = true) ? 0 : value)) : "";
  const named = ["content-type", "cache-control", "retry-after", ...(timed ? [] : ["etag"])];
  return { status: r.status, headers: Object.fromEntries(named.map((h) => [h, r.headers.get(h)])), body };
}

const mcp = (name: string, args: Json): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
});

describe("createApp's options for the pool, checked as their settings are (D101, D142, D151)", () => {
  test("searchWorkers out of 0 to 64 (or not a whole number), and the pool's other bounds, are a RangeError naming them", () => {
    const engine = open(path);
    const refused: [string, unknown, string][] = [
      // Started one worker; three; two (Math.max(1, "2")); 1000, 1000 threads (about 17 GB of heaps at 5M chunks).
      [
        "searchWorkers",
        -1,
        "a whole number of search threads from 0 to 64 (0: searches on the request thread), not -1",
      ],
      [
        "searchWorkers",
        2.5,
        "a whole number of search threads from 0 to 64 (0: searches on the request thread), not 2.5",
      ],
      [
        "searchWorkers",
        "2",
        'a whole number of search threads from 0 to 64 (0: searches on the request thread), not "2"',
      ],
      [
        "searchWorkers",
        65,
        "a whole number of search threads from 0 to 64 (0: searches on the request thread), not 65",
      ],
      [
        "searchWorkers",
        1000,
        "a whole number of search threads from 0 to 64 (0: searches on the request thread), not 1000",
      ],
      // No pool, silently.
      [
        "searchWorkers",
        Number.NaN,
        "a whole number of search threads from 0 to 64 (0: searches on the request thread), not NaN",
      ],
      ["searchWorkerNice", 20, "a whole number of nice steps from 0 to 19, not 20"],
      // NaN held any number, -1 refused every search; 0 does so by choice (a pool closed to searches: D104's 503).
      ["searchQueue", -1, "a whole number of requests a worker, 0 or more (0: every search refused, 503), not -1"],
      [
        "searchQueue",
        Number.NaN,
        "a whole number of requests a worker, 0 or more (0: every search refused, 503), not NaN",
      ],
      // Every search a 500: the engine refused its budgetMs.
      ["searchTimeoutMs", -1, "a number of milliseconds, 0 or more, not -1"],
    ];
    for (const [name, value, rule] of refused)
      expect(() => createApp(engine, { [name]: value })).toThrow(
        new RangeError(`createApp(engine, options): ${name} must be ${rule}.`),
      );
    for (const searchWorkers of [undefined, 0]) {
      const app = createApp(engine, { searchWorkers });
      expect(app.pool).toBeUndefined();
      app.close();
    }
  });
});

describe("the same answers with 0 and with 2 workers", () => {
  const paths = [
    "/v1/search?q=albedo",
    "/v1/search?q=anarchism+history&limit=7&offset=2&show_ranking_score=true",
    '/v1/search?q="the+history+of"&highlight=true&crop_length=60',
    "/v1/search?q=Aristotle&page_id=12",
    "/v1/search?q=zzqqxxnothingmatches",
    "/v1/search?q=thé+café+naïve",
    "/v1/search",
    "/v1/search?q=albedo&limit=99",
    `/v1/search?q=${"a".repeat(501)}`,
    "/v1/lucky?q=albedo",
    "/v1/lucky?q=anarchism&format=chunks",
    "/v1/lucky?q=zzqqxxnothingmatches",
    "/v1/lucky?q=albedo&format=html",
    "/v1/lucky",
    "/v1/page/12",
    "/v1/chunk/12_0",
    "/v1/changes?limit=3",
    "/v1/meta",
    "/v1/license",
    "/healthz",
    "/v1/nothing",
  ];
  for (const p of paths) {
    test(p.slice(0, 80), async () => {
      const [a, b] = await Promise.all([answer(single, p), answer(pooled, p)]);
      expect(b).toEqual(a);
    });
  }

  const asked: [string, RequestInit][] = [
    ["/v1/search?q=albedo", { method: "HEAD" }],
    ["/v1/lucky?q=albedo", { method: "HEAD" }],
    ["/v1/search?q=albedo", { headers: { "if-none-match": "*" } }],
    ["/v1/lucky?q=albedo", { headers: { "if-none-match": '"abc"' } }],
  ];
  for (const [p, init] of asked) {
    test(`${JSON.stringify(init)} ${p}`, async () => {
      const [a, b] = await Promise.all([answer(single, p, init), answer(pooled, p, init)]);
      expect(b).toEqual(a);
    });
  }

  const calls: [string, Json][] = [
    ["search", { q: "albedo", limit: 3 }],
    ["search", { q: "albedo", limit: 99 }],
    ["lucky", { q: "anarchism", max_chunks: 2 }],
    ["lucky", { q: "zzqqxxnothingmatches" }],
    ["get_chunk", { id: "12_0" }],
  ];
  for (const [name, args] of calls) {
    test(`MCP ${name} ${JSON.stringify(args)}`, async () => {
      const [a, b] = await Promise.all([
        answer(single, "/mcp", mcp(name, args)),
        answer(pooled, "/mcp", mcp(name, args)),
      ]);
      expect(b).toEqual(a);
    });
  }

  test("the searches were answered in the workers", () => {
    expect(single.pool).toBeUndefined();
    const searches = paths.filter((p) => /^\/v1\/(search|lucky)\?q=/.test(p)).length;
    const stats = pooled.pool!.stats();
    expect(stats).toMatchObject({ workers: 2, pending: 0, missing: 0, refusals: 0, replaced: 0, generations: 1 });
    // Every search and lucky whose parameters read (3 do not), the 3 HEAD and conditional ones that search (`*` is
    // answered before a search runs: D148), and the 3 MCP searches and lucky whose arguments do, went to a worker.
    expect(stats.answered).toBe(searches - 3 + 3 + 3);
  });
});

describe("what a worker and the request thread send each other (D131)", () => {
  test("a task's message is strings and numbers; a route's answer comes back as one ArrayBuffer, handed over, the body as the request thread makes it", async () => {
    const worker = new Worker(new URL("../src/http/search-worker.ts", import.meta.url).href);
    const replies: unknown[] = [];
    const heard = () =>
      new Promise<void>((told) => {
        worker.onmessage = (e) => {
          // Its first message, the file of its clock of waits for a core (D144), is the pool's.
          if (!(e.data instanceof ArrayBuffer) && "file" in e.data) return;
          replies.push(e.data);
          told();
        };
      });
    try {
      const engine = open(path);
      const id = engine.snapshot.meta.contentHash;
      let next = heard();
      // No time limit that a loaded machine could reach on either side: the two answers are compared.
      const checked = engine.snapshot.checked;
      worker.postMessage({
        kind: "open",
        generation: 1,
        path,
        id,
        checked,
        searchTimeoutMs: 60_000,
      } satisfies WorkerRequest);
      await next;
      // The file the request thread opened, and so checked: the worker does not check it again (D119).
      expect(replies[0]).toEqual({ opened: 1, checkedAgain: false });
      const query = { q: "thé café naïve", limit: 3, offset: 0, crop_length: 60, highlight: true };
      const task = { kind: "run", job: 7, generation: 1, task: "search", args: JSON.stringify(query) } as const;
      expect(Object.values(task).every((v) => typeof v === "string" || typeof v === "number")).toBe(true);
      next = heard();
      worker.postMessage(task satisfies WorkerRequest);
      await next;
      const packed = replies[1];
      expect(packed).toBeInstanceOf(ArrayBuffer);
      const reply = unpackAnswer(packed as ArrayBuffer);
      expect(reply.job).toBe(7);
      expect(reply.work.length).toBe(1);
      // The body is a view of the buffer handed over, not a copy of it.
      expect("json" in reply && reply.json.buffer).toBe(packed as ArrayBuffer);
      const here = apiContext(engine, [], 60_000).answers.search(query);
      const zeroTimes = (text: string) => JSON.parse(text, (k, v) => (TIMES.includes(k) ? 0 : v));
      expect(zeroTimes(new TextDecoder().decode((reply as { json: Uint8Array }).json))).toEqual(
        zeroTimes(JSON.stringify(here)),
      );
    } finally {
      worker.terminate();
    }
  });

  test("several answers packed in one buffer read back as they were, each body a view of it (D166)", () => {
    const bodies = [JSON.stringify({ title: "Zoë — 東京 🙂" }), "", JSON.stringify({ text: '\u0000 "q"\n' })];
    const work = [{ candidates: 3, postings: 40, plan: "exhaustive", cutOff: true }];
    const error = { status: 404, code: "not_found", message: "no results found" };
    const tool = { structured: { hits: [] }, text: "nothing — 無" };
    const packed = packAnswers([
      { job: 1, ms: 0.5, work, text: bodies[0]! },
      { job: 2, ms: 1, work: [], error },
      { job: 3, ms: 2, work, text: bodies[1]! },
      { job: 4, ms: 0, work: [], tool },
      { job: 2 ** 40, ms: 3.25, work: [], text: bodies[2]! },
      { job: 6, ms: 0, work: [], missing: "not opened here" },
    ]);
    const replies = unpackAnswers(packed);
    const decoded = replies.map((r) => ("json" in r ? { ...r, json: new TextDecoder().decode(r.json) } : r));
    expect(decoded).toEqual([
      { job: 1, ms: 0.5, work, json: bodies[0]! },
      { job: 2, ms: 1, work: [], error },
      { job: 3, ms: 2, work, json: bodies[1]! },
      { job: 4, ms: 0, work: [], tool },
      { job: 2 ** 40, ms: 3.25, work: [], json: bodies[2]! },
      { job: 6, ms: 0, work: [], missing: "not opened here" },
    ]);
    for (const r of replies) if ("json" in r) expect(r.json.buffer).toBe(packed);
    // One answer packed alone reads back through the same door.
    expect(unpackAnswers(packAnswer({ job: 9, ms: 1, work: [] }, "{}")).map((r) => r.job)).toEqual([9]);
  });

  test("a packed answer's head and body read back as they were, whatever the characters", () => {
    const body = JSON.stringify({ title: "Zoë — 東京 🙂", text: '\u0000 "quoted"' });
    const work = [{ candidates: 3, postings: 40, plan: "exhaustive", cutOff: true }];
    const reply = unpackAnswer(packAnswer({ job: 2 ** 40, ms: 0.125, work }, body));
    expect({ ...reply, json: new TextDecoder().decode((reply as { json: Uint8Array }).json) }).toEqual({
      job: 2 ** 40,
      ms: 0.125,
      work,
      json: body,
    });
  });
});

describe("/metrics with the pool", () => {
  test("counts the searches run in the workers, as it counts those on the request thread, and the pool's own", async () => {
    const adminToken = "search-pool-admin-token-0123456789";
    const app = createApp(open(path), { searchWorkers: 2, adminToken });
    try {
      const metric = async (name: string) => {
        const r = await app.handle(
          new Request("http://localhost/metrics", { headers: { authorization: `Bearer ${adminToken}` } }),
        );
        const line = (await r.text()).split("\n").find((l) => l.startsWith(`${name} `));
        return Number(line?.split(" ")[1] ?? 0);
      };
      const before = await metric("tome_search_candidates_count");
      expect((await answer(app, "/v1/search?q=albedo")).status).toBe(200);
      expect((await answer(app, "/v1/lucky?q=zzqqxxnothingmatches")).status).toBe(404);
      expect((await metric("tome_search_candidates_count")) - before).toBe(2);
      expect(app.pool!.stats().answered).toBe(2);
      // And the pool's own counts.
      expect(await metric("tome_search_pool_pending")).toBe(0);
      expect(await metric("tome_search_pool_refused_total")).toBe(0);
      expect(await metric("tome_search_pool_key_refused_total")).toBe(0);
      app.pool!.terminate(1);
      expect(await metric("tome_search_pool_replaced_total")).toBe(1);
    } finally {
      app.close();
    }
  });
});

describe("backpressure and dead workers", () => {
  test("when every worker's queue is full, a search is answered 503 with Retry-After at once", async () => {
    const app = createApp(open(path), { searchWorkers: 1, searchQueue: 2 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => answer(app, "/v1/search?q=history+of+the+world&limit=50")),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
      const refused = answers.filter((a) => a.status === 503);
      expect(refused.length).toBeGreaterThanOrEqual(1);
      expect(refused[0]!.headers["retry-after"]).toBe("1");
      expect(refused[0]!.body).toEqual({
        error: "service_unavailable",
        message: "Every search worker is busy; nothing was charged. Retry after 1 s.",
        retry_after: 1,
      });
      expect(app.pool!.stats().refusals).toBe(refused.length);
      // Once the queue has drained, searches are answered again.
      expect((await answer(app, "/v1/search?q=albedo")).status).toBe(200);
    } finally {
      app.close();
    }
  });

  test("one key holds at most half of the pool's room: past it 429, while another key's search is still taken (D105)", async () => {
    const dir = tempDir("tome-data-");
    const keyOf = (name: string) =>
      updateKeyFile(dir, (f) =>
        createKey(f, { name, account: name, plan: "enterprise", scope: "read", now: Date.now() }),
      ).key;
    const [burst, other] = [keyOf("burst"), keyOf("other")];
    const access = new Access({ dataDir: dir });
    // Room for 4 in all: 2 for one key.
    const app = createApp(open(path), { access, searchWorkers: 1, searchQueue: 4 });
    try {
      const search = (key: string) =>
        answer(app, "/v1/search?q=history+of+the+world&limit=50", { headers: { "X-API-Key": key } });
      const [burstAnswers, otherAnswer] = await Promise.all([
        Promise.all(Array.from({ length: 6 }, () => search(burst))),
        search(other),
      ]);
      const statuses = burstAnswers.map((a) => a.status);
      expect(statuses.filter((s) => s === 200).length).toBe(2);
      const refused = burstAnswers.filter((a) => a.status === 429);
      expect(refused.length).toBe(4);
      expect(refused[0]!.headers["retry-after"]).toBe("1");
      expect(refused[0]!.body).toEqual({
        error: "rate_limit_exceeded",
        message:
          "This key already has 2 searches waiting in the search workers, half of their room; nothing was charged. Retry after 1 s.",
        retry_after: 1,
      });
      // The other key was not refused: the burst left it room.
      expect(otherAnswer.status).toBe(200);
      expect(app.pool!.stats()).toMatchObject({ keyRefusals: 4, refusals: 0, pending: 0 });
      // Once answered, the key has its room back in the pool (its work share may still refuse it: another key came).
      const again = await search(burst);
      expect(
        again.status === 200 || !String((again.body as { message: string }).message).includes("search workers"),
      ).toBe(true);
      expect(app.pool!.stats().keyRefusals).toBe(4);
    } finally {
      app.close();
      await access.stop();
    }
  });

  test("through MCP, a refusal of the pool is the request's answer: 503 with Retry-After, costing no credit (D107)", async () => {
    const dir = tempDir("tome-data-");
    const { key } = updateKeyFile(dir, (f) =>
      createKey(f, { name: "mcp", account: "mcp", plan: "growth", scope: "read", now: Date.now() }),
    );
    const access = new Access({ dataDir: dir });
    const app = createApp(open(path), { access, searchWorkers: 1 });
    try {
      const call = async (name: string, args: Json) => {
        const init = mcp(name, args);
        const r = await app.handle(
          new Request("http://localhost/mcp", { ...init, headers: { ...init.headers, "X-API-Key": key } }),
        );
        return { status: r.status, headers: r.headers, body: (await r.json()) as Json };
      };
      const answered = await call("search", { q: "albedo" });
      expect(answered.status).toBe(200);
      const credits = Number(answered.headers.get("x-quota-remaining"));
      // Stopped, the pool refuses every search as a full one does.
      app.pool!.stop();
      const refused = await call("search", { q: "albedo" });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(refused.body).toEqual({
        error: "service_unavailable",
        message: "Every search worker is busy; nothing was charged. Retry after 1 s.",
        retry_after: 1,
      });
      expect(Number(refused.headers.get("x-quota-remaining"))).toBe(credits);
      // A tool that needs no worker is still answered, and the refusal took no credit.
      const chunk = await call("get_chunk", { id: "12_0" });
      expect(chunk.status).toBe(200);
      expect(Number(chunk.headers.get("x-quota-remaining"))).toBe(credits - 1);
    } finally {
      app.close();
      await access.stop();
    }
  });

  test("a worker that dies is replaced: its requests are answered 503, the next ones 200", async () => {
    const logged: unknown[] = [];
    const app = createApp(open(path), { searchWorkers: 1, logError: (e) => logged.push(e) });
    try {
      expect((await answer(app, "/v1/search?q=albedo")).status).toBe(200);
      const [before] = app.pool!.threadIds();
      const waiting = answer(app, "/v1/search?q=history+of+the+world&limit=50");
      // Killed while the request waits in it (its message is posted: the pool holds it).
      await Bun.sleep(0);
      expect(app.pool!.stats().pending).toBe(1);
      app.pool!.terminate(0);
      const lost = await waiting;
      expect(lost.status).toBe(503);
      expect(lost.body).toEqual({
        error: "service_unavailable",
        // As every other 503 of the pool says when to try again, in its sentence as in retry_after.
        message:
          "This search could not be answered (the search worker answering it stopped); nothing was charged. Retry after 1 s.",
        retry_after: 1,
      });
      expect(app.pool!.threadIds()[0]).not.toBe(before);
      expect(app.pool!.stats()).toMatchObject({ replaced: 1, pending: 0 });
      expect(String(logged[0])).toContain("is replaced: it was terminated");
      // The new worker opened the snapshot served: it answers as the old one did.
      const again = await answer(app, "/v1/lucky?q=albedo");
      expect(again.status).toBe(200);
      expect((await answer(app, "/v1/search?q=albedo")).body).toEqual(
        (await answer(createApp(open(path)), "/v1/search?q=albedo")).body,
      );
    } finally {
      app.close();
    }
  });
});

describe("a worker that stops on its own", () => {
  test("as a crash stops it: its request is answered 503, and the log names the thread that stopped", async () => {
    // The pool's Worker, kept so that it can be stopped from outside the pool, as a crash in the thread would stop it.
    const made: Worker[] = [];
    const Original = globalThis.Worker;
    globalThis.Worker = class extends Original {
      constructor(...args: ConstructorParameters<typeof Worker>) {
        super(...args);
        made.push(this);
      }
    } as typeof Worker;
    const logged: unknown[] = [];
    let pool: SearchPool;
    try {
      pool = new SearchPool({ workers: 1, logError: (e) => logged.push(e) });
    } finally {
      globalThis.Worker = Original;
    }
    try {
      const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
      await generation.ready;
      const [stopping] = pool.threadIds();
      const args = { q: "history of the world", limit: 50, offset: 0, crop_length: 200, highlight: true };
      const asked = pool.run(generation.generation, "search", args).then(
        () => 200,
        (error: ApiError) => error.status,
      );
      made[0]!.terminate();
      expect(await asked).toBe(503);
      // It said "search worker -1": a stopped thread's id.
      expect(logged.map(String)).toEqual([`Error: search worker ${stopping} is replaced: it stopped`]);
      expect(pool.threadIds()[0]).not.toBe(stopping);
      expect(pool.stats()).toMatchObject({ replaced: 1, pending: 0 });
    } finally {
      pool.stop();
    }
  });
});

describe("a stuck worker", () => {
  test("one that holds a request and answers nothing for stuckMs is replaced, and the request answered 503", async () => {
    const logged: unknown[] = [];
    // A search that works for far longer than stuckMs (its time limit raised out of the way): 500 characters of quoted
    // function words and misspelt words ending in a prefix, as an attacker sends (issue 57).
    const words = ['"the of"', "anarchizm", '"in to"', "philosofy", "einstien", '"a is"', "albedoo", "history"];
    const q = `${Array.from({ length: 70 }, (_, i) => words[i % words.length])
      .join(" ")
      .slice(0, 495)} th`;
    const pool = new SearchPool({ workers: 1, stuckMs: 5, searchTimeoutMs: 60_000, logError: (e) => logged.push(e) });
    try {
      const engine = open(path);
      const generation = pool.generation(path, engine.snapshot.meta.contentHash);
      const args = { q, limit: 50, offset: 0, crop_length: 200, highlight: true };
      const failed = await pool.run(generation.generation, "search", args).then(
        () => undefined,
        (error: ApiError) => error,
      );
      expect(failed).toBeInstanceOf(ApiError);
      expect(failed!.status).toBe(503);
      expect(failed!.headers).toEqual({ "retry-after": "1" });
      expect(String(logged[0])).toContain("is replaced: it answered nothing for 5 ms");
      expect(pool.stats()).toMatchObject({ replaced: 1, pending: 0 });
    } finally {
      pool.stop();
    }
  });
});

describe("fair queueing between keys (D106)", () => {
  const heavy = { q: "history of the world", limit: 50, offset: 0, crop_length: 200, highlight: true };

  test("another key's one search is answered before a key's burst queued ahead of it drains", async () => {
    const pool = new SearchPool({ workers: 1, queueLength: 32 });
    try {
      const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
      await generation.ready;
      const order: string[] = [];
      const run = (key: string) => pool.run(generation.generation, "search", heavy, key).then(() => order.push(key));
      const burst = Array.from({ length: 12 }, () => run("burst"));
      const lone = run("lone");
      await Promise.all([...burst, lone]);
      // The worker had been sent two of the burst (the one it runs and the next); the lone search is sent as the
      // first of them is answered, ahead of the ten still waiting. First come, first served, it was answered last.
      expect(order.indexOf("lone")).toBe(2);
      expect(order.length).toBe(13);
    } finally {
      pool.stop();
    }
  });

  test("a key whose requests cost more is served less often; a key that comes late banks no credit", () => {
    const queue = new FairQueue<number>();
    for (let i = 0; i < 40; i++) {
      queue.push("costly", i);
      queue.push("cheap", i);
    }
    const cost: Record<string, number> = { costly: 10, cheap: 1, late: 1 };
    const served: string[] = [];
    // One worker, one request at a time, each charged its cost when answered.
    const serve = (n: number) => {
      for (let i = 0; i < n; i++) {
        const next = queue.next()!;
        served.push(next.key!);
        queue.done(next.key, cost[next.key!]!);
      }
    };
    serve(22);
    expect(served.filter((k) => k === "costly").length).toBe(2);
    expect(queue.held("costly")).toBe(38);
    // A key that waited for nothing until now starts where the others are: it takes turns with the cheap key.
    for (let i = 0; i < 4; i++) queue.push("late", i);
    served.length = 0;
    serve(4);
    expect(served.filter((k) => k === "late").length).toBe(2);
    expect(queue.waiting).toBe(40 + 40 + 4 - 22 - 4);
  });

  test("a worker that dies: the requests sent to it are answered 503, those still waiting go to the new worker", async () => {
    const pool = new SearchPool({ workers: 1, queueLength: 8 });
    try {
      const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
      await generation.ready;
      const asked = Array.from({ length: 5 }, () =>
        pool.run(generation.generation, "search", heavy).then(
          () => 200,
          (error: ApiError) => error.status,
        ),
      );
      pool.terminate(0);
      expect(await Promise.all(asked)).toEqual([503, 503, 200, 200, 200]);
      expect(pool.stats()).toMatchObject({ replaced: 1, pending: 0, answered: 3 });
    } finally {
      pool.stop();
    }
  });
});

describe("several requests in one message to a worker (D166)", () => {
  const cheap = (q: string) => ({ q, limit: 3, offset: 0, crop_length: 60, highlight: true });
  /** The tasks of each message the workers are sent from now on ("run": one, "runs": several), until `stop`. */
  function sentTasks() {
    const sent: number[] = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (this: Worker, message: WorkerRequest, ...rest: unknown[]) {
      if (message.kind === "run") sent.push(1);
      if (message.kind === "runs") sent.push((JSON.parse(message.tasks) as unknown[]).length);
      return (post as (...a: unknown[]) => void).call(this, message, ...rest);
    } as typeof post;
    return { sent, stop: () => (Worker.prototype.postMessage = post) };
  }

  test("a busy key's cheap searches go several to a message, each answered and charged as its own", async () => {
    const spy = sentTasks();
    // Every key whose searches were answered counts as cheap here, however loaded the machine (no timing in the test).
    const pool = new SearchPool({ workers: 1, queueLength: 32, batchBelowMs: 60_000, searchTimeoutMs: 60_000 });
    try {
      const engine = open(path);
      const generation = pool.generation(path, engine.snapshot.meta.contentHash);
      await generation.ready;
      const queries = ["albedo", "anarchism", "Aristotle", "snow", "thé café naïve", "history", "light", "zzqqxx"];
      const replies = await Promise.all(
        queries.map((q) => pool.run(generation.generation, "search", cheap(q), "k").then((r) => r as WorkerReply)),
      );
      // The first two were sent one each (nothing of the key answered yet); the rest together, once it was.
      expect(spy.sent.slice(0, 2)).toEqual([1, 1]);
      expect(Math.max(...spy.sent)).toBeGreaterThan(1);
      expect(spy.sent.reduce((a, b) => a + b)).toBe(queries.length);
      const here = apiContext(engine, [], 60_000).answers;
      const zeroTimes = (text: string) => JSON.parse(text, (k, v) => (TIMES.includes(k) ? 0 : v));
      for (const [i, reply] of replies.entries()) {
        // Its own answer, its own search's work and its own time: nothing of the other requests of its message.
        expect(zeroTimes(new TextDecoder().decode((reply as { json: Uint8Array }).json))).toEqual(
          zeroTimes(JSON.stringify(here.search(cheap(queries[i]!)))),
        );
        expect(reply.work.length).toBe(1);
        expect(reply.ms).toBeGreaterThanOrEqual(0);
      }
      expect(new Set(replies.map((r) => r.job)).size).toBe(queries.length);
      expect(pool.stats()).toMatchObject({ answered: queries.length, pending: 0 });
    } finally {
      spy.stop();
      pool.stop();
    }
  });

  test("a message's requests answered alike: an error, a tool's answer and a route's, each its own", async () => {
    const pool = new SearchPool({ workers: 1, queueLength: 32, batchBelowMs: 60_000, searchTimeoutMs: 60_000 });
    const spy = sentTasks();
    try {
      const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
      await generation.ready;
      const g = generation.generation;
      const asked = [
        pool.run(g, "search", cheap("albedo"), "k"),
        pool.run(g, "search", cheap("snow"), "k"),
        pool.run(g, "lucky", { q: "zzqqxxnothingmatches", format: "chunks" }, "k"),
        pool.run(g, "tool:search", cheap("albedo"), "k"),
        pool.run(g, "search", cheap("light"), "k"),
      ].map((p) => p.then((r) => Object.keys(r).filter((k) => !["job", "ms", "work"].includes(k))));
      expect(await Promise.all(asked)).toEqual([["json"], ["json"], ["error"], ["tool"], ["json"]]);
      expect(Math.max(...spy.sent)).toBeGreaterThan(1);
    } finally {
      spy.stop();
      pool.stop();
    }
  });

  test("a key not yet answered goes alone: another key's one search is still answered third (D106)", async () => {
    const pool = new SearchPool({ workers: 1, queueLength: 32, batchBelowMs: 60_000 });
    try {
      const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
      await generation.ready;
      const order: string[] = [];
      const run = (key: string) =>
        pool.run(generation.generation, "search", cheap("albedo"), key).then(() => order.push(key));
      const burst = Array.from({ length: 12 }, () => run("burst"));
      const lone = run("lone");
      await Promise.all([...burst, lone]);
      expect(order.indexOf("lone")).toBe(2);
    } finally {
      pool.stop();
    }
  });

  test("a worker that dies holding a message of several: each of them is answered 503, those waiting go to the new worker", async () => {
    const pool = new SearchPool({ workers: 1, queueLength: 32, batchBelowMs: 60_000 });
    const spy = sentTasks();
    try {
      const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
      await generation.ready;
      const post = Worker.prototype.postMessage;
      let killed = false;
      // The first message of several: the worker is ended before it can answer any of it.
      Worker.prototype.postMessage = function (this: Worker, message: WorkerRequest, ...rest: unknown[]) {
        if (message.kind === "runs" && !killed) {
          killed = true;
          queueMicrotask(() => pool.terminate(0));
        }
        return (post as (...a: unknown[]) => void).call(this, message, ...rest);
      } as typeof post;
      const asked = Array.from({ length: 8 }, (_, i) =>
        pool.run(generation.generation, "search", cheap(`albedo ${i}`), "k").then(
          () => 200,
          (error: ApiError) => error.status,
        ),
      );
      // Sent one each: the first (answered) and the second; then two in one message, and the worker ended.
      expect(await Promise.all(asked)).toEqual([200, 503, 503, 503, 200, 200, 200, 200]);
      expect(pool.stats()).toMatchObject({ replaced: 1, pending: 0, answered: 5 });
    } finally {
      spy.stop();
      pool.stop();
    }
  });

  test("a lane's cost is known once one of its requests is answered: a failed one says nothing; next(costing) takes only cheaper", () => {
    const queue = new FairQueue<number>();
    for (let i = 0; i < 6; i++) queue.push("k", i);
    expect(queue.next()).toEqual({ key: "k", item: 0, cost: Number.NaN });
    // Not answered yet: not known to cost under any bound.
    expect(queue.next(1e9)).toBeUndefined();
    const sent = queue.next()!;
    queue.done(sent.key, 0, false);
    expect(queue.next(1e9)).toBeUndefined();
    queue.done("k", 8);
    expect(queue.next(7)).toBeUndefined();
    // A moving mean: each answer moves it a quarter of the way.
    expect(queue.next(8)).toEqual({ key: "k", item: 2, cost: 8 });
    queue.done("k", 4);
    expect(queue.next()!.cost).toBe(7);
  });
});

describe("a client that leaves while its search waits (D108)", () => {
  const heavy = { q: "history of the world", limit: 50, offset: 0, crop_length: 200, highlight: true };

  test("its search is taken out of the queue and never run; one already sent to a worker runs to its end", async () => {
    const pool = new SearchPool({ workers: 1, queueLength: 8 });
    try {
      const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
      await generation.ready;
      const g = generation.generation;
      const others = [0, 1, 2].map(() => pool.run(g, "search", heavy, "other"));
      const leaving = new AbortController();
      const left = pool.run(g, "search", heavy, "leaving", leaving.signal).catch((error: Error) => error);
      expect(pool.stats().pending).toBe(4);
      leaving.abort();
      expect(pool.stats().pending).toBe(3);
      expect(await left).toBeInstanceOf(ClientGone);
      await Promise.all(others);
      expect(pool.stats()).toMatchObject({ answered: 3, pending: 0 });
      // Sent at once (the worker is idle): it is not taken back.
      const late = new AbortController();
      const sent = pool.run(g, "search", heavy, "leaving", late.signal);
      late.abort();
      expect("json" in (await sent)).toBe(true);
    } finally {
      pool.stop();
    }
  });

  test("a search sent to a worker at once never listens for its client leaving; one that waits stops listening once sent", async () => {
    const pool = new SearchPool({ workers: 1, queueLength: 8 });
    try {
      const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
      await generation.ready;
      const g = generation.generation;
      const listening = (signal: AbortSignal) => {
        const counts = { added: 0, removed: 0 };
        const add = signal.addEventListener.bind(signal);
        const remove = signal.removeEventListener.bind(signal);
        signal.addEventListener = ((...a: Parameters<typeof add>) => {
          counts.added++;
          add(...a);
        }) as typeof add;
        signal.removeEventListener = ((...a: Parameters<typeof remove>) => {
          counts.removed++;
          remove(...a);
        }) as typeof remove;
        return counts;
      };
      // The worker holds two at once: the first two are sent at once, the third waits.
      const signals = [0, 1, 2].map(() => new AbortController().signal);
      const counts = signals.map(listening);
      const runs = signals.map((signal) => pool.run(g, "search", heavy, "k", signal));
      expect(counts.map((c) => c.added)).toEqual([0, 0, 1]);
      await Promise.all(runs);
      expect(counts.map((c) => c.removed)).toEqual([0, 0, 1]);
    } finally {
      pool.stop();
    }
  });

  test("a route's search whose client has gone is answered 499, not run", async () => {
    const gone = new AbortController();
    gone.abort();
    const r = await pooled.handle(new Request("http://localhost/v1/search?q=albedo", { signal: gone.signal }));
    expect(r.status).toBe(499);
    expect(await r.text()).toBe("");
  });

  test("a route's search whose client leaves while a worker runs it is run to its end, then answered 499: never delivered, so not charged", async () => {
    const leaving = new AbortController();
    const request = new Request("http://localhost/v1/search?q=history+of+the+world&limit=50", {
      signal: leaving.signal,
    });
    const answer = pooled.handle(request);
    // Sent to an idle worker as soon as the route asks.
    while (pooled.pool!.stats().pending === 0) await Bun.sleep(1);
    leaving.abort();
    const r = await answer;
    expect({ status: r.status, body: await r.text() }).toEqual({ status: 499, body: "" });
  });
});

describe("a keyed request whose client has left (D28, D108 amended)", () => {
  test("before it is admitted (it waited behind other requests on the thread): not run, counted against nothing, 499", async () => {
    const dir = tempDir("tome-data-");
    const { key } = updateKeyFile(dir, (f) =>
      createKey(f, { name: "k", account: "k", plan: "free", scope: "read", now: Date.now() }),
    );
    const access = new Access({ dataDir: dir });
    // No search workers: a page, a concat or a search is answered on the request thread.
    const app = createApp(open(path), { access });
    try {
      const get = (target: string, signal?: AbortSignal) =>
        app.handle(new Request(`http://localhost${target}`, { headers: { "X-API-Key": key }, signal }));
      const gone = new AbortController();
      gone.abort();
      for (const target of ["/v1/page/39?format=concat", "/v1/search?q=history+of+the+world&limit=50"]) {
        const r = await get(target, gone.signal);
        // Before: run and answered 200, a credit charged for an answer nobody could receive.
        expect({ target, status: r.status, body: await r.text() }).toEqual({ target, status: 499, body: "" });
      }
      const next = await get("/v1/meta");
      expect([next.headers.get("x-quota-remaining"), next.headers.get("x-ratelimit-remaining")]).toEqual(["4999", "9"]);
    } finally {
      app.close();
      await access.stop();
    }
  });

  test("an MCP call that leaves while its search waits for a worker is taken out of the queue, never run, and answered 499 costing no credit, as a route's search is", async () => {
    const dir = tempDir("tome-data-");
    const keyOf = (name: string) =>
      updateKeyFile(dir, (f) => createKey(f, { name, account: name, plan: "growth", scope: "read", now: Date.now() }))
        .key;
    const [busy, leaving] = [keyOf("busy"), keyOf("leaving")];
    const access = new Access({ dataDir: dir });
    const app = createApp(open(path), { access, searchWorkers: 1, searchQueue: 8, searchTimeoutMs: 60_000 });
    const call = (key: string, signal?: AbortSignal) => {
      const init = mcp("search", { q: "history of the world", limit: 50 });
      return app.handle(
        new Request("http://localhost/mcp", { ...init, headers: { ...init.headers, "X-API-Key": key }, signal }),
      );
    };
    try {
      const credits = async () => {
        const r = await app.handle(new Request("http://localhost/v1/meta", { headers: { "X-API-Key": leaving } }));
        return Number(r.headers.get("x-quota-remaining"));
      };
      const before = await credits();
      // The worker holds two at once: the third of another key waits, and the leaving call behind it.
      const others = [0, 1, 2].map(() => call(busy));
      const gone = new AbortController();
      const left = call(leaving, gone.signal);
      while (app.pool!.stats().pending < 4) await Bun.sleep(1);
      gone.abort();
      // Taken out at once (before: it stayed, was run and answered 200 with a credit charged).
      expect(app.pool!.stats().pending).toBe(3);
      const r = await left;
      expect({ status: r.status, body: await r.text() }).toEqual({ status: 499, body: "" });
      expect((await Promise.all(others)).map((o) => o.status)).toEqual([200, 200, 200]);
      expect(app.pool!.stats()).toMatchObject({ answered: 3, pending: 0 });
      // Only the two reads of /v1/meta were charged.
      expect(await credits()).toBe(before - 1);
    } finally {
      app.close();
      await access.stop();
    }
  });
});

describe("opening a snapshot in the workers", () => {
  test("ready resolves once every worker has opened it; a file that is not the snapshot named is answered as missing there", async () => {
    const pool = new SearchPool({ workers: 2 });
    try {
      const args = { q: "albedo", limit: 5, offset: 0, crop_length: 200, highlight: false };
      const id = open(path).snapshot.meta.contentHash;
      const right = pool.generation(path, id);
      let ready = false;
      const waited = right.ready.then(() => (ready = true));
      expect(ready).toBe(false);
      await waited;
      const answered = await pool.run(right.generation, "search", args);
      expect("json" in answered).toBe(true);
      // Another content hash than the file's: the file at the path was replaced since the app opened it.
      const wrong = pool.generation(path, "0".repeat(64));
      await wrong.ready;
      const missing = await pool.run(wrong.generation, "search", args);
      expect(missing).toMatchObject({ missing: `${path} holds another snapshot now` });
      expect(pool.stats()).toMatchObject({ answered: 2, missing: 1, generations: 2 });
    } finally {
      pool.stop();
    }
  });
});

describe("a snapshot's structure checked once, on the request thread (D119)", () => {
  test("a worker opening the file the request thread checked does not check it again; one given no identity, or a file changed since, does", async () => {
    const pool = new SearchPool({ workers: 2 });
    const dir = tempDir("tome-pool-checked-");
    const copy = join(dir, "copy.tome");
    copyFileSync(path, copy);
    try {
      const args = { q: "albedo", limit: 5, offset: 0, crop_length: 200, highlight: false };
      const engine = open(copy);
      const { checked } = engine.snapshot;
      const id = engine.snapshot.meta.contentHash;
      const same = pool.generation(copy, id, undefined, checked);
      await same.ready;
      expect(pool.stats().checkedAgain).toBe(0);
      expect("json" in (await pool.run(same.generation, "search", args))).toBe(true);
      // A worker replaced opens every generation served as the first ones did (a worker reads its messages in order:
      // once the next generation is open everywhere, so is the first in the new worker).
      pool.terminate(0);
      await pool.generation(copy, id, undefined, checked).ready;
      expect(pool.stats()).toMatchObject({ replaced: 1, checkedAgain: 0 });
      // Given no identity, each worker checks.
      await pool.generation(copy, id).ready;
      expect(pool.stats().checkedAgain).toBe(2);
      // Its times changed (a write in place changes them): not the file checked, so each worker checks it.
      utimesSync(copy, new Date(0), new Date(0));
      await pool.generation(copy, id, undefined, checked).ready;
      expect(pool.stats().checkedAgain).toBe(4);
    } finally {
      pool.stop();
    }
  });

  test("a damaged file is refused by the request thread at a swap: no worker opens or maps it", async () => {
    const dir = tempDir("tome-pool-damaged-");
    const [served, damaged] = [join(dir, "served.tome"), join(dir, "damaged.tome")];
    copyFileSync(path, served);
    // A page of 4 billion chunks (pages.chunkCount's first value 2^32-1): what the pass over the pages refuses.
    const bytes = readFileSync(path);
    const section = open(path).snapshot.container.sections.find((s) => s.name === "pages.chunkCount")!;
    bytes.writeUInt32LE(0xffffffff, section.offset);
    writeFileSync(damaged, bytes);
    const app = createApp(open(served), { searchWorkers: 2 });
    try {
      await app.ready();
      const lines: string[] = [];
      await new SnapshotSwapper(app, pinned(damaged), (line) => lines.push(line)).check("SIGHUP");
      expect(lines[0]).toStartWith(
        `swap: refused ${damaged} (after SIGHUP): ${damaged} cannot be read (page 0's 4294967295 chunks`,
      );
      expect(app.pool!.stats()).toMatchObject({ generations: 1, checkedAgain: 0 });
      const mapped = readFileSync("/proc/self/maps", "utf8")
        .split("\n")
        .filter((line) => line.endsWith(damaged));
      expect(mapped).toEqual([]);
    } finally {
      app.close();
    }
  });
});

describe("the workers' priority (D142, D143)", () => {
  /** The real server with 2 search workers (TOME_SEARCH_WORKER_NICE as given), once both have answered searches and its PDF renderer a render. */
  async function niceOfServer(nice: string | undefined) {
    const server = await startServer({
      TOME_AUTH: "off",
      TOME_SNAPSHOT: path,
      TOME_SEARCH_WORKERS: "2",
      // startServer sets 0 (tests run beside each other); "" is unset: the server's default.
      TOME_SEARCH_WORKER_NICE: nice ?? "",
    });
    try {
      // Each worker reads its messages in order: one that has answered a search has read the priority sent first.
      const words = ["albedo", "anarchism", "history", "theory", "light", "water", "music", "war"];
      for (let round = 0; round < 3; round++)
        await Promise.all(words.map((q) => fetch(`${server.url}/v1/search?q=${q}${round}`).then((r) => r.text())));
      // The PDF renderer's worker, started by its first render, is told its priority before the article (D143). The
      // shortest article: at nice 10 on a busy machine, the first (Anarchism, 48 chunks) took seconds to render.
      const pages = open(path).snapshot.pages.list();
      const shortest = pages.reduce((a, b) => (b.chunks.length < a.chunks.length ? b : a));
      const pdf = await fetch(`${server.url}/v1/pdf/${shortest.pageId}`);
      expect(pdf.headers.get("content-type")).toBe("application/pdf");
      await pdf.arrayBuffer();
      const threads = threadsOf(server.pid).map(({ tid, name, fields }) => ({ tid, name, nice: Number(fields[16]) }));
      return {
        request: threads.find((t) => t.tid === server.pid)!.nice,
        workers: threads.filter((t) => t.name === "Worker").map((t) => t.nice),
        // A worker's own collector thread ("Heap Collector Thread", cut to 15 characters) is started by it, at its nice.
        others: threads.filter((t) => t.name !== "Worker" && !t.name.endsWith("ollector Thread")).map((t) => t.nice),
      };
    } finally {
      await server.stop();
    }
  }

  test.if(process.platform === "linux")(
    "the search workers' and the PDF renderer's threads run TOME_SEARCH_WORKER_NICE steps (default 10) below the request thread; the rest where they were",
    async () => {
      const own = getPriority();
      // Capped at 19: run at nice 12 or more, this test could not tell 7 steps from fewer.
      expect(own).toBeLessThanOrEqual(12 - 7);
      // Three worker threads: two search workers and the PDF renderer's one.
      const seven = await niceOfServer("7");
      expect(seven).toEqual({
        request: own,
        workers: [own + 7, own + 7, own + 7],
        others: seven.others.map(() => own),
      });
      const byDefault = await niceOfServer(undefined);
      expect(byDefault.workers).toEqual([own + 10, own + 10, own + 10]);
      const level = await niceOfServer("0");
      expect(level.workers).toEqual([own, own, own]);
    },
  );
});

describe("the workers' clocks of waits for a core (D144)", () => {
  /** This process's open descriptors on a thread's schedstat. */
  const schedstatFiles = () =>
    readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).endsWith("/schedstat");
      } catch {
        return false;
      }
    }).length;

  test.if(process.platform === "linux")(
    "each worker's file is closed when the pool ends it: replaced, or stopped",
    async () => {
      // The other pools of this file have theirs open once their workers have started.
      await pooled.ready();
      const before = schedstatFiles();
      const pool = new SearchPool({ workers: 2 });
      // A worker sends its file first: once it has opened a generation, the pool has it.
      await pool.generation(path, open(path).snapshot.meta.contentHash).ready;
      expect(schedstatFiles()).toBe(before + 2);
      pool.terminate(0);
      await pool.generation(path, open(path).snapshot.meta.contentHash).ready;
      expect(schedstatFiles()).toBe(before + 2);
      pool.stop();
      expect(schedstatFiles()).toBe(before);
    },
  );
});

describe("a swap with the pool", () => {
  test("every worker moves to the new snapshot, and lets the old one go (unmapped) after its last request", async () => {
    const dir = tempDir("tome-pool-swap-");
    const [first, second] = [join(dir, "first.tome"), join(dir, "second.tome")];
    copyFileSync(path, first);
    const secondOptions = { dumps: [EN_2016], limit: 30 };
    writeSnapshot(await ingested(secondOptions), second, secondOptions);
    const ranges = (file: string) =>
      readFileSync("/proc/self/maps", "utf8")
        .split("\n")
        .filter((line) => line.endsWith(file)).length;
    const freed: string[] = [];
    // Opened in a function of its own: nothing here holds the first engine once it is swapped out.
    // No search cut off at its time limit on a busy machine: the answers before and across the swap are compared whole.
    const app = ((file: string) =>
      createApp(open(file), { searchWorkers: 2, searchTimeoutMs: 60_000, onFreed: (f) => freed.push(f.path) }))(first);
    try {
      const pool = app.pool!;
      const before = await answer(app, "/v1/search?q=history&limit=50");
      expect(before.status).toBe(200);
      const mappedByMainAndWorkers = ranges(first);
      // A search in flight across the swap keeps its snapshot; those after it get the second one.
      const inFlight = answer(app, "/v1/search?q=history&limit=50");
      app.swap(open(second));
      const after = await answer(app, "/v1/search?q=history&limit=50");
      expect((await inFlight).body).toEqual(before.body);
      expect((after.body as { estimatedTotalHits: number }).estimatedTotalHits).toBeLessThan(
        (before.body as { estimatedTotalHits: number }).estimatedTotalHits,
      );
      expect(freed).toEqual([first]);
      expect(pool.stats()).toMatchObject({ generations: 1, missing: 0 });
      // The request thread's mappings go when it collects; the workers' when they do, on the close.
      Bun.gc(true);
      const deadline = Date.now() + 10_000;
      while (ranges(first) > 0 && Date.now() < deadline) {
        await Bun.sleep(50);
        Bun.gc(true);
      }
      expect({ before: mappedByMainAndWorkers > 0, after: ranges(first) }).toEqual({ before: true, after: 0 });
      expect(ranges(second)).toBeGreaterThan(0);
    } finally {
      app.close();
    }
  });
});
