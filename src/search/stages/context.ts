/** What every stage of a search reads and writes: the engine's parts, shared by its stages. */
import type { Shard } from "../shard";
import type { Catalog } from "./catalog";
import type { Meter } from "./meter";
import type { Scratch } from "./scratch";

export interface SearchContext {
  readonly lang: string;
  readonly catalog: Catalog;
  /** One entry per chunk. */
  readonly text: Shard;
  /** One entry per page: its title, its redirects' titles as aliases. */
  readonly titleIndex: Shard;
  readonly scratch: Scratch;
  readonly meter: Meter;
}
