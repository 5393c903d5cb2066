/**
 * A pool of parsing workers fed in batches, with backpressure: the XML reader waits
 * when every worker already has enough queued, so memory stays flat.
 */
import { availableParallelism } from "node:os";
import type { Article } from "./article";
import { workerUrl } from "../files";
import { MAX_BUILD_WORKERS } from "../scheduling";
import type { RawPage, SiteInfo } from "./raw-page";
import { PageWatch, type WorkerRequest, type WorkerResponse } from "./parsing";

const BATCH_PAGES = 16;
const BATCH_CHARS = 1 << 20;
const QUEUED_PER_WORKER = 2;
/**
 * A page whose conversion takes longer is left out, as a page that fails is: some wikitext keeps
 * wtf_wikipedia busy for hours (templates nested 6,000 deep in 37 KB), and the build would wait for it.
 */
const PAGE_LIMIT_MS = 120_000;

let workersSet: number | undefined;

/**
 * How long a pool's workers wait (D159), once it is closed, for the next ingest of this process to take them: a
 * worker new to the parser spends about a second of CPU having JSC compile it, which a process ingesting
 * several dumps (a test file, a pipeline building one snapshot a wiki) would pay again each time.
 */
const REST_MS = 5_000;

/** Workers of closed pools that ended cleanly, by script, each with the timer that ends it. */
const resting = new Map<string, { worker: Worker; timer: Timer }[]>();

/** How many workers rest now (tests). */
export function restingWorkers(): number {
  let n = 0;
  for (const list of resting.values()) n += list.length;
  return n;
}

/** Ends every resting worker now: what a build does after its ingest, whose next steps want the memory. */
export function endResting(): void {
  for (const list of resting.values())
    for (const { worker, timer } of list.splice(0)) {
      clearTimeout(timer);
      worker.terminate();
    }
}

function takeResting(script: string): Worker | undefined {
  const entry = resting.get(script)?.pop();
  if (!entry) return undefined;
  clearTimeout(entry.timer);
  entry.worker.ref();
  return entry.worker;
}

function rest(script: string, worker: Worker): void {
  const list = resting.get(script) ?? [];
  resting.set(script, list);
  const leave = () => {
    const at = list.findIndex((e) => e.worker === worker);
    if (at >= 0) list.splice(at, 1);
    worker.terminate();
  };
  worker.onmessage = null;
  worker.onerror = leave;
  worker.unref();
  const timer = setTimeout(leave, REST_MS);
  timer.unref();
  list.push({ worker, timer });
}

/** How many parsing workers a build starts when it is not told: TOME_BUILD_WORKERS (set by the commands), else one per core. */
export function setBuildWorkers(count: number | undefined): void {
  workersSet = count;
}

export function buildWorkers(): number {
  return workersSet ?? Math.min(availableParallelism(), MAX_BUILD_WORKERS);
}

export interface PoolResult {
  articles: Article[];
  failures: WorkerResponse["failures"];
}

export class ParserPool {
  private readonly workers: Worker[] = [];
  private readonly watches: PageWatch[] = [];
  /** Each worker's batches sent and not answered, by id: sent again to the worker that replaces it. */
  private readonly sent: Map<number, RawPage[]>[] = [];
  private readonly inFlight: number[] = [];
  private readonly pending = new Set<number>();
  private batch: RawPage[] = [];
  private batchChars = 0;
  private nextId = 0;
  /** Results are handed on in the order their batches were sent, so that a build numbers pages the same way every time. */
  private nextToDeliver = 0;
  private readonly early = new Map<number, PoolResult>();
  /** The pages left out of a batch for taking too long, added to its result. */
  private readonly timedOut = new Map<number, WorkerResponse["failures"]>();
  private waiters: (() => void)[] = [];
  private failure: Error | null = null;
  private site: { site: SiteInfo; chunkWords: number } | null = null;
  private readonly watchdog: Timer;

