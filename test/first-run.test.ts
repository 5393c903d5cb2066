/**
 * A clone stands alone (D60, docs/decisions/): its data lookup finds the fixtures it carries when nothing
 * is beside it, the fixtures are the shared data byte for byte, and `npm start` with nothing set
 * serves the sample at once, or downloads and builds the dump TOME_DUMP names.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT, SQUAD, startServer, tempDir } from "./helpers";

setDefaultTimeout(120_000);

const FIXTURES = join(ROOT, "test/fixtures");

describe("a clone with nothing beside it", () => {
  test("finds its data in test/fixtures/data, which holds every dump and question set", () => {
    const clone = join(tempDir("tome-clone-"), "tome");
    const cloned = Bun.spawnSync(["git", "clone", "--quiet", ROOT, clone], { stderr: "pipe" });
    expect(cloned.stderr.toString()).toBe("");
    expect(existsSync(join(dirname(clone), "shared"))).toBe(false);
    const env: Record<string, string | undefined> = { ...process.env };
    delete env.TOME_SHARED_DATA;
    const found = Bun.spawnSync(["bun", join(clone, "src/cli/shared-data.ts")], { cwd: clone, env, stderr: "pipe" });
    expect(found.stderr.toString()).toBe("");
    expect(found.stdout.toString().trim()).toBe(join(clone, "test/fixtures/data"));
    const names = (dir: string) => readdirSync(join(clone, "test/fixtures", dir)).sort();
    expect(names("data/dumps")).toEqual(readdirSync(join(FIXTURES, "data/dumps")).sort());
    expect(names("data/eval")).toEqual(["enwiki-dev-qrels.tsv", "squad-dev-questions.jsonl"]);
    expect(names("spec")).toEqual(["api.md", "decisions.md"]);
    expect(existsSync(join(clone, "test/fixtures/NOTICE.md"))).toBe(true);
  });

  const shared = join(dirname(ROOT), "shared");
  test.skipIf(!existsSync(shared))("the fixtures are the files of ../shared beside the checkout, byte for byte", () => {
    for (const dir of ["data/dumps", "data/eval", "spec"]) {
      const ours = readdirSync(join(FIXTURES, dir)).sort();
      expect({ dir, files: ours }).toEqual({ dir, files: readdirSync(join(shared, dir)).sort() });
      for (const name of ours) {
        const same = readFileSync(join(FIXTURES, dir, name)).equals(readFileSync(join(shared, dir, name)));
        expect({ file: `${dir}/${name}`, same }).toEqual({ file: `${dir}/${name}`, same: true });
      }
    }
  });
});

describe("npm start with no snapshot", () => {
  test("with nothing set, serves the sample at once, says so, and removes it when stopped", async () => {
    const cwd = tempDir();
    const started = performance.now();
    const server = await startServer({
      CWD: cwd,
      TOME_SNAPSHOT: "",
      TOME_DUMP: "",
      HOST: "127.0.0.1",
      TOME_AUTH: "off",
    });
    const seconds = (performance.now() - started) / 1000;
    let sample: string | undefined;
    try {
      expect(seconds).toBeLessThan(60);
      const err = server.stderr();
      expect(err).toContain("no TOME_DUMP: building the sample that ships with Tome");
      expect(err).toContain("This is a SAMPLE: 106 articles of English Wikipedia (2016)");
      expect(err).toContain("TOME_DUMP=simple npm start");
      expect(err).toContain("TOME_DUMP=en npm start");
      sample = /Loaded (\S+): en\.wikipedia\.org, 106 pages/.exec(err)?.[1];
      expect(sample).toBeDefined();
      // Nothing was written where it runs: snapshots/ stays for the real corpus.
      expect(existsSync(join(cwd, "snapshots"))).toBe(false);
      const search = (await (await fetch(`${server.url}/v1/search?q=albedo&limit=3`)).json()) as {
        hits: { title: string }[];
      };
      expect(search.hits.map((h) => h.title)).toContain("Albedo");
      // Search, page, PDF and docs: what issue 49 asks of a first run.
      const page = await fetch(`${server.url}/v1/page/39`);
      expect({ status: page.status, title: ((await page.json()) as { page: { title: string } }).page.title }).toEqual({
        status: 200,
        title: "Albedo",
      });
      const pdf = await fetch(`${server.url}/v1/pdf/39`);
      expect({ status: pdf.status, type: pdf.headers.get("content-type") }).toEqual({
        status: 200,
        type: "application/pdf",
      });
      expect(new TextDecoder().decode((await pdf.arrayBuffer()).slice(0, 5))).toBe("%PDF-");
      const docs = await fetch(`${server.url}/docs`);
      expect(docs.status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(existsSync(dirname(sample!))).toBe(false);
  });

  const dumpBytes = readFileSync(SQUAD);
  const http = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response(dumpBytes, { headers: { etag: '"squad"' } }),
  });
  afterAll(() => http.stop(true));

  test("TOME_DUMP as a URL is downloaded into dumps/ and kept, then built and served", async () => {
    const cwd = tempDir();
    const url = `http://127.0.0.1:${http.port}/squad-dev-articles.xml.bz2`;
    const server = await startServer({ CWD: cwd, TOME_SNAPSHOT: "", TOME_DUMP: url, HOST: "127.0.0.1" });
    try {
      const err = server.stderr();
      expect(err).toContain(`downloading ${url} into dumps/squad-dev-articles.xml.bz2`);
      expect(readFileSync(join(cwd, "dumps/squad-dev-articles.xml.bz2")).equals(dumpBytes)).toBe(true);
      expect(err).toContain("Loaded snapshots/enwiki.tome: en.wikipedia.org, 48 pages");
      expect(err).not.toContain("SAMPLE");
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
