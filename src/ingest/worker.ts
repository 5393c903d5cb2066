/**
 * Parsing worker: converts batches of raw pages into articles, so that wikitext parsing
 * runs on every core while the main thread reads the XML.
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

declare const self: Worker;

let build: ArticleBuilder | null = null;

self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const msg = event.data;
  if (msg.type === "init") {
    build = articleBuilder({ lang: msg.lang, namespaces: new Map(msg.namespaces) }, msg.chunkWords);
    return;
  }
  const articles: Article[] = [];
  const failures: WorkerResponse["failures"] = [];
  for (const page of msg.pages) {
    try {
      articles.push(build!(page));
    } catch (err) {
      failures.push({ pageId: page.pageId, title: page.title, error: (err as Error)?.message ?? String(err) });
    }
  }
  self.postMessage({ type: "done", id: msg.id, articles, failures } satisfies WorkerResponse);
};
