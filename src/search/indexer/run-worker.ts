/**
 * The sorting worker: sorts and writes the index build's runs off the main thread, one at a
 * time, while the main thread inverts the next run's pages as they arrive (build.ts, RunSorter).
 */
import { type RunRequest, type RunResponse, writeRunRequest } from "./runs";

declare const self: Worker;

self.onmessage = (event: MessageEvent<RunRequest>) => {
  const { path } = event.data;
  try {
    writeRunRequest(event.data);
    self.postMessage({ path } satisfies RunResponse);
  } catch (err) {
    // The message and its code (ENOSPC…) cross the thread; the stack would only bury them.
    self.postMessage({
      path,
      error: (err as Error)?.message ?? String(err),
      code: (err as NodeJS.ErrnoException)?.code,
    } satisfies RunResponse);
  }
  // The run's garbage goes once this message is let go: not left to add to the next run's peak.
  setTimeout(() => Bun.gc(true), 0);
};
