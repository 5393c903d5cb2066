/**
 * The one helper module of the tests: the real dumps in test/fixtures/data/dumps, converted once
 * per test run (ingested, snapshotFor, engineFor), the real server and key tool, and small wikis
 * written inline for the rule tests (wikiOf, articlesOf). Building snapshots and spawning
 * processes live in bench/support.ts, which the benchmarks use too; tests take them from here.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { writeIngested } from "../src/build";
import { takeLock } from "../src/files";
import { DEFAULT_CHUNK_WORDS, ingest, type Article, type IngestOptions, type IngestResult } from "../src/ingest";
import type { App, AppOptions } from "../src/http";
import type { AccountStore, KeyFile, PlanName, Scope } from "../src/access";
import type { CommandIo } from "../src/cli/main";
import { Engine, open as openEngine } from "../src/search";
import { BlockCursor } from "../src/search/postings/block-cursor";
import { PageOrders } from "../src/search/ranking/page-orders";
import {
  dump,
  ROOT,
  runToExit,
  spawnServer,
  START,
  tempDir,
  writeSnapshot,
  type SpawnedServer,
} from "../bench/support";

export {
  dump,
  format1Bytes,
  launch,
  MARKUP_BREAKINGS,
  pagesOf,
  ROOT,
  runToExit,
  spawnServer,
  START,
  tempDir,
  writeFormat1,
  writeSnapshot,
} from "../bench/support";

export const EN_2016 = dump("enwiki-2016-sample.xml.bz2");
export const EN_2006 = dump("enwik8-head.xml.bz2");
export const EN_2006_TRUNCATED = dump("enwik8-head-truncated.xml.bz2");
export const SQUAD = dump("squad-dev-articles.xml.bz2");
export const TRUNCATED_XZ = ["bn", "el", "hy", "ja", "mr", "uk", "vi"].map((l) =>
  dump(`${l}wiki-head-truncated.xml.xz`),
);
export const ALL_DUMPS = [EN_2016, EN_2006, EN_2006_TRUNCATED, SQUAD, ...TRUNCATED_XZ];

/** The metadata of a small format-1 file (format1Bytes): an English wiki cut into 300-word chunks. */
export const FORMAT1_META = {
  formatVersion: 1,
  createdAt: "2024-01-01T00:00:00.000Z",
  wiki: { host: "en.wikipedia.org", dbname: "enwiki", lang: "en", sitename: "Wikipedia" },
  sources: [],
  truncated: false,
  indexedPages: 2,
  indexedChunks: 2,
  skippedRedirects: 0,
  chunkWords: 300,
  contentHash: "",
};

/** A page of a format-1 file: one section, one chunk. */
export const format1Page = (pageId: number, title: string) => ({
  pageId,
  revId: 10,
  title,
  timestamp: "2024-01-01T00:00:00Z",
  tsUnix: 1704067200,
  sections: [{ heading: "", level: 0 }],
  chunks: [{ section: 0, text: `${title} is a word.` }],
});

/** One promise per distinct set of options, for the whole test run (the default chunk size given or not: one). */
function cached<T>(make: (options: IngestOptions) => Promise<T>): (options: IngestOptions) => Promise<T> {
  const made = new Map<string, Promise<T>>();
  return (options) => {
    const { chunkWords, ...rest } = options;
    const key = JSON.stringify(chunkWords === DEFAULT_CHUNK_WORDS ? rest : options);
    let p = made.get(key);
    if (!p) {
      p = make(options);
      made.set(key, p);
    }
    return p;
  };
}

/** Ingests once per distinct set of options, for the whole test run. */
export const ingested: (options: IngestOptions) => Promise<IngestResult> = cached((options) => ingest(options));

/** The path of a snapshot built from the given dumps (built once per test run). */
export const snapshotFor = (options: IngestOptions): Promise<string> =>
  // Written anew if its folder was removed after a file's tests (test/preload.ts), as under --rerun-each, which runs
  // a file again in the same process.
  keptSnapshot(options).then((path) => (existsSync(path) ? path : writeSnapshotFor(options)));

const keptSnapshot = cached((options) => writeSnapshotFor(options));

/**
 * A copy of the snapshot of these options that the test files share: each file runs in its own process, and
 * 28 of them read the English dumps' snapshot. Built once per state of the code and the dumps (builds are
 * deterministic, test/build.test.ts) into a folder named by both, by one process while the others wait (buildOnce),
 * then copied: a test may damage its copy. A wiki
 * a test wrote, or a build with callbacks, is built for the test alone.
 */
