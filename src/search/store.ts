/** The search indexes of an opened snapshot: shards over the mapped sections index.text.* and index.titles.*. */
import type { Snapshot } from "../snapshot";
import { readShardData } from "./build";
import { TEXT_BOOSTS, TITLE_BOOSTS } from "./engine";
import { Shard } from "./shard";

export interface Indexes {
  text: Shard;
  titles: Shard;
}

export function loadIndexes(snapshot: Snapshot): Indexes {
  return { text: new Shard(readShardData(snapshot.container, "index.text"), TEXT_BOOSTS), titles: new Shard(readShardData(snapshot.container, "index.titles"), TITLE_BOOSTS) };
}
