/**
 * PdfRenderer: renders in worker threads, so the server keeps answering while a long article
 * renders, through a bounded queue, and keeps recent renders (an article's PDF never changes).
 *
 * Each worker renders one article at a time, in the order they were asked for: renders never
 * interleave, so the first asked is the first done and memory holds one render per worker.
 * The queue is bounded by count and by the text it holds, and so is each requester's share of
 * it (its API key's); past a bound a render is refused at once (PdfBusyError, with the wait to
 * suggest) instead of waiting without end. Workers take requesters' renders in turn (round
 * robin), so one requester's many renders do not hold back another's one; an article several ask for is in each
 * one's queue, and starts in the earliest turn. Renders are kept
 * and shared by articleKey (a hash of all the article's content), never by page and revision
 * alone: after a swap, a revision whose article differs (its retrieval date) is rendered anew. A
 * render's time limit runs from when it starts on a ready worker, not from when it was queued nor from its worker's
 * start, which has a limit of its own (D26). A request that
 * leaves (its signal aborts) before its render starts is taken out of the queue; a render under
 * way that the last request waiting for it leaves is given up at its next block of text (D26). A worker that dies fails
 * the render it held (PdfWorkerStoppedError, api.md's 500 `PDF generation failed`) and the next render starts a new one (D26).
 */
import { workerUrl } from "../files";
import { codePoints } from "../scripts";
import { articleKey, cutForPdf, PDF_MAX_CHARACTERS, PDF_VERSION, type PdfArticle, textLength } from "./article";

export class PdfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PdfError";
  }
}

/** The queue is full: try again after retryAfter seconds. */
export class PdfBusyError extends PdfError {
  constructor(readonly retryAfter: number) {
    super(`the PDF queue is full; retry after ${retryAfter} s`);
    this.name = "PdfBusyError";
  }
}

/**
 * The render did not finish within its time limit, counted from its start on a ready worker, or the worker it started
 * was not ready within its own (`starting`): on a loaded machine the renderer's thread, below the request thread (D143),
 * gets too little of a core. Not a fault of the article's (D182 bounds a render to a few seconds on a core): try again
 * after retryAfter seconds.
 */
export class PdfTimeoutError extends PdfError {
  constructor(
    readonly limitMs: number,
    readonly retryAfter: number,
    starting = false,
  ) {
    super(
      starting ? `the PDF worker took longer than ${limitMs} ms to start` : `rendering took longer than ${limitMs} ms`,
    );
    this.name = "PdfTimeoutError";
  }
}

/**
 * The worker rendering it stopped (it threw outside a render, its thread ended): the server's fault, not the article's
 * (api.md's 500 `PDF generation failed`); a new worker takes the next render.
 */
export class PdfWorkerStoppedError extends PdfError {
  constructor(why: string) {
    super(`the PDF worker stopped: ${why}`);
    this.name = "PdfWorkerStoppedError";
  }
}

/** The request left before its PDF was ready. */
export class PdfAbortedError extends PdfError {
  /** Whether its render was under way when it left: work was spent for it (D26). */
  constructor(readonly rendering: boolean) {
    super(`the request left before its PDF was rendered${rendering ? ", while it rendered" : ""}`);
    this.name = "PdfAbortedError";
  }
}

export interface PdfRendererOptions {
  /** Total bytes of PDFs kept (default 64 MB). */
  cacheBytes?: number;
  /** A render that takes longer than this from its start, its worker ready, fails (default 60 s). */
  timeoutMs?: number;
  /**
   * A worker not ready to render this long after it was started (its modules and fonts loaded) is stopped, and the
   * render waiting for it fails as one past its time limit (default: timeoutMs).
   */
  startTimeoutMs?: number;
  /** Renders at once, one per worker thread (default 1). */
  workers?: number;
  /** Renders waiting for a worker, at most (default 16). */
  queueLength?: number;
  /** Characters of article text waiting for a worker, at most (default 8 million). */
  queueChars?: number;
  /** Renders one requester may have waiting, at most (default 4). */
  perRequester?: number;
  /** How many nice steps below the request thread each worker renders (0 to 19; default 0 here, the server's 10: D143). */
  nice?: number;
  /** Characters of article text a PDF holds at most, past which it is cut (default PDF_MAX_CHARACTERS: D182). */
  maxCharacters?: number;
}

export interface RenderRequest {
  /** Leaving: a render nobody waits for any more is taken out of the queue, or given up if under way. */
  signal?: AbortSignal;
  /** Who asks (an API key's id), for the fair share of the queue. */
  requester?: string;
}

