/**
 * POST /mcp: MCP's streamable HTTP transport on the running server, stateless (a new SDK server
 * and transport per request, no session), answering JSON. It sits behind the same pipeline as
 * the REST routes: the keys step has already checked the key and its rate and held the
 * request's credit (D32); a search or lucky call's engine time counts against the key's work
 * share (D25).
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { meterWork, quotaRefusal } from "../steps/keys";
import type { McpTools } from "./server";

/** A tool call's JSON-RPC message is small (a query is at most 500 characters). */
const MAX_BODY_BYTES = 64 * 1024;

export function mcpOverHttp(tools: McpTools): (request: Request) => Promise<Response> {
  return async (request) => {
    const refusal = quotaRefusal(request);
    if (refusal) return Response.json(refusal.body, { status: refusal.status });
    const server = tools.server({ meter: (ms) => meterWork(request, ms) });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: MAX_BODY_BYTES });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
  };
}
