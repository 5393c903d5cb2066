/**
 * bun run mcp — the MCP server over stdio, for a desktop MCP client that starts it: the tools
 * of src/http/mcp on a local snapshot (TOME_SNAPSHOT, else the one `bun run start`
 * serves in snapshots/: snapshots.ts), with no key. stdout carries the protocol only; everything else goes to
 * stderr. Unlike start, it builds no snapshot: a client would time out waiting for one. The server itself is
 * mcp-serve.ts, loaded once the arguments are read.
 */
import { restartWithAllocatorSettings } from "./allocator";
import { settingsHelp } from "./config";
import { mainOf } from "./main";
import { commandLine } from "../invocation";
import { noArgs } from "./args";

const HELP = `Usage: ${commandLine("mcp")}     (run from the repository, or give TOME_SNAPSHOT)

The MCP server over stdio (JSON-RPC on stdin and stdout), for an MCP client that starts it:
tools search, get_page, get_chunk, lucky and changes on a local snapshot, with no key.
The running server (${commandLine("start")}) also serves MCP over HTTP at /mcp, with an API key.

Environment:
${settingsHelp(["TOME_SNAPSHOT"])}Make a snapshot with ${commandLine("start")} or ${commandLine("snapshot:build")}.
`;

/** The command, on its arguments (what follows its name). */
export async function main(args: string[]): Promise<void> {
  noArgs("mcp", args, HELP, "set TOME_SNAPSHOT to choose the snapshot");
  // The engine, the server's MCP tools and the SDK are loaded once the arguments are read: --help loads none of them.
  await mainOf("mcp", async (config) => (await import("./mcp-serve")).serveMcp(config));
}

if (import.meta.main) {
  restartWithAllocatorSettings();
  await main(Bun.argv.slice(2));
}
