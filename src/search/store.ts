/**
 * The built indexes, kept beside the snapshot (`X.tome.idx`) so that boot maps arrays
 * instead of re-tokenizing the corpus. The file names the snapshot content it was built
 * from; a mismatch, another analyzer or format version, or damage means a rebuild.
 *
 * Layout: sha256(rest), 32 bytes | u32 header length | header (JSON) | padding | arrays,
 * each at an offset that is a multiple of 8 from the file's start, so that loading makes
 * typed-array views of the file's bytes without copying them.
 */
import { atomicWrite } from "../files";
import { sameBytes, sha256, type Snapshot } from "../snapshot";
import { ANALYZER_VERSION } from "./analyze";
import { aliasesByPage, textShardOptions, titleShardOptions, TEXT_BOOSTS, TITLE_BOOSTS } from "./engine";
import { buildShard, Shard, type ShardData } from "./shard";
import { vocabularyArrays, vocabularyFromArrays, type VocabularyArrays } from "./vocabulary";

/** Bump when what is indexed or how it is stored changes. */
const STORE_FORMAT = 7;

export interface Indexes {
  text: Shard;
  titles: Shard;
}

/** The indexes as built and stored: arrays only, no lookup structures. */
export interface IndexData {
  text: ShardData;
  titles: ShardData;
}

const ARRAYS = ["offsets", "docs", "freqs", "fieldLengths"] as const;
type ArrayName = (typeof ARRAYS)[number];
const ARRAY_TYPES = { offsets: Uint32Array, docs: Uint32Array, freqs: Uint8Array, fieldLengths: Uint16Array };
const VOCABULARY_TYPES = { Uint8Array, Uint16Array, Uint32Array };
type VocabularyArrayType = keyof typeof VOCABULARY_TYPES;

interface StoredShard {
  fields: string[];
  documentCount: number;
  /** The vocabulary's arrays by name: where, how many elements, and of which type. */
  vocabulary: Record<string, [offset: number, length: number, type: VocabularyArrayType]>;
  arrays: Record<ArrayName, [offset: number, length: number]>;
}

interface Header {
  format: number;
  analyzer: number;
  contentHash: string;
  shards: { text: StoredShard; titles: StoredShard };
}

export function indexPath(snapshotPath: string): string {
  return `${snapshotPath}.idx`;
}

export interface BuildProgress {
  (shard: "text" | "titles", done: number, total: number): void;
}

function shards(data: IndexData): Indexes {
  return { text: new Shard(data.text, TEXT_BOOSTS), titles: new Shard(data.titles, TITLE_BOOSTS) };
}

export function buildIndexes(snapshot: Snapshot, progress: BuildProgress = () => {}): IndexData {
  const lang = snapshot.meta.wiki.lang;
  const located: [page: number, chunk: number][] = [];
  snapshot.pages.forEach((page, p) => page.chunks.forEach((_c, c) => located.push([p, c])));
  const text = buildShard(
    located.length,
    (i) => {
      const [p, c] = located[i]!;
      const page = snapshot.pages[p]!;
      const chunk = page.chunks[c]!;
      return { text: chunk.text, section: page.sections[chunk.section]?.heading ?? "", title: page.title };
    },
    textShardOptions(lang),
    (done) => progress("text", done, located.length),
  );
  const aliases = aliasesByPage(snapshot);
  const pages = snapshot.pages;
  const titles = buildShard(
    pages.length,
    (i) => ({ title: pages[i]!.title, aliases: (aliases.get(i) ?? []).join("\n") }),
    titleShardOptions(lang),
    (done) => progress("titles", done, pages.length),
  );
  return { text, titles };
}

