/**
 * Block-compressed postings (src/search/postings/postings.ts): lists of real postings written and read
 * back, skip data, ranges, positions; and shards on them scoring exactly as the flat arrays
 * they replace (a copy of the old flat layout and its match() is kept here as the oracle).
 */
import { describe, expect, test } from "bun:test";
import { openSnapshot, type Snapshot } from "../src/snapshot";
import { textShardOptions, TEXT_BOOSTS } from "../src/search/postings/fields";
import { BLOCK, COARSE } from "../src/search/postings/postings-format";
import { memoryPostings } from "../src/search/postings/postings-writer";
import { PostingsReader, type PostingsCursor } from "../src/search/postings/postings";
import { TermLists } from "../src/search/postings/term-lists";
import { buildShard } from "../src/search/indexer/invert";
import { Shard } from "../src/search/postings/shard";
import { BM25, popcount, type ShardData, type ShardOptions, type WordSpec } from "../src/search/postings/shard-types";
import { indexKey } from "../src/search/text/analyze";
import { EN_2006, EN_2016, engineFor, snapshotFor, TRUNCATED_XZ } from "./helpers";

type Doc = Record<string, string>;

function textDocs(snapshot: Snapshot): Doc[] {
  return snapshot.pages.list().flatMap((page) =>
    page.chunks.map((chunk) => ({
      text: chunk.text,
      section: page.sections[chunk.section]?.heading ?? "",
      title: page.title,
    })),
  );
}

/** The old layout: for (term, field) list k, docs[offsets[k]..offsets[k+1]) with freqs, terms in key order. */
interface Flat {
  keys: string[];
  offsets: Uint32Array;
  docs: Uint32Array;
  freqs: Uint8Array;
}

