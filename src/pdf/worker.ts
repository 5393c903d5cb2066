/** The PDF worker: renders one article at a time off the server's thread (see PdfRenderer). */
import { lowerThisThread } from "../scheduling";
import type { PdfArticle } from "./article";
import { loadFaces } from "./fonts";
import { RenderAbandoned, renderPdf } from "./render";

declare const self: Worker;

type Message = { article: PdfArticle; render: number } | { nice: number } | { abandon: Int32Array };

/** Shared with the renderer: the number of the render to give up, set while this thread renders (0: none). */
let abandon: Int32Array | undefined;

self.onmessage = async (event: MessageEvent<Message>) => {
  const message = event.data;
  // Sent first, before any article (D143).
  if ("nice" in message) {
    lowerThisThread(message.nice);
    return;
  }
  // Sent last of what sets it up: its fonts read at its priority, it is ready, and the renderer times renders from now.
  if ("abandon" in message) {
    abandon = message.abandon;
    loadFaces();
    self.postMessage({ ready: true });
    return;
  }
  const { article, render } = message;
  try {
    const bytes = await renderPdf(article, {
      abandoned: () => abandon !== undefined && Atomics.load(abandon, 0) === render,
    });
    self.postMessage({ bytes }, { transfer: [bytes.buffer as ArrayBuffer] });
  } catch (err) {
    if (err instanceof RenderAbandoned) self.postMessage({ abandoned: true });
    else self.postMessage({ error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
};
