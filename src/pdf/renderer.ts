/**
 * PdfRenderer: renders in a worker thread, so the server keeps answering while a long article
 * renders, and keeps recent renders (a revision's PDF never changes).
 */
import type { PdfArticle } from "./article";

export class PdfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PdfError";
  }
}

export interface PdfRendererOptions {
  /** Total bytes of PDFs kept (default 64 MB). */
  cacheBytes?: number;
  /** A render that takes longer fails (default 60 s). */
  timeoutMs?: number;
}

interface Pending {
  resolve: (bytes: Uint8Array) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class PdfRenderer {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly cache = new Map<string, Uint8Array>();
  /** Renders under way, so that concurrent requests for one revision render it once. */
  private readonly inFlight = new Map<string, Promise<Uint8Array>>();
  private cached = 0;
  private readonly cacheBytes: number;
  private readonly timeoutMs: number;

  constructor(options: PdfRendererOptions = {}) {
    this.cacheBytes = options.cacheBytes ?? 64 * 1024 * 1024;
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  render(article: PdfArticle): Promise<Uint8Array> {
    const key = `${article.pageId}:${article.revId}`;
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return Promise.resolve(hit);
    }
    let p = this.inFlight.get(key);
    if (!p) {
      p = this.renderInWorker(article).then(
        (bytes) => {
          this.inFlight.delete(key);
          this.keep(key, bytes);
          return bytes;
        },
        (err) => {
          this.inFlight.delete(key);
          throw err;
        },
      );
      this.inFlight.set(key, p);
    }
    return p;
  }

  close(): void {
    this.restart("the PDF renderer stopped");
  }

  /** Ends the worker, failing every render it held. */
  private restart(reason: string): void {
    this.worker?.terminate();
    this.worker = undefined;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new PdfError(reason));
    }
    this.pending.clear();
  }

  private keep(key: string, bytes: Uint8Array): void {
    if (bytes.byteLength > this.cacheBytes / 4) return;
    this.cache.set(key, bytes);
    this.cached += bytes.byteLength;
    for (const [k, v] of this.cache) {
      if (this.cached <= this.cacheBytes) break;
      this.cache.delete(k);
      this.cached -= v.byteLength;
    }
  }

  private startWorker(): Worker {
    const worker = new Worker(new URL("./worker.ts", import.meta.url).href);
    worker.onmessage = (event: MessageEvent<{ id: number; bytes?: Uint8Array; error?: string }>) => {
      const p = this.pending.get(event.data.id);
      if (!p) return;
      this.pending.delete(event.data.id);
      clearTimeout(p.timer);
      if (event.data.bytes) p.resolve(event.data.bytes);
      else p.reject(new PdfError(event.data.error ?? "the PDF could not be rendered"));
    };
    // The worker died: fail what it held, and start a new one on the next render.
    worker.onerror = (event) => this.restart(`the PDF worker failed: ${event.message}`);
    // A renderer alone must not keep the process alive.
    worker.unref();
    return worker;
  }

  private renderInWorker(article: PdfArticle): Promise<Uint8Array> {
    this.worker ??= this.startWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // The worker may be stuck: start afresh.
      const timer = setTimeout(() => this.restart(`rendering took longer than ${this.timeoutMs} ms`), this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.worker!.postMessage({ id, article });
    });
  }
}
