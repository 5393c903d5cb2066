/**
 * The search pool (issue 60): worker threads that each open the snapshots served (mapped: the
 * file's pages are the page cache's, shared by every thread, not copied) and answer searches,
 * lucky and the MCP search tools there, JSON and all, so that the request thread only reads
 * requests, checks keys, limits and quotas, and sends bytes.
 *
 * Generations: each snapshot the app serves is one generation, opened in every worker when the
 * app takes it (swap) and closed in every worker once the app has freed it (its last request in
 * flight answered, current.ts). A request names the generation it took as it arrived, so that
 * its answer comes whole from one snapshot whatever swap happens meanwhile; a worker reads its
 * messages in order, so a generation is open there before any request on it is read.
 *
 * Fair queueing (D106): requests wait here, on the request thread, in a lane per key (fair-queue.ts), and each worker
 * is sent two messages at a time (the one it runs and the next); as it answers one, the next sent is from the key that
 * has had the least of the workers' time since it came. One key's burst waits behind itself, not in front of another
 * key's search.
 *
 * Batches (D166): a message holds one request, or two of keys whose recent requests cost a worker at most
 * `batchBelowMs` each (0.5 ms): the worker runs them one after the other, timing and charging each as its own, and
 * answers both in one message, so that each thread wakes once for two cheap searches rather than once for each.
 *
 * Backpressure: the pool holds at most `queueLength` requests a worker, waiting and running; past it a request is
 * refused at once (503 with Retry-After) instead of waiting without bound. A worker that dies is replaced (opening
 * every generation served) and the requests sent to it are answered 503, never left waiting (those still waiting
 * here go to the new one); so is a worker that holds requests and answers none for `stuckMs` (a search's time limit
 * ends each search long before).
 *
 * One key's share (D105): a key may hold at most half of the pool's room (its workers' queues
 * together); past it its request is refused at once, 429 with Retry-After. The work share
 * charges a request once it is answered, so without this one key's burst of searches, all
 * admitted before any was charged, filled every queue and the other keys' searches were
 * refused 503 until they drained.
 */
import { closeSync } from "node:fs";
import { workerUrl } from "../../files";
import type { SearchWork } from "../../search";
import { SnapshotError } from "../../snapshot";
import { ApiError, ERRORS, retryLater, workerStopped } from "../errors";
import type { SearchPoolStats } from "../metrics";
import { CLIENT_GONE, type Exchange } from "../pipeline";
import { chargeElsewhere, outsideWork } from "../steps/keys";
import { FairQueue } from "./fair-queue";
import { WORKER_STUCK_MS } from "../../request-time";
import {
  unpackAnswers,
  type WorkerFile,
  type WorkerOpened,
  type WorkerReply,
  type WorkerRequest,
  type WorkerTask,
} from "./messages";

/** Requests the pool holds a worker (running and waiting) before it is full. */
const QUEUE_LENGTH = 64;
/**
 * Messages of requests sent to one worker at once: the one it runs and the next, so that it does not wait for the
 * request thread between two; the rest wait in the fair queue, where another key's search can pass them.
 */
const SENT_PER_WORKER = 2;
/**
 * At most this many requests in one message (D166): two, as many as the workers are sent one at a time, so that the
 * pool holds no more than twice as many requests for its workers as before; four a message left the connections of
 * the bench all in the workers, and gained nothing (bench/http/RESULTS.md).
 */
const BATCH = 2;
/** A key whose recent searches cost a worker at most this many ms each has them sent several to a message (D166). */
const BATCH_BELOW_MS = 0.5;
/** What a refusal for a full pool says to wait, in seconds: searches take milliseconds, so the queues drain within one. */
const BUSY_RETRY_AFTER = 1;

export interface SearchPoolOptions {
  /** Worker threads (at least 1). */
  workers: number;
  /** Requests the pool may hold a worker, waiting and running (default 64). */
  queueLength?: number;
  /** A search's time limit in the workers (D91), as the app's. */
  searchTimeoutMs?: number;
  /** How many nice steps below the request thread each worker runs (0 to 19; default 0 here, the server's 10: D142). */
  nice?: number;
  /** A worker holding requests that answers none for this long is replaced (default 30 s). */
  stuckMs?: number;
  /**
   * A key whose recent requests cost a worker at most this many ms each has them sent to a worker two to a message,
   * answered in one (D166; default 0.5 ms; 0 or less: never).
   */
  batchBelowMs?: number;
  /** Where a worker's death is reported. */
  logError?: (error: unknown) => void;
}

