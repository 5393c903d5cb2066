/**
 * snapshot:follow's reading of an HTTP mirror (httpPlace, src/build/follow.ts) against a hostile or
 * broken one: a local server whose listing never ends, stalls, or names files outside the layout.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { httpPlace } from "../src/build/follow";
import { ROOT as REPO, runToExit, tempDir } from "./helpers";

/** What the mirror answers for the wiki's listing, by the test. */
let listing: () => Response = () => new Response("");

const mirror = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/enwiki/") return listing();
    if (path.endsWith("/status.txt")) return new Response("done");
    if (path === "/elsewhere/enwiki/")
      return new Response(null, { status: 302, headers: { location: "file:///etc/" } });
    return new Response("not here", { status: 404 });
  },
});
const ROOT = `http://127.0.0.1:${mirror.port}`;

afterAll(() => mirror.stop(true));

describe("follow from a hostile mirror", () => {
  test("a listing that never ends stops at its bound, saying so", async () => {
    listing = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull: (ctl) => ctl.enqueue(new TextEncoder().encode('<a href="20160501/">20160501/</a>\n'.repeat(1000))),
        }),
      );
    const err = await httpPlace(ROOT)
      .days("enwiki")
      .catch((e: Error) => e);
    expect((err as Error).message).toStartWith(`${ROOT}/enwiki/ is longer than 1048576 bytes: is ${ROOT} a mirror of`);
  });

  test("a listing that stalls halfway fails at its time, saying so", async () => {
    listing = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start: (ctl) => ctl.enqueue(new TextEncoder().encode('<a href="20160501/">')),
          pull: () => new Promise(() => {}),
        }),
      );
    const err = await httpPlace(ROOT, fetch, 300)
      .days("enwiki")
      .catch((e: Error) => e);
    expect((err as Error).message).toStartWith(`${ROOT}/enwiki/ did not end within 0.3 s: is ${ROOT} a mirror of`);
  });

  test("names in the listing other than days (../, absolute, %2F, NUL, very long) are not taken", async () => {
    const hostile = ["../", "/etc/", "..%2F..%2Fetc/", "2016\u00000501/", `${"9".repeat(5000)}/`, "20160501/../../x/"];
    listing = () => new Response([...hostile, "20160502/"].map((h) => `<a href="${h}">${h}</a>`).join("\n"));
    const place = httpPlace(ROOT);
    expect(await place.days("enwiki")).toEqual({ done: ["20160502"], unfinished: [] });
    expect(place.dump("enwiki", "20160502")).toBe(
      `${ROOT}/enwiki/20160502/enwiki-20160502-pages-meta-hist-incr.xml.bz2`,
    );
  });

  test("a redirect to another scheme (file://) is not followed (D158)", async () => {
    const err = await httpPlace(`${ROOT}/elsewhere`)
      .days("enwiki")
      .catch((e: Error) => e);
    expect((err as Error).message).toContain(`cannot reach ${ROOT}/elsewhere/enwiki/: UnsupportedRedirectProtocol`);
  });

  test("a 200 with an error page instead of the listing is an error, not 'up to date' (D158)", async () => {
    listing = () =>
      new Response("<html><body>Mirror under maintenance</body></html>", { headers: { "content-type": "text/html" } });
    const err = await httpPlace(ROOT)
      .days("enwiki")
      .catch((e: Error) => e);
    expect((err as Error).message).toStartWith(
      `${ROOT}/enwiki/ lists no day (no link to a <YYYYMMDD>/ folder): is ${ROOT}`,
    );
  });

  test("--url of another scheme (file://) is refused at once, pointing to --from", async () => {
    const r = await runToExit(
      ["bun", join(REPO, "src/cli/snapshot-follow.ts"), "--dir", tempDir(), "--url", "file:///srv/incr"],
      {},
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      '--url takes an http(s) address, not "file:///srv/incr": for a folder on this machine use --from <dir>.',
    );
  });
});
