/** The PDF worker: renders one article at a time off the server's thread (see PdfRenderer). */
import { lowerThisThread } from "../scheduling";
import type { PdfArticle } from "./article";
import { renderPdf } from "./render";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<{ article: PdfArticle } | { nice: number }>) => {
  // Sent first, before any article (D143).
  if ("nice" in event.data) {
    lowerThisThread(event.data.nice);
    return;
  }
  try {
    const bytes = await renderPdf(event.data.article);
    self.postMessage({ bytes }, { transfer: [bytes.buffer as ArrayBuffer] });
  } catch (err) {
    self.postMessage({ error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
};
