/** mcp: the Model Context Protocol server over one loaded snapshot, for stdio (src/cli/mcp.ts) and POST /mcp; the API's tools, so it lives in http. */
export { mcpOverHttp } from "./http";
export { invalidParams, mcpTools, refusedNotification, unreadLine, withoutTask } from "./server";
