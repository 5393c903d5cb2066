/**
 * POST /mcp: MCP's streamable HTTP transport on the running server, stateless (a new SDK server
 * and transport per request, no session), answering JSON. It sits behind the same pipeline as
 * the REST routes: the keys step has already checked the key and its rate and held the
 * request's credit (D32), and it times the whole request against the key's work share (D57).
 *
 * One message a request (D54): a JSON-RPC batch is refused, so that every tool call is one
 * request against the rate limit and one credit, as its REST request is. The body is bounded
 * before it is parsed: its declared and its read length (64 KiB, ../body.ts), then its nesting (32 levels)
 * and its members and elements in all (256, D155), by a scan that costs a pass over the bytes, so that no
 * body makes the parser or the SDK's schema checks work for long. JSON that is no JSON-RPC message is -32600 Invalid Request (-32700 is for no JSON).
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ErrorCode, isJSONRPCRequest, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { boundedText, MAX_BODY_BYTES } from "../body";
import type { ApiError } from "../errors";
import type { Exchange } from "../pipeline";
import { outsideWork } from "../steps/keys";
import {
  invalidParams,
  isServed,
  memberNoObject,
  OBJECT_MEMBERS,
  refusedNotification,
  withoutTask,
  type McpTools,
} from "./server";

/** A tool call nests 4 levels ({params: {arguments: {…}}}); clients' extensions a few more. */
const MAX_DEPTH = 32;
/**
 * D155: a tool call has about 10 members and elements in all (19 with every search argument, _meta and task), an
 * initialize a few dozen; each one more costs the SDK's schemas time (6,000 in 60 KB: 25–45 ms, 50 small calls).
 */
const MAX_MEMBERS = 256;

/** JSON-RPC's error codes (JSON-RPC 2.0 section 5.1). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
/** The code the MCP SDK's transport answers a refused header with (its 406 and 415). */
const UNSUPPORTED = -32000;

function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", id: null, error: { code, message } }, { status });
}

const tooLarge = () =>
  rpcError(
    413,
    INVALID_REQUEST,
    `Invalid Request: the body is over ${MAX_BODY_BYTES} bytes; a tool call's message is far smaller.`,
  );

/**
 * The JSON text's shape as a scan over its bytes sees it (strings skipped): how deep its arrays and objects nest, and
 * how many members and elements they hold in all, counted until either passes its limit.
 */
function messageShape(text: string, limits: { depth: number; members: number }): { depth: number; members: number } {
  let depth = 0;
  let deepest = 0;
  let members = 0;
  // Just after a [ or {: the next value or key, if any before its ] or }, is its first member.
  let opened = false;
  for (let i = 0; i < text.length && deepest <= limits.depth && members <= limits.members; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (c === 0x5d || c === 0x7d) {
      depth--;
      opened = false;
      continue;
    }
    if (opened) members++;
    opened = false;
    if (c === 0x2c) members++;
    else if (c === 0x22) {
      // A string: skip to its closing quote, past escaped characters.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      opened = true;
      if (++depth > deepest) deepest = depth;
    }
  }
  return { depth: deepest, members };
}

/**
 * What makes JSON no MCP message, said to the client: the member that is no object when the message is one without it
 * (`"params": []`, JSON-RPC's params by position, which MCP does not take), else what a request has.
 */
