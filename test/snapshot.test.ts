import { describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import * as fs from "node:fs";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_CHUNK_WORDS, ingest, modifications } from "../src/ingest";
import { open } from "../src/search";
import {
  checkSections,
  ContainerWriter,
  format1Modifications,
  latestSnapshot,
  openContainer,
  openSnapshot,
  readFormat1,
  readSnapshotMeta,
  SnapshotError,
  TextStore,
  TextWriter,
} from "../src/snapshot";
import { PageTable, PageWriter } from "../src/snapshot/pages";
import { convert } from "../src/cli/snapshot-convert";
import { exportedRows, exportLines } from "../src/cli/export-run";
import { printableName, shellWord } from "../src/printable";
import {
  EN_2006_TRUNCATED,
  EN_2016,
  exportXml,
  FORMAT1_META,
  format1Bytes,
  format1Page,
  ingested,
  refused,
  residentKb,
  snapshotFor,
  tempDir,
  writeSnapshot,
} from "./helpers";

// Per file (bun applies it to the current file only): these tests build snapshots from the real dumps.
setDefaultTimeout(120_000);

async function builtAt(path: string, createdAt = new Date("2026-01-02T03:04:05Z"), chunkWords = DEFAULT_CHUNK_WORDS) {
  const options = { dumps: [EN_2016], chunkWords };
  return writeSnapshot(await ingested(options), path, options, createdAt);
}

/** builtAt(path)'s file, built once for the tests that read or damage one (a build of the sample takes 2 s): a copy. */
const copyOfBuilt = (() => {
  let built: Promise<string> | undefined;
  return async (path: string) => {
    built ??= (async () => {
      const once = join(tempDir(), "built.tome");
      await builtAt(once);
      return once;
    })();
    copyFileSync(await built, path);
  };
})();

