/**
 * A snapshot damaged in one section, as a library engine meets it (D119): open() checks the header and the table
 * (D38) and, in one pass over the pages and blocks, what keeps every read within its sections and short; what it
 * cannot see (a byte of text, of an index) is found by verify(), which hashes every section as snapshot:verify does.
 * Each damage here was a hang, a TypeError or RangeError from inside, or a silently wrong answer.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeIngested } from "../src/build";
import { ingest } from "../src/ingest";
import { open, openUnguarded } from "../src/search";
import { TEXT_FIELD } from "../src/search/postings/fields";
import { BLOCK } from "../src/search/postings/postings-format";
import { ContainerWriter, openContainer, openSnapshot, SnapshotError } from "../src/snapshot";
import { refused, snapshotFor, SQUAD, tempDir, wikiOf, writeExport } from "./helpers";

// Per file (bun applies it to the current file only): the snapshot is built from a real dump.
setDefaultTimeout(120_000);

/** The SnapshotError open() throws for sections that do not hold together, saying `what`. */
const cannotRead = (path: string, what: string) =>
  `SnapshotError: ${path} cannot be read (${what}): is it damaged? \`bun run snapshot:verify ${path}\` checks every section against its hash; rebuild it with \`bun run snapshot:build --dump <dump>\` if one does not match.`;

/** The whole snapshot, its tables read (not damaged), and a copy of it with one section's values changed. */
async function fixture() {
  const source = await snapshotFor({ dumps: [SQUAD] });
  const whole = readFileSync(source);
  const snapshot = openSnapshot(source);
  const { container, pages, meta } = snapshot;
  const path = join(tempDir(), "damaged.tome");
  /** A copy whose section `name`, seen as `make`'s values, has value i set to v (then to the next pair's). */
  const damaged = (
    name: string,
    make: Uint8ArrayConstructor | Uint32ArrayConstructor | Float64ArrayConstructor,
    ...changes: [i: number, v: number][]
  ) => {
    const section = container.sections.find((s) => s.name === name)!;
    const copy = Buffer.from(whole);
    const values = new make(copy.buffer, copy.byteOffset + section.offset, section.length / make.BYTES_PER_ELEMENT);
    for (const [i, v] of changes) values[i] = v;
    writeFileSync(path, copy);
    return path;
  };
  /** A copy written anew (a table of its own) with section `name`'s bytes cut to `keep`, and meta changed by `meta`. */
  const rewritten = (name: string | undefined, keep: (bytes: Uint8Array) => Uint8Array, meta = (m: object) => m) => {
    const out = new ContainerWriter(path);
    for (const s of container.sections) {
      const bytes = container.read(s.name);
      out.section(s.name, s.name === name ? keep(bytes) : bytes);
    }
    out.finish(meta(container.meta as object));
    return path;
  };
  const text = {
    chunks: container.read("text.chunkEnd").byteLength / 4,
    blocks: container.read("text.blockLength").byteLength / 4,
  };
  const sections = container.read("sections.level").byteLength;
  return { source, whole, snapshot, pages, meta, path, damaged, rewritten, text, sections };
}

