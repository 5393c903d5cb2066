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

  constructor(readonly buffer = new SharedArrayBuffer(3 * Float64Array.BYTES_PER_ELEMENT)) {
    this.values = new Float64Array(buffer);
  }

  begin(batch: number, index: number): void {
    this.values[0] = batch;
    this.values[1] = index;
    this.values[2] = Date.now();
  }

  idle(): void {
    this.values[2] = 0;
  }

  /** The page converted since before `since`, if any. */
  since(since: number): { batch: number; index: number } | null {
    const began = this.values[2]!;
    if (!(began > 0 && began < since)) return null;
    const found = { batch: this.values[0]!, index: this.values[1]! };
    // The worker may have gone on to another page while these were read.
    return this.values[2] === began ? found : null;
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
