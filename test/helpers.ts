/** Shared fixtures: the real dumps in ../shared/data/dumps, converted once per test run. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { sharedDumps } from "../src/cli/shared-data";
import { ingest, type IngestOptions, type IngestResult } from "../src/ingest";

export const DUMPS = sharedDumps();
export const dump = (name: string) => join(DUMPS, name);

export const EN_2016 = dump("enwiki-2016-sample.xml.bz2");
export const EN_2006 = dump("enwik8-head.xml.bz2");
export const EN_2006_TRUNCATED = dump("enwik8-head-truncated.xml.bz2");
export const SQUAD = dump("squad-dev-articles.xml.bz2");
export const TRUNCATED_XZ = ["bn", "el", "hy", "ja", "mr", "uk", "vi"].map((l) => dump(`${l}wiki-head-truncated.xml.xz`));
export const ALL_DUMPS = [EN_2016, EN_2006, EN_2006_TRUNCATED, SQUAD, ...TRUNCATED_XZ];

const cache = new Map<string, Promise<IngestResult>>();

/** Ingests once per distinct set of options, for the whole test run. */
export function ingested(options: IngestOptions): Promise<IngestResult> {
  const key = JSON.stringify(options);
  let p = cache.get(key);
  if (!p) {
    p = ingest(options);
    cache.set(key, p);
  }
  return p;
}

export function tempDir(prefix = "tome-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

import { open as openEngine, type Engine } from "../src/search";
import { writeIngested } from "../src/build";

const snapshots = new Map<string, Promise<string>>();
const engines = new Map<string, Promise<Engine>>();

/** The path of a snapshot built from the given dumps (built once per test run). */
export function snapshotFor(options: IngestOptions): Promise<string> {
  const key = JSON.stringify(options);
  let p = snapshots.get(key);
  if (!p) {
    p = (async () => {
      const path = join(tempDir(), "test.tome");
      writeIngested(await ingested(options), path, options.chunkWords ?? 300);
      return path;
    })();
    snapshots.set(key, p);
  }
  return p;
}

/** A search engine over snapshotFor(options). */
export function engineFor(options: IngestOptions): Promise<Engine> {
  const key = JSON.stringify(options);
  let p = engines.get(key);
  if (!p) {
    p = snapshotFor(options).then((path) => openEngine(path));
    engines.set(key, p);
  }
  return p;
}

export const ROOT = resolve(import.meta.dir, "..");

export interface ServerProcess {
  url: string;
  /** The key the server created at its first start, if it printed one. */
  key?: string;
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** Everything the server has written so far. */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number>;
}

/**
 * Starts `bun run start` (the real server) on a free port and waits until it serves. Its keys
 * and usage live in TOME_DATA: a fresh directory unless env names one. The work share (D25)
 * is off unless env sets TOME_KEY_MS_PER_SECOND: it counts wall time, which a machine busy
 * with the other test files inflates, and only its own tests are about it.
 */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  env = { TOME_DATA: tempDir("tome-data-"), TOME_KEY_MS_PER_SECOND: "0", ...env };
  const proc = Bun.spawn(["bun", join(ROOT, "src/cli/start.ts")], {
    cwd: env.CWD ?? ROOT,
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
  const deadline = Date.now() + 60_000;
  let url: string | undefined;
  while (!url) {
    url = /serving on (http:\/\/\S+?) /.exec(err)?.[1];
    if (url) break;
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${err}`);
    await Bun.sleep(20);
  }
  return {
    url,
    key: /^\s+(wk_[A-Za-z0-9]{32})$/m.exec(err)?.[1],
    proc,
    stdout: () => out,
    stderr: () => err,
    stop: async () => {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}

/** Runs the real key tool (`bun run keys`) on a data directory. */
export async function keys(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(["bun", join(ROOT, "src/cli/keys.ts"), ...args], { env: { ...process.env, TOME_DATA: dataDir }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** A new key, from `keys create --json`: {key, id, name, account, plan, scopes, expires_at, created_at}. */
export async function newKey(dataDir: string, ...args: string[]): Promise<Record<string, any>> {
  const r = await keys(dataDir, "create", "--json", ...args);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}
