/** GET /v1/pdf/{page_id} and /v1/pdf/{page_id}.pdf (api.md 4.6). */
import { Type as t } from "@sinclair/typebox";
import anyAscii from "any-ascii";
import { Elysia } from "elysia";
import { COST } from "../../access";
import {
  articleKey,
  PDF_MAX_CHARACTERS,
  PdfAbortedError,
  PdfBusyError,
  type PdfArticle,
  type PdfRenderService,
  PdfTimeoutError,
  PdfWorkerStoppedError,
} from "../../pdf";
import type { ApiContext } from "../context";
import {
  alsoAt,
  described,
  KEY_ERRORS,
  KEYED,
  NOT_MODIFIED,
  PDF_FAULT,
  PDF_FORBIDDEN,
  PDF_HEADERS,
  RETRY_HEADERS,
} from "../docs";
import { apiError, errorBody, ERRORS, parameterError, retryLater } from "../errors";
import { checkQuota, route } from "../params";
import { CLIENT_GONE } from "../pipeline";
import { ErrorBody, MAX_INTEGER, PdfParams, UnavailableBody } from "../schemas";
import { notModified, REVALIDATE, wantsNotModified } from "../steps/conditional";
import { outsideWork } from "../steps/keys";

/** The message and the details say one rule: its bound, which /v1/page's states, and the .pdf the path may end with. */
const PAGE_ID_CONSTRAINT = `an integer from 0 to ${MAX_INTEGER} (base-10 digits), optionally followed by .pdf`;

/** The path's page id, with or without ".pdf". */
function readPdfId(raw: string): number {
  const digits = raw.endsWith(".pdf") ? raw.slice(0, -4) : raw;
  const n = /^[0-9]+$/.test(digits) ? Number(digits) : NaN;
  if (!(n <= MAX_INTEGER)) {
    throw parameterError("page_id", raw, PAGE_ID_CONSTRAINT, ERRORS.pageIdNotInteger);
  }
  return n;
}

export const pdfRoutes = (
  { engine, resources }: ApiContext,
  pdf: PdfRenderService,
  logError: (error: unknown) => void,
) => {
  const max = pdf.maxCharacters ?? PDF_MAX_CHARACTERS;
  const pdfRoute = route(
    { params: PdfParams, readers: { page_id: readPdfId }, ownQuota: true },
    async ({ params, x }) => {
      const { page_id } = params;
      const request = x.request;
      const page = engine.page(page_id);
      // Cut at the renderer's bound (D182), before anything: the ETag, the headers and the render are of what the PDF holds.
      const article = page && resources.pdfArticle(page, max);
      // A HEAD that renders nothing costs nothing (D26): only one whose PDF is kept asks the quota for its 10 credits.
      const kept = x.head && article ? pdf.cachedPdf?.(article) : undefined;
      if (!(x.head && article && !kept)) checkQuota(x);
      if (!page || !article) throw apiError(ERRORS.pageNotFound, page_id);
      const etag = pdfEtag(article, pdf.version);
      // Before any rendering: a 304 renders nothing, and costs nothing.
      if (wantsNotModified(request, etag)) return notModified(etag);
      const headers = {
        "content-type": "application/pdf",
        "content-disposition": contentDisposition(page.title, page.pageId),
        "x-credit-cost": String(COST.pdf),
        etag,
        "cache-control": REVALIDATE,
        ...(article.cut && { "x-pdf-truncated": `${article.cut.shown} of ${article.cut.total} characters` }),
      };
      if (x.head) {
        // A HEAD renders nothing: the kept PDF's headers if there is one, else the headers without a length, free.
        return kept
          ? new Response(kept, { headers })
          : new Response(null, { headers: { ...headers, "x-credit-cost": "0" } });
      }
      let bytes: Uint8Array;
      try {
        // The render queue shares its time by the key that asked; the render's own time is paid in credits, not in the work share (D25).
        // A client that leaves takes its render out of the queue, or has it given up under way (D26).
        const rendered = pdf.render(article, { signal: request.signal, requester: x.grant?.key.record.id });
        bytes = await outsideWork(x, rendered);
      } catch (err) {
        if (err instanceof PdfBusyError) throw busy(err.retryAfter);
        if (err instanceof PdfAbortedError) return gone();
        // Past the render's time limit (the machine is loaded): not the article at fault, and it passes (D26); a 503, as
        // a full queue. Its worker dead: api.md's 500 for a server-side generation error. Either logged as one line
        // (a loaded machine would fill the log with stacks).
        if (err instanceof PdfTimeoutError) {
          logError(`/v1/pdf/${page_id}: ${err.message}`);
          throw late(err.limitMs, err.retryAfter);
        }
        if (err instanceof PdfWorkerStoppedError) {
          logError(`/v1/pdf/${page_id}: ${err.message}`);
          throw apiError(ERRORS.pdfFailed);
        }
        logError(err);
        throw apiError(ERRORS.pdfFailed);
      }
      // The client left as it was made: never delivered, not charged (the PDF is kept for next time).
      if (request.signal.aborted) return gone();
      return new Response(bytes, { headers: { ...headers, "content-length": String(bytes.byteLength) } });
    },
  );
  return new Elysia().get("/v1/pdf/:page_id", pdfRoute.handler, {
    ...pdfRoute.hooks,
    response: {
      // First: the route's own 503 (the render queue full) says more than theirs.
      ...KEY_ERRORS,
      ...PDF_FORBIDDEN,
      200: described(
        t.Any({ type: "string", format: "binary", description: "An A4 PDF of the page" }),
        "The page as a PDF file, to download",
        {
          headers: PDF_HEADERS,
          mediaType: "application/pdf",
        },
      ),
      ...NOT_MODIFIED,
      400: described(ErrorBody, "`page_id must be an integer`", {
        examples: {
          [ERRORS.pageIdNotInteger.code]: {
            ...errorBody(ERRORS.pageIdNotInteger, "page_id", PAGE_ID_CONSTRAINT),
            details: { parameter: "page_id", value: "abc", constraint: PAGE_ID_CONSTRAINT },
          },
        },
      }),
      404: described(ErrorBody, "`page not found`", {
        examples: { [ERRORS.pageNotFound.code]: errorBody(ERRORS.pageNotFound, 1) },
      }),
      ...PDF_FAULT,
      503: described(
        UnavailableBody,
        "`service_unavailable`: too many PDFs are being rendered, the PDF was not rendered within its time limit (a loaded server) or the worker rendering it stopped, the shared key store (Redis) cannot be reached, or the snapshot is being written over in place; nothing is charged. Retry-After says when to come back",
        {
          headers: RETRY_HEADERS,
          examples: {
            [ERRORS.serviceUnavailable.code]: {
              ...errorBody(
                ERRORS.serviceUnavailable,
                "Too many PDFs are being rendered; nothing was charged. Retry after 4 s.",
              ),
              retry_after: 4,
            },
          },
        },
      ),
    },
    detail: {
      ...KEYED,
      ...alsoAt(
        "/v1/pdf/{page_id}.pdf",
        "getPagePdfFile",
        "The page as a PDF (the same, at an address ending in .pdf)",
      ),
      operationId: "getPagePdf",
      tags: ["Pages"],
      summary: "The page as a PDF",
      description:
        "An A4 PDF of the page: title, headings, paragraphs and lists, a footer with page numbers and the license on every page, " +
        `and the source attribution with links at the end. Costs ${COST.pdf} credits; with fewer left, 429 quota_exceeded. ` +
        `A PDF holds at most ${PDF_MAX_CHARACTERS.toLocaleString("en")} characters of the article's text (about 125 to 140 pages of English): ` +
        "a longer article is cut there, the document's list of modifications says so and gives the address where it continues, " +
        "and the answer (a HEAD's too) carries `X-PDF-Truncated`. " +
        "/v1/pdf/{page_id} and /v1/pdf/{page_id}.pdf are the same.",
    },
  });
};

