/**
 * examples/embedding-pipeline.ts (issue 45) for real: the export of a snapshot of
 * enwiki-2016-sample (300-word chunks) written by `snapshot:export`, loaded into LanceDB in
 * batches, then synced from a real server serving the same dump cut into 120-word chunks, whose
 * /v1/changes lists the pages to replace. Only the embedding is a stand-in:
 * deterministicHashEmbedding, hashed words.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import {
  batches,
  deterministicHashEmbedding,
  type Embed,
  loadExport,
  nearest,
  readExport,
  storedRows,
  syncChanges,
} from "../examples/embedding-pipeline";
import { openSnapshot } from "../src/snapshot";
import {
  EN_2016,
  NO_SEARCH_THREADS,
  newKey,
  ROOT,
  runToExit,
  snapshotFor,
  startServer,
  tempDir,
  type ServerProcess,
} from "./helpers";

setDefaultTimeout(180_000);

type Json = Record<string, any>;
const dir = tempDir("tome-pipeline-");
const db = join(dir, "vectors");
const exported = join(dir, "chunks.jsonl.gz");
let before: string;
let server: ServerProcess;
let key: string;
/** The stand-in embedding, counting the texts it is given per call. */
const calls: number[] = [];
const hashing = deterministicHashEmbedding(32);
const embed: Embed = (texts) => {
  calls.push(texts.length);
  return hashing(texts);
};

const rowsOf = async () => (await storedRows(db)) as Json[];
const PIPELINE = join(ROOT, "examples/embedding-pipeline.ts");
/** The example's command line, on the test's server. */
const pipeline = (args: string[], env: Record<string, string> = {}) =>
  runToExit(["bun", PIPELINE, ...args], { TOME_URL: server.url, TOME_API_KEY: key, ...env });

beforeAll(async () => {
  before = await snapshotFor({ dumps: [EN_2016] });
  const after = await snapshotFor({ dumps: [EN_2016], chunkWords: 120 });
  const data = tempDir("tome-data-");
  key = (await newKey(data, "--name", "pipeline", "--plan", "enterprise", "--scope", "full")).key;
  // Asked for /v1/changes, /v1/page and /v1/chunk, no search (D101): no search threads, each of which costs the
  // start about 1.2 CPU-s.
  server = await startServer({ TOME_SNAPSHOT: after, TOME_DATA: data, ...NO_SEARCH_THREADS });
  const r = await runToExit(
    ["bun", join(ROOT, "src/cli/snapshot-export.ts"), "--snapshot", before, "--out", exported],
    {},
  );
  expect(r.code).toBe(0);
});

afterAll(async () => {
  await server?.stop();
});

