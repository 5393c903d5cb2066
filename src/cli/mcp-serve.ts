/**
 * The MCP server over stdio (`bun run mcp`, src/cli/mcp.ts, which loads this once its arguments are read): the tools of
 * src/http/mcp on a local snapshot (TOME_SNAPSHOT, else the one `bun run start` serves in snapshots/: snapshots.ts),
 * with no key. stdout carries the protocol only; everything else goes to stderr.
 */
import { apiContext, invalidParams, mcpTools, refusedNotification, unreadLine, withoutTask } from "../http";
import { UserError } from "../errors";
import { type Engine, open } from "../search";
import { beingWritten } from "../snapshot";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { commandLine } from "../invocation";
import { type Config, SNAPSHOT_DIR } from "./config";
import { snapshotToRead } from "./snapshots";
import { Transform } from "node:stream";
import { printableName, shellWord } from "../printable";

/** Serves MCP over stdin and stdout on the snapshot `config` names, until stdin closes. */
export async function serveMcp(config: Config): Promise<void> {
  const path = snapshotToRead(config.snapshot);
  if (!path) {
    console.error(
      `mcp: no snapshot in ${SNAPSHOT_DIR}/ (looked from ${printableName(process.cwd())}). Run ${commandLine("start")} once (it keeps the sample it serves there), build one with ${commandLine("snapshot:build")}, or set TOME_SNAPSHOT to a .tome file.`,
    );
    process.exit(1);
  }
  let engine = open(path);
  const shown = printableName(path);
  /** The last fault said on stderr: a call meeting the same one again says nothing more. */
  let said: string | undefined;
  const say = (line: string) => {
    if (line !== said) console.error(`mcp: ${line}`);
    said = line;
  };
  const damaged = (what: string, next: string) =>
    `${what}: check it with \`${commandLine(`snapshot:verify ${shellWord(path)}`)}\`, and copy a whole one over it or rebuild it ` +
    `(\`${commandLine("snapshot:build --dump <dump>")}\`) if a section does not match; ${next}.`;
  // A copy over the file lets it go (D84); the next call opens it again once it is whole, as the server's swap does (D47).
  // A file still held was not replaced: what the call read of it is damaged. A file moved over it (mv, or the rename
  // that ends snapshot:build) leaves the damaged one held, read until a restart; a copy over it is opened on the next call.
  const reopen = (error: Error): ReturnType<typeof apiContext> | string => {
    const cause = error.message.replace(/\.$/, "");
    if (engine.snapshot.container.readable) {
      const message = damaged(
        `The snapshot ${shown} is damaged (${cause})`,
        "a file copied over it (cp) is opened on the next call, one moved over it (mv, or built to it) once the MCP server is restarted",
      );
      say(message);
      return message;
    }
    let next: Engine;
    try {
      next = open(path);
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      const why = err.message.replace(/\.$/, "");
      if (beingWritten(path))
        return `The snapshot ${shown} was replaced while this MCP server read it (${cause}), and cannot be opened again yet: ${why}. Try again once it is whole; if this goes on, restart the MCP server.`;
      const message = damaged(
        `The snapshot ${shown} was replaced by a file that cannot be served (${why})`,
        "the next call opens it once it is whole",
      );
      say(message);
      return message;
    }
    engine.close();
    engine = next;
    said = undefined;
    const m = next.snapshot.meta;
    console.error(
      `mcp: ${shown} was replaced: serving it again (${m.indexedPages} pages, content hash ${m.contentHash.slice(0, 12)}).`,
    );
    return apiContext(next);
  };
  const tools = mcpTools(apiContext(engine), { logError: (error) => console.error(error), reopen });
  const server = tools.server();
  const transport = new StdioServerTransport(transportInput(process.stdin));
  await server.connect(transport);
  // As over HTTP: a request whose params its method's schema refuses is answered -32602 (the SDK's answer is -32603),
  // and a request's task is ignored. A notification its schema refuses is said in a line and ignored.
  const deliver = transport.onmessage;
  transport.onmessage = (message) => {
    if (isJSONRPCRequest(message)) {
      const invalid = invalidParams(message);
      if (invalid) transport.send(invalid).catch((error) => server.onerror?.(error as Error));
      else deliver?.(withoutTask(message));
      return;
    }
    // Past the transport's schema, a message with a method that is no request is a notification.
    const wrong = "method" in message ? refusedNotification(message) : undefined;
    if (wrong && "method" in message)
      console.error(`mcp: a ${message.method} notification was ignored, its params not as MCP says (${wrong}).`);
    else deliver?.(message);
  };
  // A line that is no message is answered as JSON-RPC says (-32700, -32600; id null), and the server reads on; the SDK's
  // transport only reports it. Its answer's id is null, which the SDK's type of an error leaves out.
  const reported = transport.onerror;
  transport.onerror = (error) => {
    const answer = unreadLine(error);
    if (answer) transport.send(answer as unknown as JSONRPCMessage).catch((e) => server.onerror?.(e as Error));
    reported?.(error);
  };
  // A line it cannot read is also said on stderr; one past the transport's 10 MB closes it: said, exit 1.
  let lastError: Error | undefined;
  server.onerror = (error) => {
    lastError = error;
    // The SDK's schema error's message is its issues as indented JSON, some twenty lines a line refused.
    const said =
      error.name === "ZodError"
        ? "a line is JSON but no JSON-RPC 2.0 message (answered -32600 Invalid Request)"
        : error.message;
    console.error(`mcp: ${said}`);
  };
  server.onclose = () => {
    console.error(
      `mcp: the connection is closed${lastError ? ` (${lastError.message}): a message is one line of JSON of at most ${MAX_LINE_MB} MB` : ""}.`,
    );
    process.exit(lastError ? 1 : 0);
  };
  const m = engine.snapshot.meta;
  console.error(`mcp: serving ${shown} (${m.wiki.host}, ${m.indexedPages} pages) over stdio.`);
  // The client ends the server by closing its stdin: the calls its last lines made are answered (on this thread, before
  // setImmediate's turn) and what is queued for stdout is written, then it exits; exiting at once could lose answers
  // (10 of 20 were, for a client reading slowly). A client that closed its end of stdout is gone: nothing can reach it.
  // A client that never reads them would keep it waiting forever: after 5 s it exits all the same.
  process.stdin.once("end", () =>
    setImmediate(() => {
      setTimeout(() => {
        console.error("mcp: stdin is closed and the client read no more of stdout in 5 s: exiting.");
        process.exit(0);
      }, 5000).unref();
      process.stdout.end(() => process.exit(0));
    }),
  );
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    console.error(`mcp: stdout: ${error.message}`);
    process.exit(1);
  });
  // The SDK's transport waits for "drain" once per answer the pipe has no room for: a client reading slowly has more
  // than 10 waiting, which Node's default would warn of on stderr as a leak.
  process.stdout.setMaxListeners(0);
}

