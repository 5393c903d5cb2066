import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { open } from "../src/search";
import { readSnapshot } from "../src/snapshot";
import { EN_2006_TRUNCATED, SQUAD, startServer, tempDir } from "./helpers";

// Per file (bun applies it to the current file only): these tests build snapshots from the real dumps.
setDefaultTimeout(120_000);

const ROOT = resolve(import.meta.dir, "..");

async function run(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(["bun", "run", ...args], {
    cwd: env.CWD ?? ROOT,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

const BUILD = join(ROOT, "src/cli/snapshot-build.ts");

describe("bun run snapshot:build", () => {
  test("--help explains every option", async () => {
    const { stdout, code } = await run([BUILD, "--help"]);
    expect(code).toBe(0);
    for (const opt of ["--dump", "--out", "--limit", "--chunk-words", "--allow-truncated"]) expect(stdout).toContain(opt);
  });

  test("builds a snapshot and reports what it wrote", async () => {
    const out = join(tempDir(), "squad.tome");
    const { stderr, code } = await run([BUILD, "--dump", SQUAD, "--out", out, "--limit", "10"]);
    expect(code).toBe(0);
    expect(stderr).toContain(`wrote ${out}: 10 pages`);
    expect((await readSnapshot(out)).pages.length).toBe(10);
    // The search indexes are built now and kept beside it, so the server boots by decoding them.
    expect(stderr).toContain("search indexes in");
    const logs: string[] = [];
    await open(out, { log: (l) => logs.push(l) });
    expect(logs).toEqual([]);
    const bare = join(tempDir(), "bare.tome");
    expect((await run([BUILD, "--dump", SQUAD, "--out", bare, "--limit", "3", "--no-index"])).code).toBe(0);
    expect(existsSync(`${bare}.idx`)).toBe(false);
  });

  test("a truncated dump fails with the place of the damage and writes nothing", async () => {
    const dir = tempDir();
    const out = join(dir, "t.tome");
    const { stderr, code } = await run([BUILD, "--dump", EN_2006_TRUNCATED, "--out", out]);
    expect(code).toBe(1);
    expect(stderr).toContain("truncated or corrupt at line");
    expect(stderr).toContain("No snapshot was written");
    expect(stderr).not.toContain("    at "); // no stack trace
    expect(readdirSync(dir)).toEqual([]);
    const ok = await run([BUILD, "--dump", EN_2006_TRUNCATED, "--out", out, "--allow-truncated"]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain("TRUNCATED");
    expect((await readSnapshot(out)).meta.truncated).toBe(true);
  });

  test("bad arguments get a usage error, exit 2", async () => {
    for (const args of [[], ["--dump", SQUAD, "--limit", "ten"], ["--dump", SQUAD, "--chunk-words", "0"], ["--bogus"]]) {
      const { stderr, code } = await run([BUILD, ...args]);
      expect(code).toBe(2);
      expect(stderr).toContain("--help");
    }
  });

  test("a missing dump says so, exit 1", async () => {
    const { stderr, code } = await run([BUILD, "--dump", "/nonexistent.xml.bz2", "--out", join(tempDir(), "x.tome")]);
    expect(code).toBe(1);
    expect(stderr).toContain("dump not found: /nonexistent.xml.bz2");
  });
});

describe("bun run start", () => {
  test("builds a snapshot from TOME_DUMP when there is none, then serves it", async () => {
    const cwd = tempDir();
    const server = await startServer({ CWD: cwd, TOME_DUMP: SQUAD, TOME_SNAPSHOT: "" });
    try {
      expect(server.stderr()).toContain(`No snapshot in snapshots/: building one from ${SQUAD}`);
      expect(existsSync(join(cwd, "snapshots", "enwiki.tome"))).toBe(true);
      expect(server.stderr()).toContain("Loaded snapshots/enwiki.tome: en.wikipedia.org, 48 pages");
      // Its first start also made the first key, and printed it.
      expect(server.key).toMatch(/^wk_/);
      const meta = (await (await fetch(`${server.url}/v1/meta`, { headers: { "X-API-Key": server.key! } })).json()) as { dataset: { indexed_pages: number } };
      expect(meta.dataset.indexed_pages).toBe(48);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("an unreachable default dump gives a clear message", async () => {
    const cwd = tempDir();
    const { stderr, code } = await run([join(ROOT, "src/cli/start.ts")], { CWD: cwd, TOME_DUMP: "http://127.0.0.1:9/x.xml.bz2", TOME_SNAPSHOT: "" });
    expect(code).toBe(1);
    expect(stderr).toContain("cannot reach http://127.0.0.1:9/x.xml.bz2");
  });
});
