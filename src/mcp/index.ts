/** mcp: the Model Context Protocol server over one loaded snapshot, for stdio (src/cli/mcp.ts) and POST /mcp. */
export { mcpOverHttp } from "./http";
export { mcpTools, type McpTools } from "./server";