describe("examples/embedding-pipeline.ts", () => {
  test("batches: groups of the size asked, the last one shorter, nothing lost", async () => {
    const groups: number[][] = [];
    for await (const b of batches([1, 2, 3, 4, 5, 6, 7], 3)) groups.push(b);
    expect(groups).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  test("load: every chunk of the export in the store, embedded in batches, with its attribution", async () => {
    const snapshot = openSnapshot(before);
    const stored = await loadExport({ exportPath: exported, db, embed, batchSize: 100 });
    expect(stored).toBe(snapshot.meta.indexedChunks);
    expect(calls.slice(0, -1).every((n) => n === 100)).toBe(true);
    expect(calls.reduce((a, b) => a + b, 0)).toBe(stored);
    const rows = await rowsOf();
    expect(rows.length).toBe(stored);
    expect(new Set(rows.map((r) => r.id)).size).toBe(stored);
    const first: Json[] = [];
    for await (const c of readExport(exported)) if (first.push(c) === 3) break;
    for (const c of first) {
      const row = rows.find((r) => r.id === c.id)!;
      expect(row).toMatchObject({
        page_id: c.page_id,
        chunk_id: c.chunk_id,
        rev_id: c.rev_id,
        title: c.title,
        section: c.section,
        text: c.text,
        url: c.url,
        permalink: c.source.permalink,
      });
      expect(row.license).toBe("CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/)");
      expect(row.modifications).toBe(c.modifications.join("; "));
      expect(Array.from(row.vector as Iterable<number>).length).toBe(32);
    }
  });

  test("readExport reads an export whose name ends .GZ or .Zst as snapshot:export wrote it, compressed", async () => {
    const upper = join(dir, "CHUNKS.JSONL.GZ");
    copyFileSync(exported, upper);
    let n = 0;
    for await (const chunk of readExport(upper)) if (chunk.id) n++;
    expect(n).toBe(openSnapshot(before).meta.indexedChunks);
  });

  test("nearest: a chunk's own text finds that chunk first (the store's vector search)", async () => {
    const rows = await rowsOf();
    const probe = rows[Math.floor(rows.length / 2)]!;
    const found = await nearest({
      db,
      embed,
      query: `${probe.section ? `${probe.title} — ${probe.section}` : probe.title}\n${probe.text}`,
      k: 3,
    });
    expect(found[0]!.id).toBe(probe.id);
  });

  test("sync: the pages /v1/changes lists since T get the server's chunks now; the others keep the export's", async () => {
    const headers = { authorization: `Bearer ${key}` };
    const all = (await (await fetch(`${server.url}/v1/changes?limit=1000`, { headers })).json()) as {
      results: { page_id: number; ts_unix: number }[];
    };
    const since = all.results[Math.floor(all.results.length / 2)]!.ts_unix;
    const listed = all.results.filter((p) => p.ts_unix >= since).map((p) => p.page_id);
    const untouched = all.results.filter((p) => p.ts_unix < since).map((p) => p.page_id);
    const old = await rowsOf();
    const synced = await syncChanges({ db, server: { url: server.url, apiKey: key }, embed, since, pageSize: 7 });
    expect(synced.pages).toBe(listed.length);
    expect(synced.since).toBe(Math.max(...all.results.map((p) => p.ts_unix)));
    const rows = await rowsOf();
    for (const pageId of listed.slice(0, 10)) {
      const page = (await (await fetch(`${server.url}/v1/page/${pageId}?max_chunks=1000`, { headers })).json()) as Json;
      const stored = rows.filter((r) => r.page_id === pageId).sort((a, b) => a.chunk_id - b.chunk_id);
      expect(stored.map((r) => [r.id, r.text])).toEqual(page.chunks.results.map((c: Json) => [c.id, c.text]));
    }
    for (const pageId of untouched.slice(0, 10)) {
      const keep = (list: Json[]) =>
        list
          .filter((r) => r.page_id === pageId)
          .map((r) => `${r.id} ${r.text}`)
          .sort();
      expect(keep(rows)).toEqual(keep(old));
    }
    // Chunks of 120 words: the synced pages hold more chunks than the export's 300-word ones.
    expect(rows.length).toBeGreaterThan(old.length);
    // Nothing changed since: nothing is fetched again, not even the pages of the newest second.
    const again = await syncChanges({ db, server: { url: server.url, apiKey: key }, embed });
    expect(again).toEqual({ pages: 0, chunks: 0, since: synced.since });
    expect((await rowsOf()).length).toBe(rows.length);
  });

  test("sync waits out a 429 or 503 with a short Retry-After (a free key's rate) and fails at once on a long one (a spent quota)", async () => {
    let requests = 0;
    let retryAfter = "0";
    // Every other request refused, as a key over its plan's rate is.
    const limited = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        if (requests++ % 2 === 0)
          return Response.json(
            { error: "rate_limit_exceeded", message: "Too many requests." },
            { status: requests % 4 === 1 ? 429 : 503, headers: { "retry-after": retryAfter } },
          );
        const { pathname, search } = new URL(req.url);
        const res = await fetch(server.url + pathname + search, { headers: req.headers });
        return new Response(await res.text(), { status: res.status, headers: { "content-type": "application/json" } });
      },
    });
    try {
      const small = join(dir, "limited-vectors");
      const few = join(dir, "few.jsonl");
      const lines: string[] = [];
      for await (const chunk of readExport(exported)) if (lines.push(JSON.stringify(chunk)) === 3) break;
      writeFileSync(few, `${lines.join("\n")}\n`);
      await loadExport({ exportPath: few, db: small, embed });
      const changes = (await (
        await fetch(`${server.url}/v1/changes?limit=1000`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as { results: { ts_unix: number }[] };
      const since = Math.max(...changes.results.map((p) => p.ts_unix));
      const through = await syncChanges({ db: small, server: { url: limited.url.href, apiKey: key }, embed, since });
      expect(requests).toBeGreaterThan(2);
      expect(through.pages).toBeGreaterThan(0);
      expect(through).toEqual(await syncChanges({ db: small, server: { url: server.url, apiKey: key }, embed, since }));
      retryAfter = "86400";
      requests = 0;
      const spent = syncChanges({ db: small, server: { url: limited.url.href, apiKey: key }, embed, since });
      expect(spent).rejects.toThrow("429, Too many requests.");
      await spent.catch(() => {});
      expect(requests).toBe(1);
    } finally {
      limited.stop(true);
    }
  });

  test("a load stopped part-way (killed, or its export cut short) leaves a store that sync and query refuse, saying to load again, where they took its part for the whole", async () => {
    const store = join(dir, "stopped-vectors");
    // Small: the export's first lines, where the whole English export was loaded twice.
    const lines = gunzipSync(readFileSync(exported)).toString().split("\n");
    const whole = join(dir, "three.jsonl");
    writeFileSync(whole, `${lines.slice(0, 3).join("\n")}\n`);
    expect(await loadExport({ exportPath: whole, db: store, embed, batchSize: 2 })).toBe(3);
    // A copy of 5 lines stopped in its 3rd: the load replaces the table, stores one batch of 2, then fails, as one
    // killed there (kill -9, the OOM killer) stops. The sync point of the load before stayed, so sync went on from it
    // ("synced 0 pages") and query answered from the 2 chunks stored.
    const cut = join(dir, "cut.jsonl");
    writeFileSync(cut, `${[lines[0], lines[1], lines[2]!.slice(0, 40), lines[3], lines[4]].join("\n")}\n`);
    await expect(loadExport({ exportPath: cut, db: store, embed, batchSize: 2 })).rejects.toThrow(`line 3 of ${cut}`);
    const refused = `the last load into ${store} did not finish (stopped, or its export not read to its end): the store holds part of an export. Load it again: load --export FILE --db ${store}`;
    await expect(syncChanges({ db: store, server: { url: server.url, apiKey: key }, embed })).rejects.toThrow(refused);
    await expect(nearest({ db: store, embed, query: "albedo" })).rejects.toThrow(refused);
    // Loaded again to its end: both answer.
    expect(await loadExport({ exportPath: whole, db: store, embed, batchSize: 2 })).toBe(3);
    expect(await nearest({ db: store, embed, query: "albedo" })).toHaveLength(3);
    await expect(syncChanges({ db: store, server: { url: server.url, apiKey: key }, embed })).resolves.toMatchObject({
      since: expect.any(Number),
    });
  });

  test("the command line: load then sync fetches nothing it holds; --since takes an RFC 3339 date-time, as its help says", async () => {
    const cli = join(dir, "cli-vectors");
    const loaded = await pipeline(["load", "--export", exported, "--db", cli]);
    expect({ code: loaded.code, stderr: loaded.stderr }).toEqual({ code: 0, stderr: "" });
    const synced = await pipeline(["sync", "--db", cli]);
    expect({ code: synced.code, stderr: synced.stderr }).toEqual({ code: 0, stderr: "" });
    expect(synced.stdout).toStartWith("synced 0 pages (0 chunks)");
    expect((await pipeline(["--help"])).stdout).toContain("2026-01-01T00:00:00Z");
    const later = await pipeline(["sync", "--db", cli, "--since", "2026-01-01T00:00:00Z"]);
    expect({ code: later.code, stdout: later.stdout, stderr: later.stderr }).toEqual({
      code: 0,
      stdout: `synced 0 pages (0 chunks); next sync from ${Date.parse("2026-01-01T00:00:00Z") / 1000}\n`,
      stderr: "",
    });
  });

  test("the command line's errors are one line each, saying what to do, never a stack trace", async () => {
    const cli = join(dir, "cli-vectors");
    // An export compressed by a tool it does not read: its bytes are no JSON.
    const bzip2ed = join(dir, "chunks.jsonl.bz2");
    writeFileSync(bzip2ed, "BZh91AY&SY\u0000\u0001binary");
    const cases: [string[], Record<string, string>, number, string][] = [
      [["sync", "--db", cli, "--since", "yesterday"], {}, 2, "--since takes Unix seconds or an RFC 3339 date-time"],
      [["sync", "--db", cli], { TOME_API_KEY: "" }, 2, "sync needs the server's key in TOME_API_KEY"],
      [["sync", "--db", cli], { TOME_URL: "http://127.0.0.1:9" }, 1, "cannot reach http://127.0.0.1:9"],
      [["sync", "--db", cli], { TOME_API_KEY: "wk_00000000000000000000000000000000" }, 1, "GET /v1/changes"],
      [["query", "--db", join(dir, "nowhere"), "albedo"], {}, 1, "no store at"],
      [["load", "--export", join(dir, "missing.jsonl"), "--db", cli], {}, 1, "no export at"],
      [
        ["load", "--export", dir, "--db", cli],
        {},
        1,
        `${dir} is a folder, not an export: name the file snapshot:export wrote in it (e.g. chunks.jsonl.zst).`,
      ],
      [["load", "--bogus", "--db", cli], {}, 2, "embedding-pipeline: "],
      [
        ["load", "--export", bzip2ed, "--db", cli],
        {},
        1,
        `line 1 of ${bzip2ed} is not JSON: give the file snapshot:export`,
      ],
    ];
    for (const [args, env, code, message] of cases) {
      const r = await pipeline(args, env);
      expect({ args, code: r.code }).toEqual({ args, code });
      expect({ args, lines: r.stderr.trim().split("\n").length }).toEqual({ args, lines: 1 });
      expect(r.stderr).toStartWith("embedding-pipeline: ");
      expect(r.stderr).toContain(message);
    }
    // A mistyped --db leaves no empty folder behind for the next command to take as a store.
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
  });

  test(".gitignore keeps the README's export and store out of git", () => {
    const ignored = Bun.spawnSync(["git", "check-ignore", "chunks.jsonl.zst", "vectors/chunks.lance"], { cwd: ROOT });
    expect(ignored.stdout.toString().trim().split("\n")).toEqual(["chunks.jsonl.zst", "vectors/chunks.lance"]);
  });
});
