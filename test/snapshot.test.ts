import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_CHUNK_WORDS } from "../src/ingest";
import {
  decodeSnapshot,
  encodeSnapshot,
  fromIngest,
  latestSnapshot,
  readSnapshot,
  readSnapshotMeta,
  SnapshotError,
  writeSnapshot,
} from "../src/snapshot";
import { EN_2006_TRUNCATED, EN_2016, ingested, tempDir } from "./helpers";

// Per file (bun applies it to the current file only): these tests build snapshots from the real dumps.
setDefaultTimeout(120_000);

async function built() {
  return fromIngest(await ingested({ dumps: [EN_2016] }), DEFAULT_CHUNK_WORDS, new Date("2026-01-02T03:04:05Z"));
}

describe("snapshot file", () => {
  test("round trip keeps pages, chunks, redirects and metadata", async () => {
    const snap = await built();
    const dir = tempDir();
    const path = join(dir, "en.tome");
    writeSnapshot(path, snap);
    const back = await readSnapshot(path);
    expect(back.pages).toEqual(snap.pages);
    expect(back.redirects).toEqual(snap.redirects);
    expect(back.meta).toMatchObject({
      formatVersion: 1,
      createdAt: "2026-01-02T03:04:05.000Z",
      wiki: { host: "en.wikipedia.org", dbname: "enwiki", lang: "en", sitename: "Wikipedia" },
      truncated: false,
      indexedPages: 106,
      indexedChunks: snap.pages.reduce((n, p) => n + p.chunks.length, 0),
      skippedRedirects: 99,
      chunkWords: 300,
    });
    expect(back.meta.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(back.meta.sources[0]!.dump).toBe(EN_2016);
    expect(await readSnapshotMeta(path)).toEqual(back.meta);
    // Nothing is left beside it: the temporary file was renamed into place.
    expect(readdirSync(dir)).toEqual(["en.tome"]);
  });

  test("the content hash names the content, not the build time", async () => {
    const snap = await built();
    const again = fromIngest(await ingested({ dumps: [EN_2016] }), DEFAULT_CHUNK_WORDS, new Date());
    encodeSnapshot(snap);
    encodeSnapshot(again);
    expect(again.meta.contentHash).toBe(snap.meta.contentHash);
    const other = fromIngest(await ingested({ dumps: [EN_2016], chunkWords: 80 }), 80);
    encodeSnapshot(other);
    expect(other.meta.contentHash).not.toBe(snap.meta.contentHash);
  });

  test("a truncated snapshot file is refused", async () => {
    const bytes = encodeSnapshot(await built());
    expect(() => decodeSnapshot("x.tome", bytes.subarray(0, bytes.length - 1000))).toThrow(/truncated: \d+ bytes, expected \d+/);
    expect(() => decodeSnapshot("x.tome", bytes.subarray(0, 20))).toThrow(SnapshotError);
  });

  test("an altered snapshot is refused, never half-loaded", async () => {
    const bytes = encodeSnapshot(await built());
    for (const at of [70, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const copy = bytes.slice();
      copy[at]! ^= 0x01;
      expect(() => decodeSnapshot("x.tome", copy)).toThrow(/corrupt: its checksum does not match/);
    }
  });

  test("a file that is not a snapshot, a future format and a missing file are refused clearly", async () => {
    expect(() => decodeSnapshot("x.tome", new TextEncoder().encode("<mediawiki>…"))).toThrow(/not a Tome snapshot/);
    const bytes = encodeSnapshot(await built());
    new DataView(bytes.buffer).setUint32(8, 99, true);
    expect(() => decodeSnapshot("x.tome", bytes)).toThrow(/format 99; this Tome reads format 1/);
    expect(readSnapshot("/nonexistent/x.tome")).rejects.toThrow(/snapshot not found/);
  });

  test("a truncated build is marked truncated", async () => {
    const snap = fromIngest(await ingested({ dumps: [EN_2006_TRUNCATED], allowTruncated: true }), 300);
    const back = decodeSnapshot("t.tome", encodeSnapshot(snap));
    expect(back.meta.truncated).toBe(true);
    expect(back.meta.sources[0]!.truncated).toBe(true);
    expect(back.meta.sources[0]!.damage).toContain("Alliaceae");
  });

  test("writing over an existing snapshot replaces it whole", async () => {
    const dir = tempDir();
    const path = join(dir, "s.tome");
    const small = fromIngest(await ingested({ dumps: [EN_2016], chunkWords: 80 }), 80);
    writeSnapshot(path, small);
    writeSnapshot(path, await built());
    expect((await readSnapshot(path)).meta.chunkWords).toBe(300);
    expect(() => writeSnapshot(join("/proc", "nope", "s.tome"), small)).toThrow(SnapshotError);
  });

  test("latestSnapshot picks the newest .tome file", async () => {
    const dir = tempDir();
    expect(latestSnapshot(dir)).toBeUndefined();
    expect(latestSnapshot(join(dir, "missing"))).toBeUndefined();
    const snap = await built();
    writeSnapshot(join(dir, "a.tome"), snap);
    await Bun.sleep(20);
    writeSnapshot(join(dir, "b.tome"), snap);
    await Bun.write(join(dir, "c.txt"), "x");
    expect(latestSnapshot(dir)).toBe(join(dir, "b.tome"));
  });
});