/**
 * stdin as the transport reads it (withoutLineBoms). pipe() passes on no error of its source: one reading stdin (EIO)
 * reaches the transport's listener, said `mcp: …`, not thrown uncaught with a stack.
 */
export function transportInput(stdin: NodeJS.ReadableStream): Transform {
  const input = stdin.pipe(withoutLineBoms());
  stdin.on("error", (error) => input.emit("error", error));
  return input;
}

const BOM = [0xef, 0xbb, 0xbf];

/**
 * stdin with a UTF-8 byte order mark at the start of a line left out: some Windows clients write one before their first
 * line, which the SDK's transport reads as part of the JSON (-32700 Parse error). A BOM elsewhere in a line is kept,
 * and stays an error. A mark split between chunks is held until the next.
 */
function withoutLineBoms(): Transform {
  let held: Buffer = Buffer.alloc(0);
  let lineStart = true;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const data = held.length ? Buffer.concat([held, chunk]) : chunk;
      held = Buffer.alloc(0);
      const parts: Buffer[] = [];
      let from = 0;
      let at = lineStart ? 0 : data.indexOf(0x0a) + 1 || -1;
      lineStart = false;
      while (at !== -1) {
        const rest = data.length - at;
        // The chunk ends a line: nothing to hold, and nothing to copy.
        if (rest === 0) {
          lineStart = true;
          break;
        }
        if (rest < BOM.length && BOM.slice(0, rest).every((byte, i) => data[at + i] === byte)) {
          held = data.subarray(at);
          lineStart = true;
          parts.push(data.subarray(from, at));
          from = data.length;
          break;
        }
        if (BOM.every((byte, i) => data[at + i] === byte)) {
          parts.push(data.subarray(from, at));
          from = at + BOM.length;
        }
        at = data.indexOf(0x0a, at) + 1 || -1;
      }
      if (from === 0) return done(null, data);
      parts.push(data.subarray(from));
      done(null, Buffer.concat(parts));
    },
    flush(done) {
      done(null, held);
    },
  });
}

/** The stdio transport's bound on one message (the MCP SDK's STDIO_DEFAULT_MAX_BUFFER_SIZE). */
const MAX_LINE_MB = 10;
