/**
 * What a parsing worker does (worker.ts; a build's own, which adds to each article): batches of
 * raw pages in, articles out, in the order of the pages.
 */
import { articleBuilder, type Article, type ArticleBuilder } from "./article";
import type { RawPage } from "./raw-page";

export type WorkerRequest =
  | { type: "init"; lang: string; namespaces: [string, number][]; chunkWords: number }
  | { type: "batch"; id: number; pages: RawPage[] };

export type WorkerResponse = {
  type: "done";
  id: number;
  articles: Article[];
  failures: { pageId: number; title: string; error: string }[];
};

/**
 * What a worker adds to each article of a wiki (e.g. its words analysed for the index), and
 * the buffers to move rather than copy.
 */
export type ArticleExtension = (lang: string) => (article: Article) => ArrayBuffer[];

/** Answers the pool's messages on this worker's `self`. */
export function serveParsing(self: Worker, extend?: ArticleExtension): void {
  let build: ArticleBuilder | null = null;
  let add: ((article: Article) => ArrayBuffer[]) | undefined;
  self.onmessage = (event: MessageEvent<WorkerRequest>) => {
    const msg = event.data;
    if (msg.type === "init") {
      build = articleBuilder({ lang: msg.lang, namespaces: new Map(msg.namespaces) }, msg.chunkWords);
      add = extend?.(msg.lang);
      return;
    }
    const articles: Article[] = [];
    const failures: WorkerResponse["failures"] = [];
    const transfer: ArrayBuffer[] = [];
    for (const page of msg.pages) {
      try {
        const article = build!(page);
        if (add) transfer.push(...add(article));
        articles.push(article);
      } catch (err) {
        failures.push({ pageId: page.pageId, title: page.title, error: (err as Error)?.message ?? String(err) });
      }
    }
    self.postMessage({ type: "done", id: msg.id, articles, failures } satisfies WorkerResponse, transfer);
  };
}
