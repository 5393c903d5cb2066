/**
 * Limits that see cost: a key may keep the server's thread busy for a bounded share of each
 * second (WorkShare), so one key's expensive searches are refused before they slow the others.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Access, createKey, type Scope, updateKeyFile } from "../src/access";
import { createApp } from "../src/http";
import type { Engine } from "../src/search";
import { WorkShare } from "../src/access/work";
import { EN_2006, EN_2016, engineFor, snapshotFor, startServer, tempDir } from "./helpers";

setDefaultTimeout(120_000);

/** The English snapshots' engine, and a data folder holding one enterprise key of this scope (its work share unbounded). */
async function enterpriseKey(scope: Scope): Promise<{ engine: Engine; dir: string; key: string }> {
  const engine = await engineFor({ dumps: [EN_2016, EN_2006] });
  const dir = tempDir("tome-data-");
  const key = updateKeyFile(dir, (f) =>
    createKey(f, { name: "k", account: "k", plan: "enterprise", scope, now: Date.now() }),
  ).key;
  return { engine, dir, key };
}

describe("WorkShare", () => {
  test("a key may spend its share of a second; past it, while another key uses the server, it waits until the share has grown back", () => {
    const share = new WorkShare(100);
    expect(share.wait("other", 0)).toBe(0);
    expect(share.wait("a", 0)).toBe(0);
    share.spend("a", 60, 0);
    expect(share.wait("a", 0)).toBe(0); // 40 ms left
    share.spend("a", 60, 0);
    expect(share.wait("a", 0)).toBe(1); // 20 ms owed
    expect(share.wait("a", 100)).toBe(1); // 10 ms of it grown back, 10 still owed
    expect(share.wait("a", 250)).toBe(0);
    share.spend("a", 450, 250); // one long request: owes 4 s (15 ms left - 450)
    expect(share.wait("a", 250)).toBe(5);
    // Another key is not touched; the bucket never grows past one second's share.
    expect(share.wait("b", 250)).toBe(0);
    share.spend("c", 0, 0);
    share.spend("c", 150, 10_000);
    expect(share.wait("b", 10_000)).toBe(0);
    expect(share.wait("c", 10_000)).toBe(1);
  });

  test("a key alone on the server is not held to its share: the share binds only while another key was active in the last second", () => {
    const share = new WorkShare(100);
    expect(share.wait("a", 0)).toBe(0);
    share.spend("a", 500, 0);
    expect(share.wait("a", 10)).toBe(0); // nobody else: go on
    expect(share.wait("b", 20)).toBe(0); // another key comes
    expect(share.wait("a", 30)).toBe(1); // now a is held to its share, but owed at most one second's share while alone (D57)
    expect(share.wait("a", 1100)).toBe(0); // b quiet for a second: a is alone again
  });

  test("a key's debt while alone has a floor of one second's share: once another key comes, it waits at most a second (D57)", () => {
    const share = new WorkShare(100);
    for (let t = 0; t < 60_000; t += 10) {
      expect(share.wait("a", t)).toBe(0);
      share.spend("a", 10, t); // the whole thread, for a minute
    }
    expect(share.wait("b", 60_000)).toBe(0);
    expect(share.wait("a", 60_001)).toBe(1);
    expect(share.wait("a", 61_000)).toBe(0); // a second later it is served again
    // While another key is there the debt is not floored: a costly request is paid for in full.
    expect(share.wait("b", 61_000)).toBe(0);
    share.spend("a", 1000, 61_001);
    expect(share.wait("a", 61_002)).toBe(10);
  });

  test("what it keeps is bounded by the clients of the last second, not by every client ever seen (the dashboard's are addresses, D82)", () => {
    const share = new WorkShare(100);
    const t0 = 1_700_000_000_000;
    // 100,000 addresses, one request each, a millisecond apart: each share grows back within 10 ms of its request.
    for (let i = 0; i < 100_000; i++) {
      expect(share.wait(`dashboard address 2001:db8:${i.toString(16)}::`, t0 + i)).toBe(0);
      share.spend(`dashboard address 2001:db8:${i.toString(16)}::`, 1, t0 + i);
    }
    expect(share.size).toBeLessThanOrEqual(2048);
    // A key in debt keeps its bucket, and its wait, through the sweeps that 5,000 more addresses make.
    const t1 = t0 + 100_000;
    share.wait("key_other", t1);
    expect(share.wait("key_heavy", t1)).toBe(0);
    share.spend("key_heavy", 2_000, t1);
    for (let i = 0; i < 5_000; i++) share.spend(`dashboard address 2001:db9:${i.toString(16)}::`, 1, t1 + i / 10);
    share.wait("key_other", t1 + 500);
    // 1,900 ms owed, less 50 grown back in half a second.
    expect(share.wait("key_heavy", t1 + 500)).toBe(Math.ceil(1_850 / 100));
  });

  test("no limit when the share is 0", () => {
    const share = new WorkShare(0);
    share.spend("a", 1e9, 0);
    expect(share.wait("a", 0)).toBe(0);
  });
});

