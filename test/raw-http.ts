/** A raw HTTP/1.x exchange over a socket: for requests fetch() cannot make (no Host, odd Host, HTTP/1.0). */
import { connect } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A response as the bytes came: its status line, headers and body (without the interim 100 Continue). */
function parse(bytes: Buffer): RawResponse {
  const all = bytes.toString("latin1").replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "");
  const end = all.indexOf("\r\n\r\n");
  const [statusLine = "", ...lines] = all.slice(0, end < 0 ? all.length : end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    body: end < 0 ? "" : Buffer.from(all.slice(end + 4), "latin1").toString("utf8"),
  };
}

/** Sends `text` as is to host:port and reads until the server closes (or timeoutMs passes). */
export function rawRequest(url: string, text: string, timeoutMs = 10_000): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ""));
    const parts: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms to ${JSON.stringify(text.slice(0, 80))}`));
    }, timeoutMs);
    socket.on("data", (d: Buffer) => parts.push(d));
    socket.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(parse(Buffer.concat(parts)));
    });
    socket.write(text);
  });
}

/** Each response of a connection, in order, split by their Content-Length (requests sent at once: pipelined). */
export async function rawResponses(url: string, text: string): Promise<RawResponse[]> {
  const { hostname, port } = new URL(url);
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ""));
    const parts: Buffer[] = [];
    socket.on("data", (d: Buffer) => parts.push(d));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(parts)));
    socket.write(text);
  });
  const responses: RawResponse[] = [];
  for (let at = 0; at < bytes.length; ) {
    const end = bytes.indexOf("\r\n\r\n", at);
    const head = parse(bytes.subarray(at, end + 4));
    const length = Number(head.headers["content-length"] ?? 0);
    responses.push({ ...head, body: bytes.subarray(end + 4, end + 4 + length).toString("utf8") });
    at = end + 4 + length;
  }
  return responses;
}

/** A GET request line and headers, closing the connection after the answer (HTTP/1.0 closes by itself). */
export function rawGet(path: string, version: "1.0" | "1.1", headerLines: string[]): string {
  const close = version === "1.1" ? ["Connection: close"] : [];
  return [`GET ${path} HTTP/${version}`, ...headerLines, ...close, "", ""].join("\r\n");
}

/**
 * Sends a request's head, then a piece of its body every 20 ms, without end, until the server hangs up or
 * `patienceMs` pass: the answer it gave meanwhile, and whether it hung up (a server that reads the body to its end,
 * or drops it as it comes, never does).
 */
export function rawUpload(
  url: string,
  head: string,
  piece: string,
  patienceMs = 5000,
): Promise<{ answer: RawResponse; hungUp: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ""));
    const parts: Buffer[] = [];
    const done = (hungUp: boolean) => {
      clearInterval(pieces);
      clearTimeout(timer);
      socket.destroy();
      resolve({ answer: parse(Buffer.concat(parts)), hungUp });
    };
    const pieces = setInterval(() => socket.writable && socket.write(piece), 20);
    const timer = setTimeout(() => done(false), patienceMs);
    socket.on("data", (d: Buffer) => parts.push(d));
    // Writing to a socket the server closed fails; its close follows.
    socket.on("error", () => {});
    socket.on("close", () => done(true));
    socket.write(head + piece);
  });
}