/** The old buildShard's postings, computed the plain way (tokens counted per document and field). */
function flatPostings(docs: Doc[], options: ShardOptions): Flat {
  const F = options.fields.length;
  const lists = new Map<string, [number, number][]>();
  docs.forEach((doc, d) => {
    options.fields.forEach((field, f) => {
      const counts = new Map<string, number>();
      for (const token of options.tokenize(doc[field] ?? "")) {
        const key = options.processTerm(token);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      for (const [key, n] of counts) {
        const id = `${key}\u0000${f}`;
        let list = lists.get(id);
        if (!list) lists.set(id, (list = []));
        list.push([d, Math.min(255, n)]);
      }
    });
  });
  const keys = [...new Set([...lists.keys()].map((id) => id.split("\u0000")[0]!))].sort((a, b) => (a < b ? -1 : 1));
  const offsets = new Uint32Array(keys.length * F + 1);
  let total = 0;
  for (const l of lists.values()) total += l.length;
  const flatDocs = new Uint32Array(total);
  const freqs = new Uint8Array(total);
  let at = 0;
  keys.forEach((key, t) => {
    for (let f = 0; f < F; f++) {
      offsets[t * F + f] = at;
      for (const [d, n] of lists.get(`${key}\u0000${f}`) ?? []) {
        flatDocs[at] = d;
        freqs[at++] = n;
      }
    }
  });
  offsets[keys.length * F] = at;
  return { keys, offsets, docs: flatDocs, freqs };
}

function lowerBound(a: Uint32Array, lo: number, hi: number, value: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The old Shard.match() over flat arrays, verbatim but for its setting (the terms come from the new shard's derive()). */
function flatMatch(
  shard: Shard,
  data: ShardData,
  flat: Flat,
  boosts: number[],
  words: WordSpec[],
  options: { fields?: number[]; from?: number; to?: number },
) {
  const derived = shard.derive(words);
  const F = data.fields.length;
  const N = data.documentCount;
  const norms = data.fields.map((_f, f) => {
    const lengths = data.fieldLengths.subarray(f * N, (f + 1) * N);
    let sum = 0;
    for (let d = 0; d < N; d++) sum += lengths[d]!;
    const average = sum / N || 1;
    const norm = new Float32Array(N);
    for (let d = 0; d < N; d++) norm[d] = BM25.k * (1 - BM25.b + (BM25.b * lengths[d]!) / average);
    return norm;
  });
  const fields = options.fields ?? data.fields.map((_f, i) => i);
  const from = options.from ?? 0;
  const to = options.to ?? N;
  const whole = from === 0 && to === N;
  const { docs, freqs, offsets } = flat;
  const scores = new Float64Array(N);
  const masks = new Uint32Array(N);
  const touched: number[] = [];
  const k1 = BM25.k + 1;
  let postings = 0;
  for (const { word, term, weight } of derived) {
    const bit = (1 << word) >>> 0;
    for (const f of fields) {
      let lo = offsets[term * F + f]!;
      let hi = offsets[term * F + f + 1]!;
      if (lo === hi) continue;
      const df = hi - lo;
      const w = weight * boosts[f]! * Math.log(1 + (N - df + 0.5) / (df + 0.5));
      if (!whole) {
        lo = lowerBound(docs, lo, hi, from);
        hi = lowerBound(docs, lo, hi, to);
      }
      const norm = norms[f]!;
      postings += hi - lo;
      for (let p = lo; p < hi; p++) {
        const d = docs[p]!;
        const tf = freqs[p]!;
        if (masks[d] === 0) touched.push(d);
        scores[d]! += w * (BM25.d + (tf * k1) / (tf + norm[d]!));
        masks[d] = (masks[d]! | bit) >>> 0;
      }
    }
  }
  return {
    postings,
    docs: touched,
    masks: touched.map((d) => masks[d]!),
    scores: touched.map((d) => scores[d]! * popcount(masks[d]!)),
  };
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Fixture {
  docs: Doc[];
  options: ShardOptions;
  data: ShardData;
  shard: Shard;
  flat: Flat;
}

/**
 * The options with their tokenize and processTerm remembered: each field's text is tokenized once in this file, though
 * buildShard, the flat layout and the tests' own expectations each ask for its tokens (a Japanese text's took 7 s of
 * CPU a time). The same functions on the same text: the same tokens, frozen so that no reader changes them for another.
 */
function remembered(options: ShardOptions): ShardOptions {
  const tokens = new Map<string, string[]>();
  const keys = new Map<string, string>();
  return {
    ...options,
    tokenize: (text) => {
      let made = tokens.get(text);
      if (!made) tokens.set(text, (made = Object.freeze(options.tokenize(text)) as string[]));
      return made;
    },
    processTerm: (token) => {
      let key = keys.get(token);
      if (key === undefined) keys.set(token, (key = options.processTerm(token)));
      return key;
    },
  };
}

const fixtures = new Map<string, Promise<Fixture>>();
function fixture(name: "en" | "ja"): Promise<Fixture> {
  let p = fixtures.get(name);
  if (!p) {
    p = (async () => {
      const path =
        name === "en"
          ? await snapshotFor({ dumps: [EN_2016, EN_2006] })
          : await snapshotFor({ dumps: [TRUNCATED_XZ[3]!], allowTruncated: true });
      const snapshot = openSnapshot(path);
      const docs = textDocs(snapshot);
      const options = remembered(textShardOptions(snapshot.meta.wiki.lang));
      const data = buildShard(docs.length, (i) => docs[i]!, options);
      return { docs, options, data, shard: new Shard(data, TEXT_BOOSTS), flat: flatPostings(docs, options) };
    })();
    fixtures.set(name, p);
  }
  return p;
}

/** Every (doc, tf) of a list, block by block. */
function readAll(cursor: PostingsCursor): [number[], number[]] {
  const docs: number[] = [];
  const tfs: number[] = [];
  for (let b = 0; b < cursor.blocks; b++) {
    const n = cursor.decode(b);
    for (let i = 0; i < n; i++) {
      docs.push(cursor.docs[i]!);
      tfs.push(cursor.tfs[i]!);
    }
  }
  return [docs, tfs];
}

/** Real lists of the given sizes, as (docs, tfs), and the longest last. */
function realLists(flat: Flat, sizes: number[]): [Uint32Array, Uint8Array][] {
  const out: [Uint32Array, Uint8Array][] = [];
  const n = flat.offsets.length - 1;
  let longest = 0;
  for (let k = 1; k < n; k++)
    if (flat.offsets[k + 1]! - flat.offsets[k]! > flat.offsets[longest + 1]! - flat.offsets[longest]!) longest = k;
  // The first list of each size or, when none has it, the first postings of the first longer one.
  for (const size of sizes) {
    let k = 0;
    while (k < n && flat.offsets[k + 1]! - flat.offsets[k]! !== size) k++;
    if (k === n) k = 0;
    while (k < n && flat.offsets[k + 1]! - flat.offsets[k]! < size) k++;
    const lo = flat.offsets[k]!;
    out.push([flat.docs.subarray(lo, lo + size), flat.freqs.subarray(lo, lo + size)]);
  }
  out.push([
    flat.docs.subarray(flat.offsets[longest], flat.offsets[longest + 1]),
    flat.freqs.subarray(flat.offsets[longest], flat.offsets[longest + 1]),
  ]);
  return out;
}

describe("the postings codec", () => {
  test("real lists of 1, 127, 128, 129, 255, 256, 257 and thousands of postings read back whole, by range and by document, across several parts", async () => {
    const { flat } = await fixture("en");
    const lists = realLists(flat, [1, 2, 127, 128, 129, 255, 256, 257, 1000]);
    expect(lists.length).toBe(10);
    expect(lists.at(-1)![0].length).toBeGreaterThan(3000);
    // A tiny part size, so that the lists spread over several parts.
    const { writer, parts } = memoryPostings(4096);
    const addresses = lists.map(([docs, tfs]) => {
      writer.begin(false);
      for (const [i, d] of docs.entries()) writer.add(d, tfs[i]!);
      return writer.end();
    });
    const reader = new PostingsReader(parts());
    expect(reader.parts.length).toBeGreaterThanOrEqual(2);
    expect(reader.parts.every((p) => p.byteLength <= 4096 + 8)).toBe(true);
    const cursor = reader.cursor();
    const rand = random(7);
    lists.forEach(([docs, tfs], l) => {
      cursor.open(addresses[l]!);
      expect(cursor.df).toBe(docs.length);
      expect(cursor.blocks).toBe(Math.ceil(docs.length / BLOCK));
      const [gotDocs, gotTfs] = readAll(cursor);
      expect(gotDocs).toEqual([...docs]);
      expect(gotTfs).toEqual([...tfs]);
      for (let b = 0; b < cursor.blocks; b++) {
        const block = [...tfs.subarray(b * BLOCK, (b + 1) * BLOCK)];
        expect(cursor.lastDoc(b)).toBe(docs[Math.min(docs.length, (b + 1) * BLOCK) - 1]!);
        // Written without norms: a block's impact is its greatest tf, at length 0.
        expect([cursor.impactTf(b), cursor.impactLength(b)]).toEqual([Math.max(...block), 0]);
      }
      // holds() at every block edge, just inside and outside it, and beyond the ends.
      const probes = new Set<number>([0, docs[0]! - 1, docs.at(-1)! + 1, docs.at(-1)! + 1000]);
      for (let i = 0; i < docs.length; i += BLOCK)
        for (const j of [i - 1, i, i + 1])
          if (j >= 0 && j < docs.length) for (const delta of [-1, 0, 1]) probes.add(docs[j]! + delta);
      for (let i = 0; i < 50; i++) probes.add(Math.floor(rand() * (docs.at(-1)! + 2)));
      const inList = new Set(docs);
      for (const doc of probes) {
        if (doc < 0) continue;
        expect(cursor.holds(doc)).toBe(inList.has(doc));
        expect(cursor.tf(doc)).toBe(inList.has(doc) ? tfs[docs.indexOf(doc)]! : 0);
      }
      // Ranges [from, to), many crossing blocks.
      for (let i = 0; i < 30; i++) {
        const a = Math.floor(rand() * (docs.at(-1)! + 2));
        const b = a + Math.floor(rand() * (docs.at(-1)! / 3 + 2));
        const seen: number[] = [];
        cursor.forEach(
          (d, tf) => {
            seen.push(d);
            expect(tf).toBe(tfs[docs.indexOf(d)]!);
          },
          a,
          b,
        );
        expect(seen).toEqual([...docs].filter((d) => d >= a && d < b));
      }
    });
  }, 300_000);

  test("holds() and tf() answer alike whether documents are asked in ascending, descending or shuffled order (lookups start from the last answer)", async () => {
    const { flat } = await fixture("en");
    const lists = realLists(flat, [1, 127, 128, 129, 257, 1000]);
    const { writer, parts } = memoryPostings(1 << 20);
    const addresses = lists.map(([docs, tfs]) => {
      writer.begin(false);
      for (const [i, d] of docs.entries()) writer.add(d, tfs[i]!);
      return writer.end();
    });
    const cursor = new PostingsReader(parts()).cursor();
    const rand = random(11);
    let checked = 0;
    lists.forEach(([docs, tfs], l) => {
      const tfOf = new Map([...docs].map((d, i) => [d, tfs[i]!]));
      // Every document, its neighbours, and the gaps past both ends.
      const asked = [...new Set([...docs].flatMap((d) => [d - 1, d, d + 1]).filter((d) => d >= 0))];
      asked.push(docs.at(-1)! + 500);
      asked.sort((a, b) => a - b);
      const shuffled = asked
        .map((d) => [rand(), d] as const)
        .sort((a, b) => a[0] - b[0])
        .map(([, d]) => d);
      // Ascending with jumps of many blocks: every 7th document only.
      const sparse = asked.filter((_, i) => i % 7 === 0);
      for (const order of [asked, [...asked].reverse(), shuffled, sparse]) {
        cursor.open(addresses[l]!);
        for (const doc of order) {
          expect(cursor.tf(doc)).toBe(tfOf.get(doc) ?? 0);
          expect(cursor.holds(doc)).toBe(tfOf.has(doc));
          checked++;
        }
      }
    });
    expect(checked).toBeGreaterThan(10_000);
  }, 300_000);

  test("term frequencies up to 255 with more positions than that, and positions round trip", async () => {
    const { flat } = await fixture("en");
    const docs = realLists(flat, [300])[0]![0];
    const rand = random(3);
    // Real documents with made-up occurrences: some over the 255 cap, most 1.
    const positions = [...docs].map((_d, i) => {
      const n = i % 50 === 0 ? 256 + Math.floor(rand() * 100) : i % 7 === 0 ? 255 : 1 + Math.floor(rand() * 3);
      const out: number[] = [];
      let p = -1;
      for (let j = 0; j < n; j++) out.push((p += 1 + Math.floor(rand() * (i % 3 === 0 ? 20_000 : 5))));
      return out;
    });
    const { writer, parts } = memoryPostings();
    writer.begin(true);
    docs.forEach((d, i) => {
      writer.add(d, Math.min(255, positions[i]!.length));
      for (const p of positions[i]!) writer.position(p);
    });
    const address = writer.end();
    const cursor = new PostingsReader(parts()).cursor().open(address);
    expect(cursor.hasPositions).toBe(true);
    const [, tfs] = readAll(cursor);
    expect(tfs).toEqual(positions.map((p) => Math.min(255, p.length)));
    expect(tfs.filter((t) => t === 255).length).toBeGreaterThan(10);
    for (const [i, d] of docs.entries()) expect([...cursor.positions(d)!]).toEqual(positions[i]!);
    // Each document's values read alone, wherever its runs and their exceptions fall: asked backwards too.
    for (let i = docs.length - 1; i >= 0; i -= 3) expect([...cursor.positions(docs[i]!)!]).toEqual(positions[i]!);
    expect(cursor.positions(docs.at(-1)! + 1)).toBeUndefined();
    // A wrong number of positions for the term frequency is refused.
    writer.begin(true);
    writer.add(1, 2);
    writer.position(4);
    expect(() => writer.end()).toThrow(/positions/);
    writer.begin(false);
    writer.add(5, 1);
    expect(() => writer.add(5, 1)).toThrow(/document 5 after 5/);
    expect(() => writer.add(6, 0)).toThrow(/term frequency/);
  }, 300_000);

  /** A list written alone: (docs, tfs, positions per document or none), read back every way, and its size in bytes. */
  function roundTrip(docs: number[], tfs: number[], positions?: number[][], exact = false): number {
    const { writer, parts } = memoryPostings();
    writer.begin(positions !== undefined);
    docs.forEach((d, i) => {
      writer.add(d, tfs[i]!);
      for (const p of positions?.[i] ?? []) writer.position(p);
    });
    const address = writer.end();
    const size = writer.bytes;
    // Exactly the list's bytes, in a buffer of their own: reads near the part's end take the byte-by-byte way.
    const part = exact ? new Uint8Array(parts()[0]!.subarray(0, size)) : parts()[0]!;
    const cursor = new PostingsReader([part]).cursor().open(address);
    expect(cursor.df).toBe(docs.length);
    expect(cursor.blocks).toBe(Math.max(1, Math.ceil(docs.length / BLOCK)));
    expect(readAll(cursor)).toEqual([docs, tfs]);
    for (let b = 0; b < cursor.blocks; b++) {
      expect(cursor.lastDoc(b)).toBe(docs[Math.min(docs.length, (b + 1) * BLOCK) - 1]!);
      expect(cursor.impactTf(b)).toBe(Math.max(...tfs.slice(b * BLOCK, (b + 1) * BLOCK)));
    }
    docs.forEach((d, i) => {
      expect(cursor.tf(d)).toBe(tfs[i]!);
      if (positions) expect([...cursor.positions(d)!]).toEqual(positions[i]!);
    });
    expect(cursor.holds(docs.at(-1)! + 1)).toBe(false);
    if (positions) {
      // The merge's way: whole blocks with every document's positions.
      const got: number[][] = [];
      for (let b = 0; b < cursor.blocks; b++) {
        const n = cursor.decodePositions(b);
        for (let i = 0; i < n; i++)
          got.push([...cursor.positionValues.subarray(cursor.positionStarts[i], cursor.positionStarts[i + 1])]);
      }
      expect(got).toEqual(positions);
    }
    return size;
  }

  test("lists of 1 to 4 and 127, 128, 129, 255, 256 documents with positions: blocks and position runs varint-coded below 4 values, packed from 4", () => {
    const rand = random(5);
    for (const df of [1, 2, 3, 4, 5, 127, 128, 129, 255, 256]) {
      for (const exact of [false, true]) {
        const docs: number[] = [];
        let d = Math.floor(rand() * 50);
        for (let i = 0; i < df; i++) docs.push((d += 1 + Math.floor(rand() * (i % 9 === 0 ? 5000 : 20))));
        const positions = docs.map((_d, i) => {
          const out: number[] = [];
          let p = Math.floor(rand() * 300) - 1;
          for (let j = 0, n = i % 5 === 0 ? 3 + Math.floor(rand() * 6) : 1; j < n; j++)
            out.push((p += 1 + Math.floor(rand() * 40)));
          return out;
        });
        roundTrip(
          docs,
          positions.map((p) => p.length),
          positions,
          exact,
        );
      }
    }
  });

  test("term frequencies capped at 255 keep their true count of positions, in packed and varint blocks", () => {
    for (const df of [2, 130]) {
      const docs = Array.from({ length: df }, (_x, i) => 3 * i + 1);
      const positions = docs.map((_d, i) =>
        Array.from({ length: i % 3 === 0 ? 255 + i : i % 3 === 1 ? 255 : 2 }, (_y, j) => 2 * j + (i % 2)),
      );
      const tfs = positions.map((p) => Math.min(255, p.length));
      roundTrip(docs, tfs, positions);
      expect(tfs.filter((t) => t === 255).length).toBeGreaterThan(df / 2);
    }
  });

  test("width 0 (consecutive documents, every tf 1), width 32 (positions near 2^32) and exceptions round trip, at the sizes they are meant to take", () => {
    // 256 consecutive documents with tf 1: per block a token for the gaps and one for the tfs, nothing else.
    const consecutive = Array.from({ length: 256 }, (_x, i) => i);
    const ones = consecutive.map(() => 1);
    const widthZero = roundTrip(consecutive, ones);
    // Header (2 bytes), padding, u32 docsLength, 2 × (lastDoc, docsStart: 8 bytes, impact: 3), a coarse impact (3), 2 × 2 tokens.
    expect(widthZero).toBeLessThanOrEqual(2 + 3 + 4 + 22 + 3 + 4);
    // One position each, all past 2^31: 32-bit values, packed at width 32.
    const far = consecutive.slice(0, 130).map((_d, i) => [2 ** 32 - 1 - 3 * (130 - i)]);
    const wide = roundTrip(consecutive.slice(0, 130), ones.slice(0, 130), far);
    const positionsAtZero = roundTrip(
      consecutive.slice(0, 130),
      ones.slice(0, 130),
      consecutive.slice(0, 130).map(() => [0]),
    );
    expect(wide - positionsAtZero).toBeGreaterThanOrEqual(130 * 4 - 4);
    expect(wide - positionsAtZero).toBeLessThanOrEqual(130 * 4 + 8);
    // Small gaps and tfs with a few far larger: exceptions, far smaller than packing all at the widest width.
    const docs: number[] = [];
    let d = 0;
    for (let i = 0; i < 128; i++) docs.push((d += i % 40 === 7 ? 1_000_000 + i : 1 + (i % 3)));
    const tfs = docs.map((_x, i) => (i % 50 === 3 ? 200 : 1 + (i % 2)));
    const withExceptions = roundTrip(docs, tfs);
    // Packed at the widest width (20 bits for the gaps, 8 for the tfs) the block alone would take 448 bytes; with exceptions, about 75.
    expect(withExceptions).toBeLessThan(128);
    // Every tf 1 but one of 255 (and one of 129): width 0, the exceptions' high bits a varint of two bytes.
    const rare = docs.map((_x, i) => (i === 70 ? 255 : i === 5 ? 129 : 1));
    expect(roundTrip(docs, rare) - roundTrip(docs, tfs)).toBeLessThan(0);
  });

  test("document numbers up to 2^31 − 1, alone, after 0 and in packed blocks", () => {
    const top = 2 ** 31 - 1;
    roundTrip([top], [1]);
    roundTrip([0, top], [3, 1]);
    roundTrip([0, 1, 2, 3, top], [1, 2, 1, 255, 7]);
    const nearTop = Array.from({ length: 200 }, (_x, i) => top - 2 * (199 - i));
    roundTrip(
      nearTop,
      nearTop.map((_x, i) => 1 + (i % 4)),
    );
    roundTrip(
      [0, ...nearTop.slice(1)],
      nearTop.map((_x, i) => 1 + (i % 4)),
    );
    const { writer } = memoryPostings();
    writer.begin(false);
    expect(() => writer.add(top + 1, 1)).toThrow(/document 2147483648/);
  });
});

describe("a shard on block postings", () => {
  for (const name of ["en", "ja"] as const) {
    test(`${name}: every list holds exactly the flat layout's postings, and positions match the field's tokens`, async () => {
      const { data, shard, flat, docs, options } = await fixture(name);
      const F = data.fields.length;
      const lists = new TermLists(data.lists);
      expect(data.lists.first.length).toBe(flat.keys.length);
      const cursor = new PostingsReader(data.postings).cursor();
      let present = 0;
      for (let k = 0; k < flat.keys.length * F; k++) {
        const lo = flat.offsets[k]!;
        const hi = flat.offsets[k + 1]!;
        const [term, field] = [Math.floor(k / F), k % F];
        expect(lists.df(term, field)).toBe(hi - lo);
        if (lo === hi) {
          expect(lists.index(term, field)).toBe(-1);
          continue;
        }
        const list = lists.index(term, field);
        expect(list).toBe(present++);
        cursor.open(lists.address(list));
        let i = lo;
        for (let b = 0; b < cursor.blocks; b++) {
          const n = cursor.decode(b);
          for (let j = 0; j < n; j++, i++) {
            if (cursor.docs[j] !== flat.docs[i] || cursor.tfs[j] !== flat.freqs[i])
              throw new Error(`list ${k} posting ${i - lo} differs`);
          }
        }
        expect(i).toBe(hi);
      }
      expect(data.lists.df.length).toBe(present);
      // Positions: the token indexes of each key in the text and section fields of sampled documents.
      const rand = random(11);
      let checked = 0;
      for (let s = 0; s < 60; s++) {
        const d = Math.floor(rand() * docs.length);
        for (const [field, f] of [
          ["text", 0],
          ["section", 1],
        ] as const) {
          const expected = new Map<string, number[]>();
          options.tokenize(docs[d]![field]!).forEach((token, i) => {
            const key = options.processTerm(token);
            expected.set(key, [...(expected.get(key) ?? []), i]);
          });
          for (const [key, list] of expected) {
            const term = shard.derive([{ key, prefix: false, fuzzy: 0 }]).find((x) => x.weight === 1)!.term;
            expect([...shard.positions(term, f, d)!]).toEqual(list);
            expect(shard.holds(term, d)).toBe(true);
            checked++;
          }
        }
        // The title field keeps no positions.
        const titleKey = options.processTerm(options.tokenize(docs[d]!.title!)[0]!);
        const titleTerm = shard.derive([{ key: titleKey, prefix: false, fuzzy: 0 }])[0]!.term;
        expect(shard.positions(titleTerm, 2, d)).toBeUndefined();
      }
      expect(checked).toBeGreaterThan(1000);
    }, 300_000);
  }

  for (const name of ["en", "ja"] as const) {
    test(`${name}: phrases and the smallest span read from the positions agree with the field's tokens`, async () => {
      const { shard, docs, options } = await fixture(name);
      const rand = random(23);
      const keysOf = (text: string) => options.tokenize(text).map((t) => options.processTerm(t));
      const termOf = (key: string) => shard.termOf(key)!;
      // The engine's phrase check, asked of one document.
      const holdsSequence = (terms: number[], field: number, doc: number) =>
        shard.sequenceCheck(terms, field)?.(doc) ?? false;
      const holds = (ks: string[], seq: string[]) => ks.some((_k, i) => seq.every((x, j) => ks[i + j] === x));
      const span = (ks: string[], wanted: Set<string>) => {
        const present = new Set(ks.filter((k) => wanted.has(k)));
        if (present.size < 2) return 0;
        let best = Infinity;
        for (let lo = 0; lo < ks.length; lo++) {
          if (!present.has(ks[lo]!)) continue;
          const seen = new Set<string>();
          for (let hi = lo; hi < ks.length; hi++) {
            if (present.has(ks[hi]!)) seen.add(ks[hi]!);
            if (seen.size === present.size) {
              best = Math.min(best, hi - lo + 1);
              break;
            }
          }
        }
        return best;
      };
      let found = 0;
      let absent = 0;
      const long = docs.map((_d, i) => i).filter((i) => keysOf(docs[i]!.text!).length > 5);
      for (let s = 0; s < 300; s++) {
        const d = long[Math.floor(rand() * long.length)]!;
        const ks = keysOf(docs[d]!.text!);
        const at = Math.floor(rand() * (ks.length - 3));
        const phrase = ks.slice(at, at + 2 + Math.floor(rand() * 2));
        expect(holdsSequence(phrase.map(termOf), 0, d)).toBe(true);
        for (const e of [d, Math.floor(rand() * docs.length), Math.floor(rand() * docs.length)]) {
          for (const [field, f] of [
            ["text", 0],
            ["section", 1],
          ] as const) {
            const other = keysOf(docs[e]![field]!);
            for (const seq of [phrase, [...phrase].reverse()]) {
              const expected = holds(other, seq);
              expect(holdsSequence(seq.map(termOf), f, e)).toBe(expected);
              if (expected) found++;
              else absent++;
            }
          }
          // Two to four words of the sampled text, some repeated in the document, some not in it.
          const wanted = new Set([
            phrase[0]!,
            ks[Math.floor(rand() * ks.length)]!,
            ks[Math.floor(rand() * ks.length)]!,
          ]);
          const other = keysOf(docs[e]!.text!);
          expect(
            shard.smallestSpan(
              [...wanted].map((w) => [termOf(w)]),
              0,
              e,
            ),
          ).toBe(span(other, wanted));
        }
      }
      expect(found).toBeGreaterThan(300);
      expect(absent).toBeGreaterThan(300);
    }, 300_000);
  }

  test("match() gives the flat layout's documents, scores, masks and postings counts for hundreds of real queries", async () => {
    let compared = 0;
    for (const name of ["en", "ja"] as const) {
      const { data, shard, flat, docs, options } = await fixture(name);
      const rand = random(name === "en" ? 1 : 2);
      const N = data.documentCount;
      const pickKey = () => {
        for (;;) {
          const tokens = options.tokenize(docs[Math.floor(rand() * docs.length)]!.text!);
          if (tokens.length) return options.processTerm(tokens[Math.floor(rand() * tokens.length)]!);
        }
      };
      const queries: { words: WordSpec[]; fields?: number[]; from?: number; to?: number }[] = [];
      for (let q = 0; q < (name === "en" ? 240 : 80); q++) {
        const kind = q % 6;
        const words: WordSpec[] = [];
        const n = 1 + Math.floor(rand() * 3);
        for (let w = 0; w < n; w++) {
          let key = pickKey();
          if (kind === 1 && key.length > 3) key = key.slice(0, 2 + Math.floor(rand() * (key.length - 2)));
          if (kind === 2 && key.length > 3) {
            const at = Math.floor(rand() * key.length);
            key = key.slice(0, at) + "xq"[Math.floor(rand() * 2)] + key.slice(at + 1);
          }
          words.push({ key, prefix: kind === 1 || kind === 5, fuzzy: kind === 2 ? 1 + Math.floor(rand() * 2) : 0 });
        }
        const query: (typeof queries)[number] = { words };
        if (kind >= 3) {
          query.from = Math.floor(rand() * N);
          query.to = query.from + Math.floor(rand() * (N - query.from + 1));
        }
        if (kind === 4) query.fields = [Math.floor(rand() * 3)];
        queries.push(query);
      }
      for (const q of queries) {
        const { words, ...rest } = q;
        const got = shard.match(words, rest);
        const want = flatMatch(shard, data, flat, TEXT_BOOSTS, words, rest);
        expect(got.postings).toBe(want.postings);
        expect([...got.docs.subarray(0, got.count)]).toEqual(want.docs);
        expect([...got.masks.subarray(0, got.count)]).toEqual(want.masks);
        // Bit-identical scores: the same additions in the same order.
        expect([...got.scores.subarray(0, got.count)]).toEqual(want.scores);
        compared += got.count;
      }
      expect(queries.filter((q) => shard.match(q.words, q).count > 0).length).toBeGreaterThan(queries.length / 2);
    }
    expect(compared).toBeGreaterThan(10_000);
  }, 300_000);
});

describe("impacts (D90): what a block's postings can add, without decoding it", () => {
  test("each block's impact, and each run of 32 blocks', is its posting with the highest tf over its length's norm", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    const cursor = text.newCursor();
    const ratio = (tf: number, length: number, table: Float32Array) => tf / table[length]!;
    let blocks = 0;
    let coarse = 0;
    for (const word of ["the", "of", "history", "city", "albedo", "einstein"]) {
      const term = text.termOf(indexKey(word));
      expect(term).toBeDefined();
      for (const list of text.termLists(term!)) {
        const { lengths, table } = text.norms(list.field);
        cursor.open(list.address);
        const best: number[] = [];
        for (let b = 0; b < cursor.blocks; b++) {
          const n = cursor.decode(b);
          let most = 0;
          for (let i = 0; i < n; i++) most = Math.max(most, ratio(cursor.tfs[i]!, lengths[cursor.docs[i]!]!, table));
          // Reached by a posting of the block, and none above it.
          expect(ratio(cursor.impactTf(b), cursor.impactLength(b), table)).toBe(most);
          best.push(most);
          blocks++;
        }
        for (let c = 0; c * COARSE < cursor.blocks; c++) {
          expect(ratio(cursor.coarseTf(c), cursor.coarseLength(c), table)).toBe(
            Math.max(...best.slice(c * COARSE, (c + 1) * COARSE)),
          );
          coarse++;
        }
      }
    }
    // Long lists were among them: runs of several blocks.
    expect(blocks).toBeGreaterThan(60);
    expect(coarse).toBeLessThan(blocks / 2);
  }, 120_000);
});

describe("a dense list's positions, found from its tfs a chunk (dense-lists.ts)", () => {
  test("equal its decoded blocks', document by document, forward and in every other order a phrase check asks", async () => {
    const { text } = await engineFor({ dumps: [EN_2006, EN_2016] });
    let dense = 0;
    let compared = 0;
    for (const word of ["the", "of", "and", "in", "a", "to", "is", "was"]) {
      const term = text.termOf(indexKey(word));
      if (term === undefined) continue;
      for (const list of text.termLists(term)) {
        const bytes = text.dense(list.address);
        const plain = text.newCursor().open(list.address);
        if (!bytes || !plain.hasPositions || plain.df < BLOCK) continue;
        dense++;
        const docs: number[] = [];
        plain.forEach((d) => {
          docs.push(d);
        });
        const expected = docs.map((d) => [...text.newCursor().open(list.address).positions(d)!]);
        const fromBytes = text.newCursor().open(list.address);
        fromBytes.dense = bytes;
        for (const [i, d] of docs.entries()) expect([...fromBytes.positions(d)!]).toEqual(expected[i]!);
        for (let i = docs.length - 1; i >= 0; i -= 7) expect([...fromBytes.positions(docs[i]!)!]).toEqual(expected[i]!);
        // A chunk the list does not hold has none.
        const missing = docs.findIndex((d, i) => i > 0 && d > docs[i - 1]! + 1);
        if (missing > 0) expect(fromBytes.positions(docs[missing]! - 1)).toBeUndefined();
        compared += docs.length;
      }
    }
    expect(dense).toBeGreaterThan(3);
    expect(compared).toBeGreaterThan(1000);
  }, 300_000);
});
