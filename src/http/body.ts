/**
 * A request's body read with a bound: its declared length is looked at first, then what arrives
 * is counted as it is read, and reading stops as soon as it passes the bound (a chunked body
 * declares none), so that no client makes the server hold more than the bound. /mcp and the
 * dashboard's forms read their bodies through it.
 */

/** The most any request's body may be: /mcp's message (D54). The dashboard's forms take less (D82), the API's routes none. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The client closed its connection, or stalled past the socket's time, before its body arrived:
 * the pipeline answers it 499 as one that left (D28), neither a fault of ours nor reported as one.
 */
export class BodyNotReceived extends Error {}

/** The body's text, or undefined once it is past maxBytes (reading stops there); BodyNotReceived if it never all comes. */
export async function boundedText(request: Request, maxBytes: number): Promise<string | undefined> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) return undefined;
  if (!request.body) return "";
  const parts: Uint8Array[] = [];
  let length = 0;
  try {
    for await (const part of request.body) {
      length += part.byteLength;
      if (length > maxBytes) return undefined;
      parts.push(part);
    }
  } catch (error) {
    throw new BodyNotReceived("the client left before its request's body arrived", { cause: error });
  }
  return new TextDecoder().decode(Buffer.concat(parts));
}