describe("a damaged snapshot, opened as a library (D119)", () => {
  test("a page's chunks past the chunks there are, or counted otherwise than the meta says, are refused at open", async () => {
    const { pages, meta, damaged, text } = await fixture();
    const documents = meta.indexedChunks;
    // Was a hang: a page of 4 billion chunks, each made when its page was shown.
    let path = damaged("pages.chunkCount", Uint32Array, [0, 0xffffffff]);
    expect(refused(() => open(path))).toBe(
      cannotRead(
        path,
        `page 0's 4294967295 chunks from ${pages.firstText[0]} (text), ${pages.firstDoc[0]} (index) run past the ${text.chunks} and ${documents} chunks there are`,
      ),
    );
    // One chunk fewer: the page answered without its last chunk.
    const many = pages.chunkCounts.findIndex((n) => n > 1);
    path = damaged("pages.chunkCount", Uint32Array, [many, pages.chunkCounts[many]! - 1]);
    expect(refused(() => open(path))).toBe(
      cannotRead(path, `pages.chunkCount counts ${documents - 1} chunks, the snapshot ${documents}`),
    );
    // Was "TypeError: undefined is not an object (evaluating 'this.parts[this.blockPart[b]].subarray')".
    path = damaged("pages.firstText", Uint32Array, [0, text.chunks]);
    expect(refused(() => open(path))).toBe(
      cannotRead(
        path,
        `page 0's ${pages.chunkCounts[0]} chunks from ${text.chunks} (text), ${pages.firstDoc[0]} (index) run past the ${text.chunks} and ${documents} chunks there are`,
      ),
    );
    path = damaged("pages.firstDoc", Uint32Array, [0, documents]);
    expect(refused(() => open(path))).toBe(
      cannotRead(
        path,
        `page 0's ${pages.chunkCounts[0]} chunks from ${pages.firstText[0]} (text), ${documents} (index) run past the ${text.chunks} and ${documents} chunks there are`,
      ),
    );
  });

  test("a page's sections past the sections there are, or more than there are in all, are refused at open", async () => {
    const { pages, damaged, sections } = await fixture();
    const count = (i: number) => pages.sectionsOf(i).length;
    // Was a hang: 4 billion headings read for one page.
    let path = damaged("pages.sectionCount", Uint32Array, [0, 0xffffffff]);
    expect(refused(() => open(path))).toBe(
      cannotRead(path, `page 0's 4294967295 sections from 0 run past the ${sections} there are`),
    );
    path = damaged("pages.sectionStart", Uint32Array, [0, sections]);
    expect(refused(() => open(path))).toBe(
      cannotRead(path, `page 0's ${count(0)} sections from ${sections} run past the ${sections} there are`),
    );
    // Each page's sections within the table, but more of them than it holds: pages shared their headings.
    path = damaged("pages.sectionCount", Uint32Array, [0, count(0) + count(1)]);
    expect(refused(() => open(path))).toBe(
      cannotRead(path, `pages.sectionCount counts ${sections + count(1)} sections, sections.level ${sections}`),
    );
  });

  test("a page's time no date can hold is refused at open, where changes() threw 'RangeError: Invalid Date'", async () => {
    const { damaged } = await fixture();
    for (const ts of [1e300, Number.NaN]) {
      const path = damaged("pages.ts", Float64Array, [3, ts]);
      expect(refused(() => open(path))).toBe(cannotRead(path, `page 3's time is ${ts}, no date`));
    }
  });

  test("a text block outside the text, or block tables that do not rise to the chunk count, are refused at open", async () => {
    const { snapshot, damaged, text } = await fixture();
    // Was "TypeError: undefined is not an object (evaluating 'this.parts[this.blockPart[b]].subarray')".
    let path = damaged("text.blockPart", Uint8Array, [0, 1]);
    expect(refused(() => open(path))).toBe(cannotRead(path, "text block 0 lies outside the text (part 1 of 1, at 0)"));
    path = damaged("text.blockStart", Float64Array, [1, 2 ** 40]);
    expect(refused(() => open(path))).toBe(
      cannotRead(path, `text block 1 lies outside the text (part 0 of 1, at ${2 ** 40})`),
    );
    const starts = new Float64Array(snapshot.container.read("text.blockStart").buffer);
    path = damaged("text.blockLength", Uint32Array, [2, 0xffffffff]);
    expect(refused(() => open(path))).toBe(
      cannotRead(path, `text block 2 lies outside the text (part 0 of 1, at ${starts[2]})`),
    );
    // Was "TypeError: bun:ffi cannot convert argument to 'u64'" (a block's size read past the chunk ends).
    path = damaged("text.blockFirst", Uint32Array, [2, 0xffffffff]);
    expect(refused(() => open(path))).toBe(cannotRead(path, "text.blockFirst falls at block 2"));
    path = damaged("text.blockFirst", Uint32Array, [text.blocks, text.chunks + 1]);
    expect(refused(() => open(path))).toBe(
      cannotRead(
        path,
        `text.blockFirst runs from 0 to ${text.chunks + 1}, not from 0 to the ${text.chunks} chunks of text.chunkEnd`,
      ),
    );
  });

  test("tables of other lengths than the pages and blocks, or than the meta's pages, are refused at open", async () => {
    const { meta, rewritten, text, pages } = await fixture();
    const n = pages.length;
    let path = rewritten("pages.firstDoc", (b) => b.subarray(4));
    expect(refused(() => open(path))).toBe(cannotRead(path, `pages.firstDoc holds ${n - 1} rows for ${n} pages`));
    path = rewritten("text.chunkSection", (b) => b.subarray(2));
    expect(refused(() => open(path))).toBe(
      cannotRead(path, `text.chunkSection holds ${text.chunks - 1} rows for ${text.chunks} chunks`),
    );
    path = rewritten("text.blockStart", (b) => b.subarray(8));
    expect(refused(() => open(path))).toBe(
      cannotRead(
        path,
        `text.blockLength holds ${text.blocks} blocks, text.blockPart ${text.blocks}, text.blockStart ${text.blocks - 1}, text.blockFirst ${text.blocks}`,
      ),
    );
    path = rewritten(
      undefined,
      (b) => b,
      (m) => ({ ...m, indexedPages: meta.indexedPages + 1 }),
    );
    expect(refused(() => open(path))).toBe(cannotRead(path, `pages.id holds ${n} pages, the snapshot ${n + 1}`));
  });

  test("handed the identity of the very file it opens (a search worker's open of what the request thread checked), openSnapshot skips the pass; otherwise, and in open(), it runs", async () => {
    const { pages, meta, damaged, text } = await fixture();
    // Damage the pass over the pages finds, then damage the pass over the text blocks finds.
    const damages: (() => [path: string, what: string])[] = [
      () => [
        damaged("pages.chunkCount", Uint32Array, [0, 0xffffffff]),
        `page 0's 4294967295 chunks from ${pages.firstText[0]} (text), ${pages.firstDoc[0]} (index) run past the ${text.chunks} and ${meta.indexedChunks} chunks there are`,
      ],
      () => [damaged("text.blockPart", Uint8Array, [0, 1]), "text block 0 lies outside the text (part 1 of 1, at 0)"],
    ];
    for (const damage of damages) {
      const [path, what] = damage();
      const refusal = cannotRead(path, what);
      const identity = openContainer(path).identity;
      // Trusted only for this file as it is: the identity is all the pass is skipped on (the request thread hands it
      // on once its own open has checked the file).
      const trusted = openSnapshot(path, identity);
      expect(trusted.checked).toBe(identity);
      trusted.container.letGo();
      expect(refused(() => openSnapshot(path, `${identity}0`))).toBe(refusal);
      expect(refused(() => openUnguarded(path))).toBe(refusal);
      expect(refused(() => open(path))).toBe(refusal);
      // The same file changed since (its times here; a write changes its size or table too) is checked again.
      utimesSync(path, new Date(0), new Date(0));
      expect(refused(() => openSnapshot(path, identity))).toBe(refusal);
    }
  });

  test("an index whose meta counts other entries or postings parts than there are is refused at open", async () => {
    const { meta, rewritten } = await fixture();
    const edited = (change: (m: Record<string, unknown>) => object) => (bytes: Uint8Array) =>
      new TextEncoder().encode(JSON.stringify(change(JSON.parse(new TextDecoder().decode(bytes)))));
    let path = rewritten(
      "index.text.meta",
      edited((m) => ({ ...m, documentCount: meta.indexedChunks + 9 })),
    );
    expect(refused(() => open(path))).toBe(
      cannotRead(path, `index.text.meta counts ${meta.indexedChunks + 9} entries, the snapshot ${meta.indexedChunks}`),
    );
    // Was "Error: postings: no part 0" at the first search.
    for (const parts of [0, 2]) {
      path = rewritten(
        "index.titles.meta",
        edited((m) => ({ ...m, postingsParts: parts })),
      );
      expect(refused(() => open(path))).toBe(cannotRead(path, `index.titles.meta says ${parts} postings parts`));
    }
  });

  test("a title whose page is past the page table throws a SnapshotError when looked up, where its time was 'Invalid Date'", async () => {
    const { pages, snapshot, damaged } = await fixture();
    const n = pages.length;
    const entries = snapshot.container.read("titles.page").byteLength / 4;
    const path = damaged(
      "titles.page",
      Uint32Array,
      ...Array.from({ length: entries }, (_x, i): [number, number] => [i, n]),
    );
    const tome = open(path);
    expect(refused(() => tome.pageByTitle(pages.title(0)))).toBe(
      cannotRead(path, `titles.page names page ${n} of ${n}`),
    );
    tome.close();
  });

  test("a chunk whose end in its block is damaged throws a SnapshotError when read, where it read another chunk's text or none", async () => {
    const { snapshot, damaged } = await fixture();
    const store = snapshot.pages;
    // A chunk not the last of its block: its end is read only with its text.
    const ends = new Uint32Array(snapshot.container.read("text.chunkEnd").buffer);
    const c = ends.findIndex((end, i) => i > 0 && ends[i + 1]! > end);
    const path = damaged("text.chunkEnd", Uint32Array, [c, 0xffffffff]);
    const tome = open(path);
    const page = store.firstText.findIndex((first, i) => first <= c && c < first + store.chunkCounts[i]!);
    const chunks = tome.page(store.ids[page]!)!.chunks;
    const said = refused(() => chunks[c - store.firstText[page]!]!.text);
    expect(said).toStartWith(
      `SnapshotError: a text block is damaged: chunk ${c} runs from ${ends[c - 1]} to 4294967295 of its `,
    );
    tome.close();
  });

  test("verify() names the damaged sections, [] when the file is whole, as snapshot:verify does", async () => {
    const { source, whole, snapshot, path } = await fixture();
    const tome = open(source);
    expect(await tome.verify()).toEqual([]);
    tome.close();
    // A byte of text and one of the index: open() cannot see them, its answers would be wrong.
    const copy = Buffer.from(whole);
    for (const name of ["text.blocks.0", "index.text.postings.0"]) {
      const s = snapshot.container.sections.find((x) => x.name === name)!;
      copy[s.offset + (s.length >> 1)]! ^= 0x01;
    }
    writeFileSync(path, copy);
    const damaged = open(path);
    expect(await damaged.verify()).toEqual(["text.blocks.0", "index.text.postings.0"]);
    damaged.close();
    await expect(damaged.verify()).rejects.toThrow(
      new SnapshotError(`${path} is closed: open() it again to search it.`),
    );
  });
});

