/**
 * The executable (bun run compile, issue 45): built here, copied alone into an empty folder and
 * run with a PATH that holds no Bun (only the bzip2 the dump needs), it builds a snapshot from a
 * real dump, creates a key, serves the API, its docs and a PDF, and exports every chunk.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, zstdDecompressSync } from "node:zlib";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { compile } from "../src/cli/compile";
import { EN_2016, ROOT, runToExit, type ServerProcess, spawnServer, tempDir } from "./helpers";
import { startRedis } from "../bench/redis-server";

setDefaultTimeout(180_000);

const home = tempDir("tome-executable-");
const folder = join(home, "empty");
const bin = join(home, "bin");
const tome = join(folder, "tome");
/** No Bun, no node_modules: the folder, and a PATH of the dump's decompressor only. */
const env = {
  PATH: bin,
  TOME_SNAPSHOT: "",
  TOME_DUMP: "",
  TOME_DATA: "",
  TOME_REDIS_URL: "",
  TOME_AUTH: "",
  // The work share counts wall time, which a busy machine (CI) inflates into 429s (as test/helpers.ts says).
  TOME_KEY_MS_PER_SECOND: "0",
  HOST: "127.0.0.1",
};
const run = (...args: string[]) => runToExit([tome, ...args], env, folder);

let server: ServerProcess;
let key: string;
let chunks: number;

beforeAll(async () => {
  const built = join(home, "dist/tome");
  await compile(built);
  mkdirSync(folder);
  mkdirSync(bin);
  copyFileSync(built, tome);
  Bun.spawnSync(["chmod", "+x", tome]);
  symlinkSync(Bun.which("bzip2")!, join(bin, "bzip2"));
});

afterAll(async () => {
  await server?.stop();
});

const get = (path: string, auth = true) =>
  fetch(`${server.url}${path}`, { headers: auth ? { authorization: `Bearer ${key}` } : {} });

