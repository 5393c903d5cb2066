/**
 * README.md says what is true: its API examples answer as written, on the real server over the
 * sample it serves first, and the routes its feature list names do what it says (an article by
 * page id, by title through /v1/lucky: /v1/page takes no title, api.md's page_id is an integer).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
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
  test("its word that Node.js cannot load the library holds, naming no error of one Node version (20 says ERR_UNKNOWN_FILE_EXTENSION; newer Node strips the types and fails later, on bun:ffi)", () => {
    expect(README).toContain("Node cannot load it (it needs Bun");
    expect(README).not.toMatch(/\bERR_[A-Z_]+/);
    const node = Bun.which("node");
    if (!node) return;
    const entry = JSON.stringify(join(ROOT, "src/search/index.ts"));
    const run = Bun.spawnSync([node, "--input-type=module", "-e", `await import(${entry})`], { stderr: "pipe" });
    expect(run.exitCode).not.toBe(0);
  });

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

  test("the snapshot commands of 'Building and updating snapshots' read only files that are there: the repository's, or one an earlier line writes", () => {
    const section = README.slice(README.indexOf("## Building and updating snapshots"));
    const block = section.slice(section.indexOf("```sh\n") + 6, section.indexOf("\n```", section.indexOf("```sh\n")));
    const written = new Set<string>();
    const read: string[] = [];
    // A line continued with "\" is one command; [--option value] is optional and not read here.
    for (const command of block.replace(/\\\n\s*/g, " ").split("\n")) {
      const given = command.replace(/\[[^\]]*\]/g, "").replace(/#.*$/, "");
      for (const [, option, path] of given.matchAll(/--(dump|base|out) (\S+)/g)) {
        if (option === "out") written.add(path!);
        else read.push(path!);
      }
    }
    expect(read.length).toBeGreaterThanOrEqual(3);
    // The update named enwiki-20261122-pages-meta-hist-incr.xml.bz2, a file nowhere: run as written, it said "dump not found".
    const missing = read.filter(
      (path) => !written.has(path) && !/^https?:/.test(path) && !existsSync(join(ROOT, path)),
    );
    expect(missing).toEqual([]);
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
