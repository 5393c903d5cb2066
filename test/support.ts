/**
 * What tests and benchmarks share: the shared dumps, building a snapshot from them, starting
 * the real server in its own process and waiting until it serves, and writing the files of
 * older formats. test/helpers.ts adds the per-run caches the test files use.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Packr } from "msgpackr";
import { writeIngested, type BuildReport } from "../src/build";
import { sharedDumps } from "../src/cli/shared-data";
import { DEFAULT_CHUNK_WORDS, ingest, type IngestOptions, type IngestResult } from "../src/ingest";
import type { Snapshot } from "../src/snapshot";

export const ROOT = resolve(import.meta.dir, "..");
export const START = join(ROOT, "src/cli/start.ts");

export const DUMPS = sharedDumps();
export const dump = (name: string) => join(DUMPS, name);

export function tempDir(prefix = "tome-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The chunk size a snapshot of these options is cut into (ingest's default unless they say). */
export const chunkWordsOf = (options: IngestOptions): number => options.chunkWords ?? DEFAULT_CHUNK_WORDS;

/** Writes an ingest result as a snapshot at path, cut as the result was. */
export function writeSnapshot(result: IngestResult, path: string, options: IngestOptions, createdAt?: Date): BuildReport {
  return writeIngested(result, path, chunkWordsOf(options), createdAt);
}

/** Ingests the dumps and writes them as a snapshot at path. */
export async function buildSnapshot(options: IngestOptions, path: string, createdAt?: Date): Promise<BuildReport & { result: IngestResult }> {
  const result = await ingest(options);
  return { ...writeSnapshot(result, path, options, createdAt), result };
}

/** The address a server logs when it is ready: "serving on http://host:port (…)". */
export const SERVING_ON = /serving on (http:\/\/\S+?) /;

export interface SpawnedServer {
  url: string;
  pid: number;
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** Everything the server has written so far. */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number>;
}

/**
 * Runs command (a server: src/cli/start.ts, perhaps behind taskset or valgrind) on a free port
 * (unless env sets PORT) and waits until it logs where it serves; throws with its log if it
 * exits or takes longer than timeoutMs.
 */
export async function spawnServer(
  command: string[],
  env: Record<string, string | undefined>,
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<SpawnedServer> {
  const proc = Bun.spawn(command, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, PORT: "0", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  let err = "";
  const drain = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const part of stream) add(decoder.decode(part, { stream: true }));
  };
  void drain(proc.stdout, (s) => (out += s));
  void drain(proc.stderr, (s) => (err += s));
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const url = SERVING_ON.exec(err)?.[1];
    if (url) {
      return {
        url,
        pid: proc.pid,
        proc,
        stdout: () => out,
        stderr: () => err,
        stop: async () => {
          proc.kill("SIGTERM");
          return proc.exited;
        },
      };
    }
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${err}`);
    await Bun.sleep(20);
  }
}

/**
 * Writes a snapshot's pages as a format-1 file, as the Tome of that format did: header,
 * sha256, then msgpackr meta (without the modifications, which format 1 never recorded) and
 * content. For the conversion's tests.
 */
export function writeFormat1(path: string, source: Snapshot): { chunkWords: number } {
  const pages = source.pages.list().map((p) => ({ ...p, chunks: p.chunks.map((c) => ({ section: c.section, text: c.text })) }));
  const packr = new Packr({ useRecords: true, moreTypes: false });
  const { modifications: _recorded, ...meta1 } = { ...source.meta, formatVersion: 1 };
  const metaBytes = packr.pack(meta1);
  const content = packr.pack({ pages, redirects: source.redirects });
  const file = new Uint8Array(64 + metaBytes.length + content.length);
  const view = new DataView(file.buffer);
  file.set(new TextEncoder().encode("TOMESNAP"));
  view.setUint32(8, 1, true);
  view.setBigUint64(16, BigInt(metaBytes.length), true);
  view.setBigUint64(24, BigInt(content.length), true);
  file.set(metaBytes, 64);
  file.set(content, 64 + metaBytes.length);
  file.set(new Bun.CryptoHasher("sha256").update(file.subarray(64)).digest() as Uint8Array, 32);
  writeFileSync(path, file);
  return { chunkWords: source.meta.chunkWords };
}
