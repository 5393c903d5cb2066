/** What every stage of a search reads and writes: the engine's parts, shared by its stages. */
import type { PostingsCursor } from "../postings/postings";
import type { Shard } from "../postings/shard";
import type { Executor } from "../ranking/executor";
import type { PageOrders } from "../ranking/page-orders";
import type { RangeScorer } from "../ranking/range-scores";
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
  /** A cursor over the text shard's postings, for the stages that read lists themselves. */
  readonly textCursor: PostingsCursor;
  readonly scratch: Scratch;
  readonly meter: Meter;
  /** Scores every chunk of a range exactly (the oracle; title matches and one page's search). */
  readonly ranges: RangeScorer;
  /** The block-max executor: one tier's best pages (plans/words.ts). */
  readonly executor: Executor;
  /** The one-word searches' page orders stored in the snapshot (D51, D90), when it has them. */
  readonly orders: PageOrders | undefined;
}
