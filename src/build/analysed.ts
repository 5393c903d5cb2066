/** The articles a build's parsing workers send (parse-worker.ts): each with its chunks analysed for the text index. */
import { workerUrl } from "../files";
import type { Article } from "../ingest";
import type { AnalysedPage } from "../search";

export type AnalysedArticle = Article & { analysed?: AnalysedPage };

/** The script of a build's parsing workers, for ingest's `parsingWorker`. */
export function buildParsingWorker(): string {
  return workerUrl(new URL("./parse-worker.ts", import.meta.url), "build/parse-worker.ts");
}