describe("dist/tome, alone in an empty folder with no Bun on PATH", () => {
  test("the folder holds the executable only, and its PATH finds no bun", () => {
    expect(readdirSync(folder)).toEqual(["tome"]);
    const which = Bun.spawnSync(["/bin/sh", "-c", "command -v bun"], { env });
    expect(which.exitCode).not.toBe(0);
  });

  test("--help lists every command", async () => {
    const r = await run("--help");
    expect(r.code).toBe(0);
    for (const name of [
      "start",
      "snapshot:build",
      "snapshot:update",
      "snapshot:follow",
      "snapshot:verify",
      "snapshot:export",
      "keys",
      "mcp",
    ]) {
      expect(r.stdout).toContain(`  ${name} `);
      const help = await run(name, "--help");
      expect({ name, code: help.code }).toEqual({ name, code: 0 });
      // Each names itself as it is run here (D86), never as a checkout's script.
      expect(help.stdout).toStartWith(`Usage: tome ${name}`);
      expect({ name, checkout: /bun run|npm start/.exec(help.stdout)?.[0] }).toEqual({ name, checkout: undefined });
    }
    const keysHelp = await run("keys", "create", "--help");
    expect(keysHelp.stdout).toStartWith("Usage: tome keys create");
    const wrong = await run("snapshot:verify");
    expect(wrong.stderr).toContain("Run `tome snapshot:verify --help` for usage.");
    const unknown = await run("serve");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "serve"');
  });

  test("snapshot:build from a real dump (its parsing, run-sorting and text-compressing workers inside), then snapshot:verify", async () => {
    // --memory 1M: the index spills runs, which the sorting worker (search/indexer/run-worker.ts) writes; the
    // sample's 3 MB of text take a dictionary, with which the compressor threads (snapshot/compress-worker.ts) compress.
    const r = await run("snapshot:build", "--dump", EN_2016, "--out", "snapshots/en.tome", "--memory", "1M");
    const said = r.stdout + r.stderr;
    expect(said).toContain("wrote snapshots/en.tome: 106 pages");
    expect(r.code).toBe(0);
    chunks = Number(/106 pages, (\d+) chunks/.exec(said)![1]);
    expect(Number(/(\d+) index run\(s\)/.exec(said)![1])).toBeGreaterThan(1);
    const verified = await run("snapshot:verify", "snapshots/en.tome");
    expect(verified.code).toBe(0);
  });

  test("keys create, then start serves the snapshot with that key", async () => {
    const r = await run("keys", "create", "--name", "ci", "--plan", "enterprise", "--scope", "full", "--json");
    expect(r.code).toBe(0);
    key = JSON.parse(r.stdout).key;
    server = await spawnServer([tome, "start"], env, { cwd: folder });
    expect(server.stderr()).toContain("Loaded snapshots/en.tome: en.wikipedia.org, 106 pages");
    expect(server.stderr()).toContain("make one with: tome keys create --name NAME --plan enterprise --scope full");
    expect(server.stderr()).not.toContain("bun run");
  });

  test("start with no snapshot builds the sample into snapshots/, and its banner and key line say tome", async () => {
    const fresh = join(home, "fresh");
    mkdirSync(fresh);
    const first = await spawnServer([tome, "start"], env, { cwd: fresh });
    try {
      const said = first.stderr();
      expect(said).toContain("This is a SAMPLE");
      expect(said).toContain("TOME_DUMP=simple tome start");
      expect(said).toContain("Make another with: tome keys create --name NAME --plan enterprise --scope full.");
      expect(said).not.toContain("bun run");
      expect(said).not.toContain("npm start");
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(readdirSync(join(fresh, "snapshots"))).toEqual(["enwiki-2016-sample.tome"]);
  });

  test("search needs the key, and finds", async () => {
    expect((await get("/v1/search?q=anarchism", false)).status).toBe(401);
    const res = await get("/v1/search?q=anarchism&limit=3&show_ranking_score=true");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { hits: { title: string; _rankingScore: number }[] };
    expect(body.hits[0]!.title).toBe("Anarchism");
    expect(body.hits[0]!._rankingScore).toBeGreaterThan(0);
  });

  test("the docs and Swagger UI's files come from inside the executable", async () => {
    expect((await get("/docs", false)).status).toBe(200);
    const page = await (await get("/docs", false)).text();
    const assets = [...page.matchAll(/(?:src|href)="\/docs\/assets\/([^"?]+)/g)].map((m) => m[1]!);
    expect(assets.length).toBe(3);
    for (const name of assets) {
      const res = await get(`/docs/assets/${name}`, false);
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      const same = Buffer.from(await res.arrayBuffer()).equals(
        readFileSync(join(ROOT, "node_modules/swagger-ui-dist", name)),
      );
      expect({ name, same }).toEqual({ name, same: true });
    }
    const doc = (await (await get("/v1/openapi.json", false)).json()) as { openapi: string };
    expect(doc.openapi).toStartWith("3.");
  });

  test("the dashboard's CSS, script and icon come from inside the executable", async () => {
    for (const name of ["dashboard.css", "dashboard.js", "icon.svg"]) {
      const res = await get(`/dashboard/${name}`, false);
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
      expect(await res.text()).toBe(readFileSync(join(ROOT, "src/http/dashboard", name), "utf8"));
    }
  });

  test("a PDF, drawn by the PDF worker with the fonts inside the executable", async () => {
    const res = await get("/v1/pdf/12");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe("%PDF-");
    expect(bytes.length).toBeGreaterThan(20_000);
  });

  test("mcp answers an MCP client over stdio on the snapshot", async () => {
    const client = new Client({ name: "test", version: "1" });
    await client.connect(
      new StdioClientTransport({
        command: tome,
        args: ["mcp"],
        cwd: folder,
        env: { ...env, TOME_SNAPSHOT: "snapshots/en.tome" },
        stderr: "ignore",
      }),
    );
    try {
      const result = (await client.callTool({
        name: "search",
        arguments: { q: "anarchism", limit: 1 },
      })) as unknown as { structuredContent: { hits: { title: string }[] } };
      expect(result.structuredContent.hits[0]!.title).toBe("Anarchism");
    } finally {
      await client.close();
    }
  });

  test("snapshot:export writes every chunk once, in page then chunk order, each what /v1/chunk/{id} answers", async () => {
    const r = await run("snapshot:export", "--snapshot", "snapshots/en.tome", "--out", "all.jsonl.zst");
    expect(r.code).toBe(0);
    const lines = zstdDecompressSync(readFileSync(join(folder, "all.jsonl.zst")))
      .toString()
      .trimEnd()
      .split("\n");
    const rows = lines.map((line) => JSON.parse(line) as Record<string, any>);
    expect(rows.length).toBe(chunks);
    expect(new Set(rows.map((c) => c.id)).size).toBe(chunks);
    for (let i = 1; i < rows.length; i++) {
      const [a, b] = [rows[i - 1]!, rows[i]!];
      const inOrder =
        a.page_id < b.page_id ? b.chunk_id === 0 : a.page_id === b.page_id && b.chunk_id === a.chunk_id + 1;
      expect({ after: a.id, id: b.id, inOrder }).toEqual({ after: a.id, id: b.id, inOrder: true });
    }
    expect(Object.keys(rows[0]!)).toEqual([
      "id",
      "page_id",
      "rev_id",
      "title",
      "section",
      "text",
      "chunk_id",
      "url",
      "source",
      "timestamp",
      "license",
      "modified",
      "modifications",
    ]);
    // A sample spread over the whole export, compared field by field with the API's answer.
    for (let i = 0; i < rows.length; i += Math.floor(rows.length / 25)) {
      const res = await get(`/v1/chunk/${rows[i]!.id}`);
      expect(res.status).toBe(200);
      expect(rows[i]).toEqual((await res.json()) as Record<string, any>);
    }
  });

  test("snapshot:export --since has the pages /v1/changes lists for it; - writes to stdout, .gz is gzip", async () => {
    const all = (await (await get("/v1/changes?limit=1000")).json()) as {
      results: { page_id: number; ts_unix: number }[];
    };
    const times = all.results.map((p) => p.ts_unix);
    const since = times[Math.floor(times.length / 2)]!;
    const changed = (await (await get(`/v1/changes?since=${since}&limit=1000`)).json()) as {
      results: { page_id: number }[];
      total: number;
    };
    const iso = new Date(since * 1000).toISOString().replace(".000Z", "Z");
    const r = await run(
      "snapshot:export",
      "--snapshot",
      "snapshots/en.tome",
      "--since",
      iso,
      "--out",
      "changed.jsonl.gz",
    );
    expect(r.code).toBe(0);
    const rows = gunzipSync(readFileSync(join(folder, "changed.jsonl.gz")))
      .toString()
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { page_id: number });
    const pages = [...new Set(rows.map((c) => c.page_id))].sort((a, b) => a - b);
    expect(pages).toEqual(changed.results.map((p) => p.page_id).sort((a, b) => a - b));
    expect(pages.length).toBe(changed.total);
    const stdout = await run("snapshot:export", "--snapshot", "snapshots/en.tome", "--since", String(since));
    expect(stdout.code).toBe(0);
    expect(stdout.stdout.trimEnd().split("\n").length).toBe(rows.length);
    const wrong = await run("snapshot:export", "--snapshot", "snapshots/en.tome", "--since", "yesterday");
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(
      '--since takes Unix seconds or an RFC 3339 date-time with a zone (2026-01-01T00:00:00Z), not "yesterday"',
    );
    const nowhere = await run("snapshot:export", "--snapshot", "snapshots/en.tome", "--out", "missing/all.jsonl");
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr.split("\n")[0]).toBe("snapshot:export: no folder missing/ to write all.jsonl in.");
    const none = await run("snapshot:export", "--snapshot", "nope.tome");
    expect(none.code).toBe(1);
    expect(none.stderr).toStartWith("snapshot:export: snapshot not found: nope.tome.");
  });
});