/**
 * The PDF's ETag, known before rendering: a hash of everything the renderer is given (the
 * page's revision and text, the snapshot's date and wiki, the license) and of the renderer's version. Weak, because
 * two renders of one article are the same document but not the same bytes (each has its own creation date).
 */
function pdfEtag(article: PdfArticle, version = ""): string {
  return `W/"${Bun.hash(`${articleKey(article)} ${version}`)
    .toString(16)
    .padStart(16, "0")}"`;
}

/** The renderer's queue is full: 503, with when to come back; nothing is charged. */
const busy = (retryAfter: number) =>
  retryLater(
    ERRORS.serviceUnavailable,
    retryAfter,
    `Too many PDFs are being rendered; nothing was charged. Retry after ${retryAfter} s.`,
  );

/** The render did not finish within its time limit (a loaded machine): 503, with when to come back; nothing is charged. */
const late = (limitMs: number, retryAfter: number) =>
  retryLater(
    ERRORS.serviceUnavailable,
    retryAfter,
    `The PDF was not rendered within its time limit of ${limitMs / 1000} s, as the server is loaded; nothing was charged. Retry after ${retryAfter} s.`,
  );

/** An answer for a client that has gone (499, as nginx logs it): never delivered, a 4xx, never charged (D20, D26). */
const gone = () => new Response(null, { status: CLIENT_GONE, headers: { "x-credit-cost": "0" } });

/**
 * attachment; an ASCII filename for old clients, the real title in filename* (RFC 6266, RFC 5987).
 * The ASCII name is the title transliterated (any-ascii): Greek, Cyrillic, kana… A Han
 * character is read differently in each language (音楽 is ongaku in Japanese, yinyue in
 * Chinese), so a title with one, or with no letter or digit left, is named by its page id. Leading dots are left out
 * of the ASCII name (".NET Framework" would be saved as a hidden file).
 */
export function contentDisposition(title: string, pageId: number): string {
  const ascii = /\p{Script=Han}/u.test(title)
    ? ""
    : anyAscii(title)
        .replace(/[^\x20-\x7e]+/g, "_")
        .replace(/["\\/:*?<>|%;]+/g, "_")
        .replace(/\s+/g, " ")
        .replace(/^[.\s]+/, "")
        .trim()
        .slice(0, 150);
  const name = /[A-Za-z0-9]/.test(ascii) ? ascii : `page-${pageId}`;
  const encoded = encodeURIComponent(`${title}.pdf`).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${name}.pdf"; filename*=UTF-8''${encoded}`;
}
