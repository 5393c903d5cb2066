/**
 * Threads that compress a build's text blocks with its dictionary (compress-worker.ts), so that
 * the main thread, which reads the dumps and inverts the chunks, does not: one for every four
 * cores (a thread compresses about 17 MB of text a second at level 9; a core parses about 3 MB
 * of wikitext, about 2.5 MB of text, a second).
 */
import { availableParallelism } from "node:os";
import { workerUrl } from "../files";
import type { CompressRequest, CompressResponse } from "./compress-worker";

export class Compressors {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<number, { resolve: (block: Uint8Array) => void; reject: (e: Error) => void }>();
  private nextId = 0;

  constructor(dictionary: Uint8Array, level: number, count = Math.max(1, Math.floor(availableParallelism() / 4))) {
    for (let i = 0; i < count; i++) {
      const worker = new Worker(
        workerUrl(new URL("./compress-worker.ts", import.meta.url), "snapshot/compress-worker.ts"),
      );
      worker.onmessage = (event: MessageEvent<CompressResponse>) => this.receive(event.data);
      worker.onerror = (event) => this.failAll(new Error(`a text compressor thread crashed: ${event.message}`));
      worker.postMessage({ type: "dictionary", dictionary, level } satisfies CompressRequest);
      worker.unref();
      this.workers.push(worker);
    }
  }

  /** The block compressed; its bytes are copied (the caller may reuse them). */
  compress(bytes: Uint8Array): Promise<Uint8Array> {
    const id = this.nextId++;
    const copy = bytes.slice();
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.workers[id % this.workers.length]!.postMessage(
        { type: "block", id, bytes: copy } satisfies CompressRequest,
        [copy.buffer],
      );
    });
  }

  close(): void {
    for (const w of this.workers) w.terminate();
    this.failAll(new Error("the text compressors were closed"));
  }

  private receive(msg: CompressResponse): void {
    const waiter = this.waiting.get(msg.id);
    if (!waiter) return;
    this.waiting.delete(msg.id);
    if ("error" in msg) waiter.reject(new Error(msg.error));
    else waiter.resolve(msg.block);
  }

  private failAll(error: Error): void {
    for (const { reject } of this.waiting.values()) reject(error);
    this.waiting.clear();
  }
}