describe("snapshot file (format 2)", () => {
  test("a sealed file opens with the sections so far; sections after the seal are in the finished file, nothing of the first table left", async () => {
    const path = join(tempDir(), "sealed.tome");
    const out = new ContainerWriter(path);
    out.section("first", new Uint8Array([1, 2, 3]));
    const sealed = openContainer(out.seal({ at: "seal", padding: "x".repeat(1000) }));
    expect(sealed.sections.map((x) => x.name)).toEqual(["first"]);
    expect([...sealed.section("first")]).toEqual([1, 2, 3]);
    // With a shorter table than the first: the file must end at the new one.
    out.section("second", new Uint8Array([9]));
    const size = out.finish({ at: "finish" });
    const done = openContainer(path);
    expect(done.meta).toEqual({ at: "finish" });
    expect(done.sections.map((x) => x.name)).toEqual(["first", "second"]);
    expect([...done.section("second")]).toEqual([9]);
    expect(done.bytes).toBe(size);
    expect(await done.verify()).toEqual([]);
  });

  test("the page table spilled to disk in several sorted runs is the one written from one run: sorted by page id, the pages left out dropped", async () => {
    const { articles } = await ingested({ dumps: [EN_2016] });
    // Arrivals not in page id order (reversed), every fifth left out, the rest numbered as they come.
    const arrivals = [...articles].reverse();
    const dir = tempDir();
    const write = (name: string, runBytes?: number) => {
      const path = join(dir, `${name}.tome`);
      const out = new ContainerWriter(path);
      const text = new TextWriter(out);
      const pages = new PageWriter(dir, runBytes);
      for (const a of arrivals) {
        const firstText = a.chunks.map((c) => text.add(c.text))[0] ?? 0;
        pages.add({ ...a, firstText, chunkSections: a.chunks.map((c) => c.section) });
      }
      text.finish();
      const runs = pages.runCount;
      const done = pages.finish(out, (arrival) => arrival % 5 !== 0);
      // The counts a snapshot's meta holds, which open()'s checks hold the page table to (D119).
      out.finish({
        indexedPages: arrivals.filter((_, arrival) => arrival % 5 !== 0).length,
        indexedChunks: done.documents,
      });
      return { file: openContainer(path), runs, done };
    };
    const whole = write("whole");
    const spilled = write("spilled", 1000);
    expect(whole.runs).toBe(0);
    expect(spilled.runs).toBeGreaterThan(3);
    for (const { name } of whole.file.sections)
      expect(Buffer.from(spilled.file.section(name)).equals(Buffer.from(whole.file.section(name)))).toBe(true);
    expect(spilled.done.documents).toBe(whole.done.documents);
    expect([...spilled.done.docOfText]).toEqual([...whole.done.docOfText]);
    // Read back: the pages kept, by page id, with their titles and sections.
    const kept = arrivals.filter((_, arrival) => arrival % 5 !== 0).sort((x, y) => x.pageId - y.pageId);
    const table = new PageTable(spilled.file, new TextStore(spilled.file));
    expect(Array.from(table.ids)).toEqual(kept.map((a) => a.pageId));
    for (const [i, a] of kept.entries()) {
      expect(table.title(i)).toBe(a.title);
      expect(table.sectionsOf(i)).toEqual(a.sections);
      expect(table.chunkText(i, a.chunks.length - 1)).toBe(a.chunks.at(-1)!.text);
    }
    expect(readdirSync(dir).filter((f) => f.startsWith(".tome-"))).toEqual([]);
  });

  test("text compressed in the background is written in order, the same bytes as on the main thread", async () => {
    const source = await ingested({ dumps: [EN_2016] });
    const texts = source.articles.flatMap((a) => a.chunks.map((c) => c.text));
    const dir = tempDir();
    const write = async (background: boolean) => {
      const path = join(dir, `${background}.tome`);
      const out = new ContainerWriter(path);
      const writer = new TextWriter(out, background);
      for (const t of texts) writer.add(t);
      if (background) {
        expect(() => writer.finish()).toThrow(/settle\(\) first/);
        await writer.settle();
      }
      writer.finish();
      out.finish({});
      return openContainer(path);
    };
    const [main, background] = [await write(false), await write(true)];
    expect(background.section("text.blockLength").byteLength).toBeGreaterThan(4 * 64); // more blocks than may compress at once
    for (const { name } of main.sections)
      expect(Buffer.from(background.section(name)).equals(Buffer.from(main.section(name)))).toBe(true);
    const store = new TextStore(background);
    for (const [i, t] of texts.entries()) if (i % 7 === 0) expect(store.chunk(i)).toBe(t);
  });

  test("in the background, ready() asks the writer's caller to wait while the compressor threads are behind, and lets it go when they are not (D139)", async () => {
    const source = await ingested({ dumps: [EN_2016] });
    const once = source.articles.flatMap((a) => a.chunks.map((c) => c.text));
    // Three times over: past the 4 MB the dictionary is learnt from, after which the threads compress.
    const texts = [...once, ...once, ...once];
    const out = new ContainerWriter(join(tempDir(), "ready.tome"));
    const writer = new TextWriter(out, true);
    let waits = 0;
    for (const t of texts) {
      writer.add(t);
      const behind = writer.ready();
      if (!behind) continue;
      waits++;
      await behind;
      // Let go once the threads are no longer behind: more text may come at once.
      expect(writer.ready()).toBeUndefined();
    }
    // Added as fast as a loop can, the text outruns the one compressor thread of a small machine, and of a large one.
    expect(waits).toBeGreaterThan(0);
    await writer.settle();
    writer.finish();
    out.finish({});
  });

  test("text over 1 MB is compressed with a dictionary learnt from it: fewer bytes, the same text back; less text goes without one", async () => {
    const source = await ingested({ dumps: [EN_2016] });
    const texts = source.articles.flatMap((a) => a.chunks.map((c) => c.text));
    const dir = tempDir();
    const write = (name: string, chunks: string[], dictionary?: null) => {
      const path = join(dir, `${name}.tome`);
      const out = new ContainerWriter(path);
      const writer = new TextWriter(out, false, dictionary);
      for (const t of chunks) writer.add(t);
      writer.finish();
      out.finish({});
      return openContainer(path);
    };
    const blockBytes = (c: ReturnType<typeof openContainer>) =>
      c.sections.filter((s) => s.name.startsWith("text.blocks.")).reduce((n, s) => n + s.length, 0);
    const learnt = write("learnt", texts);
    const none = write("none", texts, null);
    expect(learnt.has("text.dictionary")).toBe(true);
    expect(none.has("text.dictionary")).toBe(false);
    expect(blockBytes(learnt)).toBeLessThan(0.9 * blockBytes(none));
    expect(blockBytes(learnt) + learnt.section("text.dictionary").byteLength).toBeLessThan(blockBytes(none));
    for (const c of [learnt, none]) {
      const store = new TextStore(c, 4);
      for (const [i, t] of texts.entries()) expect(store.chunk(i)).toBe(t);
    }
    const few = texts.slice(0, 100);
    expect(few.join("").length).toBeLessThan(1024 * 1024);
    const small = write("small", few);
    expect(small.has("text.dictionary")).toBe(false);
    expect(new TextStore(small).chunk(99)).toBe(few[99]!);
  });

  test("an update copies the base's blocks as they are only when it compresses with the base's dictionary", async () => {
    const source = await ingested({ dumps: [EN_2016] });
    const texts = source.articles.flatMap((a) => a.chunks.map((c) => c.text));
    const dir = tempDir();
    const write = (name: string, fill: (writer: TextWriter) => void, dictionary?: Uint8Array | null) => {
      const path = join(dir, `${name}.tome`);
      const out = new ContainerWriter(path);
      const writer = new TextWriter(out, false, dictionary);
      fill(writer);
      writer.finish();
      out.finish({});
      return openContainer(path);
    };
    const base = write("base", (w) => {
      for (const t of texts) w.add(t);
    });
    const baseText = new TextStore(base);
    const alive = new Uint8Array(texts.length).fill(1);
    alive[1] = 0;
    for (const dictionary of [baseText.dictionary, null]) {
      let numbers: Int32Array = new Int32Array(0);
      const copy = write(`copy-${!!dictionary}`, (w) => void (numbers = w.copyFrom(baseText, alive)), dictionary);
      const store = new TextStore(copy);
      for (const [i, t] of texts.entries())
        expect(i === 1 ? numbers[i] : store.chunk(numbers[i]!)).toBe(i === 1 ? -1 : t);
      // The last block lives whole: the same compressed bytes, or not, as the dictionaries are the same.
      const last = (s: TextStore) => s.compressedBlock(s.blockFirst.length - 2);
      expect(Buffer.from(last(store)).equals(Buffer.from(last(baseText)))).toBe(!!dictionary);
    }
  });

  test("chunk text reads back right through block evictions (evicted blocks are freed at once)", async () => {
    const source = await ingested({ dumps: [EN_2016] });
    const path = join(tempDir(), "en.tome");
    await copyOfBuilt(path);
    const texts = source.articles.flatMap((a) => a.chunks.map((c) => c.text));
    const store = new TextStore(openContainer(path), 2);
    let random = 7;
    const next = () => (random = (Math.imul(random, 1664525) + 1013904223) >>> 0) % texts.length;
    const order = [...texts.keys(), ...Array.from({ length: texts.length }, next)];
    let blocks = 0;
    for (const i of order) {
      const text = store.chunk(i);
      if (text !== texts[i]) throw new Error(`chunk ${i} reads back wrong`);
      blocks++;
    }
    expect(blocks).toBe(order.length);
    expect(new TextStore(openContainer(path)).chunk(texts.length - 1)).toBe(texts.at(-1)!);
  });

  test("round trip keeps every page, section, chunk text, redirect and the metadata", async () => {
    const source = await ingested({ dumps: [EN_2016] });
    const dir = tempDir();
    const path = join(dir, "en.tome");
    await copyOfBuilt(path);
    const back = openSnapshot(path);
    expect(back.pages.length).toBe(source.articles.length);
    source.articles.forEach((a, i) => {
      const p = back.pages.at(i);
      expect([p.pageId, p.revId, p.title, p.timestamp, p.tsUnix]).toEqual([
        a.pageId,
        a.revId,
        a.title,
        a.timestamp,
        a.tsUnix,
      ]);
      expect(p.sections).toEqual(a.sections);
      expect(p.chunks.map((c) => [c.section, c.text])).toEqual(a.chunks.map((c) => [c.section, c.text]));
    });
    expect(back.redirects).toEqual(source.redirects);
    expect(back.meta).toMatchObject({
      formatVersion: 2,
      createdAt: "2026-01-02T03:04:05.000Z",
      wiki: { host: "en.wikipedia.org", dbname: "enwiki", lang: "en", sitename: "Wikipedia" },
      truncated: false,
      indexedPages: 106,
      indexedChunks: source.articles.reduce((n, a) => n + a.chunks.length, 0),
      skippedRedirects: 99,
      chunkWords: 300,
      modifications: modifications(300),
    });
    expect(back.meta.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(back.meta.sources[0]!.dump).toBe(EN_2016);
    expect(readSnapshotMeta(path)).toEqual(back.meta);
    // Nothing is left beside it: the temporary file and the index runs are gone.
    expect(readdirSync(dir)).toEqual(["en.tome"]);
  });

  test("the content hash names the content, not the build time", async () => {
    const dir = tempDir();
    // builtAt's file of the same dump, built at its default time: the one the tests share, not built again.
    await copyOfBuilt(join(dir, "a.tome"));
    const a = readSnapshotMeta(join(dir, "a.tome"));
    // The same dump built at another time: the snapshot the test files share (built once per test run, now), not
    // built again here; and another content, the same dump cut into 120-word chunks, shared as well.
    const b = readSnapshotMeta(await snapshotFor({ dumps: [EN_2016] }));
    const c = readSnapshotMeta(await snapshotFor({ dumps: [EN_2016], chunkWords: 120 }));
    expect(b.createdAt).not.toBe(a.createdAt);
    expect(b.contentHash).toBe(a.contentHash);
    expect(c.chunkWords).toBe(120);
    expect(c.contentHash).not.toBe(a.contentHash);
  });

  test("a truncated file is refused at open, with what to do", async () => {
    const dir = tempDir();
    const path = join(dir, "s.tome");
    await copyOfBuilt(path);
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 1000));
    expect(() => openSnapshot(path)).toThrow(/truncated: \d+ bytes, expected \d+\. Rebuild it/);
    writeFileSync(path, bytes.subarray(0, 20));
    expect(() => openSnapshot(path)).toThrow(SnapshotError);
  });

  test("damage in the table is refused at open; damage in a section is found by verify()", async () => {
    const dir = tempDir();
    const path = join(dir, "s.tome");
    await copyOfBuilt(path);
    const bytes = readFileSync(path);
    const copy = Buffer.from(bytes);
    copy[copy.length - 5]! ^= 0x01;
    writeFileSync(path, copy);
    expect(() => openSnapshot(path)).toThrow(/corrupt: its table of contents does not match its checksum/);
    writeFileSync(path, bytes);
    const whole = openSnapshot(path);
    expect(await whole.container.verify()).toEqual([]);
    const text = whole.container.sections.find((s) => s.name === "text.blocks.0")!;
    const altered = Buffer.from(bytes);
    altered[text.offset + (text.length >> 1)]! ^= 0x01;
    writeFileSync(path, altered);
    expect(await openSnapshot(path).container.verify()).toEqual(["text.blocks.0"]);
  });

  test("a file that is not a snapshot, format 1, a future format and a missing file are refused clearly", async () => {
    const dir = tempDir();
    const path = join(dir, "x.tome");
    writeFileSync(path, "<mediawiki>…");
    expect(() => openSnapshot(path)).toThrow(/not a Tome snapshot/);
    await copyOfBuilt(path);
    const bytes = Buffer.from(readFileSync(path));
    bytes.writeUInt32LE(1, 8);
    writeFileSync(path, bytes);
    expect(() => openSnapshot(path)).toThrow(/format 1, which this Tome no longer reads.*snapshot:convert/);
    bytes.writeUInt32LE(99, 8);
    writeFileSync(path, bytes);
    expect(() => openSnapshot(path)).toThrow(/format 99; this Tome reads format 2/);
    expect(() => openSnapshot("/nonexistent/x.tome")).toThrow(/snapshot not found/);
  });

  test("a folder is refused before it is opened: said in one line, no descriptor taken for it", () => {
    const dir = tempDir();
    // It was opened, fstat'd, then refused (the descriptor closed again): its stat says enough.
    const opened = spyOn(fs, "openSync");
    try {
      expect(() => openContainer(dir)).toThrow(
        new SnapshotError(`${dir} is a folder, not a snapshot file: name a .tome file in it.`),
      );
      expect(opened.mock.calls.map(([path]) => path)).toEqual([]);
    } finally {
      opened.mockRestore();
    }
  });

  test("the command a refusal says to run names a path with a space or a quote as one word of the shell", () => {
    const path = join(tempDir(), "Wiki copies", "it's en.tome");
    fs.mkdirSync(join(path, ".."));
    // A format-1 header: refused before anything past it is read.
    const bytes = Buffer.alloc(64);
    bytes.write("TOMESNAP");
    bytes.writeUInt32LE(1, 8);
    writeFileSync(path, bytes);
    const message = refused(() => openSnapshot(path));
    const command = /Convert it with `([^`]+)`/.exec(message)?.[1] ?? message;
    // What a shell makes of the line pasted: its words, one a line.
    const words = Bun.spawnSync(["bash", "-c", `printf '%s\\n' ${command}`]).stdout.toString();
    expect(words).toBe(`bun\nrun\nsnapshot:convert\n${path}\n`);
  });

  test("a name a command line is given, pasted as printed, names that file: a control character or a leading - too", () => {
    const dir = tempDir();
    const names = [
      "line\nbreak.tome",
      "esc\x1b[31m.tome",
      "csi\u009b.tome",
      "turned\u202eemot.tome",
      "it's \\ a\ttab.tome",
      "-n",
      "-rf x.tome",
      "plain.tome",
    ];
    for (const [i, name] of names.entries()) {
      writeFileSync(join(dir, name), `file ${i}\n`);
      const word = shellWord(name);
      // Printed, the word shows nothing a terminal acts on.
      expect(printableName(word)).toBe(word);
      const read = Bun.spawnSync(["bash", "-c", `cat ${word}`], { cwd: dir, stdin: "ignore" });
      expect({ word, out: read.stdout.toString() }).toEqual({ word, out: `file ${i}\n` });
    }
    // An absolute path is left as it is, a plain one unquoted.
    expect(shellWord("/srv/-x/en.tome")).toBe("/srv/-x/en.tome");
    expect(shellWord("plain.tome")).toBe("plain.tome");
  });

  test("a file whose search index is in an older layout (varint postings; term tables with empty entries; blocks without impacts) is refused with how to rebuild it", async () => {
    const dir = tempDir();
    const path = join(dir, "new.tome");
    await copyOfBuilt(path);
    expect(open(path).search("the").hits.length).toBeGreaterThan(0);
    // The same file but for the shards' meta: layout 1 recorded nothing, layout 2 its postings codec, layout 3 its number.
    const older = (layout: number) => {
      const container = openContainer(path);
      const old = join(dir, `layout${layout}.tome`);
      const out = new ContainerWriter(old);
      for (const { name } of container.sections) {
        let bytes = container.section(name);
        if (name.endsWith(".meta")) {
          const meta = JSON.parse(new TextDecoder().decode(bytes));
          expect(meta.indexLayout).toBe(4);
          delete meta.indexLayout;
          if (layout === 2) meta.postingsCodec = 2;
          if (layout === 3) meta.indexLayout = 3;
          bytes = new TextEncoder().encode(JSON.stringify(meta));
        }
        out.section(name, bytes);
      }
      out.finish(container.meta);
      return old;
    };
    for (const layout of [1, 2, 3]) {
      const old = older(layout);
      expect(openSnapshot(old).meta.formatVersion).toBe(2);
      expect(() => open(old)).toThrow(SnapshotError);
      expect(() => open(old)).toThrow(
        new RegExp(
          `layout ${layout}, and this Tome reads layout 4.*Rebuild it with \`bun run snapshot:build --dump <dump>\``,
        ),
      );
    }
  });

  test("a truncated build is marked truncated", async () => {
    const path = join(tempDir(), "t.tome");
    const options = { dumps: [EN_2006_TRUNCATED], allowTruncated: true };
    writeSnapshot(await ingested(options), path, options);
    const back = openSnapshot(path);
    expect(back.meta.truncated).toBe(true);
    expect(back.meta.sources[0]!.truncated).toBe(true);
    expect(back.meta.sources[0]!.damage).toContain("Alliaceae");
  });

  test("writing over an existing snapshot replaces it whole; an unwritable place is a SnapshotError", async () => {
    const dir = tempDir();
    const path = join(dir, "s.tome");
    // A snapshot of another chunk size there first (the test files' shared one, copied: any snapshot will do).
    copyFileSync(await snapshotFor({ dumps: [EN_2016], chunkWords: 120 }), path);
    expect(readSnapshotMeta(path).chunkWords).toBe(120);
    await builtAt(path);
    expect(openSnapshot(path).meta.chunkWords).toBe(300);
    expect(readdirSync(dir)).toEqual(["s.tome"]);
    await expect(builtAt(join("/proc", "nope", "s.tome"))).rejects.toThrow();
  });

  test("a disk full mid-write, or at the flush: the error names the snapshot (the folder to free) with its code; the one there is untouched", () => {
    const dir = tempDir();
    const path = join(dir, "s.tome");
    writeFileSync(path, "the snapshot served");
    const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    for (const call of ["writeSync", "fsyncSync"] as const) {
      const out = new ContainerWriter(path);
      const full = spyOn(fs, call).mockImplementation(() => {
        throw enospc();
      });
      let err: NodeJS.ErrnoException | undefined;
      try {
        out.section("a", new Uint8Array(1000));
        out.finish({});
      } catch (e) {
        err = e as NodeJS.ErrnoException;
      } finally {
        full.mockRestore();
        out.abandon();
      }
      expect(err?.message).toBe(`could not write ${path}: ENOSPC: no space left on device, write`);
      expect(err?.code).toBe("ENOSPC");
      expect(readdirSync(dir)).toEqual(["s.tome"]);
      expect(readFileSync(path, "utf8")).toBe("the snapshot served");
    }
  });

  test("a disk full writing a file whose name holds an ESC and a line break: the error names it with them \\u-escaped, its path kept as it is", () => {
    const dir = tempDir();
    const path = join(dir, "s-\x1b[31mred\nline.tome");
    const full = spyOn(fs, "writeSync").mockImplementation(() => {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    });
    let err: NodeJS.ErrnoException | undefined;
    try {
      new ContainerWriter(path).section("a", new Uint8Array(1000));
    } catch (e) {
      err = e as NodeJS.ErrnoException;
    } finally {
      full.mockRestore();
    }
    // It named the file raw: the message is printed as it is by the server's log and the dashboard.
    expect(err?.message).toBe(
      `could not write ${join(dir, "s-\\u001b[31mred\\u000aline.tome")}: ENOSPC: no space left on device, write`,
    );
    // Which folder is to be freed is judged from it (src/cli/main.ts).
    expect(err?.path).toBe(path);
    expect(err?.code).toBe("ENOSPC");
  });

  test("latestSnapshot picks the newest .tome file", async () => {
    const dir = tempDir();
    expect(latestSnapshot(dir)).toBeUndefined();
    expect(latestSnapshot(join(dir, "missing"))).toBeUndefined();
    await copyOfBuilt(join(dir, "a.tome"));
    await Bun.sleep(20);
    await copyOfBuilt(join(dir, "b.tome"));
    await Bun.write(join(dir, "c.txt"), "x");
    expect(latestSnapshot(dir)).toBe(join(dir, "b.tome"));
  });

  test("a page dated after its snapshot was built (a wrong clock) does not put that snapshot first: its newest page before counts (D180)", async () => {
    const dir = tempDir();
    /** A snapshot built at `createdAt` of pages dated `dates`. */
    const built = async (name: string, createdAt: string, dates: string[]) => {
      const xml = join(tempDir(), "pages.xml");
      let text = exportXml(dates.map((_, i) => ({ title: `Page ${i}`, text: `Page ${i} is a page.` })));
      for (const date of dates) text = text.replace("<timestamp>2024-01-01T00:00:00Z", `<timestamp>${date}`);
      writeFileSync(xml, text);
      const options = { dumps: [xml], workers: 1 };
      writeSnapshot(await ingest(options), join(dir, name), options, new Date(createdAt));
    };
    await built("wrong-clock.tome", "2026-01-01T00:00:00Z", ["2024-01-01T00:00:00Z", "2099-06-01T00:00:00Z"]);
    await built("newer.tome", "2026-02-01T00:00:00Z", ["2025-06-01T00:00:00Z"]);
    // It served wrong-clock.tome, and would have until 2099, over every later build of newer data.
    expect(latestSnapshot(dir)).toBe(join(dir, "newer.tome"));
    // Every page dated after its build: counted as built that day, still after newer.tome's 2025 data.
    await built("all-wrong.tome", "2026-03-01T00:00:00Z", ["2099-06-01T00:00:00Z"]);
    expect(latestSnapshot(dir)).toBe(join(dir, "all-wrong.tome"));
  });
});

