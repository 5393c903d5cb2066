/**
 * The application: the request pipeline (pipeline.ts; its steps in steps/) around the Elysia
 * routes of api.md on the snapshot served (current.ts: a newer one can be swapped in while
 * serving; each request keeps the one it started on), errors as D1, and the OpenAPI document (from the
 * same TypeBox schemas) at /v1/openapi.json with its UI at /docs. POST /mcp, the MCP server
 * (../mcp), sits beside the routes, behind the same steps.
 */
import type { Server } from "bun";
import { Elysia } from "elysia";
import type { AccountStore, Gate } from "../access";
import { dashboard } from "./dashboard";
import { mcpOverHttp, mcpTools } from "./mcp";
import { PdfRenderer, type PdfRenderService } from "../pdf";
import { LOWEST, MAX_SEARCH_WORKERS } from "../scheduling";
import { checkOption, type Engine, type OptionRule, type SearchWork } from "../search";
import { apiContext, type ApiContext } from "./context";
import { CurrentSnapshot, type Served } from "./current";
import { damageReporter } from "./damage";
import { DOCS_PATH, isDocumentation, noRouteAnswer, OPENAPI_PATH, openApi } from "./docs";
import { ApiError, errorAnswer, errorBody, ERRORS, INTERNAL_ERROR, noSuchRoute, retryLater } from "./errors";
import { Metrics } from "./metrics";
import { SearchPool } from "./pool/pool";
import { compose, exchange, handOver, type Step } from "./pipeline";
import { aboutRoutes } from "./routes/about";
import { changesRoutes } from "./routes/changes";
import { luckyRoutes } from "./routes/lucky";
import { pdfRoutes } from "./routes/pdf";
import { pageRoutes } from "./routes/pages";
import { searchRoutes } from "./routes/search";
import { bodies } from "./steps/bodies";
import { conditional } from "./steps/conditional";
import { faults } from "./steps/faults";
import { home } from "./steps/home";
import { keyless } from "./steps/keyless";
import { isNoRoute, keys } from "./steps/keys";
import { log, type LogSink } from "./steps/log";
import { measure, metricsEndpoint } from "./steps/metrics";
import { isMcpPath, MCP_PATH, methods } from "./steps/methods";
import { responseHeaders } from "./steps/response-headers";
import { socketTime } from "./steps/socket-time";
import { target } from "./steps/target";
import { PDF_SOCKET_SECONDS } from "../request-time";

export { DOCS_PATH, OPENAPI_PATH };
/** What a 503 while the served file is written over in place says to wait, in seconds (D56). */
const UNAVAILABLE_RETRY_AFTER_S = 5;

export interface AppOptions {
  /** Keys, rate limits and quotas. Without it every route answers without a key (benchmarks, local use). */
  access?: Gate;
  /** Renders PDFs (default: a PdfRenderer with its worker thread). */
  pdf?: PdfRenderService;
  /** Where server faults are reported (the client only sees D1's internal_error). */
  logError?: (error: unknown, request: Request | undefined) => void;
  /** One line per request (none by default; `bun run start` logs to stdout). */
  log?: LogSink;
  /** Where a failure of a store the server leans on, and its end, are told in a line (default console.error). */
  notice?: (line: string) => void;
  /** Opens /metrics to Authorization: Bearer <adminToken> (TOME_ADMIN_TOKEN). Without it, /metrics is 404 and nothing is measured. */
  adminToken?: string;
  /** Told when a snapshot swapped out has been let go (its last request in flight answered). */
  onFreed?: (freed: { path: string; id: string }) => void;
  /** Serves /dashboard (account holders' keys and usage; the operator's view with adminToken) over these accounts. Without it, /dashboard is not served. */
  accounts?: AccountStore;
  /** TOME_PUBLIC_URL, where clients reach the server: an https one makes the dashboard's cookies Secure. */
  publicUrl?: string;
  /** TOME_TRUSTED_PROXIES: a request from one of these addresses is counted as from the client its X-Forwarded-For names (D80). */
  trustedProxies?: string[];
  /** TOME_SEARCH_TIMEOUT_MS: a search's time limit, past which it answers with what it found, timedOut (D91). */
  searchTimeoutMs?: number;
  /** TOME_SEARCH_WORKERS: searches, lucky and the MCP search tools answered in this many worker threads (D101); 0 (the default here), on the request thread. */
  searchWorkers?: number;
  /** TOME_SEARCH_WORKER_NICE: how many nice steps below the request thread the search workers (D142) and the PDF renderer's workers (D143, unless `pdf` is given) run; default 0 here, the server's 10. */
  searchWorkerNice?: number;
  /** Requests the search pool holds per worker, waiting and running, before it answers 503 (default 64; D104, D106). */
  searchQueue?: number;
  /** Reads the request thread's time waiting for a core so far, in ms, taken off a key's work (D25 amended; default its schedstat). */
  coreWaited?: () => number;
}