/** What the renderer has done since it started (the server's /metrics). */
export interface PdfStats {
  /** Renders finished, and failed (an error or the time limit). */
  renders: number;
  failures: number;
  /** render() calls answered with a kept PDF. */
  cacheHits: number;
  /** render() calls refused because the queue, or the requester's share of it, was full. */
  refusals: number;
  /** Renders given up under way, as nobody waited for them any more. */
  abandoned: number;
  queued: number;
  rendering: number;
}

/** One article's render, and the requests waiting for it. */
interface Job {
  key: string;
  article: PdfArticle;
  chars: number;
  /** The requesters whose queues hold it while it waits: each that asks for it has it in its own turn (none once started). */
  lanes: Set<string>;
  waiters: Set<Waiter>;
}

interface Waiter {
  resolve: (bytes: Uint8Array) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker | undefined;
  /** Whether its worker has said it is ready to render (its modules and fonts loaded): renders are sent to it then. */
  ready: boolean;
  /** Renders its worker, still starting, failed for being late. */
  lateStarts: number;
  job: Job | undefined;
  /** The number of the slot's render, which `abandon`, shared with its worker, holds when it is to be given up. */
  render: number;
  abandon: Int32Array;
  /** The limit of its worker's start, then of its render. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When its render started, its worker ready. */
  started: number;
}

/** Until renders have been timed, what one is assumed to take. */
const ASSUMED_RENDER_MS = 1000;

export class PdfRenderer {
  readonly version = PDF_VERSION;
  readonly maxCharacters: number;
  private readonly cache = new Map<string, Uint8Array>();
  private cached = 0;
  /** Waiting jobs per requester, in the order asked. */
  private readonly queues = new Map<string, Job[]>();
  /** When each requester last had a render started (a counter): the one served longest ago goes next. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private renders = 0;
  private queued = 0;
  private queuedChars = 0;
  /** Jobs queued or rendering, by article, so that concurrent requests for one article render it once. */
  private readonly jobs = new Map<string, Job>();
  private readonly slots: Slot[];
  /** Recent render times, for the wait a full queue suggests. */
  private averageMs = ASSUMED_RENDER_MS;
  private readonly cacheBytes: number;
  private readonly timeoutMs: number;
  private readonly startTimeoutMs: number;
  private readonly queueLength: number;
  private readonly queueChars: number;
  private readonly perRequester: number;
  private readonly nice: number;
  private readonly counts = { renders: 0, failures: 0, cacheHits: 0, refusals: 0, abandoned: 0 };

  constructor(options: PdfRendererOptions = {}) {
    this.cacheBytes = options.cacheBytes ?? 64 * 1024 * 1024;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.startTimeoutMs = options.startTimeoutMs ?? this.timeoutMs;
    this.queueLength = options.queueLength ?? 16;
    this.queueChars = options.queueChars ?? 8_000_000;
    this.perRequester = options.perRequester ?? 4;
    this.nice = options.nice ?? 0;
    this.maxCharacters = options.maxCharacters ?? PDF_MAX_CHARACTERS;
    this.slots = Array.from({ length: Math.max(1, options.workers ?? 1) }, () => ({
      worker: undefined,
      ready: false,
      lateStarts: 0,
      job: undefined,
      render: 0,
      abandon: new Int32Array(new SharedArrayBuffer(4)),
      timer: undefined,
      started: 0,
    }));
  }

  /** The article's PDF if it is kept, without rendering. */
  cachedPdf(article: PdfArticle): Uint8Array | undefined {
    return this.kept(articleKey(cutForPdf(article, this.maxCharacters)));
  }

