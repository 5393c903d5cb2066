/** One line per request (method, path without the query, status, milliseconds, request id), and the buffered stdout sink. */
import type { Step } from "../pipeline";

export type LogSink = (line: string) => void;

export function log(sink: LogSink): Step {
  return {
    before(x) {
      x.started = performance.now();
      return undefined;
    },
    after(x, response) {
      const path = x.pathStart >= 0 ? x.path : "-";
      sink(`${x.request.method} ${path} ${response.status} ${(performance.now() - x.started).toFixed(1)}ms ${x.id}`);
      return response;
    },
  };
}

/** Log lines to stdout, buffered: a write per line would cost more than most requests. */
export function stdoutLog(): { sink: LogSink; flush: () => Promise<unknown> } {
  const out = Bun.stdout.writer({ highWaterMark: 64 * 1024 });
  /** Whether a flush is due: lines written since the last one start a timer, once. */
  let flushDue = false;
  const flush = async () => {
    flushDue = false;
    await out.flush();
  };
  return {
    sink: (line) => {
      out.write(`${line}\n`);
      if (flushDue) return;
      flushDue = true;
      setTimeout(() => void flush(), 50);
    },
    flush,
  };
}