describe("over HTTP", () => {
  test("a key sending costly searches is refused (429 rate_limit_exceeded, Retry-After) within its rate; another key is still served", async () => {
    const dir = tempDir("tome-data-");
    const keyOf = (name: string) =>
      updateKeyFile(dir, (f) => createKey(f, { name, account: name, plan: "business", scope: "read", now: Date.now() }))
        .key;
    const heavy = keyOf("heavy");
    const other = keyOf("other");
    const fresh = keyOf("fresh");
    // A small share, so that a few searches of the shared dumps use it up (within the second the other key's request counts).
    const server = await startServer({
      TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2016, EN_2006] }),
      TOME_DATA: dir,
      TOME_KEY_MS_PER_SECOND: "20",
    });
    try {
      const q = encodeURIComponent("the of and in to a is was for on as by with from that at his which");
      // Warm the routes with a key of its own (a route's first answer also compiles it), then
      // let that key's activity age past the second that makes the share bind.
      const warm = keyOf("warm");
      for (const path of ["/v1/chunk/39_0", `/v1/search?q=${q}&limit=50`, "/v1/page/39?format=concat"]) {
        await (await fetch(server.url + path, { headers: { "X-API-Key": warm } })).arrayBuffer();
      }
      await Bun.sleep(1100);
      const statuses: number[] = [];
      let refusal: Response | undefined;
      for (let i = 0; i < 40 && !refusal; i++) {
        // The other key uses the server too: the share binds only while another key has been
        // active in the last second (a few cheap chunks keep it well within its own share).
        if (i % 5 === 0)
          expect((await fetch(`${server.url}/v1/chunk/39_0`, { headers: { "X-API-Key": other } })).status).toBe(200);
        const r = await fetch(`${server.url}/v1/search?q=${q}&limit=50`, { headers: { "X-API-Key": heavy } });
        statuses.push(r.status);
        if (r.status === 429) refusal = r;
        else await r.arrayBuffer();
      }
      expect(statuses[0]).toBe(200);
      expect(refusal?.status).toBe(429);
      const body = (await refusal!.json()) as Record<string, unknown>;
      expect(body).toEqual({
        error: "rate_limit_exceeded",
        message: expect.stringContaining("share of the server's time"),
        retry_after: expect.any(Number),
      });
      expect(Number(refusal!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(refusal!.headers.get("x-ratelimit-limit")).toBe("100");
      // Far within the plan's 100 per second: the refusal was for cost, not count.
      expect(statuses.length).toBeLessThan(40);
      // Every route's own time counts, not only searches': whole pages, joined, use the share too.
      const pages = keyOf("pages");
      let pageRefusal = 0;
      for (let i = 0; i < 200 && !pageRefusal; i++) {
        if (i % 5 === 0) await fetch(`${server.url}/v1/chunk/39_0`, { headers: { "X-API-Key": other } });
        const r = await fetch(`${server.url}/v1/page/39?format=concat`, { headers: { "X-API-Key": pages } });
        await r.arrayBuffer();
        if (r.status === 429) pageRefusal = i;
      }
      expect(pageRefusal).toBeGreaterThan(0);
      // The refusal is the heavy key's own: a key that has not used its share is served.
      expect((await fetch(`${server.url}/v1/chunk/39_0`, { headers: { "X-API-Key": fresh } })).status).toBe(200);
      // Alone for a second, the heavy key is served again whatever it owes.
      await Bun.sleep(1100);
      const alone = await fetch(`${server.url}/v1/search?q=${q}&limit=50`, { headers: { "X-API-Key": heavy } });
      expect([alone.status, alone.status === 200 ? "" : await alone.text()]).toEqual([200, ""]);
    } finally {
      await server.stop();
    }
  });
});

