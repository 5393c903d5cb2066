/**
 * pdf: an article as an A4 PDF document, rendered off the server's thread. pdf-lib, fontkit and the fonts are loaded
 * by the render workers (worker.ts) and by whoever renders on their own thread (render.ts' renderPdf, fonts.ts'
 * canRender: benchmarks, tests), never by the server's thread through this face: they cost 0.6 CPU-s at every start.
 */
export { articleKey, cutForPdf, PDF_MAX_CHARACTERS, type PdfArticle, type PdfSection } from "./article";
export type { RenderOptions } from "./render";
export {
  PdfAbortedError,
  PdfBusyError,
  PdfError,
  PdfRenderer,
  PdfTimeoutError,
  PdfWorkerStoppedError,
  type PdfRendererOptions,
  type PdfStats,
  type RenderRequest,
} from "./renderer";

/** What renders PDFs for the server (PdfRenderer, or a stand-in in tests). */
export interface PdfRenderService {
  /** What it draws, as a version: a PDF's ETag names it beside the article, so that an older renderer's PDF is sent again. */
  readonly version?: string;
  /** Characters of article text a PDF holds at most (D182; default PDF_MAX_CHARACTERS): the route cuts the article there. */
  readonly maxCharacters?: number;
  render(article: import("./article").PdfArticle, request?: import("./renderer").RenderRequest): Promise<Uint8Array>;
  /** The article's PDF if it is kept, without rendering (for HEAD). */
  cachedPdf?(article: import("./article").PdfArticle): Uint8Array | undefined;
  /** What it has rendered, refused and found kept (for /metrics). */
  stats?(): import("./renderer").PdfStats;
  /** Stops its workers, if it has any. */
  close?(): void;
}
