/**
 * What tests and benchmarks share: the shared dumps, building a snapshot from them, starting
 * the real server in its own process and waiting until it serves, and writing the files of
 * older formats, and the FTS5 baseline. test/helpers.ts adds the per-run caches the test files use.
 */
import { Database } from "bun:sqlite";
import { readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Packr } from "msgpackr";
import { writeIngested, type BuildReport } from "../src/build";
import { ALLOCATOR_SETTINGS, wantsAllocatorSettings } from "../src/cli/allocator";
import { sharedData, sharedDumps } from "../src/cli/shared-data";
import { DEFAULT_CHUNK_WORDS, ingest, type IngestOptions, type IngestResult } from "../src/ingest";
import { readExport } from "../src/ingest/mediawiki";
import type { RawPage } from "../src/ingest/raw-page";
import { openDump } from "../src/ingest/source";
import { SNAPSHOT_MAGIC, type Snapshot } from "../src/snapshot";

export { tempDir } from "./temp-dirs";

export const ROOT = resolve(import.meta.dir, "..");
export const START = join(ROOT, "src/cli/start.ts");

/** The data's directory (dumps/, eval/): test/fixtures/data unless overridden (src/cli/shared-data.ts). */
export const sharedDataDir = (): string => sharedData();
/** The dumps' directory (looked for when first asked: a benchmark given its own snapshot needs none). */
export const dumpsDir = (): string => sharedDumps();
export const dump = (name: string) => join(dumpsDir(), name);
/** The dumps a bench was given on its command line, or else every shared dump, in name order. */
export const dumpsOr = (given: string[]): string[] =>
  given.length
    ? given
    : readdirSync(dumpsDir())
        .filter((f) => f.includes(".xml"))
        .sort()
        .map(dump);

/**
 * A page's wikitext broken as a cut or hostile revision is, for the markup pass (stripMarkup): bench/build/markup.ts
 * times copies of it one after another, joined by `joint` (one paragraph where the breaking took the blank lines out),
 * and test/wikitext-converter.test.ts checks that copies are each read as the page alone.
 */
export const MARKUP_BREAKINGS: { what: string; breakIt: (wikitext: string) => string; joint: string }[] = [
  { what: "every </ref> cut: its references never closed", breakIt: (t) => t.replaceAll("</ref>", ""), joint: "\n\n" },
  {
    what: "every closing tag cut (</ref>, </math>, </sup>…)",
    breakIt: (t) => t.replace(/<\/[a-z]+\s*>/gi, ""),
    joint: "\n\n",
  },
  { what: "every '>' of a tag cut: no tag ends", breakIt: (t) => t.replace(/(?<!--)>/g, ""), joint: "\n\n" },
  {
    what: "every link a file link, no ']]', tags nor blank lines: one paragraph",
    breakIt: (t) =>
      t
        .replace(/<!--[\s\S]*?-->|<[^<>]*>|__[A-Z]+__/g, "")
        .replaceAll("[[", "[[File:")
        .replaceAll("]]", "")
        .replace(/\n\s*\n/g, "\n"),
    joint: "\n",
  },
];

/** Every namespace-0 page of the dumps, in order (of a damaged dump, its complete pages before the damage). */
export async function pagesOf(dumps: string[]): Promise<RawPage[]> {
  const pages: RawPage[] = [];
  for (const spec of dumps) {
    const source = await openDump(spec, true);
    try {
      for await (const item of readExport(source.xml, spec))
        if (item.kind === "page" && item.page.ns === 0) pages.push(item.page);
    } catch {
      // a damaged dump: its complete pages stand
    } finally {
      source.cancel();
    }
  }
  return pages;
}

/** The chunk size a snapshot of these options is cut into (ingest's default unless they say). */
const chunkWordsOf = (options: IngestOptions): number => options.chunkWords ?? DEFAULT_CHUNK_WORDS;

/** Writes an ingest result as a snapshot at path, cut as the result was. */
export function writeSnapshot(
  result: IngestResult,
  path: string,
  options: IngestOptions,
  createdAt?: Date,
): BuildReport {
  return writeIngested(result, path, chunkWordsOf(options), createdAt);
}

/** Ingests the dumps and writes them as a snapshot at path. */
export async function buildSnapshot(
  options: IngestOptions,
  path: string,
  createdAt?: Date,
): Promise<BuildReport & { result: IngestResult }> {
  const result = await ingest(options);
  return { ...writeSnapshot(result, path, options, createdAt), result };
}

/** The address a server logs when it is ready: "serving on http://host:port (…)". */
const SERVING_ON = /serving on (http:\/\/\S+?) /;

/** Where launch() runs a process, and whether its stdout is kept (a benchmark's server logs every request there). */
export interface LaunchOptions {
  /** Default: ROOT. */
  cwd?: string;
  /** Default: false (stdout is collected). */
  ignoreStdout?: boolean;
}

/** A process started by launch(): its output is collected as it comes. */
export interface Launched {
  proc: Bun.Subprocess<"ignore", "pipe" | "ignore", "pipe">;
  stdout(): string;
  stderr(): string;
  /** The address it serves on, once it says so; undefined if it exits first or timeoutMs passes. */
  serving(timeoutMs?: number): Promise<string | undefined>;
  /** Its exit code, once it has exited and its output is read. */
  exited(): Promise<number>;
}