type Service = {
  command?: string[];
  environment?: Record<string, string>;
  build?: { context: string; dockerfile: string };
  volumes?: string[];
  depends_on?: string[];
};

describe("deploy/Dockerfile and deploy/compose.executable.yaml, their steps run with the executable directly (no container runtime here)", () => {
  const dockerfile = readFileSync(join(ROOT, "deploy/Dockerfile"), "utf8");
  const compose = Bun.YAML.parse(readFileSync(join(ROOT, "deploy/compose.executable.yaml"), "utf8")) as {
    services: Record<string, Service>;
  };
  const replicas = Object.entries(compose.services).filter(([, s]) => s.command?.[0] === "start");
  /** The image's environment (its ENV line), as a replica starts with it. */
  const imageEnv = Object.fromEntries(
    [.../^ENV (.+)$/m.exec(dockerfile)![1]!.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]),
  );

  test("the image holds the executable alone, run as tome <command>, start by default", () => {
    expect(dockerfile.match(/^COPY .+$/gm)).toEqual(["COPY --chmod=755 tome /usr/local/bin/tome"]);
    expect(dockerfile).toContain('ENTRYPOINT ["tome"]');
    expect(dockerfile).toContain('CMD ["start"]');
    expect(imageEnv).toMatchObject({ HOST: "0.0.0.0", PORT: "8080" });
    expect(replicas.length).toBe(2);
    for (const [, s] of replicas) {
      expect(s.build).toEqual({ context: "../dist", dockerfile: "../deploy/Dockerfile" });
      expect(s.environment!.TOME_REDIS_URL).toBe("redis://redis:6379");
      expect(s.volumes).toEqual(["./snapshots:/srv/tome/snapshots"]);
      expect(s.depends_on).toEqual(["redis"]);
    }
    expect(compose.services.redis!.command!.join(" ")).toContain("--appendonly yes --appendfsync everysec");
  });

  test("two replicas on one Redis, from a folder holding the executable and snapshots/: a key made once opens both", async () => {
    const redis = await startRedis();
    const workdir = join(home, "srv-tome");
    mkdirSync(join(workdir, "snapshots"), { recursive: true });
    copyFileSync(tome, join(workdir, "tome"));
    Bun.spawnSync(["chmod", "+x", join(workdir, "tome")]);
    cpSync(join(folder, "snapshots/en.tome"), join(workdir, "snapshots/en.tome"));
    // The compose file's environment on the image's, with Redis where the test runs it and a free port each.
    const envOf = (s: Service) => ({
      ...env,
      ...imageEnv,
      ...s.environment,
      TOME_REDIS_URL: redis.url,
      HOST: "127.0.0.1",
      PORT: "0",
      TOME_DATA: join(workdir, "data"),
    });
    const started: ServerProcess[] = [];
    try {
      for (const [, s] of replicas)
        started.push(await spawnServer([join(workdir, "tome"), ...s.command!], envOf(s), { cwd: workdir }));
      const made = await runToExit(
        [
          join(workdir, "tome"),
          "keys",
          "create",
          "--name",
          "compose",
          "--plan",
          "enterprise",
          "--scope",
          "full",
          "--json",
        ],
        envOf(compose.services.tome!),
        workdir,
      );
      expect(made.code).toBe(0);
      const shared = JSON.parse(made.stdout).key as string;
      for (const replica of started) {
        expect(replica.stderr()).toContain("Loaded snapshots/en.tome");
        expect((await fetch(`${replica.url}/v1/search?q=albedo`)).status).toBe(401);
        const res = await fetch(`${replica.url}/v1/search?q=albedo`, {
          headers: { authorization: `Bearer ${shared}` },
        });
        expect(res.status).toBe(200);
      }
    } finally {
      for (const replica of started) await replica.stop();
      await redis.stop();
    }
  });
});
