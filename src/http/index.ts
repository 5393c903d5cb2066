/** http: the API over one loaded snapshot (api.md, docs/decisions/). */
export { createApp, DOCS_PATH, OPENAPI_PATH, type App, type AppOptions } from "./app";
export { articleUrl, Attributions, LICENSE } from "./attribution";
export { Resources } from "./resources";
export { readSince } from "./routes/changes";
export { ApiError } from "./errors";
export { serve, type RunningServer, type ServeOptions } from "./server";
export { stdoutLog } from "./steps/log";
export { apiContext } from "./context";
export { invalidParams, mcpTools, refusedNotification, unreadLine, withoutTask } from "./mcp";
