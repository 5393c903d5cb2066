/**
 * One sorted run of the index build: the chunks inverted so far (invert.ts) sorted into lists
 * by term and written to their own file, which the merge (build.ts) reads back. Done on the
 * main thread, or by the sorting worker (run-worker.ts) while the next run is inverted.
 */
import { workerUrl } from "../../files";
import { ContainerWriter } from "../../snapshot";
import { printableName } from "../../printable";
import { textShardOptions } from "../postings/fields";
import { Inversion, type InvertedData } from "./invert";
import { writeShardData } from "../postings/store";

/** What the sorting worker is sent: a run to sort and write. */
export interface RunRequest {
  path: string;
  lang: string;
  base: number;
  data: InvertedData;
}

/** What it answers: the run written, or why not (the error's message and code). */
export interface RunResponse {
  path: string;
  error?: string;
  code?: string;
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
    this.worker = new Worker(workerUrl(new URL("./run-worker.ts", import.meta.url), "search/indexer/run-worker.ts"));
    this.worker.onmessage = ({ data }: MessageEvent<RunResponse>) =>
      this.finished(data.path, data.error === undefined ? undefined : runError(data));
    this.worker.onerror = (event) =>
      this.finished("", new Error(`the index's sorting worker stopped: ${event.message}`));
    this.worker.onmessageerror = () =>
      this.finished("", new Error("the index's sorting worker sent an unreadable answer"));
    // A worker gone while a run is in flight (killed, out of memory) must not leave the build waiting.
    this.worker.addEventListener(
      "close",
      () => this.running && this.finished("", new Error("the index's sorting worker stopped while writing a run")),
    );
  }

  /** Whether a run failed: the build is to stop. */
  get failed(): boolean {
    return this.failure !== undefined;
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
    const { data, transfer } = inversion.take();
    this.worker.postMessage({ path, lang, base, data } satisfies RunRequest, transfer);
    this.running = { done, resolve };
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

  /** Stops the worker; `closed` is called once it is gone (a run it was writing may have left a file until then). */
  close(closed?: () => void): void {
    if (closed) this.worker.addEventListener("close", closed);
    this.running = undefined;
    this.worker.terminate();
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  private finished(path: string, failure: Error | undefined): void {
    const running = this.running;
    this.running = undefined;
    this.failure ??= failure;
    try {
      if (!this.failure) this.written(path);
    } catch (err) {
      // Handing the next run over failed: the build learns it from next(), idle() or the next page.
      this.failure = err as Error;
    } finally {
      running?.resolve();
    }
  }
}

/** A run the worker could not write, as the user reads it: where, and why, with its code (the CLI says what to do: src/cli/main.ts). */
export function runError({ path, error = "", code }: RunResponse): Error {
  // The run's writer may have named its file already (files.ts writeFailed): said once.
  const named = `could not write ${printableName(path)}: `;
  const why = error.startsWith(named) ? error.slice(named.length) : error;
  const err = new Error(`could not write the index's run ${printableName(path)}: ${why}`) as NodeJS.ErrnoException;
  if (code) err.code = code;
  return err;
}
