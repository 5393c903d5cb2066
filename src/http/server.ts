/**
 * The HTTP server: Bun.serve around the app's pipeline, and a graceful stop that lets the
 * requests in flight finish.
 */
import http from "node:http";
import type { Server } from "bun";
import type { App } from "./app";
import { INTERNAL_ERROR } from "./errors";
import { SOCKET_IDLE_SECONDS } from "../request-time";

/**
 * The most a request's line and headers may take (D88): 8 times Bun's 16 KiB, so that a query of
 * up to 100,000 characters or so reaches the routes and gets D6's JSON 400 (the most a valid
 * request needs is a few KB). Past it Bun answers a bare 431 before any JavaScript runs.
 */
const MAX_REQUEST_HEAD_BYTES = 128 * 1024;

export interface ServeOptions {
  port: number;
  /** Bind address (default: every interface). */
  hostname?: string;
}

export interface RunningServer {
  url: URL;
  server: Server<undefined>;
  /** Responses sent so far. */
  answered(): number;
  /** Stops accepting connections and resolves once in-flight requests are answered. */
  stop(): Promise<void>;
}

export function serve(app: App, options: ServeOptions): RunningServer {
  let answered = 0;
  const count = (response: Response) => {
    answered++;
    return response;
  };
  // Bun's limit for every server of this process: node:http's setting, which Bun lets a program set (its types say read-only, as Node's).
  Object.assign(http, { maxHeaderSize: MAX_REQUEST_HEAD_BYTES });
  const server = Bun.serve({
    port: options.port,
    hostname: options.hostname,
    // A second server on a busy port must fail, not share the port's traffic.
    reusePort: false,
    development: false,
    // Off: past it Bun answers a bare 413 itself; the bodies step bounds bodies with D1's 413 (D28).
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // Bun's default, named: the holds on the quota are made to outlast it (request-time.ts).
    idleTimeout: SOCKET_IDLE_SECONDS,
    fetch(request, server) {
      const response = app.handle(request, server);
      return response instanceof Promise ? response.then(count) : count(response);
    },
    // Only reached if the pipeline's own fault step fails.
    error() {
      return Response.json(INTERNAL_ERROR, {
        status: 500,
        headers: { "content-type": "application/json; charset=utf-8" },
      });
    },
  });

  return {
    url: server.url,
    server,
    answered: () => answered,
    stop: async () => {
      await server.stop(false);
      app.close();
    },
  };
}
