/**
 * The resumable download npm start uses for TOME_DUMP=simple, en or a URL (src/cli/download.ts),
 * against a local server on 127.0.0.1 that serves a fixture dump, honours Range and If-Range,
 * and can drop the connection halfway through a body.
 */
import { afterAll, describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { join } from "node:path";
import { download, fileNameOf } from "../src/cli/download";
import { EN_2016, tempDir } from "./helpers";

setDefaultTimeout(30_000);

const DUMP = new Uint8Array(readFileSync(EN_2016));

/** What the server is asked, and what it does next. */
const server = {
  content: DUMP,
  etag: '"v1"',
  /** Drop the connection after this many bytes of the next body (then serve whole bodies again). */
  dropAfter: undefined as number | undefined,
  /** After the drop, answer this many requests 503 (the server down for a while). */
  downAfterDrop: 0,
  down: 0,
  requests: [] as { range: string | null; ifRange: string | null }[],
};

const http = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const range = req.headers.get("range");
    const ifRange = req.headers.get("if-range");
    server.requests.push({ range, ifRange });
    if (server.down > 0) {
      server.down--;
      return new Response("down", { status: 503 });
    }
    const { content, etag } = server;
    let start = 0;
    const m = range && (!ifRange || ifRange === etag) ? /^bytes=(\d+)-$/.exec(range) : null;
    if (m) start = Number(m[1]);
    if (start >= content.length && m)
      return new Response(null, { status: 416, headers: { "content-range": `bytes */${content.length}` } });
    const headers: Record<string, string> = {
      etag,
      "content-length": String(content.length - start),
      "accept-ranges": "bytes",
    };
    if (m) headers["content-range"] = `bytes ${start}-${content.length - 1}/${content.length}`;
    const drop = server.dropAfter;
    server.dropAfter = undefined;
    if (drop !== undefined) server.down = server.downAfterDrop;
    const rest = content.subarray(start);
    const body =
      drop === undefined
        ? rest
        : new ReadableStream<Uint8Array>({
            async pull(ctl) {
              ctl.enqueue(rest.subarray(0, drop));
              // Time for the client to have read the half sent (20 ms was too short for a CI run on a loaded machine).
              await Bun.sleep(500);
              ctl.error(new Error("dropped on purpose"));
            },
          });
    return new Response(body, { status: m ? 206 : 200, headers });
  },
  error: () => new Response(null, { status: 500 }),
});
const URL_ = `http://127.0.0.1:${http.port}/enwiki-2016-sample.xml.bz2`;

afterAll(() => http.stop(true));

function reset(dropAfter?: number) {
  server.content = DUMP;
  server.etag = '"v1"';
  server.dropAfter = dropAfter;
  server.down = 0;
  server.downAfterDrop = 0;
  server.requests = [];
}