export function encodeIndexes(snapshot: Snapshot, indexes: IndexData): Uint8Array {
  const parts: Uint8Array[] = [];
  let at = 0;
  const place = (bytes: Uint8Array): number => {
    const offset = at;
    parts.push(bytes);
    at += bytes.byteLength;
    const pad = (8 - (at % 8)) % 8;
    if (pad) {
      parts.push(new Uint8Array(pad));
      at += pad;
    }
    return offset;
  };
  const describe = (d: ShardData): StoredShard => {
    const vocabulary: StoredShard["vocabulary"] = {};
    for (const [name, a] of Object.entries(vocabularyArrays(d.vocabulary))) {
      vocabulary[name] = [place(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)), a.length, a.constructor.name as VocabularyArrayType];
    }
    const arrays = {} as StoredShard["arrays"];
    for (const name of ARRAYS) {
      const a = d[name];
      arrays[name] = [place(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)), a.length];
    }
    return { fields: d.fields, documentCount: d.documentCount, vocabulary, arrays };
  };
  const header: Header = {
    format: STORE_FORMAT,
    analyzer: ANALYZER_VERSION,
    contentHash: snapshot.meta.contentHash,
    shards: { text: describe(indexes.text), titles: describe(indexes.titles) },
  };
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const dataStart = align8(32 + 4 + headerBytes.byteLength);
  const out = new Uint8Array(dataStart + at);
  new DataView(out.buffer).setUint32(32, headerBytes.byteLength, true);
  out.set(headerBytes, 36);
  let offset = dataStart;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  out.set(sha256(out.subarray(32)), 0);
  return out;
}

/** The stored indexes, or null when absent, stale or damaged. */
export async function loadIndexes(path: string, snapshot: Snapshot): Promise<Indexes | null> {
  const file = Bun.file(path);
  if (!(await file.exists())) return null;
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.byteLength < 36 || !sameBytes(sha256(bytes.subarray(32)), bytes.subarray(0, 32))) return null;
  let header: Header;
  try {
    const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(32, true);
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(36, 36 + length))) as Header;
    if (header.format !== STORE_FORMAT || header.analyzer !== ANALYZER_VERSION || header.contentHash !== snapshot.meta.contentHash) return null;
    const dataStart = align8(36 + length);
    const shard = (s: StoredShard): ShardData => {
      const vocabulary: VocabularyArrays = {};
      for (const [name, [offset, n, type]] of Object.entries(s.vocabulary)) {
        vocabulary[name] = new VOCABULARY_TYPES[type](bytes.buffer, bytes.byteOffset + dataStart + offset, n);
      }
      const view = <T extends ArrayName>(name: T) => {
        const [offset, n] = s.arrays[name];
        return new ARRAY_TYPES[name](bytes.buffer, bytes.byteOffset + dataStart + offset, n) as ShardData[T];
      };
      return {
        fields: s.fields,
        documentCount: s.documentCount,
        vocabulary: vocabularyFromArrays(vocabulary),
        offsets: view("offsets"),
        docs: view("docs"),
        freqs: view("freqs"),
        fieldLengths: view("fieldLengths"),
      };
    };
    return shards({ text: shard(header.shards.text), titles: shard(header.shards.titles) });
  } catch {
    return null;
  }
}

const align8 = (n: number) => n + ((8 - (n % 8)) % 8);

/** Loads the stored indexes, or builds them and stores them for the next boot. */
export async function indexesFor(
  snapshotPath: string,
  snapshot: Snapshot,
  log: (line: string) => void = () => {},
  progress?: BuildProgress,
): Promise<Indexes> {
  const path = indexPath(snapshotPath);
  const loaded = await loadIndexes(path, snapshot);
  if (loaded) return loaded;
  log(`building the search indexes for ${snapshotPath} (once; they are kept in ${path})`);
  const built = buildIndexes(snapshot, progress);
  try {
    atomicWrite(path, encodeIndexes(snapshot, built));
  } catch (err) {
    log(`could not keep the indexes in ${path} (${(err as Error).message}); they will be rebuilt at the next boot`);
  }
  return shards(built);
}
