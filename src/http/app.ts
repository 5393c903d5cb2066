/**
 * The Elysia application: every route of api.md on one loaded snapshot, errors as D1, and the
 * OpenAPI document (from the same TypeBox schemas) at /v1/openapi.json with its UI at /docs.
 */
import { Elysia, type AnyElysia } from "elysia";
import type { Access } from "../access";
import { PdfRenderer, type PdfRenderService } from "../pdf";
import type { Engine } from "../search";
import { accessControl } from "./access";
import { apiContext } from "./context";
import { DOCS_PATH, OPENAPI_PATH, openApi } from "./docs";
import { ApiError, INTERNAL_ERROR } from "./errors";
import { aboutRoutes } from "./routes/about";
import { changesRoutes } from "./routes/changes";
import { luckyRoutes } from "./routes/lucky";
import { pdfRoutes } from "./routes/pdf";
import { pageRoutes } from "./routes/pages";
import { searchRoutes } from "./routes/search";

export { DOCS_PATH, OPENAPI_PATH };

export interface AppOptions {
  /** Keys, rate limits and quotas. Without it every route answers without a key (benchmarks, local use). */
  access?: Access;
  /** Renders PDFs (default: a PdfRenderer with its worker thread). */
  pdf?: PdfRenderService;
  /** Where server faults are reported (the client only sees D1's internal_error). */
  logError?: (error: unknown, request: Request | undefined) => void;
}

export function createApp(engine: Engine, options: AppOptions = {}) {
  const ctx = apiContext(engine);
  const logError = options.logError ?? ((error) => console.error(error));
  const pdf = options.pdf ?? new PdfRenderer();
  const access = accessControl(options.access);
  /** The routes, after the given hooks; with the OpenAPI document and its UI unless told otherwise. */
  const routesAfter = (hooks: AnyElysia, docs: boolean) =>
    // Responses are built in their exact shape: no normalizing copy.
    new Elysia({ normalize: false })
      .use(hooks)
      .onError({ as: "global" }, ({ error, code, set, request }) => {
        if (error instanceof ApiError) {
          set.status = error.status;
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
      .use(docs ? openApi() : new Elysia())
      .use(aboutRoutes(ctx))
      .use(searchRoutes(ctx))
      .use(pageRoutes(ctx))
      .use(changesRoutes(ctx))
      .use(luckyRoutes(ctx))
      .use(pdfRoutes(ctx, pdf, (error) => logError(error, undefined)));
  const routes = routesAfter(new Elysia(), true);
  /** For requests the quota cannot hold: built the first time one comes. */
  let refusing: typeof routes | undefined;

  return {
    /** The Elysia application: the routes and the OpenAPI document. */
    routes,
    /**
     * Answers a request: authentication, the rate limit and the quota's hold first (D2), then
     * the routes, then the hold settled and the limit headers written (see access.ts).
     */
    async handle(request: Request): Promise<Response> {
      const grant = access.admit(request);
      if (!grant) return routes.handle(request);
      if (grant instanceof Response) return grant;
      const app = grant.held ? routes : (refusing ??= routesAfter(access.quotaRefusal(), false));
      let response: Response;
      try {
        response = await app.handle(request);
      } catch (error) {
        access.finish(grant, 500);
        throw error;
      }
      access.finish(grant, response.status, response.headers);
      return response;
    },
  };
}

export type App = ReturnType<typeof createApp>;
