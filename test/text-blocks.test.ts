import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { blockDecompressor, ContainerWriter, openContainer, TextStore, TextWriter, zstdInUse } from "../src/snapshot";
import { EN_2016, ingested, tempDir } from "./helpers";

setDefaultTimeout(60_000);

/** The EN_2016 dump's chunk texts in a text store: compressed with a dictionary learnt from them, or with none. */
async function storeOf(withDictionary: boolean): Promise<{ store: TextStore; texts: string[] }> {
  const source = await ingested({ dumps: [EN_2016] });
  const texts = source.articles.flatMap((a) => a.chunks.map((c) => c.text));
  const path = join(tempDir(), `text-${withDictionary}.tome`);
  const out = new ContainerWriter(path);
  const writer = new TextWriter(out, false, withDictionary ? undefined : null);
  for (const t of texts) writer.add(t);
  writer.finish();
  out.finish({});
  return { store: new TextStore(openContainer(path)), texts };
}

describe("text blocks", () => {
  test("the system's libzstd is used where it is installed (Debian's libzstd1)", () => {
    if (process.env.TOME_ZSTD === "node") return expect(zstdInUse()).toBe("node");
    const installed = ["/usr/lib/x86_64-linux-gnu/libzstd.so.1", "/usr/lib/aarch64-linux-gnu/libzstd.so.1"].some(existsSync);
    expect(zstdInUse()).toBe(installed ? "system" : "node");
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
        if (!Buffer.from(a).equals(Buffer.from(node(store.compressedBlock(b), store.blockSize(b))))) throw new Error(`block ${b} differs`);
        bytes += a.byteLength;
      }
      expect(bytes).toBe(Buffer.byteLength(texts.join("")));
    });
  }

  test("a damaged block is an error naming it damaged, both ways, never wrong text", async () => {
    const { store } = await storeOf(true);
    const block = Uint8Array.from(store.compressedBlock(3));
    block.fill(0x5a, 8, block.byteLength - 8);
    for (const via of ["system", "node"] as const) {
      const decompress = blockDecompressor(store.dictionary, via);
      expect(() => decompress(block, store.blockSize(3))).toThrow(/^a text block is damaged: zstd says/);
      // Whole, but not the size its chunks say: damaged too.
      expect(() => decompress(store.compressedBlock(3), store.blockSize(3) - 1)).toThrow(/^a text block is damaged/);
      expect(() => decompress(store.compressedBlock(3), store.blockSize(3) + 1)).toThrow(/^a text block is damaged: it holds/);
    }
  });
});
