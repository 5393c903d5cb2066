/**
 * Streams a MediaWiki XML export (schema 0.3 to 0.11) into site information and raw pages.
 * Memory holds one page at a time, whatever the size of the dump.
 */
import { SaxesParser } from "saxes";
import { ExportState } from "./elements";
import { DumpError } from "./errors";
import type { ExportItem } from "./raw-page";

/**
 * Characters of text between two tags, at most: the parser holds such a run whole, and 1 MB of gzip made a run
 * of 1 GB of spaces (the build took 1.4 GB; ten of them, all the memory).
 */
const MAX_TEXT_RUN = 64 << 20;

/**
 * Yields the site information first, then every page in document order.
 * Throws a DumpError with `damaged: true` and the position of the damage when the XML
 * is cut short or malformed; every page yielded before that is complete. `label` names the dump in those messages,
 * as printed (printableName).
 */
export async function* readExport(xml: ReadableStream<Uint8Array>, label: string): AsyncGenerator<ExportItem> {
  const parser = new SaxesParser({ position: true });
  const state = new ExportState(label);
  parser.on("opentag", (tag) => state.opened(tag.name, tag.attributes as Record<string, string>));
  parser.on("closetag", (tag) => state.closed(tag.name));
  parser.on("text", (t) => {
    if (state.store) state.text += t;
  });
  parser.on("cdata", (t) => {
    if (state.store) state.text += t;
  });

  let bytes = 0;
  // Where the text given to the parser last began, in bytes and in characters, and that text: a damage's byte (1-based)
  // is the bytes before that text and the UTF-8 length of the text up to parser.position.
  let chunkBytes = 0;
  let chunkChars = 0;
  let chunkText = "";
  let decodedEnd = 0;
  let lastRead: Uint8Array = new Uint8Array(0);
  const byteOfDamage = () =>
    chunkBytes + Buffer.byteLength(chunkText.slice(0, Math.max(0, parser.position - chunkChars)), "utf8");
  const damage = (why: string): DumpError => {
    if (!state.rootSeen)
      return new DumpError(`${label} is not a MediaWiki XML export (${why} at line ${parser.line}).`);
    const where = `line ${parser.line}, byte ${byteOfDamage()} of the decompressed XML`;
    const after = state.pagesRead
      ? `after ${state.pagesRead} complete pages (the last was "${state.lastPage}")`
      : "before any complete page";
    return new DumpError(`${label} is truncated or corrupt at ${where}, ${after}: ${why}.`, { damaged: true });
  };
  const write = (text: string, end: boolean) => {
    chunkChars += chunkText.length;
    chunkBytes = decodedEnd;
    // Not Buffer.byteLength of every text: a pass over the whole dump on the thread that bounds the build.
    decodedEnd = bytes - (end ? 0 : pendingBytes(lastRead));
    chunkText = text;
    try {
      parser.write(text);
      if (end) parser.close();
    } catch (err) {
      if (err instanceof DumpError) throw err;
      throw damage(cleanSaxesMessage(err));
    }
  };

  const decoder = new TextDecoder("utf-8");
  const reader = xml.getReader();
  let sinceMarkup = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (bytes === 0 && isUtf16(value))
        throw new DumpError(
          `${label} is UTF-16: Tome reads UTF-8, as MediaWiki writes its dumps. Convert it first (iconv -f UTF-16 -t UTF-8).`,
        );
      bytes += value.byteLength;
      lastRead = value;
      const text = decoder.decode(value, { stream: true });
      const lastMarkup = text.lastIndexOf("<");
      sinceMarkup = lastMarkup < 0 ? sinceMarkup + text.length : text.length - lastMarkup - 1;
      if (sinceMarkup > MAX_TEXT_RUN)
        throw damage(
          `more than ${MAX_TEXT_RUN >> 20} M characters without markup, which the XML parser would hold whole (a page of Wikipedia holds at most 2 MB)`,
        );
      write(text, false);
      if (state.out.length) yield* state.out.splice(0, state.out.length);
    }
    write(decoder.decode(), true);
    if (state.out.length) yield* state.out.splice(0, state.out.length);
    if (!state.rootSeen) throw damage("no <mediawiki> element found");
    if (!state.rootClosed) throw damage("the XML ends before </mediawiki>");
  } finally {
    reader.releaseLock();
  }
}

function cleanSaxesMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  // saxes prefixes "line:column: "; we report our own position.
  return msg.replace(/^(?:[^:]*:)?\d+:\d+:\s*/, "").replace(/\.$/, "");
}

/** A byte order mark of UTF-16, or "<" as UTF-16 writes it. */
function isUtf16(head: Uint8Array): boolean {
  const [a, b] = head;
  return (a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff) || (a === 0x3c && b === 0) || (a === 0 && b === 0x3c);
}

/** The bytes at the end of `read` that begin a UTF-8 character it does not end (the decoder holds them for the next). */
function pendingBytes(read: Uint8Array): number {
  for (let k = 1; k <= Math.min(4, read.length); k++) {
    const b = read[read.length - k]!;
    if ((b & 0xc0) === 0x80) continue;
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return length > k ? k : 0;
  }
  return 0;
}
