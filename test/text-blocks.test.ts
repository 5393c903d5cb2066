import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, truncateSync } from "node:fs";
import { join } from "node:path";
import {
  blockDecompressor,
  ContainerWriter,
  openContainer,
  preferZstd,
  TextStore,
  TextWriter,
  zstdInUse,
} from "../src/snapshot";
import { EN_2016, ingested, residentKb, tempDir } from "./helpers";

setDefaultTimeout(60_000);

/** The EN_2016 dump's chunk texts in a text store: compressed with a dictionary learnt from them, or with none. */
async function storeOf(withDictionary: boolean): Promise<{ store: TextStore; texts: string[]; path: string }> {
  const source = await ingested({ dumps: [EN_2016] });
  const texts = source.articles.flatMap((a) => a.chunks.map((c) => c.text));
  const path = join(tempDir(), `text-${withDictionary}.tome`);
  const out = new ContainerWriter(path);
  const writer = new TextWriter(out, false, withDictionary ? undefined : null);
  for (const t of texts) writer.add(t);
  writer.finish();
  out.finish({});
  return { store: new TextStore(openContainer(path)), texts, path };
}

describe("text blocks", () => {
  test("the system's libzstd is used where it is installed (Debian's libzstd1)", () => {
    const installed = ["/usr/lib/x86_64-linux-gnu/libzstd.so.1", "/usr/lib/aarch64-linux-gnu/libzstd.so.1"].some(
      existsSync,
    );
    expect(zstdInUse()).toBe(installed ? "system" : "node");
    // TOME_ZSTD=node, as src/cli/config.ts hands it down.
    preferZstd("node");
    try {
      expect(zstdInUse()).toBe("node");
    } finally {
      preferZstd("system");
    }
  });

  for (const withDictionary of [true, false]) {
    test(`libzstd and node:zlib give the same bytes for every block (${withDictionary ? "with" : "without"} a dictionary)`, async () => {
      const { store, texts } = await storeOf(withDictionary);
      expect(store.dictionary !== null).toBe(withDictionary);
      const system = blockDecompressor(store.dictionary, "system");
      const node = blockDecompressor(store.dictionary, "node");
      const blocks = store.blockFirst.length - 1;
      expect(blocks).toBeGreaterThan(10);
      let bytes = 0;
      for (let b = 0; b < blocks; b++) {
        const a = system(store.compressedBlock(b), store.blockSize(b));
        if (!Buffer.from(a).equals(Buffer.from(node(store.compressedBlock(b), store.blockSize(b)))))
          throw new Error(`block ${b} differs`);
        bytes += a.byteLength;
      }
      expect(bytes).toBe(Buffer.byteLength(texts.join("")));
    });
  }

  test("a block holds chunks until it reaches 4 KB (D205): every block but the last ends in the chunk that passed 4,096 bytes", async () => {
    const { store } = await storeOf(true);
    const blocks = store.blockFirst.length - 1;
    for (let b = 0; b < blocks - 1; b++) {
      const last = store.blockFirst[b + 1]! - 1;
      const beforeLast = last > store.blockFirst[b]! ? store.chunkEnd[last - 1]! : 0;
      if (!(beforeLast < 4096 && store.blockSize(b) >= 4096))
        throw new Error(`block ${b}: ${beforeLast} bytes before its last chunk, ${store.blockSize(b)} in all`);
    }
  });

  test("every chunk reads back as written when the few blocks kept (3, or none) are evicted over and over (their rooms reused)", async () => {
    const { texts, path } = await storeOf(true);
    for (const kept of [3, 0]) {
      const small = new TextStore(openContainer(path), kept);
      expect(small.blockFirst.length - 1).toBeGreaterThan(10);
      let seed = 3;
      const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
      for (let k = 0; k < 4000; k++) {
        const c = Math.floor(random() * texts.length);
        if (small.chunk(c) !== texts[c]) throw new Error(`chunk ${c} differs after ${k} reads, ${kept} blocks kept`);
      }
    }
  });

  test("a block decompressed into a buffer given fills its first bytes, both ways, as into a new one; into a new one when the buffer is too short", async () => {
    const { store } = await storeOf(true);
    for (const via of ["system", "node"] as const) {
      const decompress = blockDecompressor(store.dictionary, via);
      const room = new Uint8Array(64 * 1024).fill(7);
      for (const b of [0, 3, 5]) {
        const size = store.blockSize(b);
        const into = decompress(store.compressedBlock(b), size, room);
        expect(into.buffer).toBe(room.buffer);
        expect(Buffer.from(into).equals(Buffer.from(decompress(store.compressedBlock(b), size)))).toBe(true);
        // Too short a buffer is not written past its end: the block gets a new one.
        const short = new Uint8Array(16);
        const own = decompress(store.compressedBlock(b), size, short);
        expect(own.buffer).not.toBe(short.buffer);
        expect(Buffer.from(own).equals(Buffer.from(into))).toBe(true);
      }
    }
  });

  test("a search reads its blocks from the file, not through the mapping (D207): the compressed text's pages stay out of the resident set", async () => {
    const { texts, path } = await storeOf(true);
    const container = openContainer(path);
    const store = new TextStore(container, 0);
    for (let c = 0; c < texts.length; c++) if (store.chunk(c) !== texts[c]) throw new Error(`chunk ${c} differs`);
    const blocks = container.sections.find((s) => s.name === "text.blocks.0")!;
    expect(blocks.length).toBeGreaterThan(64 * 1024);
    // Read through the mapping, every page of the section would be resident (its bytes, rounded to pages).
    expect(residentKb(path, blocks.offset)).toBe(0);
    expect(
      Buffer.from(store.compressedBlock(0)).equals(
        Buffer.from(container.section("text.blocks.0").subarray(0, store.compressedBlock(0).byteLength)),
      ),
    ).toBe(true);
    expect(residentKb(path, blocks.offset)).toBeGreaterThan(0);
  });

  test("readFromFile: the section's bytes by pread; not once verify() has put every page in the page tables, after dropResident again, never once let go (D207)", async () => {
    const { path } = await storeOf(true);
    const container = openContainer(path);
    const mapped = container.section("text.blocks.0");
    const read = () => container.readFromFile("text.blocks.0", 100, new Uint8Array(300));
    expect(Buffer.from(read()!).equals(Buffer.from(mapped.subarray(100, 400)))).toBe(true);
    // Past the section's end: not read (the caller reads its mapping, which says so).
    expect(container.readFromFile("text.blocks.0", mapped.byteLength - 10, new Uint8Array(11))).toBeUndefined();
    expect(await container.verify()).toEqual([]);
    expect(read()).toBeUndefined();
    container.dropResident();
    expect(read()).toBeDefined();
    container.letGo();
    expect(read()).toBeUndefined();
  });

  test("a block larger than the pread buffer and the cache's slots (one chunk of 64 KB) reads back whole, with blocks kept or none (D207)", async () => {
    const source = await ingested({ dumps: [EN_2016] });
    const texts = source.articles.flatMap((a) => a.chunks.map((c) => c.text));
    // Real text, many chunks joined: compressed past the 16 KB a block is read into.
    const long = texts.join(" ").slice(0, 64 * 1024);
    const path = join(tempDir(), "long-chunk.tome");
    const out = new ContainerWriter(path);
    const writer = new TextWriter(out, false, null);
    for (const t of [texts[0]!, long, texts[1]!]) writer.add(t);
    writer.finish();
    out.finish({});
    const store = new TextStore(openContainer(path));
    const big = store.blockFirst.findIndex(
      (_f, b) => b < store.blockFirst.length - 1 && store.compressedBlock(b).byteLength > 16 * 1024,
    );
    expect(big).toBeGreaterThanOrEqual(0);
    expect([store.chunk(0), store.chunk(1), store.chunk(2)]).toEqual([texts[0]!, long, texts[1]!]);
    // None kept (as a copy reads): each block is evicted as soon as it is made, and read before that.
    const none = new TextStore(openContainer(path), 0);
    expect([none.chunk(0), none.chunk(1), none.chunk(2)]).toEqual([texts[0]!, long, texts[1]!]);
  });

  test("a file cut short since it was opened is an error saying so when a block is read by pread, not a crash (D207)", async () => {
    const { path } = await storeOf(true);
    const container = openContainer(path);
    const blocks = container.sections.find((s) => s.name === "text.blocks.0")!;
    container.section("text.blocks.0");
    // Nothing is read through the mapping past the new end (that would be SIGBUS): only by pread.
    truncateSync(path, blocks.offset + Math.floor(blocks.length / 2));
    expect(() => container.readFromFile("text.blocks.0", blocks.length - 300, new Uint8Array(300))).toThrow(
      /was cut short since it was opened/,
    );
    container.letGo();
  });

  test("a damaged block is an error naming it damaged, both ways, never wrong text", async () => {
    const { store } = await storeOf(true);
    const block = Uint8Array.from(store.compressedBlock(3));
    block.fill(0x5a, 8, block.byteLength - 8);
    for (const via of ["system", "node"] as const) {
      const decompress = blockDecompressor(store.dictionary, via);
      expect(() => decompress(block, store.blockSize(3))).toThrow(/^a text block is damaged: zstd says/);
      // Whole, but not the size its chunks say: damaged too.
      expect(() => decompress(store.compressedBlock(3), store.blockSize(3) - 1)).toThrow(/^a text block is damaged/);
      expect(() => decompress(store.compressedBlock(3), store.blockSize(3) + 1)).toThrow(
        /^a text block is damaged: it holds/,
      );
    }
  });
});
