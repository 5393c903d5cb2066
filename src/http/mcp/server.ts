/**
 * The MCP server over one loaded snapshot, built with the official SDK's low-level Server so
 * that the tools' schemas are the API's own JSON Schemas (TypeBox), not a second copy in Zod.
 * A tool's bad argument or missing page is a tool error (isError) with the route's message; a
 * fault of ours is logged and answered as D1's internal_error, without its details. A refusal that
 * says when to come back (the search pool's 503 and 429) is told to whoever serves the request
 * (HTTP answers the request with it, D107); without one, it is a tool error too.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  ErrorCode,
  InitializedNotificationSchema,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ProgressNotificationSchema,
  type CallToolResult,
  type JSONRPCErrorResponse,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type Tool as ListedTool,
} from "@modelcontextprotocol/sdk/types.js";
import type { TSchema } from "@sinclair/typebox";
import pkg from "../../../package.json";
import type { ApiContext } from "../context";
import { SnapshotError } from "../../snapshot";
import { ApiError, ERRORS, INTERNAL_ERROR, shortened } from "../errors";
import type { Exchange } from "../pipeline";
import { printableName } from "../../printable";
import { ClientGone } from "../pool/pool";
import { toolsOf, type Tool } from "./tools";

/** A TypeBox schema as plain JSON Schema: its symbols dropped, and the x- extensions only the REST reader uses. */
function jsonSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key.startsWith("x-") ? undefined : value)));
}

function listed(tool: Tool): ListedTool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: { ...jsonSchema(tool.input), type: "object", additionalProperties: false },
    outputSchema: { ...jsonSchema(tool.output), type: "object" },
    annotations: {
      title: tool.title,
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  };
}

const failure = (code: string, message: string): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: `${code}: ${message}` }],
});

