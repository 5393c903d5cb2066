/**
 * Headless Debian Chromium for tests, driven over the DevTools protocol with Bun's own
 * WebSocket (no driver package). Every non-local address goes to a dead proxy, and the tab
 * records each request its page makes, so a test can show that a page needs nothing but our
 * server.
 */
import { existsSync, rmSync } from "node:fs";
import { tempDir } from "../bench/temp-dirs";

const CHROMIUM = "/usr/bin/chromium";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // Loopback is never proxied, so only our server is reachable: anything else meets port 9 (discard), closed.
  "--proxy-server=http://127.0.0.1:9",
  "--remote-debugging-port=0",
  "--window-size=1280,2000",
];

export interface Tab {
  /** Every URL the page requested since the last navigate, in order. */
  readonly requests: string[];
  /** Opens the URL and resolves once its load event fired. */
  navigate(url: string): Promise<void>;
  /** The value of a JavaScript expression in the page. */
  evaluate<T>(expression: string): Promise<T>;
  /** Resolves once the expression is truthy in the page; throws after timeoutMs. */
  waitFor(expression: string, timeoutMs?: number): Promise<void>;
  screenshot(path: string): Promise<void>;
  close(): Promise<void>;
}

/** A fresh Chromium (its own profile) with one tab; a missing Chromium is an error that says how to install it. */
export async function openChromium(): Promise<Tab> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: this test opens the page in headless Chromium. Install it with: apt-get install -y chromium`,
    );
  }
  // Removed again after the file's tests (bench/temp-dirs.ts): Chromium's helper processes may write to it after close.
  const profile = tempDir("tome-chromium-");
  const proc = Bun.spawn([CHROMIUM, ...FLAGS, `--user-data-dir=${profile}`, "about:blank"], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const close = async () => {
    proc.kill();
    await proc.exited;
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    return await connect(await devToolsUrl(proc), close);
  } catch (error) {
    await close();
    throw error;
  }
}

/** The browser's DevTools address, which it prints on stderr once it listens. */
async function devToolsUrl(proc: Bun.Subprocess<"ignore", "ignore", "pipe">): Promise<URL> {
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  let err = "";
  const deadline = setTimeout(() => proc.kill(), 30_000);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`Chromium exited before it listened:\n${err}`);
      err += decoder.decode(value, { stream: true });
      const url = /DevTools listening on (ws:\/\/\S+)/.exec(err)?.[1];
      if (url) return new URL(url);
    }
  } finally {
    clearTimeout(deadline);
    reader.releaseLock();
    // Keep reading so that Chromium never blocks on a full stderr pipe.
    void proc.stderr.pipeTo(new WritableStream());
  }
}

async function connect(browser: URL, close: () => Promise<void>): Promise<Tab> {
  const targets = (await (await fetch(`http://${browser.host}/json/list`)).json()) as {
    type: string;
    webSocketDebuggerUrl: string;
  }[];
  const page = targets.find((t) => t.type === "page");
  if (!page) throw new Error("Chromium opened no tab");
  const socket = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("cannot reach Chromium's DevTools"));
  });
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  const events = new Map<string, () => void>();
  const requests: string[] = [];
  let lastId = 0;
  socket.onmessage = (message) => {
    const m = JSON.parse(String(message.data));
    if (m.id !== undefined) {
      const call = pending.get(m.id)!;
      pending.delete(m.id);
      if (m.error) call.reject(new Error(`DevTools: ${m.error.message}`));
      else call.resolve(m.result);
    } else if (m.method === "Network.requestWillBeSent") requests.push(m.params.request.url);
    else events.get(m.method)?.();
  };
  const send = (method: string, params: object = {}) =>
    new Promise<any>((resolve, reject) => {
      pending.set(++lastId, { resolve, reject });
      socket.send(JSON.stringify({ id: lastId, method, params }));
    });
  await send("Network.enable");
  await send("Page.enable");

  const tab: Tab = {
    requests,
    async navigate(url) {
      requests.length = 0;
      const loaded = new Promise<void>((resolve) => events.set("Page.loadEventFired", resolve));
      const { errorText } = await send("Page.navigate", { url });
      if (errorText) throw new Error(`Chromium could not open ${url}: ${errorText}`);
      await loaded;
    },
    async evaluate(expression) {
      const { result, exceptionDetails } = await send("Runtime.evaluate", {
        expression,
        returnByValue: true,
        awaitPromise: true,
      });
      if (exceptionDetails)
        throw new Error(`${expression}: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
      return result.value;
    },
    async waitFor(expression, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!(await tab.evaluate<boolean>(`Boolean(${expression})`))) {
        if (Date.now() > deadline) throw new Error(`the page never satisfied ${expression} (within ${timeoutMs} ms)`);
        await Bun.sleep(100);
      }
    },
    async screenshot(path) {
      const { data } = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true });
      await Bun.write(path, Buffer.from(data, "base64"));
    },
    async close() {
      socket.close();
      await close();
    },
  };
  return tab;
}