/** A request for a worker, waiting in the fair queue and then sent to one. */
interface Job {
  job: number;
  generation: number;
  task: WorkerTask;
  args: unknown;
  /** The request's key id (its lane in the fair queue). */
  key: string | undefined;
  resolve: (reply: WorkerReply) => void;
  reject: (error: Error) => void;
  /** Stops listening for its client leaving (once sent to a worker, it runs to its end). */
  unwatch?: () => void;
  /** Sent to a worker (no longer waiting). */
  sent: boolean;
}

interface Slot {
  worker: Worker;
  /** The worker's thread id, kept: a thread that has stopped answers -1. */
  threadId: number;
  /** Requests sent and not answered, by job number. */
  pending: Map<number, Job>;
  /** Messages of requests sent and not answered (each answered by one message, D166). */
  messages: number;
  /** When it last answered, or was given a request while it held none (performance.now()). */
  heard: number;
  /** The file the worker's clock of waits reads (D144): closed here once the worker is ended. */
  file?: number;
}

/** Terminates a slot's worker and closes the file its clock read (a terminated thread runs no cleanup). */
function end(slot: Slot): void {
  slot.worker.terminate();
  if (slot.file === undefined) return;
  try {
    closeSync(slot.file);
  } catch {}
  slot.file = undefined;
}

export class SearchPool {
  private readonly slots: Slot[] = [];
  /** Generations open in every worker (a replacement opens them all), by number. */
  private readonly open = new Map<number, { path: string; id: string; checked: string }>();
  /** Generations some worker is still opening: the workers that have, and who waits until all have. */
  private readonly opening = new Map<number, { done: Set<Worker>; told: () => void }>();
  private generations = 0;
  private jobs = 0;
  private readonly queueLength: number;
  private readonly batchBelowMs: number;
  private readonly counts = { answered: 0, missing: 0, refusals: 0, keyRefusals: 0, replaced: 0, checkedAgain: 0 };
  /** Requests not yet sent to a worker, a lane per key. */
  private readonly queue = new FairQueue<Job>();
  private closed = false;
  private readonly watchdog: ReturnType<typeof setInterval>;

  constructor(private readonly options: SearchPoolOptions) {
    this.queueLength = options.queueLength ?? QUEUE_LENGTH;
    this.batchBelowMs = options.batchBelowMs ?? BATCH_BELOW_MS;
    for (let i = 0; i < Math.max(1, options.workers); i++) this.slots.push(this.start());
    const stuckMs = options.stuckMs ?? WORKER_STUCK_MS;
    this.watchdog = setInterval(
      () => {
        const now = performance.now();
        for (const slot of this.slots)
          if (slot.pending.size && now - slot.heard > stuckMs)
            this.replace(slot, `it answered nothing for ${stuckMs} ms`);
      },
      Math.max(5, stuckMs / 4),
    );
    this.watchdog.unref();
  }

  /**
   * Opens a snapshot in every worker; what the app serves from it runs there until close(). `watch` is
   * told the work of each search run there (as the engine's watchers are on the request thread: /metrics).
   * `checked`: the file's identity as this thread checked its structure (its snapshot's `checked`, D119): a worker
   * finding the same file there does not check it again; given none, every worker does.
   */
  generation(path: string, id: string, watch: (work: SearchWork) => void = () => {}, checked = ""): PoolGeneration {
    const generation = ++this.generations;
    this.open.set(generation, { path, id, checked });
    const ready = new Promise<void>((told) => this.opening.set(generation, { done: new Set(), told }));
    for (const slot of this.slots) this.post(slot, this.openMessage(generation));
    return new PoolGeneration(this, generation, watch, ready);
  }

  private openMessage(generation: number): WorkerRequest {
    const { path, id, checked } = this.open.get(generation)!;
    return { kind: "open", generation, path, id, checked, searchTimeoutMs: this.options.searchTimeoutMs };
  }

