/**
 * README.md says what is true: its API examples answer as written, on the real server over the
 * sample it serves first, and the routes its feature list names do what it says (an article by
 * page id, by title through /v1/lucky: /v1/page takes no title, api.md's page_id is an integer).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EN_2016, ROOT, type ServerProcess, snapshotFor, startServer } from "./helpers";

setDefaultTimeout(120_000);

const README = readFileSync(join(ROOT, "README.md"), "utf8");
let server: ServerProcess;

beforeAll(async () => {
  server = await startServer({ TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2016] }) });
});

afterAll(async () => {
  await server?.stop();
});

const get = (path: string) => fetch(`${server.url}${path}`, { headers: { "X-API-Key": server.key! } });

describe("README.md", () => {
  test("every curl of 'Using the API' answers 200, with the key sent as it shows", async () => {
    const section = README.slice(README.indexOf("## Using the API"), README.indexOf("The reference is generated"));
    const calls = [...section.matchAll(/^curl -H "([^:]+): ([^"]+)"(?: -o \S+)? '([^']+)'/gm)];
    expect(calls.length).toBe(9);
    for (const [, header, value, url] of calls) {
      const path = url!.replace("http://localhost:8080", "");
      const res = await fetch(`${server.url}${path}`, { headers: { [header!]: value!.replace("$KEY", server.key!) } });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
  });

  test("each search of 'Using the API' finds hits on the sample, its next page (offset) too: an empty page reads as paging broken", async () => {
    const section = README.slice(README.indexOf("## Using the API"), README.indexOf("The reference is generated"));
    const searches = [...section.matchAll(/'http:\/\/localhost:8080(\/v1\/search\?[^']+)'/g)].map((m) => m[1]!);
    expect(searches.some((path) => path.includes("offset="))).toBe(true);
    for (const path of searches) {
      const { hits } = (await (await get(path)).json()) as { hits: unknown[] };
      expect({ path, found: hits.length > 0 }).toEqual({ path, found: true });
    }
  });

  test("the routes its feature list names answer; an article is found by title through /v1/lucky, not /v1/page", async () => {
    const line = README.slice(
      README.indexOf("- **Pages, chunks, changes, lucky**"),
      README.indexOf("- **One file per wiki**"),
    );
    const paths = [...line.matchAll(/`(\/v1\/[^`]+)`/g)].map((m) => m[1]!);
    expect(paths.length).toBe(4);
    for (const path of paths) expect({ path, status: (await get(path)).status }).toEqual({ path, status: 200 });
    expect(paths).toContain("/v1/lucky?q=Albedo");
    const lucky = (await (await get("/v1/lucky?q=Albedo")).json()) as { page: { title: string } };
    expect(lucky.page.title).toBe("Albedo");
    const byTitle = await get("/v1/page/Albedo");
    expect({ status: byTitle.status, error: ((await byTitle.json()) as { error: string }).error }).toEqual({
      status: 400,
      error: "page_id must be an integer",
    });
  });
});