/**
 * What searching `q` in the snapshot at `path` says (as refused()), from a child process given 60 s: a search that
 * never ends would hold this process, and the test runner, for good. "no answer" when it was stopped.
 */
async function searchedApart(path: string, q: string): Promise<string> {
  const script = `import { open } from ${JSON.stringify(join(import.meta.dir, "../src/search"))};
    try { open(process.argv[1]).search(process.argv[2]); console.log("answered"); }
    catch (e) { console.log(e.name + ": " + e.message); }`;
  const child = Bun.spawn([process.execPath, "-e", script, path, q], { timeout: 60_000, stderr: "pipe" });
  const said = (await new Response(child.stdout).text()).trim();
  await child.exited;
  return said || `no answer (${child.signalCode ?? child.exitCode})`;
}

describe("a damaged postings list, met by a search (D163)", () => {
  test("a block whose documents run past the index's, or skip data saying so, throws a SnapshotError naming snapshot:verify, where the search never ended or ran out of memory", async () => {
    const { source, meta, damaged } = await fixture();
    const whole = open(source);
    const listOf = (word: string) =>
      whole.text.termLists(whole.text.termOf(word)!).find((l) => l.field === TEXT_FIELD)!;
    const [design, first] = [listOf("design"), listOf("first")];
    whole.close();
    // A list starts with varint(df·2 + 1) (postings-format.ts): a byte below 64 documents, two up to 8192.
    const headerBytes = (df: number) => (df < 64 ? 1 : 2);
    expect([design.df < BLOCK, first.df > BLOCK]).toEqual([true, true]);
    const documents = meta.indexedChunks;
    // A short list's one block, its token made gaps of 24 bits without exceptions: documents past the chunks. The
    // conjunction's windows went past the last chunk and never ended.
    let path = damaged("index.text.postings.0", Uint8Array, [design.address + headerBytes(design.df) + 3, 24]);
    expect(await searchedApart(path, "design")).toBe(
      cannotRead(
        path,
        `the postings list at byte ${design.address} of part 0 has a block (0) whose documents do not rise within the ${documents} there are to the last its skip data holds, within its bytes`,
      ),
    );
    // A long list's skip data (4-byte aligned, after the documents' length): block 1's last document past the chunks.
    // Was "RangeError: Out of memory", a window as long as that.
    const lastDocs = ((first.address + headerBytes(first.df) + 3) >> 2) + 1;
    path = damaged("index.text.postings.0", Uint32Array, [lastDocs + 1, 0xffffffff]);
    expect(await searchedApart(path, "first state")).toBe(
      cannotRead(
        path,
        `the postings list at byte ${first.address} of part 0 has block 1 end at document 4294967295 of ${documents}`,
      ),
    );
  });
});

