/**
 * A pool of parsing workers fed in batches, with backpressure: the XML reader waits
 * when every worker already has enough queued, so memory stays flat.
 */
import { availableParallelism } from "node:os";
import type { Article } from "./article";
import { workerUrl } from "../files";
import type { RawPage, SiteInfo } from "./raw-page";
import type { WorkerRequest, WorkerResponse } from "./parsing";

const BATCH_PAGES = 16;
const BATCH_CHARS = 1 << 20;
const QUEUED_PER_WORKER = 2;

let workersSet: number | undefined;

/** How many parsing workers a build starts when it is not told: TOME_BUILD_WORKERS (set by the commands), else one per core. */
export function setBuildWorkers(count: number | undefined): void {
  workersSet = count;
}

export function buildWorkers(): number {
  return workersSet ?? availableParallelism();
}

export interface PoolResult {
  articles: Article[];
  failures: WorkerResponse["failures"];
}

export class ParserPool {
  private readonly workers: Worker[] = [];
  private readonly inFlight: number[] = [];
  private readonly pending = new Set<number>();
  private batch: RawPage[] = [];
  private batchChars = 0;
  private nextId = 0;
  /** Results are handed on in the order their batches were sent, so that a build numbers pages the same way every time. */
  private nextToDeliver = 0;
  private readonly early = new Map<number, PoolResult>();
  private waiters: (() => void)[] = [];
  private failure: Error | null = null;

  /** `script`: the workers' (one that serveParsing()s, default worker.ts). */
  constructor(
    size: number,
    private readonly onResult: (result: PoolResult) => void,
    script = workerUrl(new URL("./worker.ts", import.meta.url), "ingest/worker.ts"),
  ) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(script);
      worker.onmessage = (event: MessageEvent<WorkerResponse>) => this.receive(i, event.data);
      worker.onerror = (event) => this.fail(new Error(`a parsing worker crashed: ${event.message}`));
      this.workers.push(worker);
      this.inFlight.push(0);
    }
  }

  /** Tells every worker which wiki the next pages come from. */
  configure(site: SiteInfo, chunkWords: number): void {
    const msg: WorkerRequest = { type: "init", lang: site.lang, namespaces: [...site.namespaces], chunkWords };
    for (const w of this.workers) w.postMessage(msg);
  }

  /** Queues a page; resolves once there is room for more. */
  async submit(page: RawPage): Promise<void> {
    this.batch.push(page);
    this.batchChars += page.text.length;
    if (this.batch.length >= BATCH_PAGES || this.batchChars >= BATCH_CHARS) await this.dispatch();
  }

  /** Sends what is queued and waits for every result. */
  async drain(): Promise<void> {
    if (this.batch.length) await this.dispatch();
    while (this.pending.size) await this.waitForRoom(0);
    this.throwIfFailed();
  }

  close(): void {
    for (const w of this.workers) w.terminate();
  }

  private async dispatch(): Promise<void> {
    await this.waitForRoom(QUEUED_PER_WORKER);
    let target = 0;
    for (let i = 1; i < this.workers.length; i++) if (this.inFlight[i]! < this.inFlight[target]!) target = i;
    const id = this.nextId++;
    const pages = this.batch;
    this.batch = [];
    this.batchChars = 0;
    this.inFlight[target]!++;
    this.pending.add(id);
    this.workers[target]!.postMessage({ type: "batch", id, pages } satisfies WorkerRequest);
  }

  /** Waits until some worker has fewer than `limit` batches queued (0: until all are idle). */
  private async waitForRoom(limit: number): Promise<void> {
    for (;;) {
      this.throwIfFailed();
      const room = limit === 0 ? this.pending.size === 0 : this.inFlight.some((n) => n < limit);
      if (room) return;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private receive(worker: number, msg: WorkerResponse): void {
    this.inFlight[worker]!--;
    this.early.set(msg.id, { articles: msg.articles, failures: msg.failures });
    for (let next = this.early.get(this.nextToDeliver); next; next = this.early.get(this.nextToDeliver)) {
      this.early.delete(this.nextToDeliver);
      this.pending.delete(this.nextToDeliver);
      this.nextToDeliver++;
      try {
        this.onResult(next);
      } catch (err) {
        this.fail(err as Error);
      }
    }
    this.wake();
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }
}
