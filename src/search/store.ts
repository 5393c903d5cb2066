/**
 * The search indexes in a snapshot's sections (`${prefix}.meta`, vocabulary, offsets, docs,
 * freqs, fieldLengths): written by the build, mapped back as shards at boot.
 */
import { type Container, type ContainerWriter, type Snapshot, viewOf } from "../snapshot";
import { TEXT_BOOSTS, TITLE_BOOSTS } from "./engine";
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
  out.section(`${prefix}.meta`, new TextEncoder().encode(JSON.stringify({ fields: d.fields, documentCount: d.documentCount, terms: d.vocabulary.starts.length - 1 })));
  writeVocabulary(out, prefix, d.vocabulary);
  out.section(`${prefix}.offsets`, d.offsets);
  out.section(`${prefix}.docs`, d.docs);
  out.section(`${prefix}.freqs`, d.freqs);
  out.section(`${prefix}.fieldLengths`, d.fieldLengths);
}

/** A shard's arrays from its sections (views of the mapped file). */
export function readShardData(container: Container, prefix: string): ShardData {
  const meta = JSON.parse(new TextDecoder().decode(container.section(`${prefix}.meta`))) as { fields: string[]; documentCount: number; terms: number };
  const vocabulary = readVocabulary(container, prefix);
  return {
    fields: meta.fields,
    documentCount: meta.documentCount,
    vocabulary,
    offsets: viewOf(Uint32Array, container.section(`${prefix}.offsets`)),
    docs: viewOf(Uint32Array, container.section(`${prefix}.docs`)),
    freqs: container.section(`${prefix}.freqs`),
    fieldLengths: viewOf(Uint16Array, container.section(`${prefix}.fieldLengths`)),
  };
}

export function writeVocabulary(out: ContainerWriter, prefix: string, v: VocabularyData): void {
  out.section(`${prefix}.vocabulary.chars`, v.chars);
  out.section(`${prefix}.vocabulary.starts`, v.starts);
}

function readVocabulary(container: Container, prefix: string): VocabularyData {
  return { chars: viewOf(Uint16Array, container.section(`${prefix}.vocabulary.chars`)), starts: viewOf(Uint32Array, container.section(`${prefix}.vocabulary.starts`)) };
}