  /** A worker has opened a generation: once every worker has, whoever waits on it is told. */
  private opened(worker: Worker, generation: number): void {
    const opening = this.opening.get(generation);
    if (!opening) return;
    opening.done.add(worker);
    this.settleOpening(generation);
  }

  private settleOpening(generation: number): void {
    const opening = this.opening.get(generation);
    if (!opening) return;
    if (this.open.has(generation) && !this.slots.every((s) => opening.done.has(s.worker))) return;
    this.opening.delete(generation);
    opening.told();
  }

  /** Lets a generation go in every worker (its mappings unmapped once collected there). */
  close(generation: number): void {
    if (!this.open.delete(generation)) return;
    this.settleOpening(generation);
    for (const slot of this.slots) this.post(slot, { kind: "close", generation });
  }

  /**
   * Runs a task in a worker, in its key's turn (D106); refused with 503 at once when the pool is full, and with 429
   * when `key` (the request's key id) already holds half of the pool's room (D105). If `signal` aborts (the client
   * has gone) while the task still waits for a worker, it is taken out and never run: rejected with ClientGone (D108).
   */
  run(generation: number, task: WorkerTask, args: unknown, key?: string, signal?: AbortSignal): Promise<WorkerReply> {
    if (this.closed || this.held >= this.slots.length * this.queueLength) {
      this.counts.refusals++;
      return Promise.reject(busy());
    }
    if (key !== undefined && this.queue.held(key) >= this.keyShare) {
      this.counts.keyRefusals++;
      return Promise.reject(keyBusy(this.keyShare));
    }
    if (signal?.aborted) return Promise.reject(new ClientGone());
    return new Promise<WorkerReply>((resolve, reject) => {
      const job: Job = { job: ++this.jobs, generation, task, args, key, resolve, reject, sent: false };
      this.queue.push(key, job);
      this.send();
      // Listened for only while it waits (most requests are sent at once: a listener each would cost the request thread
      // for nothing); once sent, it runs to its end (D108).
      if (signal && !job.sent) {
        const gone = () => {
          if (this.queue.remove(key, job)) reject(new ClientGone());
        };
        signal.addEventListener("abort", gone, { once: true });
        job.unwatch = () => signal.removeEventListener("abort", gone);
      }
    });
  }

  /** Requests in the pool: waiting, and sent to a worker and not yet answered. */
  private get held(): number {
    let held = this.queue.waiting;
    for (const slot of this.slots) held += slot.pending.size;
    return held;
  }

  /** How many requests one key may hold in the pool: half its room, at least one. */
  private get keyShare(): number {
    return Math.max(1, Math.floor((this.slots.length * this.queueLength) / 2));
  }

  /**
   * Sends waiting requests, each key in its turn, to the workers holding fewer messages than they may. A message holds
   * one request, or up to BATCH of keys whose recent requests each cost a worker at most `batchBelowMs` (D166): the
   * worker answers them in one message, one wake-up of each thread for several requests.
   */
  private send(): void {
    for (;;) {
      let slot = this.slots[0]!;
      for (const s of this.slots) if (s.messages < slot.messages) slot = s;
      if (slot.messages >= SENT_PER_WORKER) return;
      const first = this.queue.next();
      if (!first) return;
      const batch = [first.item];
      const cheap = this.batchBelowMs > 0 && first.cost <= this.batchBelowMs;
      while (cheap && batch.length < BATCH) {
        const more = this.queue.next(this.batchBelowMs);
        if (!more) break;
        batch.push(more.item);
      }
      if (!slot.pending.size) slot.heard = performance.now();
      for (const job of batch) {
        job.sent = true;
        job.unwatch?.();
        slot.pending.set(job.job, job);
      }
      slot.messages++;
      if (batch.length === 1) {
        const args = JSON.stringify(first.item.args);
        this.post(slot, {
          kind: "run",
          job: first.item.job,
          generation: first.item.generation,
          task: first.item.task,
          args,
        });
        continue;
      }
      let tasks = "";
      for (const job of batch)
        tasks += `${tasks ? "," : "["}[${job.job},${job.generation},"${job.task}",${JSON.stringify(job.args)}]`;
      this.post(slot, { kind: "runs", tasks: `${tasks}]` });
    }
  }

