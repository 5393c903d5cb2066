/**
 * GET / (D87): what a person who opens the server's address in a browser needs, without a key:
 * where the API's reference is (/docs, /v1/openapi.json), that every /v1 route needs a key and
 * how to send it, the dashboard when this server has one, and the liveness check. Not an API
 * route (not in the OpenAPI document), as /dashboard and /metrics are not.
 */
import { DOCS_PATH, OPENAPI_PATH } from "../docs";
import type { Step } from "../pipeline";
import { MCP_PATH } from "./methods";

const HOME_PATH = "/";

export function home(options: { dashboard: boolean }): Step {
  const body = JSON.stringify({
    name: "Tome",
    description:
      "Wikipedia's text for programs: search, articles and passages as JSON, with source and license attribution. " +
      "Every /v1 route needs an API key, sent as X-API-Key: wk_... or Authorization: Bearer wk_... .",
    docs: DOCS_PATH,
    openapi: OPENAPI_PATH,
    ...(options.dashboard ? { dashboard: "/dashboard" } : {}),
    mcp: MCP_PATH,
    health: "/healthz",
  });
  return {
    before: (x) =>
      x.path === HOME_PATH
        ? new Response(body, { headers: { "content-type": "application/json", "cache-control": "no-cache" } })
        : undefined,
  };
}