interface MessageSchema {
  safeParse(message: unknown): { error?: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

/**
 * The requests served, each read by its schema before its handler: initialize and ping the SDK's Server answers itself,
 * tools/list and tools/call the handlers server() registers below. isServed reads it to say which requests are free
 * (D32); test/mcp.test.ts -t isServed asks the server every MCP client request to keep the two in step.
 */
const REQUESTS = new Map<string, MessageSchema>([
  ["initialize", InitializeRequestSchema],
  ["ping", PingRequestSchema],
  ["tools/list", ListToolsRequestSchema],
  ["tools/call", CallToolRequestSchema],
]);

/** Whether the server answers a request of this method; any other is -32601 Method not found (the SDK's answer). */
export const isServed = (method: string): boolean => REQUESTS.has(method);

/**
 * A request whose params its method's schema refuses (initialize without protocolVersion, tools/call without a name or
 * with arguments that are not an object, or with one named __proto__), answered -32602 Invalid params with what is wrong. The SDK answers it
 * -32603, Internal error, its message the schema's issues as JSON: the client's mistake, said as the server's.
 * The caller has checked the message is a request (isJSONRPCRequest), once for this and withoutTask: each check walks it.
 */
export function invalidParams(message: JSONRPCRequest): JSONRPCErrorResponse | undefined {
  const issues = [...(REQUESTS.get(message.method)?.safeParse(message).error?.issues ?? [])];
  // The schema drops an argument named __proto__ without a word, where a tool refuses one it does not take (D33).
  const args = message.params?.arguments;
  if (message.method === "tools/call" && typeof args === "object" && args !== null && Object.hasOwn(args, "__proto__"))
    issues.push({ path: ["params", "arguments", "__proto__"], message: "no tool takes this argument" });
  if (!issues.length) return undefined;
  const wrong = issuesSaid(issues);
  return {
    jsonrpc: "2.0",
    id: message.id,
    error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: ${wrong}.` },
  };
}

/** A schema's issues in a line: "params.requestId: Invalid input; …". */
const issuesSaid = (issues: readonly { path: readonly PropertyKey[]; message: string }[]) =>
  issues.map((issue) => `${issue.path.map(String).join(".")}: ${issue.message}`).join("; ");

/** The notifications the SDK's server handles, each read by its schema before its handler. */
const NOTIFICATIONS = new Map<string, MessageSchema>([
  ["notifications/cancelled", CancelledNotificationSchema],
  ["notifications/progress", ProgressNotificationSchema],
  ["notifications/initialized", InitializedNotificationSchema],
]);

/**
 * What is wrong with a notification whose params its method's schema refuses ("params.requestId: Invalid input"), or
 * undefined. The SDK reads it only in its handler, after POST /mcp has answered 202 (MCP: a notification the server
 * cannot accept is an HTTP error, 400), and reports it over stdio as "Uncaught error in notification handler:" with its
 * schema's issues as indented JSON, some thirty lines, as if the server had failed.
 */
export function refusedNotification(message: Pick<JSONRPCNotification, "method">): string | undefined {
  const issues = NOTIFICATIONS.get(message.method)?.safeParse(message).error?.issues;
  if (!issues?.length) return undefined;
  return issuesSaid(issues);
}

/** JSON-RPC's answer to a message that could not be read: there is no id to answer with, so null (JSON-RPC 2.0 section 5). */
export interface UnreadMessageAnswer {
  jsonrpc: "2.0";
  id: null;
  error: { code: number; message: string };
}

/** A message's members that MCP has be an object where JSON-RPC 2.0 also takes an array (params by position). */
export const OBJECT_MEMBERS = ["params", "result"] as const;

/** What a message is told whose `name` member is `kind` ("an array", "null"…) where MCP takes an object (D54). */
export function memberNoObject(name: string, kind: string): string {
  return `"${name}" is ${kind}, where MCP takes an object (named members, not JSON-RPC's by position)${name === "params" ? ", or no params at all" : ""}.`;
}

/**
 * The member of OBJECT_MEMBERS that alone kept a line from being a message, as the SDK's schema error (zod) says it: one
 * reading of the union (a request, a notification…) whose only issue is that member's type, with the type it had.
 */
function memberAtFault(error: Error): { name: string; kind: string } | undefined {
  type Issue = { code?: string; path?: unknown[]; errors?: Issue[][]; message?: string };
  for (const top of (error as { issues?: Issue[] }).issues ?? [])
    for (const branch of top.code === "invalid_union" ? (top.errors ?? []) : [[top]]) {
      const [only] = branch;
      const name = only?.path?.length === 1 ? only.path[0] : undefined;
      if (branch.length !== 1 || only?.code !== "invalid_type" || !OBJECT_MEMBERS.includes(name as "params")) continue;
      const received = /received (\w+)$/.exec(only.message ?? "")?.[1];
      if (received)
        return {
          name: name as string,
          kind: received === "null" ? "null" : `an ${received}`.replace(/^an ([^aeiou])/, "a $1"),
        };
    }
  return undefined;
}

/**
 * The answer to a stdio line the SDK's transport could not read as a message (its error, which it only reports): -32700
 * Parse error for a line that is not JSON, -32600 Invalid Request for JSON that is no JSON-RPC message (a batch
 * among them), as POST /mcp answers a body (http.ts). Undefined for the transport's other errors.
 */
export function unreadLine(error: Error): UnreadMessageAnswer | undefined {
  const answer = (code: number, message: string): UnreadMessageAnswer => ({
    jsonrpc: "2.0",
    id: null,
    error: { code, message },
  });
  // JSON.parse's, then the SDK's schema's (zod), in the SDK's deserializeMessage.
  if (error instanceof SyntaxError)
    return answer(ErrorCode.ParseError, "Parse error: the line is not JSON (a message is one line of JSON).");
  if (error.name === "ZodError") {
    const fault = memberAtFault(error);
    return answer(
      ErrorCode.InvalidRequest,
      fault
        ? `Invalid Request: ${memberNoObject(fault.name, fault.kind)}`
        : 'Invalid Request: the line is JSON but no JSON-RPC 2.0 message: a request has "jsonrpc": "2.0", an "id" (a string or an integer) and a "method".',
    );
  }
  return undefined;
}

/**
 * The message without a request's `task`: MCP 2025-11-25 has a server that declares no tasks (Tome's tools answer at
 * once) process the request normally, ignoring it. The SDK refused it, -32603 Internal error.
 */
export function withoutTask(message: JSONRPCRequest): JSONRPCRequest {
  if (message.params?.task === undefined) return message;
  const { task: _, ...params } = message.params;
  return { ...message, params };
}

export interface McpOptions {
  /** Where faults are reported (the caller only sees internal_error). */
  logError: (error: unknown) => void;
  /**
   * Over stdio, where no swap watches the file (D47): a call met a SnapshotError, as when the snapshot was let go (a copy
   * over it broke its lease, D84). The context of the file opened again, whole, on which the call is made again (once);
   * or why it cannot be (the file damaged, or still being written), answered as a tool error (service_unavailable),
   * never internal_error.
   */
  reopen?: (error: SnapshotError) => ApiContext | string;
}

/** The tools of one snapshot, listed once; server() makes an SDK server for one connection (stdio) or one request (HTTP, stateless). */
export function mcpTools(ctx: ApiContext, options: McpOptions) {
  let byName = new Map(toolsOf(ctx).map((t) => [t.name, t]));
  const list = [...byName.values()].map(listed);
  const m = ctx.meta;
  const instructions =
    `Tome serves the text of ${m.content_source.name} (${m.content_source.project}) articles from a snapshot built ${m.search_engine_version.commitDate}` +
    (m.dataset ? `: ${m.dataset.indexed_pages} articles cut into ${m.dataset.indexed_chunks} passages` : "") +
    ". Find passages with search, read an article with get_page or lucky, one passage with get_chunk, and what changed with changes. " +
    "The text is under CC BY-SA 4.0 and was modified from the source (see attribution.modifications): when you use it, credit each " +
    "article by its title and url, name the license, and say the text was modified. Every result's attribution says how.";

  const call = async (
    tool: Tool,
    args: Record<string, unknown> | undefined,
    x: Exchange | undefined,
    refused: ((error: ApiError) => void) | undefined,
    again = true,
  ): Promise<CallToolResult> => {
    try {
      const { structured, text } = await tool.call(args, x);
      return { content: [{ type: "text", text }], structuredContent: structured };
    } catch (error) {
      if (error instanceof ApiError) {
        if (error.headers?.["retry-after"] !== undefined) refused?.(error);
        return failure(error.code, error.message);
      }
      // Its client left while the call waited for a search worker (D108): no fault, and nobody to read a tool's error;
      // the SDK answers it as the JSON-RPC error it makes of a throw, which the keys step replaces with its 499.
      if (error instanceof ClientGone) throw error;
      if (error instanceof SnapshotError && options.reopen) {
        // Told again after the call made again, so that a file opened again but found damaged is said so.
        const reopened = options.reopen(error);
        if (typeof reopened === "string") return failure(ERRORS.serviceUnavailable.code, reopened);
        byName = new Map(toolsOf(reopened).map((t) => [t.name, t]));
        // Replaced again while the call was made again (copied over twice within it): opened again, for the next call.
        if (!again)
          return failure(
            ERRORS.serviceUnavailable.code,
            `The snapshot ${printableName(reopened.engine.snapshot.container.path)} was replaced while this MCP server read it ` +
              `(${error.message.replace(/\.$/, "")}), twice within this call: it is opened again now. Try again.`,
          );
        return call(byName.get(tool.name) ?? tool, args, x, refused, false);
      }
      options.logError(error);
      return failure(INTERNAL_ERROR.error, INTERNAL_ERROR.message);
    }
  };

  return {
    tools: list,
    /** Whether a tools/call names one of the tools; any other name is answered -32602 (the handler below). */
    isTool: (name: unknown): boolean => typeof name === "string" && byName.has(name),
    /**
     * A server for one request (`x`: its exchange, whose key is charged a search worker's time); `refused` is told a
     * tool call's refusal that says when to come back (Retry-After).
     */
    server(x?: Exchange, refused?: (error: ApiError) => void): Server {
      const server = new Server(
        { name: "tome", title: "Tome", version: pkg.version },
        { capabilities: { tools: {} }, instructions },
      );
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: list }));
      server.setRequestHandler(CallToolRequestSchema, (request) => {
        const tool = byName.get(request.params.name);
        if (!tool) {
          // Not an McpError: its message is "MCP error -32602: …", which the SDK sends as it is and a client prefixes again.
          const message = `There is no tool ${shortened(request.params.name)}: the tools are ${[...byName.keys()].join(", ")}.`;
          throw Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
        }
        return call(tool, request.params.arguments, x, refused);
      });
      return server;
    },
  };
}

export type McpTools = ReturnType<typeof mcpTools>;