  /** Stops worker `index` as a crash would: its requests are answered 503 and a new worker takes its place (tests, drills). */
  terminate(index: number): void {
    const slot = this.slots[index];
    if (slot) this.replace(slot, "it was terminated");
  }

  /** The workers' thread ids (Worker.threadId), in order: a worker replaced has a new one. */
  threadIds(): number[] {
    return this.slots.map((s) => s.threadId);
  }

  stats(): SearchPoolStats {
    return { workers: this.slots.length, pending: this.held, ...this.counts, generations: this.open.size };
  }

  /** Stops every worker; requests still waiting are answered 503. */
  stop(): void {
    this.closed = true;
    clearInterval(this.watchdog);
    for (const opening of this.opening.values()) opening.told();
    this.opening.clear();
    for (const slot of this.slots) {
      end(slot);
      this.fail(slot, "the server is stopping");
    }
    for (const job of this.queue.drain()) job.reject(stopped("the server is stopping"));
  }

  private start(): Slot {
    const worker = new Worker(workerUrl(new URL("../search-worker.ts", import.meta.url), "http/search-worker.ts"));
    const slot: Slot = { worker, threadId: worker.threadId, pending: new Map(), messages: 0, heard: performance.now() };
    worker.onmessage = (event: MessageEvent<ArrayBuffer | WorkerReply | WorkerOpened | WorkerFile>) => {
      const data = event.data;
      if (data instanceof ArrayBuffer) {
        slot.heard = performance.now();
        slot.messages--;
        for (const reply of unpackAnswers(data)) this.answered(slot, reply);
        this.send();
        return;
      }
      if ("file" in data) {
        slot.file = data.file;
        return;
      }
      slot.heard = performance.now();
      if ("opened" in data) {
        if (data.checkedAgain) this.counts.checkedAgain++;
        return this.opened(worker, data.opened);
      }
      slot.messages--;
      this.answered(slot, data);
      this.send();
    };
    worker.onerror = (event) => {
      event.preventDefault();
      this.replace(slot, `it failed: ${event.message}`);
    };
    worker.addEventListener("close", () => this.replace(slot, "it stopped"));
    const nice = this.options.nice ?? 0;
    if (nice > 0) this.post(slot, { kind: "nice", steps: nice });
    // Not unref()'d: with nothing else keeping the event loop alive, Bun's main thread then spins while it waits for an
    // unref()'d worker's answer (as much CPU as the worker takes). stop() ends the workers.
    for (const generation of this.open.keys()) this.post(slot, this.openMessage(generation));
    return slot;
  }

  /** A request answered by `slot`'s worker: its key's lane charged what the worker spent on it (D106). */
  private answered(slot: Slot, reply: WorkerReply): void {
    const job = slot.pending.get(reply.job);
    if (!job) return;
    slot.pending.delete(reply.job);
    this.queue.done(job.key, reply.ms);
    this.counts.answered++;
    if ("missing" in reply) this.counts.missing++;
    job.resolve(reply);
  }

  private post(slot: Slot, message: WorkerRequest): void {
    slot.worker.postMessage(message);
  }

  /** A worker is gone: its requests are answered 503, and a new worker takes its place. */
  private replace(slot: Slot, why: string): void {
    const index = this.slots.indexOf(slot);
    if (index < 0 || this.closed) return;
    this.counts.replaced++;
    this.options.logError?.(new Error(`search worker ${slot.threadId} is replaced: ${why}`));
    this.slots[index] = this.start();
    end(slot);
    this.fail(slot, "the search worker answering it stopped");
    // Those waiting for a generation to be open now wait for the new worker instead.
    for (const generation of [...this.opening.keys()]) this.settleOpening(generation);
    this.send();
  }

  /** The requests sent to a worker that is gone are answered 503 (their keys' lanes charged nothing: no answer said what they cost). */
  private fail(slot: Slot, why: string): void {
    const sent = [...slot.pending.values()];
    slot.pending.clear();
    slot.messages = 0;
    for (const job of sent) {
      this.queue.done(job.key, 0, false);
      job.reject(stopped(why));
    }
  }
}