/**
 * The options that start threads or bound them, checked as the server's settings are (TOME_SEARCH_WORKERS,
 * TOME_SEARCH_WORKER_NICE: D101, D142) and the engine's arguments are (D151): unchecked, searchWorkers 1000 started
 * 1000 threads, 2.5 three, -1 one; searchQueue NaN bounded nothing; a searchTimeoutMs of -1 made every search a 500.
 */
const APP_OPTION_RULES: [keyof AppOptions, OptionRule][] = [
  [
    "searchWorkers",
    [
      (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_SEARCH_WORKERS,
      `a whole number of search threads from 0 to ${MAX_SEARCH_WORKERS} (0: searches on the request thread)`,
    ],
  ],
  [
    "searchWorkerNice",
    [
      (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= LOWEST,
      `a whole number of nice steps from 0 to ${LOWEST}`,
    ],
  ],
  [
    "searchQueue",
    [
      (v) => Number.isInteger(v) && (v as number) >= 0,
      "a whole number of requests a worker, 0 or more (0: every search refused, 503)",
    ],
  ],
  ["searchTimeoutMs", [(v) => typeof v === "number" && v >= 0, "a number of milliseconds, 0 or more"]],
];

function checkOptions(options: AppOptions): void {
  for (const [name, rule] of APP_OPTION_RULES) checkOption("createApp(engine, options)", name, options[name], rule);
}

export function createApp(engine: Engine, options: AppOptions = {}) {
  checkOptions(options);
  const access = options.access;
  const checks = access ? [() => access.health()] : [];
  const logError = options.logError ?? ((error) => console.error(error));
  const notice = options.notice ?? ((line: string) => console.error(line));
  const pdf = options.pdf ?? new PdfRenderer({ nice: options.searchWorkerNice });
  /** The search work of every snapshot served, for /metrics (each snapshot's engine reports to these). */
  const workWatchers = new Set<(work: SearchWork) => void>();

  const pool = options.searchWorkers
    ? new SearchPool({
        workers: options.searchWorkers,
        queueLength: options.searchQueue,
        searchTimeoutMs: options.searchTimeoutMs,
        nice: options.searchWorkerNice,
        logError: (error) => logError(error, undefined),
      })
    : undefined;

  /** What the app makes of one snapshot: its routes and MCP tools, built over it alone (and opened in the search pool's workers). */
  const viewOf = (engine: Engine) => {
    const searches = pool?.generation(
      engine.snapshot.path,
      engine.snapshot.meta.contentHash,
      (work) => {
        for (const watcher of workWatchers) watcher(work);
      },
      engine.snapshot.checked,
    );
    const ctx = apiContext(engine, checks, options.searchTimeoutMs, searches);
    const report = damageReporter(engine, logError, notice);
    const mcp = mcpOverHttp(mcpTools(ctx, { logError: (error) => report(error, undefined) }));
    const unwatch = engine.watch((work) => {
      for (const watcher of workWatchers) watcher(work);
    });
    return { engine, ctx, routes: snapshotRoutes(ctx, pdf, report), mcp, unwatch, report };
  };
  type View = ReturnType<typeof viewOf>;
  const served = (engine: Engine) => ({
    view: viewOf(engine),
    id: engine.snapshot.meta.contentHash,
    path: engine.snapshot.path,
  });
  const current = new CurrentSnapshot<View>(served(engine), (freed) => {
    freed.view.unwatch();
    freed.view.ctx.searches?.close();
    options.onFreed?.({ path: freed.path, id: freed.id });
  });
  /** Why no snapshot may be read now (the one served is being written over in place: D56), until the next swap. */
  let unavailable: string | undefined;

  const metrics = options.adminToken
    ? new Metrics({
        snapshot: () => current.now.view.engine.snapshot.meta,
        watch: (watcher) => {
          workWatchers.add(watcher);
          return () => workWatchers.delete(watcher);
        },
        retiring: () => current.retiringCount,
        access,
        pdf,
        pool: pool && (() => pool.stats()),
        routes: [...current.now.view.routes.routes.map((r) => r.path), MCP_PATH],
      })
    : undefined;
  const steps: Step[] = [
    ...(metrics ? [measure(metrics)] : []),
    responseHeaders,
    ...(options.log ? [log(options.log)] : []),
    ...(access ? [keyless({ trustedProxies: options.trustedProxies })] : []),
    target,
    bodies,
    ...(options.accounts
      ? [
          dashboard({
            accounts: options.accounts,
            adminToken: options.adminToken,
            publicUrl: options.publicUrl,
            trustedProxies: options.trustedProxies,
            now: access?.now,
            usageTime: access && ((now) => access.usageTime(now)),
          }),
        ]
      : []),
    socketTime(PDF_SOCKET_SECONDS),
    methods,
    home({ dashboard: options.accounts !== undefined }),
    metricsEndpoint(metrics, options.adminToken, {
      trustedProxies: options.trustedProxies,
      now: access?.now,
      signIns: options.accounts,
      notice: options.notice,
    }),
    keys(access, options.coreWaited),
    conditional,
  ];
  const handler = compose(
    steps,
    (x) => {
      // The API's description reads nothing of the snapshot: it still answers (D165); nor does a path that is no route,
      // answered 404 as the router answers it (D169; the keys step answers it so to a request without a key).
      if (unavailable !== undefined && !isDocumentation(x.path)) {
        if (isNoRoute(x.path)) return noRouteAnswer();
        return errorAnswer(retryLater(ERRORS.serviceUnavailable, UNAVAILABLE_RETRY_AFTER_S, unavailable));
      }
      const view = (x.served as Served<View>).view;
      return isMcpPath(x.path) ? view.mcp(x) : view.routes.handle(handOver(x));
    },
    faults((error, x) => ((x.served as Served<View>).view?.report ?? logError)(error, x.request)),
  );

  return {
    /** The Elysia routes and the OpenAPI document, over the snapshot served now (a getter: holding them would hold that snapshot after it is swapped out). */
    get routes() {
      return current.now.view.routes;
    },
    /**
     * Answers a request through the whole pipeline, on the snapshot served when it arrives (taken
     * once here, and held until its answer is made, whatever swap happens meanwhile).
     */
    handle: (request: Request, server?: Server<undefined>): Response | Promise<Response> => {
      const held = current.acquire();
      let answer: Response | Promise<Response>;
      try {
        answer = handler(exchange(request, server, held));
      } catch (error) {
        current.release(held);
        throw error;
      }
      if (!(answer instanceof Promise)) {
        current.release(held);
        return answer;
      }
      return answer.finally(() => current.release(held));
    },
    /** The snapshot served now: its engine, path, content hash, and the requests in flight on it. */
    served: () => {
      const now = current.now;
      return { engine: now.view.engine, path: now.path, id: now.id, inFlight: now.inFlight };
    },
    /** Serves this engine's snapshot from now on; the one it replaces is freed once its requests in flight are answered. */
    swap: (engine: Engine): void => {
      current.swap(served(engine));
      unavailable = undefined;
    },
    /**
     * Stops reading the snapshot served (its file is being written over in place: reading its mapping could kill the
     * process, D56): every request reaching the snapshot's routes or /mcp answers 503 until the next swap, but the API's
     * description (D165) and a path that is no route (404, D169).
     */
    suspend: (reason: string): void => {
      unavailable = reason;
    },
    /**
     * Resolves once no request that may read this engine's snapshot is in flight: those that
     * took it before are answered (call suspend() first, if it is the one served: later requests are answered 503 without reading it).
     */
    drained: (engine: Engine): Promise<void> => {
      // And the search workers opening it: they read its file until they have (D103).
      const opening = current.all.map((s) => s.view).filter((v) => v.engine === engine);
      return Promise.all([
        current.drained((view) => view.engine === engine),
        ...opening.map((v) => v.ctx.searches?.ready),
      ]).then(() => {});
    },
    /** Resolves once the snapshot served is open in every search worker (at once without a pool): `start` serves after it. */
    ready: (): Promise<void> => current.now.view.ctx.searches?.ready ?? Promise.resolve(),
    /** Snapshots swapped out whose requests in flight are still being answered. */
    retiring: () => current.retiringCount,
    /** The search pool, when the app has one (D101). */
    pool,
    /** Stops what the app runs beside the server (the PDF renderer's worker, the metrics' watch on the engine). */
    close: () => {
      metrics?.close();
      current.now.view.unwatch();
      pdf.close?.();
      pool?.stop();
    },
  };
}

/** The Elysia routes of api.md over one snapshot, errors as D1, and the OpenAPI document. */
function snapshotRoutes(
  ctx: ApiContext,
  pdf: PdfRenderService,
  logError: (error: unknown, request: Request | undefined) => void,
) {
  // Responses are built in their exact shape: no normalizing copy. The path is read from the
  // first "/" after the scheme, as the target step reads it (not from a fixed offset).
  return new Elysia({ normalize: false, handler: { standardHostname: false } })
    .onError({ as: "global" }, ({ error, code, set, request }) => {
      if (error instanceof ApiError) {
        set.status = error.status;
        if (error.headers) Object.assign(set.headers, error.headers);
        return error.body;
      }
      if (code === "NOT_FOUND") {
        set.status = ERRORS.notFound.status;
        return errorBody(ERRORS.notFound, noSuchRoute(OPENAPI_PATH));
      }
      // The strict reader (params.ts) refuses every bad request before Elysia's validation
      // runs, so anything left is a fault of ours, as is a response that fails its schema.
      logError(error, request);
      set.status = ERRORS.internalError.status;
      return INTERNAL_ERROR;
    })
    .use(openApi())
    .use(aboutRoutes(ctx))
    .use(searchRoutes(ctx))
    .use(pageRoutes(ctx))
    .use(changesRoutes(ctx))
    .use(luckyRoutes(ctx))
    .use(pdfRoutes(ctx, pdf, (error) => logError(error, undefined)));
}

export type App = ReturnType<typeof createApp>;