async function writeSnapshotFor(options: IngestOptions): Promise<string> {
  const path = join(tempDir(), "test.tome");
  // A wiki a test wrote is its own; so is a build whose callbacks a test reads.
  if (
    !options.dumps.every((d) => ALL_DUMPS.includes(d)) ||
    Object.values(options).some((v) => typeof v === "function")
  ) {
    writeSnapshot(await ingested(options), path, options);
    return path;
  }
  const dumps = options.dumps.map((d) => `${d}:${statSync(d).size}:${statSync(d).mtimeMs}`);
  const shared = join(sharedSnapshots(), `${Bun.hash(JSON.stringify([options, dumps])).toString(36)}.tome`);
  await buildOnce(shared, async (scratch) => {
    writeSnapshot(await ingested(options), scratch, options);
  });
  copyFileSync(shared, path);
  return path;
}

/** Another process holds the lock of a file buildOnce makes. */
class BuildHeld extends Error {}

/**
 * Makes the file `shared` once across the test processes: the first to take its lock (`<shared>.lock`, src/files.ts'
 * takeLock) builds it into a scratch file renamed into place; the others wait for the lock to go and find it made. A
 * lock whose process is gone (a test run killed mid-build) is taken over, its scratch file removed.
 */
export async function buildOnce(shared: string, build: (scratch: string) => Promise<void> | void): Promise<void> {
  while (!existsSync(shared)) {
    const held = claim(shared);
    if (!held) {
      await Bun.sleep(100);
      continue;
    }
    try {
      if (existsSync(shared)) return;
      await build(held.scratch);
      renameSync(held.scratch, shared);
    } finally {
      held.release();
    }
  }
}

/** buildOnce for a build that is not a promise, waited for without one (pageOrdersOf's callers are not async). */
function buildOnceSync(shared: string, build: (scratch: string) => void): void {
  while (!existsSync(shared)) {
    const held = claim(shared);
    if (!held) {
      Bun.sleepSync(100);
      continue;
    }
    try {
      if (existsSync(shared)) return;
      build(held.scratch);
      renameSync(held.scratch, shared);
    } finally {
      held.release();
    }
  }
}

/** The lock of a file buildOnce makes, and the scratch file to build it in; undefined while another process holds it. */
function claim(shared: string): { scratch: string; release: () => void } | undefined {
  let release: () => void;
  try {
    release = takeLock(`${shared}.lock`, { held: () => new BuildHeld(), unwritable: (err) => err });
  } catch (err) {
    if (!(err instanceof BuildHeld)) throw err;
    return undefined;
  }
  try {
    // Held by no one else: a scratch file beside it is a killed build's.
    const prefix = `${basename(shared)}.`;
    for (const name of readdirSync(dirname(shared)))
      if (name.startsWith(prefix) && name.endsWith(".tmp")) rmSync(join(dirname(shared), name), { force: true });
  } catch (err) {
    release();
    throw err;
  }
  return { scratch: `${shared}.${process.pid}.tmp`, release };
}

/** The folder of shared snapshots for this code (src/, what writes them here, the lockfile, Bun); older ones, a day unused, go. */
const sharedSnapshots = (() => {
  let dir: string | undefined;
  return (): string => {
    if (dir) return dir;
    const hash = new Bun.CryptoHasher("sha256").update(Bun.version);
    const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" }).sort();
    // bench/support.ts writes them (its chunk size for the options) and this file keys them.
    const files = [
      ...sources.map((f) => join("src", f)),
      "bench/support.ts",
      "test/helpers.ts",
      "bun.lock",
      "package.json",
    ];
    for (const file of files) {
      const full = join(ROOT, file);
      if (statSync(full).isFile()) hash.update(file).update(readFileSync(full));
    }
    const root = join(tmpdir(), "tome-test-snapshots");
    dir = join(root, hash.digest("hex").slice(0, 16));
    mkdirSync(dir, { recursive: true });
    const dayAgo = Date.now() - 86_400_000;
    // Another test file may be removing the same one: gone is as good.
    for (const old of readdirSync(root)) {
      const stat = statSync(join(root, old), { throwIfNoEntry: false });
      if (join(root, old) !== dir && stat && stat.mtimeMs < dayAgo)
        rmSync(join(root, old), { recursive: true, force: true });
    }
    return dir;
  };
})();

/**
 * A search engine over snapshotFor(options), its searches and lucky lookups without D91's 100 ms limit unless a
 * test sets one: a machine busy with other test files must not cut short a ranking a test asserts.
 */
