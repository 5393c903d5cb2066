/**
 * The search indexes in a snapshot's sections (`${prefix}.meta`, vocabulary, postings.N,
 * listAt, listDf, fieldLengths): written by the build, mapped back as shards at boot.
 */
import { type Container, type ContainerWriter, type Snapshot, SnapshotError, viewOf } from "../snapshot";
import { TEXT_BOOSTS, TITLE_BOOSTS } from "./fields";
import { POSTINGS_CODEC } from "./postings";
import { Shard, type ShardData } from "./shard";
import type { VocabularyData } from "./vocabulary";

export interface Indexes {
  text: Shard;
  titles: Shard;
}

export function loadIndexes(snapshot: Snapshot): Indexes {
  return { text: new Shard(readShardData(snapshot.container, "index.text"), TEXT_BOOSTS), titles: new Shard(readShardData(snapshot.container, "index.titles"), TITLE_BOOSTS) };
}

/** A shard's arrays as sections `${prefix}.…`. */
export function writeShardData(out: ContainerWriter, prefix: string, d: ShardData): void {
  d.postings.forEach((part, i) => out.section(`${prefix}.postings.${i}`, part));
  writeShardTables(out, prefix, { fields: d.fields, documentCount: d.documentCount, terms: d.vocabulary.starts.length - 1, postingsParts: d.postings.length }, d);
}

export interface ShardMeta {
  fields: string[];
  documentCount: number;
  terms: number;
  postingsParts: number;
  /** The postings codec the lists are written in (postings.ts); absent in files of codec 1. */
  postingsCodec?: number;
}

/** Everything of a shard but its postings (which a merge streams into `${prefix}.postings.N` itself). */
function writeShardTables(out: ContainerWriter, prefix: string, meta: ShardMeta, d: Pick<ShardData, "vocabulary" | "listAt" | "listDf" | "fieldLengths">): void {
  writeShardTableSources(out, prefix, meta, { vocabularyChars: d.vocabulary.chars, vocabularyStarts: d.vocabulary.starts, listAt: d.listAt, listDf: d.listDf, fieldLengths: d.fieldLengths });
}

/** A table's bytes: in memory, or held by something that copies them into a section (a spool of a merge). */
export type TableBytes = ArrayBufferView | { copyInto(out: ContainerWriter, name: string): void };

/** As writeShardTables, from tables that need not be in memory. */
export function writeShardTableSources(
  out: ContainerWriter,
  prefix: string,
  meta: ShardMeta,
  t: Record<"vocabularyChars" | "vocabularyStarts" | "listAt" | "listDf" | "fieldLengths", TableBytes>,
): void {
  const write = (name: string, bytes: TableBytes) => ("copyInto" in bytes ? bytes.copyInto(out, name) : out.section(name, bytes));
  out.section(`${prefix}.meta`, new TextEncoder().encode(JSON.stringify({ ...meta, postingsCodec: POSTINGS_CODEC })));
  write(`${prefix}.vocabulary.chars`, t.vocabularyChars);
  write(`${prefix}.vocabulary.starts`, t.vocabularyStarts);
  write(`${prefix}.listAt`, t.listAt);
  write(`${prefix}.listDf`, t.listDf);
  write(`${prefix}.fieldLengths`, t.fieldLengths);
}

/** A shard's arrays from its sections (views of the mapped file). */
export function readShardData(container: Container, prefix: string): ShardData {
  const meta = JSON.parse(new TextDecoder().decode(container.section(`${prefix}.meta`))) as ShardMeta;
  const codec = meta.postingsCodec ?? 1;
  if (codec !== POSTINGS_CODEC) {
    throw new SnapshotError(
      `${container.path} holds its search index in postings codec ${codec}, and this Tome reads codec ${POSTINGS_CODEC} (bit-packed blocks). ` +
        "Rebuild it with `bun run snapshot:build --dump <dump>`.",
    );
  }
  return {
    fields: meta.fields,
    documentCount: meta.documentCount,
    vocabulary: readVocabulary(container, prefix),
    postings: Array.from({ length: meta.postingsParts }, (_x, i) => container.section(`${prefix}.postings.${i}`)),
    listAt: viewOf(Float64Array, container.section(`${prefix}.listAt`)),
    listDf: viewOf(Uint32Array, container.section(`${prefix}.listDf`)),
    fieldLengths: viewOf(Uint16Array, container.section(`${prefix}.fieldLengths`)),
  };
}

function readVocabulary(container: Container, prefix: string): VocabularyData {
  return { chars: viewOf(Uint16Array, container.section(`${prefix}.vocabulary.chars`)), starts: viewOf(Uint32Array, container.section(`${prefix}.vocabulary.starts`)) };
}
