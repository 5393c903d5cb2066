/**
 * A request's body read with a bound: its declared length is looked at first, then what arrives
 * is counted as it is read, and reading stops as soon as it passes the bound (a chunked body
 * declares none), so that no client makes the server hold more than the bound. /mcp and the
 * dashboard's forms read their bodies through it.
 */

/** The body's text, or undefined once it is past maxBytes (reading stops there). */
export async function boundedText(request: Request, maxBytes: number): Promise<string | undefined> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) return undefined;
  if (!request.body) return "";
  const parts: Uint8Array[] = [];
  let length = 0;
  for await (const part of request.body) {
    length += part.byteLength;
    if (length > maxBytes) return undefined;
    parts.push(part);
  }
  return new TextDecoder().decode(Buffer.concat(parts));
}