describe("a snapshot mapped read-only under a read lease (D84)", () => {
  test("a cp over the file waits until the holder lets go; then every view reads zeros, not a file cut short, and the writer goes on", async () => {
    const served = join(tempDir(), "served.tome");
    await copyOfBuilt(served);
    const container = openContainer(served);
    let letGo!: () => void;
    const holding = new Promise<void>((r) => (letGo = r));
    expect(container.lease(() => holding)).toBeUndefined();
    const text = container.section("text.blocks.0");
    expect(text.some((b) => b !== 0)).toBe(true);
    // Mapped read-only and shared, from a descriptor opened read-only (a read lease refuses any other).
    const mapped = () => readFileSync("/proc/self/maps", "utf8").includes(served);
    expect(readFileSync("/proc/self/maps", "utf8")).toMatch(new RegExp(` r--s .*${served}`));

    // Any bytes will do: the dump, shorter than the snapshot, so that its pages past the new end would be a SIGBUS.
    const cp = Bun.spawn(["cp", EN_2016, served]);
    // The writer's open waits for the holder: nothing of the file has changed yet.
    await Bun.sleep(300);
    expect(cp.exitCode).toBeNull();
    expect(readFileSync(served).byteLength).toBe(container.bytes);
    expect(mapped()).toBe(true);
    letGo();
    expect(await cp.exited).toBe(0);
    expect(readFileSync(served).equals(readFileSync(EN_2016))).toBe(true);
    expect(readFileSync(served).byteLength).toBeLessThan(container.bytes);
    // The views read zeros, from no file; and nothing more is read from it.
    expect(text.every((b) => b === 0)).toBe(true);
    // Views already collected were unmapped by their deallocators, which run when the collector sweeps them.
    Bun.gc(true);
    expect(mapped()).toBe(false);
    await expect(container.verify()).rejects.toThrow(/is being written over in place: it is let go/);
  });

  test.if(process.platform === "linux")(
    "checkSections (snapshot:verify, an export's and an update's check) holds a lease too: a writer mid-check stops it saying why, where the process was killed (SIGBUS)",
    async () => {
      const path = join(tempDir(), "checked.tome");
      await copyOfBuilt(path);
      // In a process of its own, which a read of the file cut short kills. After its first section, a writer opens the
      // file (`truncate` opens it without waiting: refused while a lease is held, the holder signalled all the same);
      // each section then takes 20 ms, so that the check turns the event loop, and hears the signal, before its end.
      const script = `import { checkSections } from ${JSON.stringify(join(import.meta.dir, "../src/snapshot"))};
        let first = true;
        const progress = () => {
          if (first) Bun.spawnSync(["truncate", "-s", "0", ${JSON.stringify(path)}]);
          first = false;
          Bun.sleepSync(20);
        };
        try { console.log("checked", (await checkSections(${JSON.stringify(path)}, { progress })).damage); }
        catch (e) { console.log(e.name + ": " + e.message); }`;
      const checking = Bun.spawnSync(["bun", "-e", script], { timeout: 60_000, stderr: "pipe" });
      expect({ said: checking.stdout.toString().trim(), signal: checking.signalCode ?? null }).toEqual({
        said: `SnapshotError: ${path} was opened for writing by another process (a copy over it?) while it was read: it was let go, as reading a file cut short would crash the process (D84). Run it again once the file is whole; replace a snapshot by renaming a new file onto it.`,
        signal: null,
      });
      // The writer was refused, the file left whole.
      const whole = join(tempDir(), "whole.tome");
      await copyOfBuilt(whole);
      expect(readFileSync(path).equals(readFileSync(whole))).toBe(true);
    },
  );
});