export const engineFor: (options: IngestOptions) => Promise<Engine> = cached((options) =>
  snapshotFor(options).then((path) => unhurried(openEngine(path))),
);

const TEST_BUDGET_MS = 60_000;

function unhurried(engine: Engine): Engine {
  const search = engine.search.bind(engine);
  const lucky = engine.lucky.bind(engine);
  engine.search = (q, options = {}) => search(q, { ...options, budgetMs: options.budgetMs ?? TEST_BUDGET_MS });
  engine.lucky = (q, budgetMs) => lucky(q, budgetMs ?? TEST_BUDGET_MS);
  return engine;
}

export interface ServerProcess extends SpawnedServer {
  /** The key the server created at its first start, if it printed one. */
  key?: string;
}

/**
 * Starts `bun run start` (the real server) on a free port and waits until it serves. Its keys
 * and usage live in TOME_DATA: a fresh directory unless env names one. The work share (D25)
 * is off unless env sets TOME_KEY_MS_PER_SECOND: it counts wall time, which a machine busy
 * with the other test files inflates, and only its own tests are about it; so are the search workers' lower priority
 * (D142: beside another test file's processes a search could pass its time limit, also wall time). env.CWD, if set,
 * is the directory it runs in. timeoutMs (default spawnServer's) bounds the wait: a start that builds its snapshot first
 * takes longer on a machine busy with other test files.
 */
export async function startServer(env: Record<string, string>, timeoutMs?: number): Promise<ServerProcess> {
  const { CWD, ...rest } = env;
  const server = await spawnServer(
    ["bun", START],
    { TOME_DATA: tempDir("tome-data-"), TOME_KEY_MS_PER_SECOND: "0", TOME_SEARCH_WORKER_NICE: "0", ...rest },
    { cwd: CWD, timeoutMs },
  );
  return { ...server, key: /^\s+(wk_[A-Za-z0-9]{32})$/m.exec(server.stderr())?.[1] };
}

/** Runs the real key tool (`bun run keys`) on a data directory. */
export function keys(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runToExit(["bun", join(ROOT, "src/cli/keys.ts"), ...args], { TOME_DATA: dataDir });
}

/** The end of a command run in this process: the code it gave its io's exit. */
class Exited extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/**
 * The key tool's main (src/cli/keys.ts, as `bun run keys` runs it) in this process, on a data directory: its exit code
 * (what it gives its exit, 0 if it returns), and what it writes to stdout and stderr, as `keys` gives them, without a
 * process of the tool (about half a CPU-second each). An error it throws is what a process would print, its stack,
 * with code 1. Its environment is this process's with TOME_DATA (or, given an object, the variables it holds, as
 * TOME_REDIS_URL). It runs with an io of its own (CommandIo): nothing of this process is replaced meanwhile (not
 * console, process.exit or process.env), so a server started by the test logs and exits as it would.
 * For tests of what the tool does and says; a test about the process itself runs it (keys).
 */
export async function keyTool(
  dataDir: string | Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import("../src/cli/keys");
  return inProcess(main, typeof dataDir === "string" ? { TOME_DATA: dataDir } : dataDir, args);
}

/**
 * The variables for a server asked for no search, lucky or MCP search, spread into its env
 * (startServer({ ...NO_SEARCH_THREADS, ... })): TOME_SEARCH_WORKERS=0 (D101: searches on the request thread). Each
 * search thread costs a server's start about 1.2 CPU-s (it loads the engine and opens the snapshot: 5.0 CPU-s with two,
 * as on a 2-core CI, 2.6 with none).
 */
export const NO_SEARCH_THREADS = { TOME_SEARCH_WORKERS: "0" } as const;

/** startServer for a server asked for no search (NO_SEARCH_THREADS). */
export const startUnsearched = (env: Record<string, string>, timeoutMs?: number): Promise<ServerProcess> =>
  startServer({ ...NO_SEARCH_THREADS, ...env }, timeoutMs);

/**
 * `bun run start` (src/cli/start.ts' main) in this process, with these variables over this process's environment, for
 * a start that is refused before it serves (a damaged key store, a data folder it cannot use): its exit code and what
 * it says, as keyTool gives the key tool's, without a process of its own (about a CPU-second each: it loads the
 * server). A start that is not refused would serve here: a test of one runs it (startServer). Everything start prints
 * before it serves goes through its io and is in what this gives: its notes (serveFromConfig's, the key store's and
 * Redis' log among them), its warnings and its refusal; only the request log, once serving, is the process's stdout.
 */
