/**
 * PDF renders under load: a bounded queue that renders in order (503 with Retry-After, free,
 * when full), a time limit counted from each render's start, nothing charged for a PDF whose
 * client left before its render started, its credits for one that left during it (which is given
 * up), and HEAD that renders nothing. Real renders of the shared dumps.
 */
import { afterAll, beforeAll, describe, expect, jest, setDefaultTimeout, test } from "bun:test";
import { Access, createKey, readUsage, updateKeyFile, usagePath } from "../src/access";
import { createApp, serve, type RunningServer } from "../src/http";
import { apiContext } from "../src/http/context";
import { PdfAbortedError, PdfBusyError, PdfRenderer, PdfTimeoutError, type PdfArticle } from "../src/pdf";
import type { Engine } from "../src/search";
import { EN_2006, EN_2016, engineFor, tempDir } from "./helpers";

setDefaultTimeout(180_000);

let engine: Engine;
let articles: PdfArticle[];

beforeAll(async () => {
  engine = await engineFor({ dumps: [EN_2016, EN_2006] });
  const { resources } = apiContext(engine);
  // Pages with text, smallest first: quick renders.
  articles = engine.snapshot.pages
    .list()
    .filter((p) => p.chunks.length)
    .sort((a, b) => a.chunks.length - b.chunks.length)
    .map((p) => resources.pdfArticle(p));
});

