/**
 * The HTTP server around the app: what every response gets (D22: JSON charset, CORS,
 * X-Request-Id; HEAD and OPTIONS; 405 for other methods), one log line per request, and a
 * graceful stop that lets in-flight requests finish.
 */
import type { Server } from "bun";
import type { App } from "./app";
import { INTERNAL_ERROR } from "./errors";
import { pathOf } from "./url";

export interface ServeOptions {
  port: number;
  hostname?: string;
  /** One line per request: method, path, status, milliseconds, request id (default: stdout, buffered up to 50 ms). */
  log?: (line: string) => void;
}

export interface RunningServer {
  url: URL;
  server: Server<undefined>;
  /** Responses sent so far. */
  answered(): number;
  /** Stops accepting connections and resolves once in-flight requests are answered. */
  stop(): Promise<void>;
}

const ALLOWED_METHODS = "GET, HEAD, OPTIONS";
const EXPOSED =
  "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Quota-Limit, X-Quota-Remaining, X-Quota-Reset, Retry-After, X-Credit-Cost, Content-Disposition";
/** What a preflight (OPTIONS) answer says (D22); other answers only need the origin and the exposed headers. */
const PREFLIGHT = {
  "access-control-allow-methods": ALLOWED_METHODS,
  "access-control-allow-headers": "X-API-Key, Authorization, Content-Type, X-Request-Id",
  "access-control-max-age": "86400",
};
const JSON_TYPE = "application/json; charset=utf-8";
const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request log lines to stdout, buffered: a write per line would cost more than most requests. */
function stdoutLog(): { log: (line: string) => void; flush: () => Promise<unknown> } {
  const out = Bun.stdout.writer({ highWaterMark: 64 * 1024 });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = async () => {
    timer = undefined;
    await out.flush();
  };
  return {
    log: (line) => {
      out.write(line + "\n");
      timer ??= setTimeout(() => void flush(), 50);
    },
    flush,
  };
}

/** A HEAD answer: the GET answer's status and headers, with its length but not its body. */
async function withoutBody(get: Promise<Response>): Promise<Response> {
  const response = await get;
  const length = (await response.arrayBuffer()).byteLength;
  const head = new Response(null, response);
  head.headers.set("content-length", String(length));
  return head;
}

export function serve(app: App, options: ServeOptions): RunningServer {
  const logger = options.log ? { log: options.log, flush: async () => {} } : stdoutLog();
  const log = logger.log;
  let answered = 0;

  const handle = (request: Request): Response | Promise<Response> => {
    const method = request.method;
    if (method === "GET") return app.handle(request);
    if (method === "HEAD") return withoutBody(app.handle(new Request(request, { method: "GET" })));
    if (method === "OPTIONS") return new Response(null, { status: 204, headers: PREFLIGHT });
    return Response.json({ error: "method not allowed", message: `The API is read-only: use GET (or HEAD, OPTIONS), not ${method}.` }, { status: 405, headers: { allow: ALLOWED_METHODS } });
  };

  const server = Bun.serve({
    port: options.port,
    hostname: options.hostname,
    development: false,
    async fetch(request) {
      const started = performance.now();
      const given = request.headers.get("x-request-id");
      const id = given && CLIENT_ID.test(given) ? given : crypto.randomUUID();
      let response: Response;
      try {
        response = await handle(request);
      } catch (error) {
        console.error(`request ${id} failed:`, error);
        response = Response.json(INTERNAL_ERROR, { status: 500 });
      }
      const headers = response.headers;
      const type = headers.get("content-type");
      if (type?.startsWith("application/json")) headers.set("content-type", JSON_TYPE);
      headers.set("access-control-allow-origin", "*");
      headers.set("access-control-expose-headers", EXPOSED);
      headers.set("x-request-id", id);
      answered++;
      log(`${request.method} ${pathOf(request.url)} ${response.status} ${(performance.now() - started).toFixed(1)}ms ${id}`);
      return response;
    },
    error() {
      return Response.json(INTERNAL_ERROR, { status: 500, headers: { "content-type": JSON_TYPE } });
    },
  });

  return {
    url: server.url,
    server,
    answered: () => answered,
    stop: async () => {
      await server.stop(false);
      await logger.flush();
    },
  };
}