  /** `script`: the workers' (one that serveParsing()s, default worker.ts); `pageLimitMs`: PAGE_LIMIT_MS. */
  constructor(
    size: number,
    private readonly onResult: (result: PoolResult) => void,
    private readonly script = workerUrl(new URL("./worker.ts", import.meta.url), "ingest/worker.ts"),
    private readonly pageLimitMs = PAGE_LIMIT_MS,
  ) {
    // The library's ingest({ workers }) and buildFromDumps() come here without the commands' check.
    if (!(Number.isInteger(size) && size >= 1 && size <= MAX_BUILD_WORKERS))
      throw new RangeError(
        `workers must be a whole number of parsing threads from 1 to ${MAX_BUILD_WORKERS}, not ${size}`,
      );
    for (let i = 0; i < size; i++) {
      this.sent.push(new Map());
      this.inFlight.push(0);
      this.start(i);
    }
    this.watchdog = setInterval(() => this.leaveOutSlowPages(), Math.min(1000, pageLimitMs / 4));
    this.watchdog.unref();
  }

  /** Tells every worker which wiki the next pages come from. */
  configure(site: SiteInfo, chunkWords: number): void {
    this.site = { site, chunkWords };
    for (let i = 0; i < this.workers.length; i++) this.init(i);
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

  /** Stops the workers; those of a pool whose every batch was answered rest for the process's next ingest (REST_MS). */
  close(): void {
    clearInterval(this.watchdog);
    const clean = !this.failure && this.pending.size === 0;
    for (const w of this.workers) {
      if (clean) rest(this.script, w);
      else w.terminate();
    }
  }

  private start(i: number, fresh = false): void {
    const worker = (!fresh && takeResting(this.script)) || new Worker(this.script);
    // A replaced worker's last messages are not its replacement's.
    worker.onmessage = (event: MessageEvent<WorkerResponse>) => {
      if (this.workers[i] === worker) this.receive(i, event.data);
    };
    worker.onerror = (event) => {
      // One replaced for a slow page may still report as it goes.
      if (this.workers[i] === worker) this.fail(new Error(`a parsing worker crashed: ${event.message}`));
    };
    this.workers[i] = worker;
    this.watches[i] = new PageWatch();
  }

  private init(i: number): void {
    if (!this.site) return;
    const { site, chunkWords } = this.site;
    this.workers[i]!.postMessage({
      type: "init",
      lang: site.lang,
      namespaces: [...site.namespaces],
      chunkWords,
      watch: this.watches[i]!.buffer,
    } satisfies WorkerRequest);
  }

  private send(i: number, id: number, pages: RawPage[]): void {
    this.sent[i]!.set(id, pages);
    this.workers[i]!.postMessage({ type: "batch", id, pages } satisfies WorkerRequest);
  }

  /**
   * A worker busy with one page for longer than the limit is stopped (nothing else stops wtf) and
   * replaced; the page is a failure, and the batches it held are sent again to its replacement.
   */
  private leaveOutSlowPages(): void {
    const since = Date.now() - this.pageLimitMs;
    for (let i = 0; i < this.workers.length; i++) {
      const slow = this.watches[i]!.since(since);
      const pages = slow && this.sent[i]!.get(slow.batch);
      if (!slow || !pages) continue;
      const page = pages[slow.index]!;
      this.workers[i]!.terminate();
      this.start(i, true);
      this.init(i);
      const failures = this.timedOut.get(slow.batch) ?? [];
      failures.push({
        pageId: page.pageId,
        title: page.title,
        error: `its conversion took longer than ${this.pageLimitMs / 1000} s`,
      });
      this.timedOut.set(slow.batch, failures);
      pages.splice(slow.index, 1);
      for (const [id, batch] of [...this.sent[i]!]) this.send(i, id, batch);
    }
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
    this.send(target, id, pages);
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
    this.sent[worker]!.delete(msg.id);
    const timedOut = this.timedOut.get(msg.id) ?? [];
    this.timedOut.delete(msg.id);
    this.early.set(msg.id, { articles: msg.articles, failures: [...msg.failures, ...timedOut] });
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