describe("the render queue", () => {
  test("renders one at a time in the order asked, and refuses at once past its length", async () => {
    const renderer = new PdfRenderer({ queueLength: 3, perRequester: 3 });
    try {
      const done: number[] = [];
      // One starts at once; three wait; the fifth finds the queue full.
      const asked = articles.slice(0, 4).map((a) => renderer.render(a).then(() => done.push(a.pageId)));
      expect(renderer.load()).toEqual({ queued: 3, rendering: 1 });
      const refused = await renderer.render(articles[4]!).then(
        () => "rendered",
        (e) => e,
      );
      expect(refused).toBeInstanceOf(PdfBusyError);
      expect((refused as PdfBusyError).retryAfter).toBeGreaterThanOrEqual(1);
      await Promise.all(asked);
      expect(done).toEqual(articles.slice(0, 4).map((a) => a.pageId));
      // The same revision asked twice while queued renders once; a kept one comes back at once.
      expect(renderer.cachedPdf(articles[0]!)).toBeInstanceOf(Uint8Array);
    } finally {
      renderer.close();
    }
  });

  test("the time limit runs from a render's start: renders queued longer than it still succeed", async () => {
    // The renderer's clock is the test's (fake timers: its setTimeout and performance.now), so that how long a render
    // takes on this machine, however loaded, does not matter: each of four renders is taken to last 600 ms of a
    // 1,000 ms limit, so that the fourth, asked for with the others, starts 1,800 ms after it was queued.
    const [limit, each] = [1000, 600];
    jest.useFakeTimers();
    const renderer = new PdfRenderer({ timeoutMs: limit, queueLength: 8, perRequester: 8 });
    try {
      const started = performance.now();
      let waited = 0;
      // When a render is done the next has started (one worker): it takes its 600 ms. The first takes them here.
      const all = Promise.allSettled(
        articles.slice(12, 16).map((a) =>
          renderer.render(a).then(() => {
            waited = performance.now() - started;
            jest.advanceTimersByTime(each);
          }),
        ),
      );
      jest.advanceTimersByTime(each);
      expect((await all).filter((r) => r.status === "rejected")).toEqual([]); // rendered all the same…
      expect(waited).toBe(4 * each); // …the last after waiting longer than the limit
      expect(waited).toBeGreaterThan(limit);
      // And the limit is this clock's: a render under way for longer than it fails.
      const late = renderer.render(articles[16]!).then(
        () => "rendered",
        (e: Error) => e.message,
      );
      jest.advanceTimersByTime(limit + 1);
      expect(await late).toBe(`rendering took longer than ${limit} ms`);
    } finally {
      jest.useRealTimers();
      renderer.close();
    }
  });

  test("the time limit runs from when the render's worker is ready; the worker's start has a limit of its own (D26)", async () => {
    // The renderer's clock is the test's (fake timers). A worker cannot say it is ready before this thread reads its
    // message, so the time passed here before the test awaits is all its start's.
    const [limit, startLimit] = [1000, 1500];
    jest.useFakeTimers();
    const renderer = new PdfRenderer({ timeoutMs: limit, startTimeoutMs: startLimit });
    try {
      const late = `the PDF worker took longer than ${startLimit} ms to start`;
      const [first, second, third] = articles.slice(0, 3).map((a) => renderer.render(a).catch((e: Error) => e));
      const worker = renderer.threadIds()[0]!;
      // The worker is not ready within the first render's start limit: that render fails as one past its limit, and the
      // worker goes on starting for the next (were it stopped, each render on a machine this loaded would start one anew,
      // and none be ready in time)…
      jest.advanceTimersByTime(startLimit + 1);
      expect(renderer.threadIds()).toEqual([worker]);
      // …nor within the second's: it is taken for stuck, stopped, and the third starts a new one.
      jest.advanceTimersByTime(startLimit + 1);
      for (const failed of [await first, await second])
        expect([failed, (failed as Error).message]).toEqual([expect.any(PdfTimeoutError), late]);
      const replaced = renderer.threadIds()[0]!;
      expect(replaced).not.toBe(worker);
      // It starts slower than a render's limit, within its start's: the render has its whole limit.
      jest.advanceTimersByTime(limit + 1);
      expect(new TextDecoder().decode(((await third) as Uint8Array).slice(0, 5))).toBe("%PDF-");
      expect(renderer.threadIds()).toEqual([replaced]);
    } finally {
      jest.useRealTimers();
      renderer.close();
    }
  });

  test("requesters take turns, one requester's share of the queue is bounded, and an article two ask for waits for the earlier turn", async () => {
    const renderer = new PdfRenderer({ queueLength: 8, perRequester: 3 });
    try {
      const done: string[] = [];
      const ask = (a: PdfArticle, requester: string) =>
        renderer.render(a, { requester }).then(() => done.push(`${requester}${a.pageId}`));
      const heavy = articles.slice(60, 64).map((a) => ask(a, "heavy")); // one renders, three wait: its share
      const over = await renderer.render(articles[64]!, { requester: "heavy" }).then(
        () => "rendered",
        (e) => e,
      );
      expect(over).toBeInstanceOf(PdfBusyError);
      const light = ask(articles[65]!, "light");
      // Another asks for the article last in heavy's queue: it waits for its own turn, not for heavy's queue (before, its
      // request joined heavy's render where it waited, rendered last).
      const joiner = ask(articles[63]!, "joiner");
      await Promise.all([...heavy, light, joiner]);
      // The light requester's one render comes right after the render under way, not after heavy's queue; the joiner's next.
      expect(done.slice(0, 4)).toEqual([
        `heavy${articles[60]!.pageId}`,
        `light${articles[65]!.pageId}`,
        ...["heavy", "joiner"].map((r) => `${r}${articles[63]!.pageId}`),
      ]);
      expect(renderer.stats()).toMatchObject({ renders: 5, queued: 0 }); // the joined article rendered once
    } finally {
      renderer.close();
    }
  });

  test("a request that leaves before its render starts is taken out of the queue", async () => {
    const renderer = new PdfRenderer();
    try {
      const first = renderer.render(articles[50]!);
      const leaving = new AbortController();
      const second = renderer.render(articles[51]!, { signal: leaving.signal });
      expect(renderer.load()).toEqual({ queued: 1, rendering: 1 });
      leaving.abort();
      expect(
        await second.then(
          () => "rendered",
          (e) => e,
        ),
      ).toBeInstanceOf(PdfAbortedError);
      expect(renderer.load()).toEqual({ queued: 0, rendering: 1 });
      await first;
      expect(renderer.cachedPdf(articles[51]!)).toBeUndefined();
    } finally {
      renderer.close();
    }
  });

  test("a render under way that every request waiting for it leaves is given up (D26); one another request waits for goes on", async () => {
    const renderer = new PdfRenderer();
    const longest = articles.at(-1)!;
    try {
      const leaving = new AbortController();
      const left = renderer.render(longest, { signal: leaving.signal }).catch((e) => e);
      expect(renderer.load()).toEqual({ queued: 0, rendering: 1 });
      leaving.abort();
      const error = await left;
      expect(error).toBeInstanceOf(PdfAbortedError);
      expect((error as PdfAbortedError).rendering).toBe(true);
      while (renderer.load().rendering) await Bun.sleep(10);
      expect(renderer.stats()).toMatchObject({ renders: 0, abandoned: 1, failures: 0 });
      expect(renderer.cachedPdf(longest)).toBeUndefined();
      // The same worker renders on; two requests for one article, one leaving: the other gets it whole.
      const stays = renderer.render(longest);
      const other = new AbortController();
      const goes = renderer.render(longest, { signal: other.signal }).catch((e) => e);
      other.abort();
      expect(await goes).toBeInstanceOf(PdfAbortedError);
      expect(new TextDecoder().decode((await stays).slice(0, 5))).toBe("%PDF-");
      expect(renderer.stats()).toMatchObject({ renders: 1, abandoned: 1, failures: 0 });
    } finally {
      renderer.close();
    }
  });
});

