/**
 * The API is read-only (D22): GET; HEAD answered as its GET without the body (the routes see a
 * GET, with x.head set); OPTIONS preflight answered here, without a key; anything else 405.
 * /mcp alone takes POST, and only POST: MCP's streamable HTTP transport, stateless, has no GET
 * stream and no session to DELETE.
 */
import { errorResponse, ERRORS } from "../errors";
import { routedPath, type Step } from "../pipeline";

export const MCP_PATH = "/mcp";

/** /mcp, or /mcp/: one slash at its end, as the router serves the API's routes (/v1/meta/). */
export const isMcpPath = (path: string): boolean => routedPath(path) === MCP_PATH;

const ALLOWED_METHODS = "GET, HEAD, OPTIONS";
const MCP_METHODS = "POST, OPTIONS";
const ALLOWED_HEADERS = "X-API-Key, Authorization, Content-Type, X-Request-Id, If-None-Match";
const PREFLIGHT = {
  "access-control-allow-methods": ALLOWED_METHODS,
  "access-control-allow-headers": ALLOWED_HEADERS,
  "access-control-max-age": "86400",
};
const MCP_PREFLIGHT = {
  ...PREFLIGHT,
  "access-control-allow-methods": MCP_METHODS,
  "access-control-allow-headers": `${ALLOWED_HEADERS}, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID`,
};

/** The GET answer's status and headers, with its length but not its body (an answer made without a body, such as an unrendered PDF's, says no length). */
async function withoutBody(get: Response): Promise<Response> {
  if (get.body === null) return get;
  const length = (await get.arrayBuffer()).byteLength;
  const head = new Response(null, get);
  if (!head.headers.has("content-length")) head.headers.set("content-length", String(length));
  return head;
}

const notAllowed = (message: string, allow: string) =>
  errorResponse(ERRORS.methodNotAllowed, [message], { headers: { allow } });

export const methods: Step = {
  before(x) {
    const method = x.request.method;
    if (isMcpPath(x.path)) {
      if (method === "POST") return undefined;
      if (method === "OPTIONS") return new Response(null, { status: 204, headers: MCP_PREFLIGHT });
      return notAllowed(
        `${MCP_PATH} is MCP's streamable HTTP transport, without sessions: POST JSON-RPC messages to it, not ${method}.`,
        MCP_METHODS,
      );
    }
    if (method === "GET") return undefined;
    if (method === "HEAD") {
      // The routes see a GET; x.head tells those that answer a HEAD with less work (the PDF).
      x.head = true;
      x.request = new Request(x.request, { method: "GET" });
      return undefined;
    }
    if (method === "OPTIONS") return new Response(null, { status: 204, headers: PREFLIGHT });
    return notAllowed(`The API is read-only: use GET (or HEAD, OPTIONS), not ${method}.`, ALLOWED_METHODS);
  },
  after: (x, response) => (x.head ? withoutBody(response) : response),
};
