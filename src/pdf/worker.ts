/** The PDF worker: renders articles off the server's thread (see PdfRenderer). */
import type { PdfArticle } from "./article";
import { renderPdf } from "./render";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<{ id: number; article: PdfArticle }>) => {
  const { id, article } = event.data;
  try {
    const bytes = await renderPdf(article);
    self.postMessage({ id, bytes }, { transfer: [bytes.buffer as ArrayBuffer] });
  } catch (err) {
    self.postMessage({ id, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
};