function noMessage(message: unknown): string {
  if (typeof message === "object" && message !== null) {
    for (const name of OBJECT_MEMBERS) {
      const value: unknown = (message as Record<string, unknown>)[name];
      if (value === undefined || (typeof value === "object" && value !== null && !Array.isArray(value))) continue;
      if (!JSONRPCMessageSchema.safeParse({ ...message, [name]: {} }).success) continue;
      return memberNoObject(name, value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`);
    }
  }
  return 'the body is JSON but no JSON-RPC 2.0 message: a request has "jsonrpc": "2.0", an "id" (a string or an integer) and a "method".';
}

/** The quota's 429, when it could not hold the request's credit (the keys step let it on for its 400 to come first, D2). */
function overQuota(x: Exchange): Response | undefined {
  const refusal = x.overQuota?.();
  return refusal && Response.json(refusal.body, { status: refusal.status });
}

export function mcpOverHttp(tools: McpTools): (x: Exchange) => Promise<Response> {
  return async (x) => {
    const request = x.request;
    if (request.method !== "POST") return overQuota(x) ?? serve(tools, x, undefined);
    // A compressed body was read as the JSON it is not ("Parse error"): the coding is refused by name, as the transport
    // refuses a Content-Type (415, RFC 9110 15.5.16), before the quota's 429 (D2).
    const coding = request.headers.get("content-encoding")?.trim().toLowerCase();
    if (coding && coding !== "identity")
      return rpcError(
        415,
        UNSUPPORTED,
        `Unsupported Media Type: Content-Encoding ${JSON.stringify(coding)} is not accepted; send the message uncompressed (it is at most ${MAX_BODY_BYTES / 1024} KiB).`,
      );
    const text = await outsideWork(x, boundedText(request, MAX_BODY_BYTES));
    // Admitted when its headers came, its work starts now: a key that held bodies back while it was admitted again and
    // again would otherwise have them all run at once, past its share (D162). Refused as at admission, before any 400.
    const overShare = x.overShare?.();
    if (overShare) return overShare;
    if (text === undefined) return tooLarge();
    // A batch's members are left uncounted: its own refusal below says more, and comes before any schema reads it.
    const batch = /^[ \t\n\r]*\[/.test(text);
    const shape = messageShape(text, { depth: MAX_DEPTH, members: batch ? Number.POSITIVE_INFINITY : MAX_MEMBERS });
    if (shape.depth > MAX_DEPTH) {
      return rpcError(
        400,
        INVALID_REQUEST,
        `Invalid Request: the message nests deeper than ${MAX_DEPTH} levels; a tool call's message nests 4.`,
      );
    }
    if (!batch && shape.members > MAX_MEMBERS) {
      return rpcError(
        400,
        INVALID_REQUEST,
        `Invalid Request: the message has more than ${MAX_MEMBERS} object members and array elements in all; a tool call's message has about 10.`,
      );
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return rpcError(400, PARSE_ERROR, "Parse error: the body is not JSON.");
    }
    if (Array.isArray(message)) {
      return rpcError(
        400,
        INVALID_REQUEST,
        "Invalid Request: JSON-RPC batches are not accepted (MCP removed them in its 2025-06-18 revision): send one message per request, " +
          "so that each call counts against the key's rate limit and credits as its REST request does.",
      );
    }
    // Checked as a request once (a schema's walk over the message), for the message check, invalidParams and withoutTask.
    const asRequest = isJSONRPCRequest(message) ? message : undefined;
    // JSON, but no JSON-RPC message: the SDK calls it -32700 Parse error, which is for a body that is not JSON.
    const parsed = asRequest ? undefined : JSONRPCMessageSchema.safeParse(message);
    if (parsed && !parsed.success) return rpcError(400, INVALID_REQUEST, `Invalid Request: ${noMessage(message)}`);
    // A notification the server cannot accept is an HTTP error (MCP), not the 202 the SDK answers before reading it.
    // Past the schema, a message with a method that is no request is a notification.
    const notification = parsed?.success && "method" in parsed.data ? parsed.data : undefined;
    const wrong = notification && refusedNotification(message as typeof notification);
    if (wrong)
      return rpcError(
        400,
        ErrorCode.InvalidParams,
        `Invalid params: the ${notification.method} notification's params are not as MCP says (${wrong}).`,
      );
    // A JSON-RPC protocol error or a message that asks for no work (a notification or a response, 202) costs no credit:
    // no tool or method's work ran, as no route's runs for REST's 400 and 404 (D32; a tool's bad argument is a tool error,
    // from the tool, and costs one). Needing none, it is answered whether or not the quota could hold one, as REST's 400
    // comes before the quota's 429 (D2). -32601 (a method not served) and -32602 for a tool that is not are the SDK's.
    const invalid = asRequest && invalidParams(asRequest);
    x.free =
      !asRequest ||
      invalid !== undefined ||
      !isServed(asRequest.method) ||
      (asRequest.method === "tools/call" && !tools.isTool(asRequest.params?.name));
    if (!asRequest) return serve(tools, x, message);
    if (invalid) return Response.json(invalid);
    return serve(tools, x, withoutTask(asRequest));
  };
}

/**
 * A refusal met by a tool call (the search pool full, or the key holding half of it: 503 or 429 with Retry-After) is
 * the request's answer, as the keys step's refusals of /mcp are: its status, Retry-After and D1 body, costing nothing
 * (D20), rather than a tool error in a 200, which costs a credit (D32) and loses Retry-After (D107).
 */
async function serve(tools: McpTools, x: Exchange, parsedBody: unknown): Promise<Response> {
  const request = x.request;
  const refusal: { error?: ApiError } = {};
  const server = tools.server(x, (error) => (refusal.error = error));
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  await server.connect(transport);
  // A message that costs a credit, when the quota could not hold one, is the quota's 429, not run. Asked here, as the
  // transport hands the message over: the body's 400 or 413 above, and the transport's refusal of the request's headers
  // (406 Accept, 415 Content-Type, 400 Mcp-Protocol-Version), come before it, as a REST route's bad parameter does (D2).
  const handle = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (x.free || !x.overQuota || !isJSONRPCRequest(message)) return handle?.(message, extra);
    const spent = x.overQuota();
    refusal.error = spent;
    // Its exchange answered, so that the transport makes its answer (which the refusal replaces below).
    void transport.send({
      jsonrpc: "2.0",
      id: message.id,
      error: { code: ErrorCode.InternalError, message: spent.message },
    });
  };
  try {
    const answer = await transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
    const refused = refusal.error;
    if (!refused) return answer;
    await answer.body?.cancel();
    return Response.json(refused.body, { status: refused.status, headers: refused.headers });
  } finally {
    await server.close();
  }
}