describe("what a request is charged (D57)", () => {
  test("the whole request on the server's thread: a large page's validation, serialization and ETag count, not only its building", async () => {
    const { engine, dir, key } = await enterpriseKey("read");
    const access = new Access({ dataDir: dir });
    const app = createApp(engine, {
      access,
      pdf: { render: () => Promise.reject(new Error("no PDFs")), close() {} } as never,
    });
    try {
      const pages = engine.snapshot.pages;
      let longest = 0;
      for (let i = 1; i < pages.length; i++) if (pages.chunkCounts[i]! > pages.chunkCounts[longest]!) longest = i;
      const url = `http://localhost/v1/page/${pages.ids[longest]}?format=concat`;
      const ask = async () => (await app.handle(new Request(url, { headers: { "X-API-Key": key } }))).arrayBuffer();
      for (let i = 0; i < 20; i++) await ask();
      const charged = () => access.workCharged().get("enterprise")!;
      const before = charged();
      const cpu = process.threadCpuUsage();
      for (let i = 0; i < 50; i++) await ask();
      const used = process.threadCpuUsage(cpu);
      // Nothing else runs on this thread: the charge is nearly all of its time on the core (not its wall time, which a
      // busy machine's waits for a core lengthen and which is no longer charged: D25 amended). Timing only the building
      // of the body (as before D57) charged about a sixth of it.
      expect((charged() - before) / ((used.user + used.system) / 1000)).toBeGreaterThan(0.7);
    } finally {
      app.close();
      await access.stop();
    }
  });

  test("a PDF request's time on the server's thread counts (its article read and hashed, a HEAD's too), not its wait for the render (D25)", async () => {
    const { engine, dir, key } = await enterpriseKey("full");
    const access = new Access({ dataDir: dir });
    const RENDER_MS = 300;
    const pdf = {
      render: async () => {
        await Bun.sleep(RENDER_MS);
        return new TextEncoder().encode("%PDF-");
      },
    };
    const app = createApp(engine, { access, pdf });
    try {
      const charged = () => access.workCharged().get("enterprise")!;
      const ask = async (method: string) => {
        const before = charged();
        const r = await app.handle(
          new Request("http://localhost/v1/pdf/39", { method, headers: { "X-API-Key": key } }),
        );
        await r.arrayBuffer();
        return [r.status, charged() - before];
      };
      // A HEAD renders nothing and costs no credit, but reads the article and hashes it for its ETag.
      const [headStatus, head] = await ask("HEAD");
      expect(headStatus).toBe(200);
      expect(head).toBeGreaterThan(0);
      const [getStatus, get] = await ask("GET");
      expect(getStatus).toBe(200);
      expect(get).toBeGreaterThan(0);
      expect(get).toBeLessThan(RENDER_MS);
    } finally {
      app.close();
      await access.stop();
    }
  });

  test("the request thread's waits for a core during a PDF's render are other requests': not taken off its own time (D25 amended)", async () => {
    const { engine, dir, key } = await enterpriseKey("full");
    const access = new Access({ dataDir: dir });
    // The thread's clock of its waits for a core: it waits 1,000 ms while the render runs elsewhere (others' requests
    // had the core), and never while this request is on it.
    let coreWaited = 0;
    const pdf = {
      render: async () => {
        // After the request has handed the render over (its call runs on the request thread up to its first await).
        await Bun.sleep(1);
        coreWaited += 1000;
        return new TextEncoder().encode("%PDF-");
      },
    };
    const app = createApp(engine, { access, pdf, coreWaited: () => coreWaited });
    try {
      const before = access.workCharged().get("enterprise") ?? 0;
      const r = await app.handle(new Request("http://localhost/v1/pdf/39", { headers: { "X-API-Key": key } }));
      await r.arrayBuffer();
      expect(r.status).toBe(200);
      expect(coreWaited).toBe(1000);
      // Its article read and hashed are charged; taking the render's 1,000 ms of waits off them left only the
      // request's fixed 0.05 ms.
      expect(access.workCharged().get("enterprise")! - before).toBeGreaterThan(0.05);
    } finally {
      app.close();
      await access.stop();
    }
  });

  test("with the search pool: a search's time in its worker counts as well as its time on the request thread (D102)", async () => {
    const { engine, dir, key } = await enterpriseKey("read");
    const access = new Access({ dataDir: dir });
    const app = createApp(engine, { access, searchWorkers: 1 });
    try {
      const url = "http://localhost/v1/search?q=history%20of%20the%20world%20war&limit=50&highlight=true";
      const ask = async () => (await app.handle(new Request(url, { headers: { "X-API-Key": key } }))).arrayBuffer();
      for (let i = 0; i < 20; i++) await ask();
      const charged = () => access.workCharged().get("enterprise")!;
      const before = charged();
      const cpu = process.cpuUsage();
      for (let i = 0; i < 50; i++) await ask();
      const used = process.cpuUsage(cpu);
      // One request at a time: the request thread's part and the worker's follow each other, so together they are
      // nearly all of the process's CPU time (its collector's and compiler's threads aside). The request thread's part
      // alone is a small share of it. (Not of the wall time: a worker is not charged its waits for a core, D144, which a
      // busy machine makes long.)
      expect((charged() - before) / ((used.user + used.system) / 1000)).toBeGreaterThan(0.4);
      expect(app.pool!.stats()).toMatchObject({ answered: 70, missing: 0 });
    } finally {
      app.close();
      await access.stop();
    }
  });

  test("POST /mcp requests admitted while their bodies were held back are checked against the share again as their bodies arrive (D162)", async () => {
    const engine = await engineFor({ dumps: [EN_2016, EN_2006] });
    const dir = tempDir("tome-data-");
    const keyOf = (name: string) =>
      updateKeyFile(dir, (f) =>
        createKey(f, { name, account: name, plan: "enterprise", scope: "read", now: Date.now() }),
      ).key;
    const [held, other] = [keyOf("held"), keyOf("other")];
    // A share of 1 ms a second: a few get_page calls of the longest page use it up.
    const access = new Access({ dataDir: dir, keyMsPerSecond: 1 });
    const app = createApp(engine, { access });
    try {
      const pages = engine.snapshot.pages;
      let longest = 0;
      for (let i = 1; i < pages.length; i++) if (pages.chunkCounts[i]! > pages.chunkCounts[longest]!) longest = i;
      const message = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "get_page", arguments: { page_id: pages.ids[longest] } },
      });
      // Each request is admitted (nothing charged yet: none has done its work) with all of its body but the last byte.
      const ends: (() => void)[] = [];
      const answers = Array.from({ length: 30 }, () => {
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(message.slice(0, -1)));
            ends.push(() => {
              controller.enqueue(new TextEncoder().encode(message.slice(-1)));
              controller.close();
            });
          },
        });
        return app.handle(
          new Request("http://localhost/mcp", {
            method: "POST",
            headers: {
              "X-API-Key": held,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
            body,
          }),
        );
      });
      await Bun.sleep(50);
      // Another key uses the server, so the share binds; then every body arrives, one after the other as a server's
      // sockets deliver them (each in a task of its own).
      expect(
        (await app.handle(new Request("http://localhost/v1/chunk/39_0", { headers: { "X-API-Key": other } }))).status,
      ).toBe(200);
      for (const end of ends) {
        end();
        await new Promise((next) => setImmediate(next));
      }
      const answered = await Promise.all(
        answers.map(async (a) => {
          const r = await a;
          await r.arrayBuffer();
          return r;
        }),
      );
      const statuses = answered.map((r) => r.status);
      // The first calls use the key's share up; the rest are refused as a request past it is at admission, not run,
      // and end their connection as it does (D183).
      expect(statuses[0]).toBe(200);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(20);
      expect(answered.filter((r) => r.status === 429).map((r) => r.headers.get("connection"))).toEqual(
        answered.filter((r) => r.status === 429).map(() => "close"),
      );
    } finally {
      app.close();
      await access.stop();
    }
  });

  test("over HTTP: a key that had the server to itself for seconds is refused for at most about a second once another key comes", async () => {
    const dir = tempDir("tome-data-");
    const keyOf = (name: string) =>
      updateKeyFile(dir, (f) =>
        createKey(f, { name, account: name, plan: "enterprise", scope: "read", now: Date.now() }),
      ).key;
    const [alone, other] = [keyOf("alone"), keyOf("other")];
    const server = await startServer({
      TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2016, EN_2006] }),
      TOME_DATA: dir,
      TOME_KEY_MS_PER_SECOND: "50",
    });
    try {
      const q = encodeURIComponent("the of and in to a is was for on as by with from that at his which");
      const search = (key: string) =>
        fetch(`${server.url}/v1/search?q=${q}&limit=50`, { headers: { "X-API-Key": key } });
      // Two seconds of searches alone: far past a 50 ms share, all served.
      const until = Date.now() + 2000;
      while (Date.now() < until) expect((await search(alone)).status).toBe(200);
      const chunk = (key: string) => fetch(`${server.url}/v1/chunk/39_0`, { headers: { "X-API-Key": key } });
      expect((await chunk(other)).status).toBe(200);
      // Now held to its share, it owes at most one second's: refused for a second, not for the minutes its searches cost.
      const refused = await chunk(alone);
      expect([refused.status, refused.headers.get("retry-after")]).toEqual([429, "1"]);
      await Bun.sleep(600);
      expect((await chunk(other)).status).toBe(200);
      await Bun.sleep(600);
      expect((await chunk(other)).status).toBe(200);
      expect((await chunk(alone)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