export async function startTool(
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import("../src/cli/start");
  return inProcess(main, env, []);
}

/** A command's main run in this process with an io of its own (keyTool, startTool). */
async function inProcess(
  main: (args: string[], io: CommandIo) => Promise<void>,
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CommandIo = {
    env: { ...process.env, PORT: "0", ...env },
    log: (line) => void (stdout += `${line}\n`),
    error: (line) => void (stderr += `${line}\n`),
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    exit: (code) => {
      throw new Exited(code);
    },
  };
  let code = 0;
  try {
    await main(args, io);
  } catch (error) {
    if (error instanceof Exited) code = error.code;
    else {
      stderr += `${(error as Error).stack ?? String(error)}\n`;
      code = 1;
    }
  }
  return { code, stdout, stderr };
}

/**
 * A new key, from `keys create --json`: {key, id, name, account, plan, scopes, expires_at, created_at}. Given
 * { dataDir, inProcess: true }, the key tool runs in this process (keyTool), for a test of what it makes, not of its
 * process (about half a CPU-second saved a key).
 */
export async function newKey(
  at: string | { dataDir: string; inProcess: boolean },
  ...args: string[]
): Promise<Record<string, any>> {
  const dataDir = typeof at === "string" ? at : at.dataDir;
  const inProcess = typeof at !== "string" && at.inProcess;
  const r = await (inProcess ? keyTool : keys)(dataDir, "create", "--json", ...args);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

export interface KeyMade {
  name: string;
  /** "default" unless given. */
  account?: string;
  /** A new account's plan (free unless given). */
  plan?: PlanName;
  /** "read" unless given. */
  scope?: Scope;
  /** Its last day, YYYY-MM-DD: it stops at 00:00 UTC that day. */
  expires?: string;
}

/**
 * A new key made in this process as `keys create --json` makes it: createKey applied to the store, the files of a data
 * folder (under keys.json's lock, updateKeyFile) or a Redis (its compare-and-set, RedisKeyStore.update); the same store
 * and the same JSON, without a process of the key tool (about half a CPU-second). For a test's set-up; a test of the
 * key tool's own work runs it (newKey, keys).
 */
export async function keyMade(
  store: string | { update<T>(change: (file: KeyFile) => T): Promise<T> },
  o: KeyMade,
): Promise<Record<string, any>> {
  const { createKey, updateKeyFile } = await import("../src/access");
  const now = Date.now();
  const change = (file: KeyFile) =>
    createKey(file, {
      name: o.name,
      account: o.account ?? "default",
      plan: o.plan,
      scope: o.scope ?? "read",
      expiresAt: o.expires === undefined ? undefined : `${o.expires}T00:00:00.000Z`,
      now,
    });
  const made = typeof store === "string" ? updateKeyFile(store, change) : await store.update(change);
  const { key, record, account } = made;
  return {
    key,
    id: record.id,
    name: record.name,
    account: record.account,
    plan: account.plan,
    scopes: record.scopes,
    expires_at: record.expires_at,
    created_at: record.created_at,
  };
}

// An app in this process (app.handle) with a dashboard: src/http and src/access are imported when first asked for,
// not by every test file that imports this module (src/http alone takes most of a second to load).

/**
 * An app in this process over snapshotFor(options), with the key store and accounts of dataDir, as `bun run start`
 * serves them; `app` adds to or replaces what it is given. The work share (D25) is off: a first request slowed by a
 * machine busy with other test files is not refused.
 */
export async function appWithAccounts(dataDir: string, options: IngestOptions, app: AppOptions = {}): Promise<App> {
  const [{ Access }, { createApp }] = await Promise.all([import("../src/access"), import("../src/http")]);
  const access = new Access({ dataDir, keyMsPerSecond: 0 });
  return createApp(await engineFor(options), { access, accounts: access.accounts(), ...app });
}

/** The Cookie header a response's first Set-Cookie asks for. */
export const cookieOf = (response: Response): string => response.headers.getSetCookie()[0]!.split(";")[0]!;

/** The CSRF field of a dashboard page's forms. */
export const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

export const FORM = "application/x-www-form-urlencoded";

/**
 * Signs `token` in to an app's dashboard as a browser does: the sign-in form (its CSRF cookie and field), then the
 * form posted; `headers` go with both. The post's answer: 303 with the session's cookie when signed in.
 */
export async function dashboardSignIn(
  app: App,
  token: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const url = "http://localhost/dashboard/sign-in";
  const form = await app.handle(new Request(url, { headers }));
  return app.handle(
    new Request(url, {
      method: "POST",
      headers: { ...headers, cookie: cookieOf(form), "content-type": FORM },
      body: new URLSearchParams({ csrf: csrfOf(await form.text()), token }),
    }),
  );
}

// Small wikis written inline, for the rule tests (test/rules/): pages as wikitext → a MediaWiki
// export → the real pipeline (ingest, snapshot build, search engine), the way a dump becomes a snapshot.

export interface InlinePage {
  title: string;
  /** Wikitext; for a redirect, its target's title. */
  text: string;
  redirect?: boolean;
  /** Its revision's time, ISO 8601: 2024-01-01T00:00:00Z unless given. */
  timestamp?: string;
}

const escapeXml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A MediaWiki export (schema 0.10) of the pages, of the wiki of language `lang`, page ids 1, 2, 3… in order. */
export function exportXml(pages: InlinePage[], lang = "en"): string {
  const namespaces = [
    [6, "File"],
    [10, "Template"],
    [14, "Category"],
  ]
    .map(([key, name]) => `<namespace key="${key}" case="first-letter">${name}</namespace>`)
    .join("");
  const body = pages
    .map((p, i) => {
      const text = p.redirect ? `#REDIRECT [[${p.text}]]` : p.text;
      const redirect = p.redirect ? `<redirect title="${escapeXml(p.text)}" />` : "";
      return `<page><title>${escapeXml(p.title)}</title><ns>0</ns><id>${i + 1}</id>${redirect}<revision><id>${100 + i}</id><timestamp>${p.timestamp ?? "2024-01-01T00:00:00Z"}</timestamp><text xml:space="preserve">${escapeXml(text)}</text></revision></page>`;
    })
    .join("\n");
  return `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="${lang}">
<siteinfo><sitename>Wikipedia</sitename><dbname>${lang}wiki</dbname><base>https://${lang}.wikipedia.org/wiki/Main_Page</base><namespaces><namespace key="0" case="first-letter" />${namespaces}</namespaces></siteinfo>
${body}
</mediawiki>`;
}

/**
 * The text of every chunk of a snapshot, in order: the chunks the ingest made, as they came (the same, text for text,
 * as a conversion of the dump), read from the snapshots the test files share rather than converted again.
 */
export function chunkTextsOf(engine: Engine): string[] {
  const pages = engine.snapshot.pages;
  const texts: string[] = [];
  for (let i = 0; i < pages.length; i++)
    for (let c = 0; c < pages.chunkCounts[i]!; c++) texts.push(pages.chunkText(i, c));
  return texts;
}

/** The export written to a fresh directory; its path. */
export function writeExport(pages: InlinePage[], lang = "en"): string {
  const path = join(tempDir("tome-rules-"), "pages.xml");
  writeFileSync(path, exportXml(pages, lang));
  return path;
}

/** The pages ingested: articles (redirects left out), in page order. */
export async function articlesOf(pages: InlinePage[]): Promise<Article[]> {
  return (await ingest({ dumps: [writeExport(pages)], workers: 1 })).articles;
}

/** A search engine over the pages (of an English wiki unless `lang` says), built as `snapshot:build` builds one (300-word chunks). */
export async function wikiOf(pages: InlinePage[], lang = "en"): Promise<Engine> {
  const xml = writeExport(pages, lang);
  const out = join(dirname(xml), "pages.tome");
  writeIngested(await ingest({ dumps: [xml], workers: 1 }), out, 300);
  return openEngine(out);
}

const madeOrders = new WeakMap<Engine, Map<string, Uint8Array>>();

/**
 * engine.pageOrders(least, length, undefined, typoLeast), made once per engine and arguments in a test file: a
 * section's bytes, which PageOrders only reads. Orders of every word of the English dumps take 7-13 s of CPU to make,
 * and test/plans.test.ts and test/windows.test.ts ask for them more than once, and both for (1, 1000): made once per
 * test run too (sharedPageOrders).
 */
export function pageOrdersOf(engine: Engine, least: number, length: number, typoLeast = least): Uint8Array {
  let made = madeOrders.get(engine);
  if (!made) madeOrders.set(engine, (made = new Map()));
  const key = `${least} ${length} ${typoLeast}`;
  let bytes = made.get(key);
  if (!bytes) made.set(key, (bytes = sharedPageOrders(engine, least, length, typoLeast)));
  return bytes;
}

/**
 * The page orders of an engine's snapshot, made by one test process and read by the others (buildOnce), beside the
 * shared snapshots (their folder is named by the code that makes both): found by the snapshot's content hash, since
 * the orders are made from its content alone. A snapshot without one (a format-1 file) has them made here.
 */
function sharedPageOrders(engine: Engine, least: number, length: number, typoLeast: number): Uint8Array {
  const make = () => engine.pageOrders(least, length, undefined, typoLeast);
  const hash = engine.snapshot.meta.contentHash;
  if (!hash) return make();
  const shared = join(sharedSnapshots(), `${hash}-orders-${least}-${length}-${typoLeast}.bin`);
  buildOnceSync(shared, (scratch) => writeFileSync(scratch, make()));
  const read = readFileSync(shared);
  return new Uint8Array(read.buffer, read.byteOffset, read.byteLength);
}

/**
 * The engine with page orders (D51) made from its own index (pageOrdersOf): every one-word query of `least`
 * postings or more, `length` pages each, and the typo orders (D124) of words of `typoLeast` up to `least`. Without
 * D91's 100 ms limit unless a test sets one, as engineFor's (it was a new Engine with the limit: on a machine loaded
 * with other test files, test/plans.test.ts's typo searches on it were cut short and ranked unlike their oracle).
 */
export function withOrders(engine: Engine, least: number, length: number, typoLeast = least): Engine {
  const orders = new PageOrders(pageOrdersOf(engine, least, length, typoLeast));
  return unhurried(new Engine(engine.snapshot, engine.text, engine.titleIndex, orders));
}

/**
 * Runs `work` counting the postings of every block any cursor decodes meanwhile (a block decoded again after another
 * counts again), at BlockCursor.decode itself: what a search decodes, whatever its meter says.
 */
export function decodedDuring<T>(work: () => T): { result: T; decoded: number } {
  const decode = BlockCursor.prototype.decode;
  let decoded = 0;
  BlockCursor.prototype.decode = function (this: BlockCursor, b: number) {
    const before = this.decodedPostings;
    const n = decode.call(this, b);
    decoded += this.decodedPostings - before;
    return n;
  };
  try {
    return { result: work(), decoded };
  } finally {
    BlockCursor.prototype.decode = decode;
  }
}

/** What a call says: "answered", or the error it throws, as "Name: message". */
export function refused(call: () => unknown): string {
  try {
    call();
    return "answered";
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

/**
 * A writer killed (kill -9) between writing `<dir>/.<name>.<pid>.tmp` and renaming it (`script`: a bun program whose
 * rename never comes), and beside its leftover the same file of a live process (its write under way): `live`'s name
 * and `writing`, to end once the test is done.
 */
export async function killedMidWrite(dir: string, name: string, script: string) {
  const killed = Bun.spawn([process.execPath, "-e", script], { stderr: "inherit" });
  const leftover = `.${name}.${killed.pid}.tmp`;
  while (!readdirSync(dir).includes(leftover)) await Bun.sleep(10);
  killed.kill("SIGKILL");
  await killed.exited;
  const writing = Bun.spawn(["sleep", "60"]);
  const live = `.${name}.${writing.pid}.tmp`;
  writeFileSync(join(dir, live), "{}");
  return { live, writing };
}

/** The account store's sign-in counts refused ("connection refused", as from Redis down) while `up()` says so. */
export function accountsUpWhile(store: AccountStore, up: () => boolean): AccountStore {
  const down = () => Promise.reject(new Error("connect ECONNREFUSED"));
  return {
    ...store,
    failures: (name, fail, now) => (up() ? store.failures(name, fail, now) : down()),
    remember: (name, now) => (up() ? store.remember(name, now) : down()),
    known: (name, now) => (up() ? store.known(name, now) : down()),
  };
}

/**
 * KB of `path` resident in this process's mappings (/proc/self/smaps); with `offset`, only in the mappings that begin
 * at the page holding it (one section's: each is mapped on its own).
 */
export function residentKb(path: string, offset?: number): number {
  const page = offset === undefined ? undefined : (offset - (offset % 4096)).toString(16).padStart(8, "0");
  let kb = 0;
  let counted = false;
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ ([0-9a-f]+) /.exec(line);
    if (head) counted = line.endsWith(path) && (page === undefined || head[1] === page);
    else if (counted && line.startsWith("Rss:")) kb += Number(/(\d+) kB/.exec(line)![1]);
  }
  return kb;
}