  /** The PDF kept by that article key, made the most recently used. */
  private kept(key: string): Uint8Array | undefined {
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
    }
    return hit;
  }

  /**
   * Renders (or finds kept) the article's PDF; fails with PdfBusyError when the queue, or the
   * requester's share of it, is full, and with PdfAbortedError if the signal aborts first.
   */
  render(whole: PdfArticle, { signal, requester = "" }: RenderRequest = {}): Promise<Uint8Array> {
    // The route cuts it already (its headers say so); an article handed here uncut is bounded all the same.
    const article = cutForPdf(whole, this.maxCharacters);
    const key = articleKey(article);
    const hit = this.kept(key);
    if (hit) {
      this.counts.cacheHits++;
      return Promise.resolve(hit);
    }
    if (signal?.aborted) return Promise.reject(new PdfAbortedError(false));
    let job = this.jobs.get(key);
    const mine = this.queues.get(requester);
    if (job?.lanes.size && !job.lanes.has(requester) && (mine?.length ?? 0) < this.perRequester) {
      // Waiting in another requester's queue: in this one's too, so that it waits no longer than this one's own turn.
      job.lanes.add(requester);
      this.inLane(requester, job);
    } else if (!job) {
      const chars = textSize(article);
      const full = this.queued >= this.queueLength || (this.queued > 0 && this.queuedChars + chars > this.queueChars);
      if (full || (mine?.length ?? 0) >= this.perRequester) {
        this.counts.refusals++;
        return Promise.reject(new PdfBusyError(this.suggestedWait()));
      }
      job = { key, article, chars, lanes: new Set([requester]), waiters: new Set() };
      this.jobs.set(key, job);
      this.inLane(requester, job);
      this.queued++;
      this.queuedChars += chars;
    }
    const joined = job;
    return new Promise<Uint8Array>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      joined.waiters.add(waiter);
      signal?.addEventListener("abort", () => this.leave(joined, waiter), { once: true });
      this.next();
    });
  }

  /**
   * Ends worker `index`'s thread from outside, as a crash would (tests, drills): the renderer finds it gone as it finds
   * any worker gone.
   */
  terminate(index: number): void {
    this.slots[index]?.worker?.terminate();
  }

  /** The workers' thread ids (Worker.threadId), in order, -1 where none has started: a worker replaced has a new one. */
  threadIds(): number[] {
    return this.slots.map((s) => s.worker?.threadId ?? -1);
  }

  /** Renders waiting and under way. */
  load(): { queued: number; rendering: number } {
    return { queued: this.queued, rendering: this.slots.filter((s) => s.job).length };
  }

  stats(): PdfStats {
    return { ...this.counts, ...this.load() };
  }

  close(): void {
    for (const slot of this.slots) this.stopSlot(slot, new PdfError("the PDF renderer stopped"), false);
    for (const jobs of this.queues.values())
      for (const job of jobs) this.finish(job, new PdfError("the PDF renderer stopped"));
    this.queues.clear();
    this.queued = 0;
    this.queuedChars = 0;
  }

  /** Seconds until the queue, as it stands, would be rendered. */
  private suggestedWait(): number {
    const renders = this.queued + this.slots.length;
    return Math.max(1, Math.ceil((renders * this.averageMs) / this.slots.length / 1000));
  }

  private inLane(requester: string, job: Job): void {
    const jobs = this.queues.get(requester);
    if (jobs) jobs.push(job);
    else this.queues.set(requester, [job]);
  }

  /** Takes a waiting job out of its requesters' queues. */
  private dequeue(job: Job): void {
    for (const requester of job.lanes) {
      const jobs = this.queues.get(requester)!;
      jobs.splice(jobs.indexOf(job), 1);
      if (!jobs.length) this.queues.delete(requester);
    }
    job.lanes.clear();
    this.queued--;
    this.queuedChars -= job.chars;
  }

  /** A waiter left: a job nobody waits for any more is dropped if it has not started, and given up if it has. */
  private leave(job: Job, waiter: Waiter): void {
    if (!job.waiters.delete(waiter)) return;
    const slot = this.slots.find((s) => s.job === job);
    waiter.reject(new PdfAbortedError(slot !== undefined));
    if (job.waiters.size) return;
    // A request for the article from now on renders it anew.
    this.jobs.delete(job.key);
    if (slot) Atomics.store(slot.abandon, 0, slot.render);
    else this.dequeue(job);
  }

  /** Starts queued jobs on idle workers, in turn: the requester served longest ago (or never) first. */
  private next(): void {
    for (const slot of this.slots) {
      if (slot.job || !this.queued) continue;
      let chosen = "";
      let oldest = Infinity;
      for (const requester of this.queues.keys()) {
        const last = this.lastServed.get(requester) ?? -1;
        if (last < oldest) [oldest, chosen] = [last, requester];
      }
      const job = this.queues.get(chosen)![0]!;
      this.dequeue(job);
      this.lastServed.delete(chosen); // re-inserted last: the map stays ordered by age, and bounded by the requesters seen
      this.lastServed.set(chosen, this.served++);
      slot.job = job;
      slot.render = ++this.renders;
      slot.worker ??= this.startWorker(slot);
      // A render waits for its worker's start with a limit of its own, and is timed from when the worker is ready: a
      // cold start, 0.6 CPU-s (longer on a loaded machine), would otherwise take that much of its time (D26).
      if (slot.ready) this.begin(slot);
      else slot.timer = setTimeout(() => this.lateStart(slot), this.startTimeoutMs);
    }
  }

  /**
   * The slot's render is sent to its ready worker, and its time limit starts: past it the worker may be stuck, so it is
   * stopped and a new one starts on the next job.
   */
  private begin(slot: Slot): void {
    slot.worker!.postMessage({ article: slot.job!.article, render: slot.render });
    slot.started = performance.now();
    slot.timer = setTimeout(
      () => this.stopSlot(slot, new PdfTimeoutError(this.timeoutMs, this.suggestedWait())),
      this.timeoutMs,
    );
  }

  private startWorker(slot: Slot): Worker {
    const worker = new Worker(workerUrl(new URL("./worker.ts", import.meta.url), "pdf/worker.ts"));
    slot.ready = false;
    slot.lateStarts = 0;
    worker.onmessage = (
      event: MessageEvent<{ bytes?: Uint8Array; error?: string; abandoned?: true; ready?: true }>,
    ) => {
      if (event.data.ready) {
        slot.ready = true;
        clearTimeout(slot.timer);
        if (slot.job) this.begin(slot);
        return;
      }
      const job = slot.job;
      if (!job) return;
      clearTimeout(slot.timer);
      slot.job = undefined;
      const { bytes, error, abandoned } = event.data;
      if (abandoned) {
        this.counts.abandoned++;
        this.finish(job, new PdfAbortedError(true));
      } else if (bytes) {
        this.counts.renders++;
        this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - slot.started);
        this.keep(job.key, bytes);
        this.finish(job, bytes);
      } else {
        this.counts.failures++;
        this.finish(job, new PdfError(error ?? "the PDF could not be rendered"));
      }
      this.next();
    };
    // The worker died: fail its job, and start a new one on the next. A worker that throws is closed after its error;
    // one terminated or exited is only closed. Either comes too from a worker already stopped here (replaced), ignored.
    const lost = (why: string) => {
      if (slot.worker === worker) this.stopSlot(slot, new PdfWorkerStoppedError(why));
    };
    worker.onerror = (event) => {
      event.preventDefault();
      // Bun's message is the error as it prints it, its source lines and stack: its `error:` line is what to log.
      lost(`it threw: ${/^error: (.*)$/m.exec(event.message)?.[1] ?? event.message.split("\n")[0]}`);
    };
    worker.addEventListener("close", (event) => lost(`its thread ended (exit code ${(event as CloseEvent).code})`));
    // A renderer alone must not keep the process alive.
    worker.unref();
    if (this.nice > 0) worker.postMessage({ nice: this.nice });
    worker.postMessage({ abandon: slot.abandon });
    return worker;
  }

  /**
   * The slot's worker was not ready within its render's start limit: the render fails, and the worker goes on starting
   * for the next (were it stopped, every render on a loaded machine would start one anew, and none be ready in time);
   * not ready within the next's either, it is taken for stuck and stopped.
   */
  private lateStart(slot: Slot): void {
    const job = slot.job!;
    slot.job = undefined;
    this.counts.failures++;
    const late = new PdfTimeoutError(this.startTimeoutMs, this.suggestedWait(), true);
    this.finish(job, late);
    if (++slot.lateStarts > 1) this.stopSlot(slot, late);
    else this.next();
  }

  /** Ends a slot's worker, failing the job it held (counted as a failed render unless the renderer is closing); the queue goes on with a new worker. */
  private stopSlot(slot: Slot, error: PdfError, failed = true): void {
    clearTimeout(slot.timer);
    slot.worker?.terminate();
    slot.worker = undefined;
    const job = slot.job;
    slot.job = undefined;
    if (job && failed) this.counts.failures++;
    if (job) this.finish(job, error);
    if (this.queued) queueMicrotask(() => this.next());
  }

  private finish(job: Job, outcome: Uint8Array | Error): void {
    // Not a newer job of the same article, asked for after this one was given up.
    if (this.jobs.get(job.key) === job) this.jobs.delete(job.key);
    for (const waiter of job.waiters) {
      if (outcome instanceof Error) waiter.reject(outcome);
      else waiter.resolve(outcome);
    }
    job.waiters.clear();
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
}

function textSize(article: PdfArticle): number {
  return codePoints(article.title) + textLength(article);
}
