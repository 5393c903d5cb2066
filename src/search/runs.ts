/**
 * One sorted run of the index build: the chunks inverted so far (invert.ts) sorted into lists
 * by term and written to their own file, which the merge (build.ts) reads back. Done on the
 * main thread, or by the sorting worker (run-worker.ts) while the next run is inverted.
 */
import { ContainerWriter } from "../snapshot";
import { textShardOptions } from "./fields";
import { Inversion, type InvertedData } from "./invert";
import { writeShardData } from "./store";

/** What the sorting worker is sent: a run to sort and write. */
export interface RunRequest {
  path: string;
  lang: string;
  base: number;
  data: InvertedData;
}

/** What it answers: the run written, or why not. */
export interface RunResponse {
  path: string;
  error?: string;
}

/** Writes the inversion's documents (numbered from `base` in the whole build) to `path` as a run. */
export function writeRun(path: string, inversion: Inversion, base: number): void {
  const count = inversion.count;
  const data = inversion.shard();
  const out = new ContainerWriter(path);
  writeShardData(out, "run", data);
  out.finish({ base, count });
}

/** A run sent to the worker, written there. */
export function writeRunRequest({ path, lang, base, data }: RunRequest): void {
  writeRun(path, new Inversion(textShardOptions(lang), data), base);
}

/**
 * The sorting worker, seen from the main thread: one run at a time. `written` is called (on
 * the main thread) as each run is in its file, before next() resolves, so that the builder
 * can send the worker its next run at once.
 */
export class RunSorter {
  private readonly worker: Worker;
  private running: { done: Promise<void>; resolve: () => void } | undefined;
  private failure: Error | undefined;

  constructor(private readonly written: (path: string) => void) {
    this.worker = new Worker(new URL("./run-worker.ts", import.meta.url).href);
    this.worker.onmessage = ({ data }: MessageEvent<RunResponse>) => this.finished(data.path, data.error === undefined ? undefined : new Error(`writing the index run ${data.path}: ${data.error}`));
    this.worker.onerror = (event) => this.finished("", new Error(`the index's sorting worker crashed: ${event.message}`));
  }

  /** Whether a run is being written. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Starts writing a run (none may be running); the inversion's buffers move to the worker. */
  start(path: string, lang: string, base: number, inversion: Inversion): void {
    this.throwIfFailed();
    if (this.running) throw new Error("index: a run is already being written");
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.running = { done, resolve };
    const { data, transfer } = inversion.take();
    this.worker.postMessage({ path, lang, base, data } satisfies RunRequest, transfer);
  }

  /** Resolves when the run being written (if any) is written; throws the worker's failure, if any. */
  async next(): Promise<void> {
    await this.running?.done;
    this.throwIfFailed();
  }

  /** Resolves when no run is being written (written() may have started another); throws the worker's failure, if any. */
  async idle(): Promise<void> {
    while (this.running) await this.running.done;
    this.throwIfFailed();
  }

  close(): void {
    this.worker.terminate();
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  private finished(path: string, failure: Error | undefined): void {
    const running = this.running;
    this.running = undefined;
    this.failure ??= failure;
    if (!this.failure) this.written(path);
    running?.resolve();
  }
}
