/** pdf: an article as an A4 PDF document, rendered off the server's thread. */
export type { PdfArticle, PdfSection } from "./article";
export { canRender } from "./fonts";
export { renderPdf, type RenderOptions } from "./render";
export { PdfError, PdfRenderer, type PdfRendererOptions } from "./renderer";

/** What renders PDFs for the server (PdfRenderer, or a stand-in in tests). */
export interface PdfRenderService {
  render(article: import("./article").PdfArticle): Promise<Uint8Array>;
  /** Stops its workers, if it has any. */
  close?(): void;
}
