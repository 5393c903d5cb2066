/**
 * What a parsing worker does (worker.ts; a build's own, which adds to each article): batches of
 * raw pages in, articles out, in the order of the pages.
 */
import { articleBuilder, type Article, type ArticleBuilder } from "./article";
import type { RawPage } from "./raw-page";

export type WorkerRequest =
  | {
      type: "init";
      lang: string;
      namespaces: [string, number][];
      chunkWords: number;
      /** Where the worker writes what it converts now (PageWatch), for the pool to see a page that takes too long. */
      watch: SharedArrayBuffer;
    }
  | { type: "batch"; id: number; pages: RawPage[] };

export type WorkerResponse = {
  type: "done";
  id: number;
  articles: Article[];
  failures: { pageId: number; title: string; error: string }[];
};

/**
 * The page a worker converts now, in memory it shares with the pool: its batch, its index in the
 * batch, and when it began (Date.now(); 0 between batches).
 */
export class PageWatch {
  private readonly values: Float64Array;
  /** A sequence count, odd while the worker writes the values: a reader keeps what it read only if it was even and unchanged around the reading (a seqlock). */
  private readonly writes: Int32Array;

  constructor(
    readonly buffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * 2 + 3 * Float64Array.BYTES_PER_ELEMENT),
  ) {
    this.writes = new Int32Array(buffer, 0, 1);
    this.values = new Float64Array(buffer, Int32Array.BYTES_PER_ELEMENT * 2, 3);
  }

  begin(batch: number, index: number): void {
    Atomics.add(this.writes, 0, 1);
    this.values[0] = batch;
    this.values[1] = index;
    this.values[2] = Date.now();
    Atomics.add(this.writes, 0, 1);
  }

  idle(): void {
    Atomics.add(this.writes, 0, 1);
    this.values[2] = 0;
    Atomics.add(this.writes, 0, 1);
  }

  /** The page converted since before `since`, if any. */
  since(since: number): { batch: number; index: number } | null {
    const before = Atomics.load(this.writes, 0);
    if (before & 1) return null;
    const [batch, index, began] = [this.values[0]!, this.values[1]!, this.values[2]!];
    // The worker went on to another page while these were read: its next check sees it.
    if (Atomics.load(this.writes, 0) !== before) return null;
    return began > 0 && began < since ? { batch, index } : null;
  }
}

/**
 * What a worker adds to each article of a wiki (e.g. its words analysed for the index), and
 * the buffers to move rather than copy.
 */
export type ArticleExtension = (lang: string) => (article: Article) => ArrayBuffer[];

/** Answers the pool's messages on this worker's `self`. */
export function serveParsing(self: Worker, extend?: ArticleExtension): void {
  let build: ArticleBuilder | null = null;
  let add: ((article: Article) => ArrayBuffer[]) | undefined;
  let watch: PageWatch | undefined;
  self.onmessage = (event: MessageEvent<WorkerRequest>) => {
    const msg = event.data;
    if (msg.type === "init") {
      build = articleBuilder({ lang: msg.lang, namespaces: new Map(msg.namespaces) }, msg.chunkWords);
      add = extend?.(msg.lang);
      watch = new PageWatch(msg.watch);
      return;
    }
    const articles: Article[] = [];
    const failures: WorkerResponse["failures"] = [];
    const transfer: ArrayBuffer[] = [];
    for (const [index, page] of msg.pages.entries()) {
      watch!.begin(msg.id, index);
      try {
        const article = build!(page);
        if (add) transfer.push(...add(article));
        articles.push(article);
      } catch (err) {
        failures.push({ pageId: page.pageId, title: page.title, error: (err as Error)?.message ?? String(err) });
      }
    }
    watch!.idle();
    self.postMessage({ type: "done", id: msg.id, articles, failures } satisfies WorkerResponse, transfer);
  };
}
