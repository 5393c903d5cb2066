/**
 * Bun closes a connection that sends nothing for 10 s; a PDF may wait in the render queue and
 * render for longer, so its request keeps its socket open as long as a render may take.
 */
import type { Step } from "../pipeline";

const SLOW_PREFIX = "/v1/pdf/";

export function socketTime(seconds: number): Step {
  return {
    before(x) {
      if (x.server && x.path.startsWith(SLOW_PREFIX)) x.server.timeout(x.request, seconds);
      return undefined;
    },
  };
}
