/** The PDF worker: renders one article at a time off the server's thread (see PdfRenderer). */
import type { PdfArticle } from "./article";
import { renderPdf } from "./render";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<{ article: PdfArticle }>) => {
  try {
    const bytes = await renderPdf(event.data.article);
    self.postMessage({ bytes }, { transfer: [bytes.buffer as ArrayBuffer] });
  } catch (err) {
    self.postMessage({ error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
};
