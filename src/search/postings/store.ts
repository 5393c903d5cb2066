/**
 * The search indexes in a snapshot's sections (`${prefix}.meta`, vocabulary, postings.N,
 * lists.first/fields/at/df, fieldLengths): written by the build, mapped back as shards at boot.
 */
import {
  type Container,
  type ContainerWriter,
  damagedSections,
  type Snapshot,
  SnapshotError,
  viewOf,
} from "../../snapshot";
import { ANALYZER_VERSION } from "../text/analyze";
import { TEXT_BOOSTS, TITLE_BOOSTS } from "./fields";
import type { TermListsData } from "./term-lists";
import { Shard } from "./shard";
import type { ShardData } from "./shard-types";
import type { VocabularyData } from "./vocabulary";
import { commandLine } from "../../invocation";

export interface Indexes {
  text: Shard;
  titles: Shard;
}

export function loadIndexes(snapshot: Snapshot): Indexes {
  const { container, meta } = snapshot;
  const text = readShardData(container, "index.text");
  const titles = readShardData(container, "index.titles");
  // Each shard's entries are the snapshot's chunks and pages (D119): its per-entry arrays are sized by this count.
  for (const [prefix, shard, entries] of [
    ["index.text", text, meta.indexedChunks],
    ["index.titles", titles, meta.indexedPages],
  ] as const)
    if (shard.documentCount !== entries)
      throw damagedSections(
        container.path,
        `${prefix}.meta counts ${shard.documentCount} entries, the snapshot ${entries}`,
      );
  return { text: new Shard(text, TEXT_BOOSTS), titles: new Shard(titles, TITLE_BOOSTS) };
}

const LIST_COLUMNS: (keyof TermListsData)[] = ["first", "fields", "at", "df"];

/** A shard's arrays as sections `${prefix}.…`. */
export function writeShardData(out: ContainerWriter, prefix: string, d: ShardData): void {
  for (const [i, part] of d.postings.entries()) out.section(`${prefix}.postings.${i}`, part);
  writeShardTables(
    out,
    prefix,
    {
      fields: d.fields,
      documentCount: d.documentCount,
      terms: d.vocabulary.starts.length - 1,
      postingsParts: d.postings.length,
    },
    d,
  );
}

export interface ShardMeta {
  fields: string[];
  documentCount: number;
  terms: number;
  postingsParts: number;
  /** The layout of the postings and term tables (INDEX_LAYOUT); absent in files of layout 1. */
  indexLayout?: number;
  /** What layout 2 recorded its layout in. */
  postingsCodec?: number;
  /** The ANALYZER_VERSION the index's terms were made with; absent in files written before it was recorded (version 1). */
  analyzer?: number;
}

/**
 * The index's layout, recorded in each shard's meta: 1 postings as varints; 2 bit-packed
 * blocks (postings.ts); 3 the same blocks, and term tables with an entry only
 * for the lists that exist (term-lists.ts); 4 the blocks' impacts in the skip data (D90).
 */
const INDEX_LAYOUT = 4;

/** Everything of a shard but its postings (which a merge streams into `${prefix}.postings.N` itself). */
function writeShardTables(
  out: ContainerWriter,
  prefix: string,
  meta: ShardMeta,
  d: Pick<ShardData, "vocabulary" | "lists" | "fieldLengths">,
): void {
  writeShardTableSources(out, prefix, meta, {
    vocabularyChars: d.vocabulary.chars,
    vocabularyStarts: d.vocabulary.starts,
    ...d.lists,
    fieldLengths: d.fieldLengths,
  });
}

/** A table's bytes: in memory, or held by something that copies them into a section (a spool of a merge). */
export type TableBytes = ArrayBufferView | { copyInto(out: ContainerWriter, name: string): void };

/** As writeShardTables, from tables that need not be in memory. */
export function writeShardTableSources(
  out: ContainerWriter,
  prefix: string,
  meta: ShardMeta,
  t: Record<"vocabularyChars" | "vocabularyStarts" | keyof TermListsData | "fieldLengths", TableBytes>,
): void {
  const write = (name: string, bytes: TableBytes) =>
    "copyInto" in bytes ? bytes.copyInto(out, name) : out.section(name, bytes);
  out.section(
    `${prefix}.meta`,
    new TextEncoder().encode(JSON.stringify({ ...meta, indexLayout: INDEX_LAYOUT, analyzer: ANALYZER_VERSION })),
  );
  write(`${prefix}.vocabulary.chars`, t.vocabularyChars);
  write(`${prefix}.vocabulary.starts`, t.vocabularyStarts);
  for (const column of LIST_COLUMNS) write(`${prefix}.lists.${column}`, t[column]);
  write(`${prefix}.fieldLengths`, t.fieldLengths);
}

/** A shard's arrays from its sections (views of the mapped file). */
export function readShardData(container: Container, prefix: string): ShardData {
  const meta = JSON.parse(new TextDecoder().decode(container.section(`${prefix}.meta`))) as ShardMeta;
  const layout = meta.indexLayout ?? meta.postingsCodec ?? 1;
  if (layout !== INDEX_LAYOUT) {
    throw new SnapshotError(
      `${container.path} holds its search index in layout ${layout}, and this Tome reads layout ${INDEX_LAYOUT} (postings in bit-packed blocks with their impacts, D90). ` +
        `Rebuild it with \`${commandLine("snapshot:build --dump <dump>")}\`.`,
    );
  }
  // Terms made by another analysis would not match the query's: every search would miss.
  if ((meta.analyzer ?? 1) !== ANALYZER_VERSION) {
    throw new SnapshotError(
      `${container.path} was indexed with analyzer version ${meta.analyzer ?? 1}, and this Tome analyzes text with version ${ANALYZER_VERSION}. ` +
        `Rebuild it with \`${commandLine("snapshot:build --dump <dump>")}\`.`,
    );
  }
  // The meta's counts are read as sizes: a damaged digit was "postings: no part 0" at the first search.
  const parts = meta.postingsParts;
  if (
    !Number.isInteger(parts) ||
    parts < 0 ||
    (parts > 0 && !container.has(`${prefix}.postings.${parts - 1}`)) ||
    container.has(`${prefix}.postings.${parts}`)
  )
    throw damagedSections(container.path, `${prefix}.meta says ${parts} postings parts`);
  return {
    fields: meta.fields,
    documentCount: meta.documentCount,
    vocabulary: readVocabulary(container, prefix),
    postings: Array.from({ length: meta.postingsParts }, (_x, i) => container.section(`${prefix}.postings.${i}`)),
    lists: {
      first: viewOf(Uint32Array, container.section(`${prefix}.lists.first`)),
      fields: container.section(`${prefix}.lists.fields`),
      at: viewOf(Float64Array, container.section(`${prefix}.lists.at`)),
      df: viewOf(Uint32Array, container.section(`${prefix}.lists.df`)),
    },
    fieldLengths: viewOf(Uint16Array, container.section(`${prefix}.fieldLengths`)),
    ...(container.has(`${prefix}.dense.addresses`) && {
      dense: {
        addresses: viewOf(Float64Array, container.section(`${prefix}.dense.addresses`)),
        tfs: container.section(`${prefix}.dense.tfs`),
      },
    }),
  };
}

function readVocabulary(container: Container, prefix: string): VocabularyData {
  return {
    chars: viewOf(Uint16Array, container.section(`${prefix}.vocabulary.chars`)),
    starts: viewOf(Uint32Array, container.section(`${prefix}.vocabulary.starts`)),
  };
}
