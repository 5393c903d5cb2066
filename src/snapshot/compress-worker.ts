/**
 * Compresses text blocks with the build's dictionary through libzstd, off the main thread
 * (compressors.ts): a context and the dictionary digested once, as on the main thread (D112).
 */
import { blockCompressor, type BlockCompressor } from "./zstd";

export type CompressRequest =
  | { type: "dictionary"; dictionary: Uint8Array; level: number }
  | { type: "block"; id: number; bytes: Uint8Array };

export type CompressResponse = { id: number; block: Uint8Array } | { id: number; error: string };

declare const self: Worker;

let compress: BlockCompressor | undefined;

self.onmessage = (event: MessageEvent<CompressRequest>) => {
  const msg = event.data;
  if (msg.type === "dictionary") {
    compress = blockCompressor(msg.dictionary, msg.level);
    return;
  }
  try {
    if (!compress) throw new Error("libzstd did not load in the text compressor's thread");
    const block = compress(msg.bytes);
    self.postMessage({ id: msg.id, block } satisfies CompressResponse, [block.buffer as ArrayBuffer]);
  } catch (err) {
    self.postMessage({ id: msg.id, error: (err as Error)?.message ?? String(err) } satisfies CompressResponse);
  }
};