describe("PDFs over HTTP under load", () => {
  let running: RunningServer;
  let renderer: PdfRenderer;
  let access: Access;
  let dir: string;
  const keyOf: Record<string, string> = {};
  const month = new Date().toISOString().slice(0, 7);

  beforeAll(() => {
    dir = tempDir("tome-data-");
    for (const name of ["heavy", "light", "leaver", "quitter", "header"]) {
      keyOf[name] = updateKeyFile(dir, (f) =>
        createKey(f, { name, account: name, plan: "business", scope: "full", now: Date.now() }),
      ).key;
    }
    access = new Access({ dataDir: dir });
    access.start();
    renderer = new PdfRenderer({ queueLength: 12, perRequester: 8 });
    running = serve(createApp(engine, { access, pdf: renderer }), {
      port: 0,
      hostname: "127.0.0.1",
    });
  });
  afterAll(async () => {
    await running?.stop();
    await access?.stop();
  });

  const get = (key: string, path: string, init: RequestInit = {}) =>
    fetch(`${running.url.origin}${path}`, { ...init, headers: { "X-API-Key": key } });
  const spent = async (account: string) => {
    await Bun.sleep(250); // the usage file is saved within 100 ms of a change
    return readUsage(usagePath(dir)).months[month]?.[account] ?? 0;
  };

  test("80 concurrent uncached PDFs: every one answered whole (a PDF, or 503 with Retry-After), only the PDFs delivered charged, and another key's PDF served meanwhile", async () => {
    const pages = articles.slice(100, 180);
    expect(pages.length).toBe(80);
    const load = Promise.all(
      pages.map(async (a) => {
        const r = await get(keyOf.heavy!, `/v1/pdf/${a.pageId}`);
        const body = new Uint8Array(await r.arrayBuffer());
        return {
          status: r.status,
          retryAfter: r.headers.get("retry-after"),
          type: r.headers.get("content-type"),
          pdf: new TextDecoder().decode(body.slice(0, 5)),
        };
      }),
    );
    // Meanwhile another key's small PDF takes its turn: served, not refused behind the 80.
    await Bun.sleep(100);
    const small = await get(keyOf.light!, `/v1/pdf/${articles[0]!.pageId}`);
    expect(small.status).toBe(200);
    await small.arrayBuffer();
    const answers = await load;
    const delivered = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 503);
    expect(delivered.length + refused.length).toBe(80);
    expect(delivered.length).toBeGreaterThanOrEqual(9); // one rendering and eight queued (its share) at the least
    expect(refused.length).toBeGreaterThan(0);
    for (const d of delivered) expect([d.type, d.pdf]).toEqual(["application/pdf", "%PDF-"]);
    for (const r of refused) {
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(r.type).toBe("application/json; charset=utf-8");
    }
    expect(await spent("heavy")).toBe(10 * delivered.length);
    expect(await spent("light")).toBe(10);
  });

  test("a client that leaves while its PDF waits is not charged", async () => {
    // Occupy the renderer, then ask and leave.
    const busy = articles
      .slice(190, 194)
      .map((a) => get(keyOf.light!, `/v1/pdf/${a.pageId}`).then((r) => r.arrayBuffer()));
    const leave = new AbortController();
    const leaving = get(keyOf.leaver!, `/v1/pdf/${articles[195]!.pageId}`, { signal: leave.signal }).catch((e) => e);
    await Bun.sleep(50);
    leave.abort();
    expect(await leaving).toBeInstanceOf(Error);
    await Promise.all(busy);
    expect(await spent("leaver")).toBe(0);
  });

  test("a client that leaves while its PDF renders is not charged (D20: its 499 is a 4xx), and the render is given up (D26)", async () => {
    const leave = new AbortController();
    const leaving = get(keyOf.quitter!, `/v1/pdf/${articles.at(-1)!.pageId}`, { signal: leave.signal }).catch((e) => e);
    while (!renderer.load().rendering) await Bun.sleep(5);
    leave.abort();
    expect(await leaving).toBeInstanceOf(Error);
    while (renderer.load().rendering) await Bun.sleep(10);
    expect(renderer.stats().abandoned).toBe(1);
    // Settled by now: the next request of the key is counted after it.
    expect((await get(keyOf.quitter!, "/v1/chunk/39_0")).status).toBe(200);
    expect(await spent("quitter")).toBe(1);
  });

  test("HEAD renders nothing and costs nothing unless the PDF is kept; then it costs what the GET costs", async () => {
    const page = articles[200]!;
    const head = () => get(keyOf.header!, `/v1/pdf/${page.pageId}`, { method: "HEAD" });
    const first = await head();
    // Not rendered: X-Credit-Cost 0 says so (Bun itself writes Content-Length: 0 on a bodiless answer).
    expect([first.status, first.headers.get("content-type"), first.headers.get("x-credit-cost")]).toEqual([
      200,
      "application/pdf",
      "0",
    ]);
    expect(await spent("header")).toBe(0);
    const rendered = await get(keyOf.header!, `/v1/pdf/${page.pageId}`);
    const length = (await rendered.arrayBuffer()).byteLength;
    expect(await spent("header")).toBe(10);
    const kept = await head();
    expect([kept.status, kept.headers.get("x-credit-cost"), kept.headers.get("content-length")]).toEqual([
      200,
      "10",
      String(length),
    ]);
    expect(await spent("header")).toBe(20);
  });
});