describe("a file read through once leaves the resident set as it is read (D127)", () => {
  const digest = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

  test("dropResident: the pages read leave the resident set, and the sections read the same bytes after", async () => {
    // A copy: nothing else in this process maps it (the build's own mappings go only when collected).
    const built = join(tempDir(), "built.tome");
    await copyOfBuilt(built);
    const path = join(tempDir(), "once.tome");
    copyFileSync(built, path);
    expect(residentKb(path)).toBe(0);
    const container = openContainer(path);
    const text = container.section("text.blocks.0");
    const read = digest(text);
    expect(residentKb(path)).toBeGreaterThanOrEqual(Math.floor(text.byteLength / 1024));
    container.dropResident();
    expect(residentKb(path)).toBe(0);
    // Read again from the file: the bytes the section holds on disk.
    expect(digest(text)).toBe(read);
    expect(digest(text)).toBe(digest(container.read("text.blocks.0")));
  });

  test("verify({ readOnce }) hashes the whole file and leaves none of it resident; a plain verify leaves it mapped in", async () => {
    // A copy: nothing else in this process maps it (the build's own mappings go only when collected).
    const built = join(tempDir(), "built.tome");
    await copyOfBuilt(built);
    const path = join(tempDir(), "verified.tome");
    copyFileSync(built, path);
    expect(residentKb(path)).toBe(0);
    const served = openContainer(path);
    expect(await served.verify()).toEqual([]);
    const bytes = served.sections.reduce((n, s) => n + s.length, 0);
    expect(residentKb(path)).toBeGreaterThanOrEqual(Math.floor(bytes / 1024) - 4);
    served.letGo();
    const once = openContainer(path);
    expect(await once.verify(undefined, { readOnce: true })).toEqual([]);
    expect(residentKb(path)).toBe(0);
  });

  test("populate maps every page of the file into the process at once, where reading maps a page at its first read (D204)", async () => {
    const built = join(tempDir(), "built.tome");
    await copyOfBuilt(built);
    const path = join(tempDir(), "populated.tome");
    copyFileSync(built, path);
    const served = openContainer(path);
    served.mapAll();
    expect(residentKb(path)).toBe(0);
    expect(await served.populate()).toBe(true);
    const bytes = served.sections.reduce((n, s) => n + s.length, 0);
    expect(residentKb(path)).toBeGreaterThanOrEqual(Math.floor(bytes / 1024) - 4);
    // Let go: nothing more is populated, and populate says so.
    served.letGo();
    expect(await served.populate()).toBe(false);
  });

  test.skipIf(!Bun.which("fincore"))(
    "a container written leaves none of its pages in the page cache: its first reader reads it in by readahead (D206)",
    () => {
      const cachedPages = (file: string) =>
        Number(Bun.spawnSync(["fincore", "--raw", "--noheadings", "--output", "PAGES", file]).stdout.toString().trim());
      const bytes = new Uint8Array(4 << 20).map((_x, i) => i * 7);
      // The same bytes written as any file is: their pages stay cached (what the check would see without D206).
      const plain = join(tempDir(), "plain.bin");
      writeFileSync(plain, bytes);
      expect(cachedPages(plain)).toBeGreaterThan(512);
      const path = join(tempDir(), "dropped.tome");
      const out = new ContainerWriter(path);
      out.section("bytes", bytes);
      out.finish({});
      expect(cachedPages(path)).toBe(0);
      expect(Buffer.from(openContainer(path).section("bytes")).equals(Buffer.from(bytes))).toBe(true);
    },
  );

  test("snapshot:export reads its file through once: the pages it read leave the resident set as it goes", async () => {
    const path = join(tempDir(), "exported.tome");
    await copyOfBuilt(path);
    const snapshot = openSnapshot(path);
    try {
      const textKb = Math.floor(
        snapshot.container.sections.filter((s) => s.name.startsWith("text.")).reduce((n, s) => n + s.length, 0) / 1024,
      );
      // The text read through the mapping, as where the file cannot be read by pread (D207): its pages are what the
      // drop is for. dropEveryChars = 1 stands in for the export's default (DROP_EVERY_CHARS, 64 M characters: more
      // than this whole snapshot's text), so the pages are dropped after every write here: the most resident at a
      // write is what one write read, where every text block read stayed resident to the end.
      snapshot.container.readFromFile = () => undefined;
      const textBlocks = snapshot.container.sections.find((s) => s.name === "text.blocks.0")!;
      let most = 0;
      let chunks = 0;
      let collected = 0;
      let full = 0;
      const lines = exportLines(snapshot, exportedRows(snapshot, 0).rows, undefined, {
        dropEveryChars: 1,
        // A full collection after every third string or so (each about 256 K characters).
        fullEveryChars: 600_000,
        collect: (now = false) => {
          collected++;
          if (now) full++;
        },
      });
      let strings = 0;
      for (const batch of lines) {
        strings++;
        most = Math.max(most, residentKb(path, textBlocks.offset));
        chunks += batch.split("\n").length - 1;
      }
      expect(chunks).toBe(snapshot.meta.indexedChunks);
      expect(most).toBeLessThan(textKb / 2);
      expect(most).toBeGreaterThan(0);
      // D208: the young garbage collected after each full string written (all but a last, shorter one).
      expect(strings).toBeGreaterThan(2);
      expect(collected).toBeGreaterThanOrEqual(strings - 1);
      expect(collected).toBeLessThanOrEqual(strings);
      expect(full).toBeGreaterThan(0);
      expect(full).toBeLessThan(collected / 2);
    } finally {
      snapshot.container.letGo();
    }
  });

  test("checkSections stopped before it began (an aborted signal) throws its reason and maps nothing, however small the file", async () => {
    const path = join(tempDir(), "stopped.tome");
    await copyOfBuilt(path);
    const stop = new AbortController();
    stop.abort(new Error("stopped by the caller"));
    let hashed = 0;
    const checked = checkSections(path, { signal: stop.signal, progress: (done) => (hashed = done) });
    expect(
      await checked.then(
        () => "checked",
        (err: Error) => err.message,
      ),
    ).toBe("stopped by the caller");
    expect(hashed).toBe(0);
    expect(residentKb(path)).toBe(0);
  });
});

