/**
 * What `start` does once its arguments are read (src/cli/start.ts loads this then: its --help and a wrong argument load
 * no engine and no server): the settings checked, the data folder locked, a snapshot found or built, and the API served
 * from it until SIGTERM or SIGINT.
 */
import { existsSync, mkdirSync, renameSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import {
  Access,
  checkRedisUrl,
  createKey,
  DataFolderTaken,
  dataFolderHeld,
  hashToken,
  PLAN_NAMES,
  PLANS,
  RedisAccess,
  updateKeyFile,
  UsageNotSaved,
} from "../access";
import { type App, createApp, DOCS_PATH, serve, stdoutLog } from "../http";
import { DEFAULT_CHUNK_WORDS, DumpError } from "../ingest";
import { type Engine, openUnguarded } from "../search";
import { openContainer } from "../snapshot";
import { buildSnapshot, OutputTaken } from "./snapshot-build";
import { download, fileNameOf } from "./download";
import { clearLeftoversAsync, lockHeld, STOPPED_EXIT_CODE } from "../files";
import { downloadProgress } from "./progress";
// A file import: the executable (bun run compile) carries the sample.
import SAMPLE_DUMP from "../../test/fixtures/data/dumps/enwiki-2016-sample.xml.bz2" with { type: "file" };
import { newestIn, pinned, SnapshotSwapper } from "./swap";
import { type Address, describeListening, ensurePortFree, listenFailure, PortInUse, readAddress } from "./listen";
import { type CommandIo, note } from "./main";
import { ConfigError, NEW_KEY_COMMAND, SNAPSHOT_DIR, type Config } from "./config";
import { isSample, SAMPLE_NAME, snapshotsToServe } from "./snapshots";
import { commandLine } from "../invocation";
import { printableName, shellWord } from "../printable";
import { DEFAULT_KEY_MS_PER_SECOND } from "../request-time";

/** Where a line for the person at the terminal goes: start's io's stderr (note). */
type Say = (line: string) => void;

/** What TOME_DUMP may name instead of a path or URL. */
const NAMED_DUMPS: Record<string, string> = {
  simple: "https://dumps.wikimedia.org/simplewiki/latest/simplewiki-latest-pages-articles.xml.bz2",
  en: "https://dumps.wikimedia.org/enwiki/latest/enwiki-latest-pages-articles.xml.bz2",
};
/** The sample's path as the user would type it: relative from the repository, as npm start runs. */
const SAMPLE_SHOWN = SAMPLE_DUMP.startsWith("/$bunfs/")
  ? "test/fixtures/data/dumps/enwiki-2016-sample.xml.bz2, inside this executable"
  : relative(process.cwd(), SAMPLE_DUMP).startsWith("..")
    ? SAMPLE_DUMP
    : relative(process.cwd(), SAMPLE_DUMP);
/** Where a dump given by URL is downloaded to, and kept (a build that fails need not download it again). */
const DOWNLOAD_DIR = "dumps";
/** A second SIGINT or SIGTERM this soon after the first is the same Ctrl-C, passed on by npm or bun run. */
const SIGNAL_ECHO_MS = 1000;
/** Whether start keeps keys and usage in the data folder (and locks it): with keys on, and not in Redis. */
const keysInDataFolder = (config: Config): boolean => config.auth && !config.redisUrl;

/** Keys and usage (in files, or in Redis with TOME_REDIS_URL), or none when TOME_AUTH=off. */
function openAccess(config: Config, io: CommandIo): Access | RedisAccess | undefined {
  if (!config.auth) {
    io.error(
      "WARNING: TOME_AUTH=off: every route answers without a key, with no rate limit or quota. For benchmarks and local use only.",
    );
    return undefined;
  }
  if (config.redisUrl) {
    const wrong = checkRedisUrl(config.redisUrl);
    if (wrong) throw new ConfigError(wrong);
    return new RedisAccess({
      url: config.redisUrl,
      log: (line) => io.error(line),
      keyMsPerSecond: config.keyMsPerSecond ?? DEFAULT_KEY_MS_PER_SECOND,
    });
  }
  // keysInDataFolder: the folder start locks.
  return new Access({ dataDir: config.dataDir, keyMsPerSecond: config.keyMsPerSecond, log: (line) => io.error(line) });
}

/**
 * The settings each replica applies on its own, as said when replicas differ (D39): the work share, the dashboard's
 * operator token (by the start of its sha256), the proxies trusted, the public URL, and the plans (a Tome of another version).
 */
function replicaSettings(config: Config): Record<string, string> {
  return {
    TOME_KEY_MS_PER_SECOND: String(config.keyMsPerSecond ?? DEFAULT_KEY_MS_PER_SECOND),
    TOME_ADMIN_TOKEN: config.adminToken
      ? `a token whose sha256 begins ${hashToken(config.adminToken).slice(0, 8)}`
      : "unset",
    TOME_TRUSTED_PROXIES: [...config.trustedProxies].sort().join(",") || "none",
    TOME_PUBLIC_URL: config.publicUrl ?? "unset",
    plans: PLAN_NAMES.map((name) => `${name} ${PLANS[name].rate}/s ${PLANS[name].quota}`).join(", "),
  };
}

/**
 * Writes this replica's settings to Redis and says how they differ from the replica's started before it (D39); with
 * Redis unreachable, once it answers again (a replica started while it was down compared nothing, ever).
 */
async function compareSettings(access: RedisAccess, config: Config, say: Say): Promise<void> {
  let shared: Awaited<ReturnType<RedisAccess["shareSettings"]>>;
  try {
    shared = await access.shareSettings(replicaSettings(config));
  } catch {
    if (access.redis.outage) access.onceAnswering(() => void compareSettings(access, config, say));
    return;
  }
  if (shared?.differ.length)
    say(
      `WARNING: this replica's settings differ from those of the replica started before it on Redis at ${access.redis.address}${shared.at ? ` (at ${shared.at})` : ""}: ${shared.differ.map((d) => `${d.name} is ${d.here} here, ${d.there} there`).join("; ")}. Each replica applies its own (a key's work share is its replica's; an operator signed in on one is signed out by a replica with another TOME_ADMIN_TOKEN): give every replica the same settings (docs/redis.md).`,
    );
}

/** Once the server is up: whether Redis holds a key, else how to make one (a replica never makes one: several start at once). */
async function announceRedisKeys(access: RedisAccess, config: Config, say: Say): Promise<void> {
  await compareSettings(access, config, say);
  const count = await access.keyCount();
  const where = `Redis at ${access.redis.address}`;
  if (count === undefined) say(`${where} cannot be reached yet: requests that need a key get 503 until it answers.`);
  else if (count === 0) {
    say(
      `${where} holds no API key yet. Make one with: TOME_REDIS_URL=… ${NEW_KEY_COMMAND}, or move a file store in with: TOME_DATA=DIR TOME_REDIS_URL=… ${commandLine("keys")} import`,
    );
  } else
    say(
      `API keys, rate limits and quotas are in ${where} (${count} key(s)); manage them with TOME_REDIS_URL=… ${commandLine("keys")}.`,
    );
  await warnWithoutAof(access, say);
}

/** Says when Redis runs without its append-only file (D41); with Redis unreachable, once it answers again. */
async function warnWithoutAof(access: RedisAccess, say: Say): Promise<void> {
  const appendOnly = await access.appendOnly();
  if (appendOnly === undefined && access.redis.outage) access.onceAnswering(() => void warnWithoutAof(access, say));
  if (appendOnly === false)
    say(
      `Redis at ${access.redis.address} runs without its append-only file: a restart of Redis loses every key change and credit since its last snapshot, revocations included. Run it with appendonly yes and appendfsync everysec (docs/redis.md).`,
    );
}

/**
 * Once the server is up (so that a start that fails never shows a key nobody keeps): the first
 * key when the store is new, else how to make one.
 */
function announceKeys(access: Access, config: Config, say: Say): void {
  const dataDir = config.dataDir;
  const command = config.dataDirGiven ? `TOME_DATA=${shellWord(dataDir)} ${NEW_KEY_COMMAND}` : NEW_KEY_COMMAND;
  if (!access.firstStart) {
    say(`API keys are in ${printableName(dataDir)}/. Without one at hand, make one with: ${command}`);
    return;
  }
  const { key, record } = updateKeyFile(dataDir, (file) =>
    createKey(file, { name: "default", account: "default", plan: "enterprise", scope: "full", now: Date.now() }),
  );
  // Served from now: read at the first request instead, a keys.json damaged before it left the server with no key at
  // all ("the last good keys" were none), the one it had just printed refused with 403 (D190).
  access.readKeys();
  say(
    `No API key existed in ${printableName(dataDir)}/, so one was created (${record.id}, account default, enterprise plan):\n\n` +
      `    ${key}\n\nIt is shown only this once: keep it. Send it as X-API-Key (or Authorization: Bearer). ` +
      `Lost it? Make another with: ${command}. Manage keys with "${commandLine("keys")}" (see --help).`,
  );
}

/**
 * Opens the snapshot to serve first and makes the app over it; its sections are then hashed in
 * the background by the swap (hashing them before serving would take minutes at full size), and a damaged
 * snapshot gives way to the next one, or stops the server when there is none (D85).
 */
function serveFirst(path: string, makeApp: (tome: Engine) => App, say: Say): App {
  const started = performance.now();
  const tome = openUnguarded(path);
  // All of it mapped from this file now: a newer snapshot renamed over the same name later is swapped in, never read through this one.
  tome.snapshot.container.mapAll();
  const m = tome.snapshot.meta;
  say(
    `Loaded ${printableName(path)}: ${m.wiki.host}, ${m.indexedPages} pages, ${m.indexedChunks} chunks${m.truncated ? " (truncated)" : ""}, in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
  );
  return makeApp(tome);
}

/**
 * A busy port, refused before the data folder is touched (a fresh one was left with keys.gen and a server.lock). When a
 * live server holds the folder too (most often the same Tome, started twice), its lock is said first: on another port,
 * this one would still be refused.
 */
function ensurePortFreeFor(address: Address, config: Config): void {
  try {
    ensurePortFree(address);
  } catch (err) {
    const taken = err instanceof PortInUse && keysInDataFolder(config) ? dataFolderHeld(config.dataDir) : undefined;
    throw taken ? new DataFolderTaken(`${taken.message} And ${(err as Error).message}`) : err;
  }
}

/** What start serves: a snapshot there is, or one it builds first from the sample, or from TOME_DUMP's dump (a path or a URL). */
type SnapshotPlan =
  | { serve: string }
  | { sample: true }
  | { dump: string; url: string | undefined; found: string | undefined };

/**
 * A TOME_SNAPSHOT or TOME_DUMP that names nothing, said before the data folder is touched: TOME_SNAPSHOT's header (the
 * sections are mapped when it is served), or a dump file not there when no snapshot in snapshots/ would be served
 * instead (only then is the folder listed, its notes said with the error: why TOME_DUMP was read).
 */
function checkSnapshotSettings(config: Config, say: Say): void {
  if (config.snapshot) {
    openContainer(config.snapshot);
    return;
  }
  const dump = config.dump && (NAMED_DUMPS[config.dump] ?? config.dump);
  if (!dump || /^https?:\/\//i.test(dump) || existsSync(dump)) return;
  const found: string[] = [];
  try {
    planSnapshot(config, (line) => found.push(line));
  } catch (err) {
    for (const line of found) say(line);
    throw err;
  }
}

/**
 * The snapshot to serve, or what to build it from when there is none (or only the sample, and TOME_DUMP is set): read,
 * not written. What it finds in snapshots/ (a file skipped, a snapshot served over TOME_DUMP) goes to `say`. Made once
 * the data folder is locked (and Redis connected), snapshots/ as it is by then.
 */
function planSnapshot(config: Config, say: (line: string) => void): SnapshotPlan {
  const explicit = config.snapshot;
  if (explicit) return { serve: explicit };
  const { usable, skipped } = snapshotsToServe(SNAPSHOT_DIR);
  for (const file of skipped) say(`start: skipped ${printableName(file.path)}: ${file.reason}`);
  const found = usable[0]?.path;
  if (found && !(config.dump && isSample(found))) {
    if (config.dump)
      say(
        `TOME_DUMP is set, but ${printableName(found)} exists: serving it. Move it out of ${SNAPSHOT_DIR}/ to build from TOME_DUMP.`,
      );
    return { serve: found };
  }
  if (skipped.length) say(`start: no usable snapshot in ${SNAPSHOT_DIR}/ (${skipped.length} file(s) skipped, above).`);
  if (!config.dump) return { sample: true };
  const dump = NAMED_DUMPS[config.dump] ?? config.dump;
  const url = /^https?:\/\//i.test(dump) ? dump : undefined;
  if (!url && !existsSync(dump)) {
    throw new DumpError(
      `TOME_DUMP is ${printableName(dump)}, which does not exist. Set TOME_DUMP to simple or en (the latest Simple English or English Wikipedia), a dump file (plain, .bz2, .gz or .xz) or an http(s) URL, or TOME_SNAPSHOT to a snapshot to serve.`,
      { missing: dump },
    );
  }
  return { dump, url, found };
}

/**
 * The snapshot to serve (ensureSnapshot), waiting while another server's start, or a build, writes the one it would
 * build into snapshots/: then planned again, and what was written served (D190). A second server started beside the
 * first on an empty snapshots/ exited, told to use --out, a setting start has not.
 */
async function snapshotToServe(config: Config, say: Say): Promise<string> {
  for (;;) {
    try {
      return await ensureSnapshot(planSnapshot(config, say), say);
    } catch (err) {
      if (!(err instanceof OutputTaken)) throw err;
      say(
        `start: another build ${err.holder} is writing that snapshot: waiting for it to end, then serving what it wrote (or building it, if it wrote nothing).`,
      );
      // Free once its holder ends, or is gone (killed: D175's rules, the ones a taker breaks it by).
      while (lockHeld(err.lock)) await Bun.sleep(500);
    }
  }
}

/** The snapshot to serve, built first (downloading its dump first) when the plan says so. */
async function ensureSnapshot(plan: SnapshotPlan, say: Say): Promise<string> {
  if ("serve" in plan) return plan.serve;
  if ("sample" in plan) {
    say(
      `No snapshot in ${SNAPSHOT_DIR}/ and no TOME_DUMP: building the sample that ships with Tome, from ${SAMPLE_SHOWN}, into ${SNAPSHOT_DIR}/${SAMPLE_NAME}.`,
    );
    return buildSnapshot(
      {
        dumps: [SAMPLE_DUMP],
        out: join(SNAPSHOT_DIR, SAMPLE_NAME),
        chunkWords: DEFAULT_CHUNK_WORDS,
        allowTruncated: false,
      },
      say,
    );
  }
  const { url, found } = plan;
  // The README's and the sample's own way to a whole wiki (TOME_DUMP=simple npm start) finds the sample there.
  const why = found
    ? `Only the sample (${printableName(found)}) is in ${SNAPSHOT_DIR}/`
    : `No snapshot in ${SNAPSHOT_DIR}/`;
  const dump = url ? await downloadDump(url, why, say) : plan.dump;
  say(`${why}: building one from ${printableName(dump)} (set TOME_DUMP to use another dump).`);
  // On stderr, where the server says what it does (stdout is its request log), uncoloured.
  try {
    return await buildSnapshot({ dumps: [dump], chunkWords: DEFAULT_CHUNK_WORDS, allowTruncated: false }, say);
  } catch (err) {
    // A download the server cut short, or damaged, would be taken as whole by every later start: it is put aside.
    if (!url || !(err instanceof DumpError) || !err.damaged) throw err;
    renameSync(dump, `${dump}.damaged`);
    throw new DumpError(
      `${err.message} It was downloaded from ${printableName(url)}: moved to ${printableName(dump)}.damaged (delete it to free the space); the next start downloads it again.`,
      { damaged: true },
    );
  }
}

/** Downloads a dump into DOWNLOAD_DIR (resuming a part left there), and returns its path; `why`: what snapshots/ holds. */
async function downloadDump(url: string, why: string, say: Say): Promise<string> {
  const name = fileNameOf(url);
  const dest = join(DOWNLOAD_DIR, name);
  const shown = printableName(url);
  if (existsSync(dest)) {
    say(`Using ${dest}, downloaded earlier from ${shown} (delete it to download again).`);
    return dest;
  }
  mkdirSync(DOWNLOAD_DIR, { recursive: true });
  say(`${why}: downloading ${shown} into ${dest} (stopped, it resumes where it was when run again).`);
  const bar = downloadProgress(name);
  // Stopped (Ctrl-C, SIGTERM): the bar gives the terminal back its cursor, and the log says what is kept, not nothing.
  const stop = () => {
    bar.stop();
    const kept = existsSync(`${dest}.part`) ? statSync(`${dest}.part`).size : 0;
    say(
      `Download stopped: ${kept.toLocaleString("en-US")} bytes of it kept in ${dest}.part; the next start resumes from there.`,
    );
    process.exit(STOPPED_EXIT_CODE);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    await download(url, dest, {
      onProgress: (received, total) => bar.update(received, total),
      log: say,
    });
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    bar.stop();
  }
  say(
    `Downloaded ${dest}; it is kept, to build again without downloading: delete it once the snapshot is built to free the space.`,
  );
  return dest;
}

/** After the sample serves: what it is, and how to serve a whole wiki. */
function sampleBanner(path: string, pages: number): string {
  const start = commandLine("start");
  const line = (dump: string, what?: string) =>
    `    ${what ? `${`TOME_DUMP=${dump} ${start}`.padEnd(start.length + 22)}${what}` : `TOME_DUMP=${dump} ${start}`}\n`;
  return (
    `\nThis is a SAMPLE: ${pages} articles of English Wikipedia (2016), shipped with Tome to show it working, kept in ${printableName(path)}.\n` +
    `To serve a whole wiki, stop it and start it again with one of:\n` +
    line("simple", "# Simple English Wikipedia: a few hundred MB to download") +
    line("en", "# English Wikipedia: over 20 GB to download, then a build of hours") +
    line("PATH_OR_URL") +
    `A download shows its progress and resumes where it stopped when run again; the snapshot built goes to ${SNAPSHOT_DIR}/ and is served from then on.\n` +
    `Or build one into ${SNAPSHOT_DIR}/ while this serves (${commandLine("snapshot:build")} --dump PATH_OR_URL): the server moves to it once it is written.\n`
  );
}

/** Serves as `config` says, from the snapshot it names or the best of snapshots/ (one is built when there is none). */
export async function serveFromConfig(config: Config, io: CommandIo): Promise<void> {
  const say: Say = (line) => note(line, io);
  // HOST, PORT, TOME_SNAPSHOT and TOME_DUMP checked (the rest by readConfig) before the data folder is locked or
  // written: a wrong one was said after a fresh folder got keys.gen and a server.lock, or after "another Tome server
  // uses the data folder" when one ran there.
  const address = await readAddress(config);
  // Its notes are said by the plan made after the lock ("serving it" was said, then "another Tome server uses the data folder").
  checkSnapshotSettings(config, say);
  // Checked before the data folder is locked or written, and a snapshot built or loaded (minutes), and again just before serving.
  ensurePortFreeFor(address, config);
  const access = openAccess(config, io);
  if (access instanceof Access) access.claim();
  // Connecting early; an unreachable Redis is not fatal (503 until it answers).
  if (access instanceof RedisAccess) await access.start();
  const { adminToken, publicUrl, trustedProxies, snapshotWatch: watch } = config;
  // A build or update of snapshots/ killed outright (kill -9, the OOM killer) left its scratch there, gigabytes at English
  // Wikipedia's size, and its lock: gone now, not at the next build into snapshots/ (D196). A running one's stay.
  // Not on the thread: a lock of another container not renewed lately is looked at again 5 s on, while this server's
  // lock, taken above, is renewed and Redis is answered (D175).
  await clearLeftoversAsync(SNAPSHOT_DIR, (line) => say(`start: ${line}.`));
  // Planned now, snapshots/ listed now: one that snapshot:build wrote while Redis was connecting is served, not built over.
  const path = await snapshotToServe(config, say);
  const requests = stdoutLog();
  let running: ReturnType<typeof serve>;
  // A snapshot swapped out is let go after its last request; collected soon after, so that its memory goes back at once.
  const onFreed = (freed: { path: string }) =>
    setTimeout(() => {
      const started = performance.now();
      Bun.gc(true);
      io.error(
        `swap: ${printableName(freed.path)} is let go: its requests in flight are answered (collected in ${(performance.now() - started).toFixed(0)} ms).`,
      );
    }, 0);
  // Opened in a function of its own: no closure of this one may hold the first snapshot once it is swapped out.
  const app = serveFirst(
    path,
    (tome) =>
      createApp(tome, {
        access,
        log: requests.sink,
        adminToken,
        onFreed,
        accounts: access?.accounts(),
        publicUrl,
        trustedProxies,
        searchTimeoutMs: config.searchTimeoutMs,
        searchWorkers: config.searchWorkers,
        searchWorkerNice: config.searchWorkerNice,
      }),
    say,
  );
  // Every search worker has the snapshot open first: until then a worker reads its file, which nothing would wait for (D103).
  await app.ready();
  ensurePortFree(address);
  try {
    running = serve(app, address);
  } catch (err) {
    throw listenFailure(err, address);
  }
  if (access instanceof Access) access.start();
  if (access instanceof Access) announceKeys(access, config, say);
  else if (access) await announceRedisKeys(access, config, say);
  const source = config.snapshot ? pinned(path) : newestIn(SNAPSHOT_DIR);
  const swapper = new SnapshotSwapper(app, source, (line) => io.error(line));
  void swapper.verifyFirst().then((served) => served || process.exit(1));
  let stopping = 0;
  const stop = async (signal: string) => {
    // `npm start` and `bun run start` pass a terminal's Ctrl-C on to the server, which its process group got
    // too: the same key press twice, within a second. A later one stops at once.
    if (stopping) {
      if (performance.now() - stopping < SIGNAL_ECHO_MS) return;
      io.error(
        `${signal} again: stopping at once; the requests in flight are not answered, the last counts not saved.`,
      );
      process.exit(130);
    }
    stopping = performance.now();
    say(`${signal}: no new connections; finishing the requests in flight.`);
    swapper.stop();
    const before = running.answered();
    await running.stop();
    await requests.flush();
    let saved = true;
    try {
      await access?.stop();
    } catch (err) {
      if (!(err instanceof UsageNotSaved)) throw err;
      io.error(`start: ${err.message}`);
      saved = false;
    }
    say(`Stopped: ${running.answered() - before} request(s) answered after ${signal}.`);
    process.exit(saved ? 0 : 1);
  };
  // The signals are handled before the server says it serves: one sent as soon as it does is a graceful stop.
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGHUP", () => void swapper.check("SIGHUP"));
  // Watching before the server says it serves: a snapshot renamed in as soon as it does is seen.
  const watching = watch && swapper.watch();
  const { url, where } = describeListening(address.hostname, running.server.port ?? address.port);
  // The line that says it serves comes last: whoever waits for it has read the others.
  if (isSample(path)) say(sampleBanner(path, app.served().engine.snapshot.meta.indexedPages));
  const what = config.snapshot ? `${printableName(path)} replaced` : `a newer snapshot in ${SNAPSHOT_DIR}/`;
  // One stream for the three: lines written through two could reach the reader out of order.
  say(watching ? `Watching for ${what} (SIGHUP also checks).` : `Send SIGHUP to load ${what}.`);
  say(`Tome is serving on ${url} (API docs: ${url}${DOCS_PATH}), ${where}. Stop it with Ctrl-C or SIGTERM.`);
}