/** One snapshot as the pool serves it: its requests' answers made in a worker. */
export class PoolGeneration {
  constructor(
    private readonly pool: SearchPool,
    readonly generation: number,
    private readonly watch: (work: SearchWork) => void,
    /**
     * Resolves once every worker has opened it (or found it cannot): until then a worker may be reading the file
     * (its indexes), which whoever is about to let a writer at the file must wait for (D84, D103).
     */
    readonly ready: Promise<void>,
  ) {}

  /**
   * A route's answer made in a worker, as the Response to send (its JSON made there); `here`
   * makes it on this thread when the worker does not hold this snapshot (it could not be opened
   * there). The worker's time is charged to the request's key (D57, D101); its wait for the
   * worker is not.
   */
  async answer(task: "search" | "lucky", args: unknown, x: Exchange, here: () => unknown): Promise<Response> {
    let reply: WorkerReply;
    try {
      reply = await this.ask(task, args, x, x.request.signal);
    } catch (error) {
      // Nobody to answer, nothing charged (as the PDF route's client that leaves while its PDF waits).
      if (error instanceof ClientGone) return new Response(null, { status: CLIENT_GONE });
      throw error;
    }
    // Its client left while a worker ran it (D28, D108): nobody to answer, so no 2xx to charge.
    if (x.request.signal.aborted) return new Response(null, { status: CLIENT_GONE });
    if ("json" in reply) return new Response(reply.json, { headers: JSON_HEADERS });
    if ("missing" in reply) return new Response(JSON.stringify(here()), { headers: JSON_HEADERS });
    throw new Error("a search worker answered a route with a tool's answer");
  }

  /**
   * An MCP tool's answer made in a worker (its arguments already read), or undefined as answer() says. A call whose
   * client leaves while it waits for a worker is taken out, as a route's search is (D108): ClientGone, and the keys
   * step answers the request 499, charging no credit.
   */
  async tool(task: "tool:search" | "tool:lucky", args: unknown, x: Exchange | undefined) {
    const reply = await this.ask(task, args, x, x?.received.signal);
    if ("missing" in reply) return undefined;
    if ("tool" in reply) return reply.tool;
    throw new Error("a search worker answered a tool with a route's answer");
  }

  /** Lets the snapshot go in every worker. */
  close(): void {
    this.pool.close(this.generation);
  }

  private async ask(task: WorkerTask, args: unknown, x: Exchange | undefined, signal?: AbortSignal) {
    const asked = this.pool.run(this.generation, task, args, x?.grant?.key.record.id, signal);
    const reply = x ? await outsideWork(x, asked) : await asked;
    if (x) chargeElsewhere(x, reply.ms);
    for (const work of reply.work) this.watch(work);
    if ("error" in reply) {
      const e = reply.error;
      throw new ApiError(e.status, e.code, e.message, e.details, e.extra, e.headers);
    }
    if ("fault" in reply) throw new Error(`a search worker failed: ${reply.fault}`);
    if ("damaged" in reply) throw new SnapshotError(reply.damaged);
    return reply;
  }
}

/** A request's client left while the request waited for a worker: it was taken out, not run (D108). */
export class ClientGone extends Error {
  constructor() {
    super("the client has gone");
    this.name = "ClientGone";
  }
}

/**
 * What Elysia sends with a route's object answer (the answers must not differ with the pool). A Headers, which a
 * Response copies faster than a plain object's fields (bench/http/RESULTS.md); each answer gets its own copy.
 */
const JSON_HEADERS = new Headers({ "content-type": "application/json" });

const keyBusy = (share: number) =>
  retryLater(
    ERRORS.rateLimitExceeded,
    BUSY_RETRY_AFTER,
    `This key already has ${share} searches waiting in the search workers, half of their room; nothing was charged. Retry after ${BUSY_RETRY_AFTER} s.`,
  );

const stopped = (why: string) => workerStopped("This search could not be answered", why, BUSY_RETRY_AFTER);

const busy = () =>
  retryLater(
    ERRORS.serviceUnavailable,
    BUSY_RETRY_AFTER,
    `Every search worker is busy; nothing was charged. Retry after ${BUSY_RETRY_AFTER} s.`,
  );