describe("download", () => {
  test("a connection dropped halfway is resumed with a Range request, and the file is whole", async () => {
    const half = DUMP.length >> 1;
    reset(half);
    const dest = join(tempDir(), "dump.xml.bz2");
    const progress: number[] = [];
    await download(URL_, dest, { retryDelayMs: 10, onProgress: (received) => progress.push(received) });
    expect(Buffer.compare(readFileSync(dest), DUMP)).toBe(0);
    expect(existsSync(`${dest}.part`)).toBe(false);
    expect(server.requests.length).toBe(2);
    expect(server.requests[0]!.range).toBeNull();
    // It asked for the rest only: from the bytes it had kept, with the version it had seen.
    expect(server.requests[1]).toEqual({ range: `bytes=${half}-`, ifRange: '"v1"' });
    expect(progress.at(-1)).toBe(DUMP.length);
  });

  test("a run that gives up keeps the part, and the next run resumes from it", async () => {
    const third = Math.floor(DUMP.length / 3);
    reset(third);
    // Dropped a third of the way, then down for longer than the retries wait.
    server.downAfterDrop = 3;
    const dest = join(tempDir(), "dump.xml.bz2");
    const failed = (await download(URL_, dest, { retries: 2, retryDelayMs: 10 }).catch((e: Error) => e)) as Error;
    expect(failed.message).toContain("HTTP 503");
    expect(failed.message).toContain("run again to resume from there");
    expect(existsSync(dest)).toBe(false);
    expect(readFileSync(`${dest}.part`).length).toBe(third);
    server.requests = [];
    await download(URL_, dest, { retryDelayMs: 10 });
    expect(Buffer.compare(readFileSync(dest), DUMP)).toBe(0);
    expect(server.requests).toEqual([{ range: `bytes=${third}-`, ifRange: '"v1"' }]);
  });

  test("a part of a file the server has since replaced is not spliced: the new file is downloaded from its start", async () => {
    reset();
    const dest = join(tempDir(), "dump.xml.bz2");
    writeFileSync(`${dest}.part`, DUMP.subarray(0, 1000));
    writeFileSync(`${dest}.part.version`, '"v1"');
    const replaced = DUMP.slice();
    replaced[500] = replaced[500]! ^ 0xff;
    server.content = replaced;
    server.etag = '"v2"';
    await download(URL_, dest, { retryDelayMs: 10 });
    expect(server.requests[0]).toEqual({ range: "bytes=1000-", ifRange: '"v1"' });
    expect(Buffer.compare(readFileSync(dest), replaced)).toBe(0);
  });

  test("an address nothing answers at fails at once, saying so", async () => {
    const started = performance.now();
    const err = await download("http://127.0.0.1:9/x.xml.bz2", join(tempDir(), "x")).catch((e: Error) => e);
    expect((err as Error).message).toContain("cannot reach http://127.0.0.1:9/x.xml.bz2");
    expect(performance.now() - started).toBeLessThan(5000);
  });

  test("fetch's failures are said without Bun's advice to its programmer or a stray '.' after its question", async () => {
    const unreachable = await download("http://127.0.0.1:9/x.xml.bz2", join(tempDir(), "x")).catch((e: Error) => e);
    expect((unreachable as Error).message).toContain("cannot reach http://127.0.0.1:9/x.xml.bz2: ");
    expect((unreachable as Error).message).not.toContain("?.");
    reset(DUMP.length >> 1);
    const logged: string[] = [];
    await download(URL_, join(tempDir(), "dump.xml.bz2"), { retryDelayMs: 10, log: (line) => logged.push(line) });
    const brokeOff = logged.find((line) => line.includes("broke off"));
    expect(brokeOff).toBeDefined();
    expect(brokeOff).not.toContain("verbose");
    expect(brokeOff).not.toContain("fetch()");
  });

  test("a URL with a line break or ESC in it (fetch drops the one, encodes the other) is named \\u-escaped in the broken-off line and the error", async () => {
    reset(DUMP.length >> 1);
    server.downAfterDrop = 3;
    const url = `${URL_.replace(/[^/]*$/, "")}a\x1b[31mred\nline.xml.bz2`;
    const shown = `${URL_.replace(/[^/]*$/, "")}a\\u001b[31mred\\u000aline.xml.bz2`;
    const logged: string[] = [];
    const err = await download(url, join(tempDir(), "dump.xml.bz2"), {
      retries: 1,
      retryDelayMs: 10,
      log: (line) => logged.push(line),
    }).catch((e: Error) => e);
    // Were the URL as given: its ESC acted on by the terminal, its line break a line of its own.
    expect(logged[0]).toStartWith(`download: the download of ${shown} broke off at `);
    expect((err as Error).message).toStartWith(`cannot download ${shown}: HTTP 503`);
    for (const said of [...logged, (err as Error).message]) expect(said).not.toMatch(/[\x1b\n]/);
  });

  test("a disk full while downloading is not retried as a broken connection: one error naming the part and the space to free", async () => {
    reset();
    const dest = join(tempDir(), "dump.xml.bz2");
    const real = fsp.open;
    const logged: string[] = [];
    const full = spyOn(fsp, "open").mockImplementation((async (...args: Parameters<typeof real>) => {
      const handle = await real(...args);
      handle.write = (async () => {
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      }) as never;
      return handle;
    }) as never);
    let err: Error | undefined;
    try {
      await download(URL_, dest, { retryDelayMs: 10, log: (line) => logged.push(line) });
    } catch (e) {
      err = e as Error;
    } finally {
      full.mockRestore();
    }
    expect(server.requests.length).toBe(1);
    expect(logged).toEqual([]);
    expect(err?.message).toStartWith(
      `cannot write ${dest}.part: ENOSPC: no space left on device, write. Free space on the disk of `,
    );
    expect(err?.message).toContain(`${(DUMP.length / 1e6).toFixed(1)} MB more for the rest`);
    expect(existsSync(dest)).toBe(false);
  });

  test("a 200 with a web page instead of the dump (a mirror's error page) is refused, and nothing is kept as the dump", async () => {
    const page = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () =>
        new Response("<html><body>Service unavailable</body></html>", { headers: { "content-type": "text/html" } }),
    });
    const dest = join(tempDir(), "dump.xml.bz2");
    const err = await download(`http://${page.hostname}:${page.port}/dump.xml.bz2`, dest, { retryDelayMs: 10 }).catch(
      (e: Error) => e,
    );
    page.stop(true);
    expect((err as Error).message).toContain("answered with a web page (Content-Type text/html), not a dump");
    expect(existsSync(dest)).toBe(false);
  });

  test("a declared size (1 PB) the disk cannot hold is refused before a byte is written", async () => {
    // A raw socket: Bun.serve would put its own Content-Length on the body.
    const liar = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data(socket) {
          socket.write("HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000\r\n\r\nBZh91AY&SY");
        },
      },
    });
    const dest = join(tempDir(), "dump.xml.bz2");
    const err = await download(`http://127.0.0.1:${liar.port}/dump.xml.bz2`, dest, { retryDelayMs: 10 }).catch(
      (e: Error) => e,
    );
    liar.stop(true);
    expect((err as Error).message).toContain(
      "is 1000000000.0 MB: the 1000000000.0 MB still to download do not fit in the",
    );
    expect(existsSync(dest)).toBe(false);
    expect(existsSync(`${dest}.part`)).toBe(false);
  });

  test("a URL's name too long for a file (300 bytes) is kept under a shorter one, keeping its suffix", async () => {
    reset();
    const dir = tempDir();
    const url = `${URL_.replace(/[^/]*$/, "a".repeat(300))}.xml.bz2`;
    const dest = join(dir, fileNameOf(url));
    await download(url, dest, { retryDelayMs: 10 });
    expect(Buffer.compare(readFileSync(dest), DUMP)).toBe(0);
    expect(dest.endsWith(".xml.bz2")).toBe(true);
    expect(fileNameOf("http://mirror/a%2F..%2Fb/%00x")).toBe("%00x");
  });
});
