/**
 * The HTTP server: Bun.serve around the app's pipeline, and a graceful stop that lets the
 * requests in flight finish.
 */
import type { Server } from "bun";
import type { App } from "./app";
import { INTERNAL_ERROR } from "./errors";

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
  const server = Bun.serve({
    port: options.port,
    hostname: options.hostname,
    // A second server on a busy port must fail, not share the port's traffic.
    reusePort: false,
    development: false,
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