describe("a whole snapshot of an edge shape opens, its checks passed (D119)", () => {
  test("0 pages, 1 page, and a page of 0 chunks beside others: open() answers, verify() finds nothing", async () => {
    const none = await wikiOf([{ title: "Alpha", text: "Beta", redirect: true }]);
    expect(none.snapshot.pages.length).toBe(0);
    expect(none.search("beta").hits).toEqual([]);
    expect(await none.verify()).toEqual([]);
    const one = await wikiOf([{ title: "Alpha", text: "Alpha is a word." }]);
    expect(one.search("alpha").hits.map((h) => h.page.title)).toEqual(["Alpha"]);
    expect(await one.verify()).toEqual([]);
    // A page of no chunks, first: its firstText and firstDoc are those of the page after it.
    const xml = writeExport([
      { title: "Alpha", text: "Alpha is a word." },
      { title: "Beta", text: "Beta is another word." },
    ]);
    const ingested = await ingest({ dumps: [xml], workers: 1 });
    ingested.articles[0]!.chunks = [];
    const out = join(dirname(xml), "empty-page.tome");
    writeIngested(ingested, out, 300);
    const empty = open(out);
    expect(empty.snapshot.pages.list().map((p) => [p.title, p.chunks.length])).toEqual([
      ["Alpha", 0],
      ["Beta", 1],
    ]);
    expect(empty.search("beta").hits.map((h) => h.page.title)).toEqual(["Beta"]);
    expect(await empty.verify()).toEqual([]);
    for (const engine of [none, one, empty]) engine.close();
  });
});