/** Starts command with PORT=0 (unless env sets PORT), collecting its output. */
export function launch(
  command: string[],
  env: Record<string, string | undefined>,
  options: LaunchOptions = {},
): Launched {
  const proc = Bun.spawn(command, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, PORT: "0", ...env },
    stdin: "ignore",
    stdout: options.ignoreStdout ? "ignore" : "pipe",
    stderr: "pipe",
  });
  let out = "";
  let err = "";
  const drain = async (stream: ReadableStream<Uint8Array> | undefined, add: (s: string) => void) => {
    const decoder = new TextDecoder();
    if (stream) for await (const part of stream) add(decoder.decode(part, { stream: true }));
  };
  const read = Promise.all([drain(proc.stdout ?? undefined, (s) => (out += s)), drain(proc.stderr, (s) => (err += s))]);
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    serving: async (timeoutMs = 60_000) => {
      for (const deadline = Date.now() + timeoutMs; ; await Bun.sleep(20)) {
        const url = SERVING_ON.exec(err)?.[1];
        if (url) return url;
        if (proc.exitCode !== null || Date.now() > deadline) return undefined;
      }
    },
    exited: async () => {
      const code = await proc.exited;
      await read;
      return code;
    },
  };
}

/**
 * A benchmark script run again in a fresh process with `args` (its child mode): the JSON its last line of stdout
 * holds. Its stderr is this process's. The build's benches run their children with the allocator settings a build
 * runs with (D209), unless this process's environment names one of them (MIMALLOC_PURGE_HOLES=1: the defaults).
 */
export async function inChild<T>(script: string, args: string[]): Promise<T> {
  const env = wantsAllocatorSettings(process.env) ? { ...process.env, ...ALLOCATOR_SETTINGS } : process.env;
  const proc = Bun.spawn(["bun", script, ...args], { stdout: "pipe", stderr: "inherit", env });
  const text = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`benchmark child failed: ${args.join(" ")}`);
  return JSON.parse(text.trim().split("\n").pop()!) as T;
}

/** Runs command until it exits (a server that refuses to start, a tool): its exit code and output. */
export async function runToExit(
  command: string[],
  env: Record<string, string | undefined>,
  cwd = ROOT,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = launch(command, env, { cwd });
  const code = await run.exited();
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

export interface SpawnedServer {
  url: string;
  pid: number;
  proc: Launched["proc"];
  /** Everything the server has written so far (no stdout if it was ignored). */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number>;
}

/**
 * Runs command (a server: src/cli/start.ts, perhaps behind npm, taskset or valgrind) and waits
 * until it logs where it serves; throws with its log if it exits first or takes longer than
 * timeoutMs.
 */
export async function spawnServer(
  command: string[],
  env: Record<string, string | undefined>,
  options: LaunchOptions & { timeoutMs?: number } = {},
): Promise<SpawnedServer> {
  const run = launch(command, env, options);
  const url = await run.serving(options.timeoutMs);
  if (!url) {
    run.proc.kill("SIGTERM");
    throw new Error(`the server did not start:\n${run.stderr()}`);
  }
  const { proc } = run;
  return {
    url,
    pid: proc.pid,
    proc,
    stdout: run.stdout,
    stderr: run.stderr,
    stop: async () => {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}

/**
 * Writes a snapshot's pages as a format-1 file, as the Tome of that format did (format1Bytes).
 * For the conversion's tests.
 */
export function writeFormat1(path: string, source: Snapshot): { chunkWords: number } {
  const pages = source.pages
    .list()
    .map((p) => ({ ...p, chunks: p.chunks.map((c) => ({ section: c.section, text: c.text })) }));
  const { modifications: _recorded, ...meta1 } = { ...source.meta, formatVersion: 1 };
  writeFileSync(path, format1Bytes(meta1, { pages, redirects: source.redirects }));
  return { chunkWords: source.meta.chunkWords };
}

/**
 * A format-1 file of this meta and content, whatever they hold: header, sha256, then msgpackr
 * meta (without the modifications, which format 1 never recorded) and content.
 */
export function format1Bytes(meta: unknown, content: unknown): Uint8Array {
  const packr = new Packr({ useRecords: true, moreTypes: false });
  const metaBytes = packr.pack(meta);
  const contentBytes = packr.pack(content);
  const file = new Uint8Array(64 + metaBytes.length + contentBytes.length);
  const view = new DataView(file.buffer);
  file.set(new TextEncoder().encode(SNAPSHOT_MAGIC));
  view.setUint32(8, 1, true);
  view.setBigUint64(16, BigInt(metaBytes.length), true);
  view.setBigUint64(24, BigInt(contentBytes.length), true);
  file.set(metaBytes, 64);
  file.set(contentBytes, 64 + metaBytes.length);
  file.set(new Bun.CryptoHasher("sha256").update(file.subarray(64)).digest() as Uint8Array, 32);
  return file;
}

/**
 * The baseline the benches compare Tome with: an in-memory SQLite FTS5 table of chunks
 * (title, text), tokenized as plain BM25 engines do (unicode61, diacritics removed). `add`
 * inserts a chunk by its id; call it inside `db.transaction`.
 */
export function fts5Chunks(): { db: Database; add: (id: number, title: string, text: string) => void } {
  const db = new Database(":memory:");
  db.run("CREATE VIRTUAL TABLE chunks USING fts5(title, text, tokenize = 'unicode61 remove_diacritics 2')");
  const insert = db.prepare("INSERT INTO chunks (rowid, title, text) VALUES (?, ?, ?)");
  return { db, add: (id, title, text) => void insert.run(id, title, text) };
}
