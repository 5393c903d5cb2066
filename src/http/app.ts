/**
 * The application: the request pipeline (pipeline.ts; its steps in steps/) around the Elysia
 * routes of api.md on one loaded snapshot, errors as D1, and the OpenAPI document (from the
 * same TypeBox schemas) at /v1/openapi.json with its UI at /docs. POST /mcp, the MCP server
 * (../mcp), sits beside the routes, behind the same steps.
 */
import type { Server } from "bun";
import { Elysia } from "elysia";
import type { Gate } from "../access";
import { mcpOverHttp, mcpTools } from "../mcp";
import { PdfRenderer, type PdfRenderService } from "../pdf";
import type { Engine } from "../search";
import { apiContext } from "./context";
import { DOCS_PATH, OPENAPI_PATH, openApi } from "./docs";
import { ApiError, INTERNAL_ERROR } from "./errors";
import { Metrics } from "./metrics";
import { compose, exchange, type Step } from "./pipeline";
import { aboutRoutes } from "./routes/about";
import { changesRoutes } from "./routes/changes";
import { luckyRoutes } from "./routes/lucky";
import { pdfRoutes } from "./routes/pdf";
import { pageRoutes } from "./routes/pages";
import { searchRoutes } from "./routes/search";
import { conditional } from "./steps/conditional";
import { faults } from "./steps/faults";
import { keys } from "./steps/keys";
import { log, type LogSink } from "./steps/log";
import { measure, metricsEndpoint } from "./steps/metrics";
import { MCP_PATH, methods } from "./steps/methods";
import { responseHeaders } from "./steps/response-headers";
import { socketTime } from "./steps/socket-time";
import { target } from "./steps/target";

export { DOCS_PATH, OPENAPI_PATH };
/** How long a PDF request's connection may stay silent: the render queue's wait plus a render's time limit. */
const PDF_SOCKET_SECONDS = 180;

export interface AppOptions {
  /** Keys, rate limits and quotas. Without it every route answers without a key (benchmarks, local use). */
  access?: Gate;
  /** Renders PDFs (default: a PdfRenderer with its worker thread). */
  pdf?: PdfRenderService;
  /** Where server faults are reported (the client only sees D1's internal_error). */
  logError?: (error: unknown, request: Request | undefined) => void;
  /** One line per request (none by default; `bun run start` logs to stdout). */
  log?: LogSink;
  /** Opens /metrics to Authorization: Bearer <adminToken> (TOME_ADMIN_TOKEN). Without it, /metrics is 404 and nothing is measured. */
  adminToken?: string;
}

export function createApp(engine: Engine, options: AppOptions = {}) {
  const access = options.access;
  const ctx = apiContext(engine, access ? [() => access.health()] : []);
  const logError = options.logError ?? ((error) => console.error(error));
  const pdf = options.pdf ?? new PdfRenderer();
  // Responses are built in their exact shape: no normalizing copy. The path is read from the
  // first "/" after the scheme, as the target step reads it (not from a fixed offset).
  const routes = new Elysia({ normalize: false, handler: { standardHostname: false } })
    .onError({ as: "global" }, ({ error, code, set, request }) => {
      if (error instanceof ApiError) {
        set.status = error.status;
        if (error.headers) Object.assign(set.headers, error.headers);
        return error.body;
      }
      if (code === "NOT_FOUND") {
        set.status = 404;
        return { error: "not found", message: `There is no such route. The API is described at ${OPENAPI_PATH}.` };
      }
      // The strict reader (params.ts) refuses every bad request before Elysia's validation
      // runs, so anything left is a fault of ours, as is a response that fails its schema.
      logError(error, request);
      set.status = 500;
      return INTERNAL_ERROR;
    })
    .use(openApi())
    .use(aboutRoutes(ctx))
    .use(searchRoutes(ctx))
    .use(pageRoutes(ctx))
    .use(changesRoutes(ctx))
    .use(luckyRoutes(ctx))
    .use(pdfRoutes(ctx, pdf, (error) => logError(error, undefined)));

  const mcp = mcpOverHttp(mcpTools(ctx, { logError: (error) => logError(error, undefined) }));

  const metrics = options.adminToken ? new Metrics({ engine, access, pdf, routes: [...routes.routes.map((r) => r.path), MCP_PATH] }) : undefined;
  const steps: Step[] = [
    ...(metrics ? [measure(metrics)] : []),
    responseHeaders,
    ...(options.log ? [log(options.log)] : []),
    target,
    socketTime(PDF_SOCKET_SECONDS),
    methods,
    metricsEndpoint(metrics, options.adminToken),
    keys(access),
    conditional,
  ];
  const handler = compose(
    steps,
    (x) => (x.path === MCP_PATH ? mcp(x.request) : routes.handle(x.request)),
    faults((error, x) => logError(error, x.request)),
  );

  return {
    /** The Elysia routes and the OpenAPI document. */
    routes,
    /** Answers a request through the whole pipeline. */
    handle: (request: Request, server?: Server<undefined>): Response | Promise<Response> => handler(exchange(request, server)),
    /** Stops what the app runs beside the server (the PDF renderer's worker, the metrics' watch on the engine). */
    close: () => {
      metrics?.close();
      pdf.close?.();
    },
  };
}

export type App = ReturnType<typeof createApp>;