describe("format 1, read only to convert it", () => {
  const meta = FORMAT1_META;
  const pages = [format1Page(1, "Alpha"), format1Page(2, "Beta")];
  const redirects = [{ title: "A", target: "Alpha" }];
  const beta = pages[1]!;
  /** The content with this page second. */
  const second = (page: unknown) => ({ pages: [pages[0], page], redirects });
  /** The object without this field (not the field undefined, which msgpack keeps). */
  const without = <T extends object>(o: T, field: keyof T) =>
    Object.fromEntries(Object.entries(o).filter(([k]) => k !== field));

  test("a whole file reads with its pages, its redirects and format 1's modifications", () => {
    const path = join(tempDir(), "whole.tome");
    writeFileSync(path, format1Bytes(meta, { pages, redirects }));
    const read = readFormat1(path);
    expect(read).toEqual({ meta: { ...meta, modifications: format1Modifications(300) }, pages, redirects });
  });

  test("snapshot:convert builds the index anew a stage at a time, each told to its progress (a bar on a terminal)", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "old.tome"), format1Bytes(meta, { pages, redirects }));
    const stages = new Set<string>();
    await convert(join(dir, "old.tome"), join(dir, "new.tome"), (stage) => stages.add(stage));
    expect([...stages]).toContain("title index");
    expect(openSnapshot(join(dir, "new.tome")).pages.length).toBe(2);
  });

  test("snapshot:convert claims its --out as a build does: its lock held while it writes, a killed build's leftovers cleared and said, refused while another holds it (D196)", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "old.tome"), format1Bytes(meta, { pages, redirects }));
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    const left = `.tome-runs-${gone.pid}-abcdef`;
    mkdirSync(join(dir, left));
    const lock = join(dir, ".new.tome.lock");
    // Its scratch and half-written file name its pid: a start or build in another container (where that pid is no
    // process) sees them as a killed build's unless a lock it renews names it.
    const held = new Set<string>();
    const lines: string[] = [];
    await convert(
      join(dir, "old.tome"),
      join(dir, "new.tome"),
      () => held.add(existsSync(lock) ? readFileSync(lock, "utf8").split(" ")[0]! : "none"),
      (line) => lines.push(line),
    );
    expect([...held]).toEqual([String(process.pid)]);
    expect(lines).toEqual([
      `removed 1 temporary file(s) in ${dir} left by a build or update that was killed (its process is gone): ${left}`,
    ]);
    expect(readdirSync(dir).sort()).toEqual(["new.tome", "old.tome"]);
    // Another container's convert or build writes it: this one is refused, its file untouched.
    writeFileSync(lock, `${gone.pid} 1 00000000-0000-0000-0000-000000000000/4026531836\n`);
    const before = readFileSync(join(dir, "new.tome"));
    expect(
      await convert(join(dir, "old.tome"), join(dir, "new.tome"), undefined, () => {}).catch((e: Error) => e.message),
    ).toStartWith(
      `another build or update in another container or machine (process ${gone.pid} there) is writing ${join(dir, "new.tome")}`,
    );
    expect(readFileSync(join(dir, "new.tome")).equals(before)).toBe(true);
  });

  test("a damaged file is refused in one line that says what is wrong (the first fault, in the order of the file)", () => {
    const dir = tempDir();
    const whole = format1Bytes(meta, { pages, redirects });
    const notMsgpack = whole.slice();
    notMsgpack[64] = 0xc1; // a byte msgpack never uses, resealed so that the checksum holds
    notMsgpack.set(new Bun.CryptoHasher("sha256").update(notMsgpack.subarray(64)).digest() as Uint8Array, 32);
    const flipped = whole.slice();
    flipped[whole.length - 1]! ^= 1;
    const corrupt = (why: string) => `is corrupt: ${why}; rebuild it from its dump instead.`;
    const cases: [string, Uint8Array, string][] = [
      ["no snapshot", new TextEncoder().encode("<mediawiki>…"), "is not a format-1 Tome snapshot."],
      ["cut short", whole.subarray(0, whole.length - 1), "is truncated; rebuild it from its dump instead."],
      ["flipped", flipped, corrupt("its checksum does not match")],
      ["not msgpack", notMsgpack, corrupt("its content is not msgpack")],
      ["meta a number", format1Bytes(5, { pages, redirects }), corrupt("its metadata names no wiki")],
      ["no wiki", format1Bytes(without(meta, "wiki"), { pages, redirects }), corrupt("its metadata names no wiki")],
      [
        "no lang",
        format1Bytes({ ...meta, wiki: { lang: 3 } }, { pages, redirects }),
        corrupt("its metadata names no wiki"),
      ],
      [
        "words 0",
        format1Bytes({ ...meta, chunkWords: 0 }, { pages, redirects }),
        corrupt("its metadata has no chunk size"),
      ],
      [
        "words 2.5",
        format1Bytes({ ...meta, chunkWords: 2.5 }, { pages, redirects }),
        corrupt("its metadata has no chunk size"),
      ],
      [
        "no time",
        format1Bytes({ ...meta, createdAt: "soon" }, { pages, redirects }),
        corrupt("its metadata has no creation time"),
      ],
      [
        "sources",
        format1Bytes({ ...meta, sources: "x" }, { pages, redirects }),
        corrupt("its metadata lists no sources"),
      ],
      // The first fault in the order the metadata is read, though the other is a field left out.
      ["two faults", format1Bytes({ ...without(meta, "sources"), wiki: 1 }, {}), corrupt("its metadata names no wiki")],
      ["content []", format1Bytes(meta, []), corrupt("it holds no list of pages and redirects")],
      ["no redirects", format1Bytes(meta, { pages }), corrupt("it holds no list of pages and redirects")],
      ["page a string", format1Bytes(meta, { pages: [pages[0], "x"], redirects }), corrupt("its page 2 is not a page")],
      ["id -1", format1Bytes(meta, second({ ...beta, pageId: -1 })), corrupt("its page 2 has no page id")],
      ["id 2^32", format1Bytes(meta, second({ ...beta, pageId: 2 ** 32 })), corrupt("its page 2 has no page id")],
      ["rev text", format1Bytes(meta, second({ ...beta, revId: "10" })), corrupt("its page 2 has no revision")],
      ["no ts", format1Bytes(meta, second(without(beta, "tsUnix"))), corrupt("its page 2 has no revision")],
      // Not numbers a revision has: the conversion's dates threw on them (RangeError: Invalid Date).
      ["rev NaN", format1Bytes(meta, second({ ...beta, revId: Number.NaN })), corrupt("its page 2 has no revision")],
      ["ts Infinity", format1Bytes(meta, second({ ...beta, tsUnix: Infinity })), corrupt("its page 2 has no revision")],
      ["no title", format1Bytes(meta, second(without(beta, "title"))), corrupt("its page 2 has no title or time")],
      [
        "time a number",
        format1Bytes(meta, second({ ...beta, timestamp: 0 })),
        corrupt("its page 2 has no title or time"),
      ],
      [
        "no chunks",
        format1Bytes(meta, second(without(beta, "chunks"))),
        corrupt("its page 2 has no sections or chunks"),
      ],
      [
        "heading",
        format1Bytes(meta, second({ ...beta, sections: [{ heading: 1, level: 0 }] })),
        corrupt("its page 2 has a section without a heading"),
      ],
      [
        "level",
        format1Bytes(meta, second({ ...beta, sections: [{ heading: "", level: -1 }] })),
        corrupt("its page 2 has a section without a heading"),
      ],
      [
        "chunk text",
        format1Bytes(meta, second({ ...beta, chunks: [{ section: 0, text: null }] })),
        corrupt("its page 2 has a chunk without text or section"),
      ],
      [
        "chunk section",
        format1Bytes(meta, second({ ...beta, chunks: [{ section: 1, text: "Beta." }] })),
        corrupt("its page 2 has a chunk without text or section"),
      ],
      [
        "chunk a string",
        format1Bytes(meta, second({ ...beta, chunks: ["Beta."] })),
        corrupt("its page 2 has a chunk without text or section"),
      ],
      // The page first in the file, though its fault (a chunk of a section it lacks) is no field's.
      [
        "two pages",
        format1Bytes(meta, {
          pages: [
            { ...pages[0], chunks: [{ section: 1, text: "Alpha." }] },
            { ...pages[1], pageId: -1 },
          ],
          redirects,
        }),
        corrupt("its page 1 has a chunk without text or section"),
      ],
      // In a page, the fault of the field read first, though the other is a field left out.
      [
        "two fields",
        format1Bytes(meta, second({ ...without(beta, "revId"), pageId: -1 })),
        corrupt("its page 2 has no page id"),
      ],
      [
        "sections and chunks",
        format1Bytes(meta, second({ ...without(beta, "chunks"), sections: [{ heading: 1 }] })),
        corrupt("its page 2 has no sections or chunks"),
      ],
      [
        "redirect",
        format1Bytes(meta, { pages, redirects: [...redirects, { title: "B" }] }),
        corrupt("its redirect 2 has no title or target"),
      ],
    ];
    const refusals = cases.map(([name, bytes]) => {
      const path = join(dir, `${name}.tome`);
      writeFileSync(path, bytes);
      try {
        readFormat1(path);
        return [name, "read"];
      } catch (e) {
        // Each message names the file first: what follows the path is what is compared.
        return [name, e instanceof SnapshotError ? e.message.replace(`${path} `, "") : `${e}`];
      }
    });
    expect(refusals).toEqual(cases.map(([name, , message]) => [name, message]));
  });
});
