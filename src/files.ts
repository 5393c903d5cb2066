/** Files that must never be left half-written, and the scratch folders a build must not leave behind. */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
  type Stats,
} from "node:fs";
import { mkdir, readlink, realpath, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { printableName } from "./printable";

/** The bytes every snapshot begins with, in every format (its number follows): here, below snapshot/, since the dump reader (ingest) tells a snapshot given as a dump by them too. */
export const SNAPSHOT_MAGIC = "TOMESNAP";

/** A snapshot file's extension: here with its magic, so that the commands check an --out name without loading snapshot/. */
export const SNAPSHOT_EXTENSION = ".tome";

/** A file name a folder's snapshots are looked for by (D55): *.tome, not hidden (a hidden one is being written). */
export const isSnapshotName = (name: string): boolean => name.endsWith(SNAPSHOT_EXTENSION) && !name.startsWith(".");

/** Whether `head`, a file's first bytes, begins as a snapshot does. */
export function beginsAsSnapshot(head: Uint8Array): boolean {
  return new TextDecoder().decode(head.subarray(0, SNAPSHOT_MAGIC.length)) === SNAPSHOT_MAGIC;
}

export interface AtomicWriteOptions {
  /** Permission bits of the file (default 0o644). */
  mode?: number;
  /**
   * Flush to disk before and after the rename (default true). Without it the write still
   * survives a killed process (the kernel has it), though not a power cut.
   */
  durable?: boolean;
}

/** Symbolic links followed to find where a write lands, as the kernel follows them (its MAXSYMLINKS). */
const MAX_LINKS = 40;

const tooManyLinks = (path: string) =>
  Object.assign(new Error(`ELOOP: too many symbolic links encountered, '${path}'`), { code: "ELOOP" });

/** Where a write to a path lands (writtenPath). */
interface Landing {
  /** The file written: the path itself, or the file a symbolic link there leads to. */
  target: string;
  /** Whether a link was followed to reach it. */
  linked: boolean;
  /** Whether target is there now. */
  found: boolean;
}

/** A file system call the walk to a write's landing needs (landing), made by the caller's way: here, or off the thread. */
type Look = { call: "readlink" | "realpath"; path: string };
/** What it found: the link's text or the real path, or why there is none (EINVAL: no link; ENOENT: nothing there). */
type Found = string | { code: "EINVAL" | "ENOENT" };

/**
 * Where a write to `path` lands: the file a symbolic link there leads to (through links to links), else `path`. A
 * rename onto the link itself replaced it with a plain file, and the operator's link (to a disk that is backed up, a
 * volume) was lost at the first save of keys.json or usage.json. A link's target is what the kernel makes of it:
 * realpath when it is there; for a link to nothing, each relative link taken from the real path of its own folder
 * (a `..` in it climbs out of the folder as it is on disk, not out of the path as written: TOME_DATA=/srv/tome, a link
 * to /mnt/disk/tome, and keys.json -> ../secrets/keys.json is /mnt/disk/secrets/keys.json, not /srv/secrets/…).
 */
function* landing(path: string): Generator<Look, Landing, Found> {
  const first = yield { call: "readlink", path };
  if (typeof first !== "string") return { target: path, linked: false, found: first.code === "EINVAL" };
  const real = yield { call: "realpath", path };
  if (typeof real === "string") return { target: real, linked: true, found: true };
  // A link to nothing (or to a link to nothing): walked by hand.
  let at = path;
  let link: Found = first;
  for (let hops = 1; hops <= MAX_LINKS; hops++) {
    const folder = yield { call: "realpath", path: dirname(at) };
    // Its folder was there a moment ago (the link was read in it): gone meanwhile, the link leads nowhere.
    if (typeof folder !== "string") return { target: resolve(dirname(at), link), linked: true, found: false };
    at = resolve(folder, link);
    link = yield { call: "readlink", path: at };
    if (typeof link !== "string") return { target: at, linked: true, found: link.code === "EINVAL" };
  }
  throw tooManyLinks(path);
}

/** A refusal that only says there is nothing to find (see Found); any other is thrown. */
function absent(err: unknown): Found {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EINVAL" || code === "ENOENT") return { code };
  throw err;
}

/** landing(path), its calls made here. */
function writtenPath(path: string): Landing {
  const walk = landing(path);
  let step = walk.next();
  while (!step.done) {
    const { call, path: at } = step.value;
    let found: Found;
    try {
      found = call === "readlink" ? readlinkSync(at) : realpathSync.native(at);
    } catch (err) {
      found = absent(err);
    }
    step = walk.next(found);
  }
  return step.value;
}

/** landing(path), its calls made off the calling thread. */
async function writtenPathAsync(path: string): Promise<Landing> {
  const walk = landing(path);
  let step = walk.next();
  while (!step.done) {
    const { call, path: at } = step.value;
    step = walk.next(await (call === "readlink" ? readlink(at) : realpath(at)).catch(absent));
  }
  return step.value;
}

/**
 * The file a symbolic link at `path` leads to when its folder is not there (a volume not mounted?); else undefined. A
 * link to a file not made yet in a folder that is there (a volume mounted, empty) is not one: a write makes the file
 * there, as atomicWrite does (it refuses only a missing folder, linkLeadsNowhere), and reading it finds no file yet.
 */
export function linkToNothing(path: string): string | undefined {
  try {
    const { target, linked, found } = writtenPath(path);
    return linked && !found && !existsSync(dirname(target)) ? target : undefined;
  } catch {
    return undefined;
  }
}

/** A link at `path` that leads to `target`, not there, said one way (the start's refusal, a write's). */
export const leadsNowhere = (path: string, target: string): string =>
  `${printableName(path)} is a link to ${printableName(target)}, which is not there (a volume not mounted?)`;

/**
 * A write through a link at `path` to `target`, whose folder is not there: refused, not made (a usage.json linked to a
 * volume not mounted had its folders made on the root disk, and the counts written there).
 */
const linkLeadsNowhere = (path: string, target: string) =>
  Object.assign(
    new Error(
      `${leadsNowhere(path, target)}: its folder ${printableName(dirname(target))} is missing, and no folder is made through a link.`,
    ),
    // The temporary file's open is the call refused: said as a system call's refusal, on one line (D184).
    { code: "ENOENT", syscall: "open", path },
  );

/**
 * Writes to a temporary file beside the target, then renames it into place: a crash at any
 * moment leaves either the old file or the new one, never a broken one. A symbolic link at `path` is written through
 * (writtenPath): the file it leads to is replaced, the link kept.
 */
export function atomicWrite(path: string, bytes: Uint8Array | string, options: AtomicWriteOptions = {}): void {
  const { mode = 0o644, durable = true } = options;
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  let target: string;
  let linked: boolean;
  try {
    ({ target, linked } = writtenPath(path));
  } catch (err) {
    throw writeFailed(path, err);
  }
  const dir = dirname(target);
  const tmp = join(dir, `.${basename(target)}.${process.pid}.tmp`);
  try {
    let fd: number;
    try {
      fd = openSync(tmp, "w", mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      if (linked) throw linkLeadsNowhere(path, target);
      mkdirSync(dir, { recursive: true });
      fd = openSync(tmp, "w", mode);
    }
    try {
      writeFully(fd, data, path);
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (err) {
    // The write's own error is the one to tell (a read-only folder also refuses the removal).
    try {
      rmSync(tmp, { force: true });
    } catch {}
    throw writeFailed(path, err);
  }
  if (!durable) return;
  try {
    const dfd = openSync(dir, "r");
    fsyncSync(dfd);
    closeSync(dfd);
  } catch {
    // Some filesystems cannot fsync a directory; the rename itself is still atomic.
  }
}

/**
 * atomicWrite without fsync, its file system calls made off the calling thread (Bun's thread pool): the calling
 * thread only starts them and takes their ends. The same guarantee: a killed process leaves the old file or the new
 * one. Two at once to one path must not be: their temporary files would be one.
 */
export async function atomicWriteAsync(path: string, bytes: Uint8Array | string, mode = 0o644): Promise<void> {
  let target: string;
  let linked: boolean;
  try {
    ({ target, linked } = await writtenPathAsync(path));
  } catch (err) {
    throw writeFailed(path, err);
  }
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.tmp`);
  try {
    try {
      await writeFile(tmp, bytes, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      if (linked) throw linkLeadsNowhere(path, target);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(tmp, bytes, { mode });
    }
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

/** What a file that is no regular file is, as a refusal to read it says it: a directory, a pipe, a socket or a device. */
function kindOf(s: Stats): string {
  if (s.isDirectory()) return "a directory";
  if (s.isFIFO()) return "a pipe";
  return s.isSocket() ? "a socket" : "a device";
}

/**
 * Opens `path` to read without waiting (a pipe's open would wait for a writer): its fd, or what it is if that is a
 * socket, whose open fails with ENXIO before anything could look at it (as a refusal to read it says it, "a socket",
 * not the system's "no such device or address"). Any other refusal is thrown as the system's.
 */
function openToRead(path: string): number | { not: string } {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const found =
      (err as NodeJS.ErrnoException).code === "ENXIO" ? statSync(path, { throwIfNoEntry: false }) : undefined;
    if (found?.isSocket()) return { not: kindOf(found) };
    throw err;
  }
}

/** The most keys.json or usage.json is read up to (they are read whole into memory): over 3 million keys, or half a million keys' requests counted every day of two months (D190). */
export const DATA_FILE_LIMIT = 2 ** 30;

/**
 * The whole text of a file read into memory (keys.json, usage.json), or what it is instead of one such file: a
 * directory, a device, a pipe or a socket (read to its end, which /dev/zero never reaches; a pipe's open would wait for a
 * writer), or one over `limit` bytes (D190). A refusal to open it (ENOENT, EACCES, ELOOP) is thrown as the system's.
 */
export function readWholeText(path: string, limit: number): { text: string } | { not: string } | { size: string } {
  const fd = openToRead(path);
  if (typeof fd !== "number") return fd;
  try {
    const s = fstatSync(fd);
    if (!s.isFile()) return { not: kindOf(s) };
    if (s.size > limit)
      // In bytes: rounded to GiB, one a byte over said "1.0 GiB, more than the 1 GiB".
      return { size: `${s.size} bytes, more than the ${limit} (${limit / 2 ** 30} GiB) Tome reads` };
    return { text: readFileSync(fd, "utf8") };
  } finally {
    closeSync(fd);
  }
}

/**
 * A file or folder that cannot be read, said the one way a dump, a snapshot and any other read are: `shown` is its name
 * as printed ("the dump x.xml"). Refused to this user (EACCES, EPERM), it is told what to do; otherwise, the code.
 */
export function cannotRead(shown: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EACCES" || code === "EPERM")
    return `${shown} cannot be read by this user (${code}): make it readable to this user, or run as a user who may read it.`;
  return `${shown} cannot be read (${code ?? (err as Error).message}).`;
}

/**
 * A file system's refusal met writing `path` (ENOSPC, EROFS…), saying which file: the system's message for a write
 * to an open file names none, and the person must learn which folder to free. The message names it printable (a server's
 * log and the dashboard print it as it is); its `path`, as it is, and code are kept, for the CLI to say what to do
 * (src/cli/main.ts). Any other error is returned as it is.
 */
export function writeFailed(path: string, err: unknown): unknown {
  const e = err as NodeJS.ErrnoException;
  if (!(e instanceof Error) || typeof e.code !== "string" || e.message.includes(path)) return err;
  return Object.assign(new Error(`could not write ${printableName(path)}: ${e.message}`), {
    code: e.code,
    syscall: e.syscall,
    path,
  });
}

/** Writes all of `bytes` to the open file `path` at `position` (null: where it is), naming the file if that fails (writeFailed). */
export function writeFully(fd: number, bytes: Uint8Array, path: string, position: number | null = null): void {
  try {
    for (let off = 0; off < bytes.byteLength; ) {
      const n = writeSync(fd, bytes, off, bytes.byteLength - off, position === null ? null : position + off);
      if (n <= 0) throw new Error(`${printableName(path)}: could not write`);
      off += n;
    }
  } catch (err) {
    throw writeFailed(path, err);
  }
}

/**
 * The URL to start a worker from: its module beside the caller's, or, inside the executable
 * `bun run compile` writes (src/cli/compile.ts), the worker's entry point at its path under
 * src/: there every bundled module shares the executable's import.meta.url, so a URL relative
 * to it would name no file.
 */
export function workerUrl(beside: URL, underSrc: string): string {
  return beside.href.startsWith("file:///$bunfs/") ? `/$bunfs/root/${underSrc}` : beside.href;
}

/**
 * A build's scratch folders (sorted runs, page rows, index runs) are named
 * `.tome-<kind>-<pid>-<random>`, and the snapshot it writes `.<name>.tome.<pid>.tmp` until it
 * is whole: the process that made them, so that a later build can tell the leftovers of a
 * killed one (its process gone) from the work of one still running beside it.
 */
const LEFTOVER = [/^\.tome-(?:sorted|pages|runs|strings)-(\d+)-/, /^\..+\.tome\.(\d+)\.tmp$/];

/** This process's scratch folders and snapshot being written, not yet removed: removed together if it is stopped (removeAllScratch). */
const scratchDirs = new Set<string>();

/**
 * A snapshot being written (`.<name>.tome.<pid>.tmp`), removed with the scratch folders if the process is stopped at
 * once (a second signal: it was left behind); forgetScratch() once renamed into place or removed.
 */
export function trackScratchFile(path: string): void {
  scratchDirs.add(path);
}

export function forgetScratch(path: string): void {
  scratchDirs.delete(path);
}

/** Makes a scratch folder in `besides` (`kind`: sorted, pages, runs or strings); removeScratch() when done with it. */
export function makeScratch(besides: string, kind: "sorted" | "pages" | "runs" | "strings"): string {
  const dir = mkdtempSync(join(besides, `.tome-${kind}-${process.pid}-`));
  scratchDirs.add(dir);
  return dir;
}

/** Removes a scratch folder made by makeScratch (again and again: gone is fine). */
export function removeScratch(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  scratchDirs.delete(dir);
}

/** The exit code of a build or update stopped by SIGINT or SIGTERM, once it has removed its files (D116). */
export const STOPPED_EXIT_CODE = 130;

/** Removes every scratch folder of this process, and lets go of its lock files (takeLock): when it is stopped by a signal, before it exits. */
export function removeAllScratch(): void {
  for (const dir of [...scratchDirs]) removeScratch(dir);
  for (const release of [...heldLocks]) release();
}

/** The lock files this process holds (takeLock), each by the function that lets it go. */
const heldLocks = new Set<() => void>();

/** The lock files a build, an update (`.<name>.tome.lock`, claimOutput) or a follower (`.follow.lock`) holds in its folder. */
const FOLDER_LOCK = /^(?:\..+\.tome|\.follow)\.lock$/;

/**
 * Removes the scratch folders and half-written snapshots in `dir` left by builds whose process
 * is gone (killed, or the machine restarted): returns their names. Those of a process still
 * running are left, and so are folders named before they carried their process (whose they
 * are is unknown). So are those whose id a live lock in `dir` of another pid space names (a build in another container
 * writing into the same folder, D175): its id says nothing of any process here.
 * The locks of builds, updates and followers there whose holder is gone, by the rules a taker breaks them by (D175: its
 * process gone or its id reused here; not renewed for LOCK_STALE_MS, held from another pid space), go too
 * (breakStaleLock: never one a taker has taken meanwhile), named among the rest (D196). One that cannot be removed (the
 * folder mounted read-only for a server, another user's files) is passed to `failed` and left, where given; else thrown.
 */
export function clearStaleScratch(dir: string, failed?: (name: string, err: Error) => void): string[] {
  return waitedOnThread(scratchSteps(dir, failed));
}

/** clearStaleScratch's steps: the waits it takes (ms), then what it removed. */
function* scratchSteps(dir: string, failed?: (name: string, err: Error) => void): Generator<number, string[], void> {
  // Every lock in `dir`, judged as a taker judges it (lockJudged); one of another pid space found not renewed by this
  // clock (its holder gone, or the clock stepped) is looked at again once, after RENEWAL_LOOK_MS: only then is it stale.
  const judge = () =>
    namesIn(dir).flatMap((name) => (name.endsWith(".lock") ? [[name, lockJudged(join(dir, name))] as const] : []));
  let locks = judge();
  if (locks.some(([, found]) => typeof found === "object" && "unconfirmed" in found)) {
    yield RENEWAL_LOOK_MS + LOCK_RETRY_MS;
    locks = judge();
  }
  const elsewhere = new Set(
    locks.flatMap(([, found]) =>
      typeof found === "object" && "elsewhere" in found && found.elsewhere ? [found.pid] : [],
    ),
  );
  const removed = removeLeftovers(
    dir,
    (name) => {
      const pid = LEFTOVER.map((pattern) => pattern.exec(name)?.[1]).find((p) => p !== undefined);
      return pid !== undefined && elsewhere.has(Number(pid)) ? undefined : pid;
    },
    failed,
  );
  for (const [name, found] of locks) {
    if (!FOLDER_LOCK.test(name) || typeof found !== "object" || !("stale" in found)) continue;
    try {
      // breakStaleLock leaves a lock taken meanwhile (its text another's), and one another process is breaking.
      if (breakStaleLock(join(dir, name), found.stale) && !existsSync(join(dir, name))) removed.push(name);
    } catch (err) {
      if (!failed) throw err;
      failed(name, err as Error);
    }
  }
  return removed;
}

/**
 * Removes from `dir` what builds, updates and followers killed outright left there, their process gone
 * (clearStaleScratch: scratch folders, half-written snapshots, locks), and says which to `log`: at the start of a build
 * or update into `dir` (claimOutput), and of a server on snapshots/ (D196).
 */
export function clearLeftovers(dir: string, log: (line: string) => void): void {
  const kept: string[] = [];
  leftoversSaid(dir, log, clearStaleScratch(dir, keptIn(kept)), kept);
}

/**
 * clearLeftovers for a server starting: while a lock of another pid space waits for its second look (RENEWAL_LOOK_MS),
 * the thread is left to the server's timers (its own lock's renewal, Redis), which Bun.sleepSync stalled (D175).
 */
export async function clearLeftoversAsync(dir: string, log: (line: string) => void): Promise<void> {
  const kept: string[] = [];
  leftoversSaid(dir, log, await waitedAsync(scratchSteps(dir, keptIn(kept))), kept);
}

/** What clearStaleScratch could not remove, said into `kept`. */
const keptIn = (kept: string[]) => (name: string, err: Error) =>
  kept.push(`${printableName(name)} (${printableName(err.message)})`);

/** Says to `log` what clearing `dir` removed (`stale`) and what it could not (`kept`). */
function leftoversSaid(dir: string, log: (line: string) => void, stale: string[], kept: string[]): void {
  if (stale.length)
    log(
      `removed ${stale.length} temporary file(s) in ${printableName(dir)} left by a build or update that was killed (its process is gone): ${stale.map(printableName).join(", ")}`,
    );
  // A server's snapshots/ mounted read-only, say: it serves all the same, and says what is left for whom.
  if (kept.length)
    log(
      `could not remove ${kept.length} temporary file(s) in ${printableName(dir)} left by a build or update that was killed (its process is gone): ${kept.join(", ")}. Remove them where the folder is writable`,
    );
}

/** The names in `dir`, none if it cannot be read. */
function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The ids named by the live locks (`*.lock`) in `dir` held from another pid space. */
function liveHoldersElsewhere(dir: string): Set<number> {
  const pids = new Set<number>();
  for (const name of namesIn(dir)) {
    if (!name.endsWith(".lock")) continue;
    const holder = lockHeld(join(dir, name));
    if (holder?.elsewhere) pids.add(holder.pid);
  }
  return pids;
}

/**
 * Removes the temporary files atomicWrite left beside `path` (`.<name>.<pid>.tmp`) when its writer was killed between
 * writing one and renaming it into place, its process gone: returns their names. A live process's is a write under way,
 * left (and so is one whose id a live process has since been given: it goes once that one is gone). So is one whose id
 * a live lock in its folder of another pid space names (a writer in another container on a shared folder, D175): its
 * id says nothing of any process here.
 */
export function clearDeadWrites(path: string): string[] {
  // Beside the file a link at `path` leads to too: atomicWrite writes its temporary file there.
  let target = path;
  try {
    target = writtenPath(path).target;
  } catch {}
  return [...new Set([path, target])].flatMap((at) => {
    const prefix = `.${basename(at)}.`;
    // The folder's locks are read only once a part is found: most calls (each change of the key store) find none.
    let elsewhere: Set<number> | undefined;
    return removeLeftovers(dirname(at), (name) => {
      const pid = name.startsWith(prefix) ? /^(\d+)\.tmp$/.exec(name.slice(prefix.length))?.[1] : undefined;
      if (pid === undefined) return undefined;
      elsewhere ??= liveHoldersElsewhere(dirname(path));
      return elsewhere.has(Number(pid)) ? undefined : pid;
    });
  });
}

/** Removes the files and folders in `dir` whose name carries (pidOf) a process id that is not this process's and runs no more: their names. */
function removeLeftovers(
  dir: string,
  pidOf: (name: string) => string | undefined,
  failed?: (name: string, err: Error) => void,
): string[] {
  const stale = namesIn(dir).filter((name) => {
    const pid = pidOf(name);
    return pid !== undefined && Number(pid) !== process.pid && !processAlive(Number(pid));
  });
  // One that cannot be removed (a folder mounted read-only, another user's) is `failed`'s to say, if given; the rest go.
  return stale.filter((name) => {
    try {
      rmSync(join(dir, name), { recursive: true, force: true, maxRetries: 3 });
      return true;
    } catch (err) {
      if (!failed) throw err;
      failed(name, err as Error);
      return false;
    }
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A process's start time in clock ticks since boot (Linux), or "" where /proc cannot tell. */
function processStart(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command may hold spaces and parentheses: the fields are counted after its last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    return "";
  }
}

/**
 * Where this process's id means what it says: the machine's boot and the pid namespace ("" where /proc cannot tell).
 * Another container on the same volume (its own namespace, often pid 1 there too) or another machine on a shared
 * folder has another: there, its holder's id names some other process here, or none, and says nothing of it.
 */
const PID_SPACE = (() => {
  try {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return `${boot}/${readlinkSync("/proc/self/ns/pid").replace(/\D/g, "")}`;
  } catch {
    return "";
  }
})();

/**
 * A lock's holder renews its file's mtime this often; a lock of another pid space (PID_SPACE) is live while it was
 * renewed within LOCK_STALE_MS, and broken after, its holder gone (its thread would have to stand still 30 s: a
 * renewal missed then is the price of telling a crashed container's lock from a running one's).
 */
export const LOCK_RENEW_MS = 2_000;
export const LOCK_STALE_MS = 30_000;

/**
 * A live lock's holder as a message names it, after the words for it ("another Tome server"): its id, and, held from
 * another pid space, that it runs in another container or machine, its id there. Deleting such a lock would let a
 * second holder in beside a running one, so a message never advises it: it says the lock frees itself (LOCK_STALE_MS).
 */
export function lockHolderShown(pid: number, elsewhere: boolean): string {
  return elsewhere ? `in another container or machine (process ${pid} there)` : `(process ${pid})`;
}

/** How soon a lock held from another container or machine frees itself, for messages. */
export const LOCK_FREES_ITSELF = `its lock frees itself ${LOCK_STALE_MS / 1000} s after that process stops`;

/** What a lock file of this process holds: its id, start time and pid space (lockHolder reads them). */
export const lockText = (): string => `${process.pid} ${processStart(process.pid)}${PID_SPACE && ` ${PID_SPACE}`}`;

/** A lock's live holder: its process id, and whether that id is of another pid space (`elsewhere`, D175). */
interface LockHolder {
  pid: number;
  elsewhere: boolean;
  /** Of another pid space, not renewed lately by this clock, and not yet looked at again (lockJudged). */
  unconfirmed?: true;
}

/**
 * The process a lock file names, if it is still that process (its id may have been given to another since: the start
 * times differ). One of another pid space is judged by when its file was last renewed (`mtimeMs`, read only then),
 * never by its id.
 */
function lockHolder(text: string, mtimeMs: () => number): LockHolder | undefined {
  const [pidText = "", started = "", space = ""] = text.trim().split(" ");
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (space && space !== PID_SPACE)
    return Math.abs(Date.now() - mtimeMs()) < LOCK_STALE_MS ? { pid, elsewhere: true } : undefined;
  if (!processAlive(pid)) return undefined;
  return !started || processStart(pid) === started ? { pid, elsewhere: false } : undefined;
}

/**
 * Creates the lock file `path` (never one already there: EEXIST) holding `text`. A write that fails (a full disk
 * takes the file but not its text) removes it again: an empty lock left behind would hold off the next command.
 */
function createLockFile(path: string, text: string): void {
  const fd = openSync(path, "wx", 0o600);
  try {
    writeSync(fd, text);
  } catch (err) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw writeFailed(path, err);
  }
  closeSync(fd);
}

/**
 * Removes the lock file `path` if it still holds `stale`, the text of a holder found gone. Two processes that found one
 * lock stale must not both remove it: the later would remove the lock the earlier took meanwhile, and both would go on
 * as its holder (after a key command killed with its lock, two at once lost one's change). So it is removed only under
 * `path.break`, which one process at a time creates, the lock read again there. Returns false when another process is
 * at it (the caller tries its lock again soon). Left open: a `.break` whose own holder was killed in the microseconds it
 * exists is cleared by whoever finds it stale, and two finding it at once could both clear it; closing that needs a
 * kernel lock (flock), which Bun does not offer.
 */
function breakStaleLock(path: string, stale: string): boolean {
  const breaking = `${path}.break`;
  try {
    createLockFile(breaking, lockText());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    // One killed at it left it: its holder is gone (or it stayed empty EMPTY_LOCK_GRACE_MS, killed before its text was written).
    try {
      const text = lockFiles.read(breaking);
      const gone = text.trim()
        ? lockHolder(text, () => statSync(breaking).mtimeMs) === undefined
        : Date.now() - statSync(breaking).mtimeMs > EMPTY_LOCK_GRACE_MS;
      if (gone) rmSync(breaking, { force: true });
    } catch {}
    return false;
  }
  try {
    let text: string | undefined;
    try {
      text = lockFiles.read(path);
    } catch {}
    if (text === stale) rmSync(path, { force: true });
    return true;
  } finally {
    rmSync(breaking, { force: true });
  }
}

/**
 * How long an empty lock file is its maker's, from when it was made (its mtime). The maker writes its text right after
 * creating it (createLockFile), so an empty lock is being made, or was left by a process killed in between or a machine
 * stopped before the text reached the disk. A maker merely paused there (Ctrl-Z, a debugger, a machine too loaded to
 * run it) is alive and goes on as the holder: breaking its lock would make two holders, the lost change breakStaleLock
 * is there to prevent. So 10 s, the longer of the two rules this replaced (takeLock broke it after 200 ms, the key
 * store's lock after 10 s): the cost, one wait of up to 10 s after a kill in that instant, is rare; a lock left empty
 * longer ago (a reboot) is broken at once.
 */
export const EMPTY_LOCK_GRACE_MS = 10_000;

/** The most a lock file is read up to: its text is a process id, a start time and a pid space, under 200 bytes. */
const LOCK_TEXT_LIMIT = 4096;

/**
 * A lock file's text, read through the one open (as readWholeText: a file swapped in between a look and a read by name,
 * a link to /dev/zero, is never read to its end). One that is no file (a link to /dev/full or /dev/zero: read whole, it
 * never ended, and a start hung on its data folder's lock eating memory) or larger than any lock is an Error saying so
 * (D190); ENOENT and the other refusals are thrown as the system's.
 */
function readLockText(path: string): string {
  const fd = openToRead(path);
  if (typeof fd !== "number") throw notALock(path, fd.not);
  try {
    const s = fstatSync(fd);
    if (s.isFile() && s.size <= LOCK_TEXT_LIMIT) return readFileSync(fd, "utf8");
    throw notALock(path, s.isFile() ? "larger than any lock" : kindOf(s));
  } finally {
    closeSync(fd);
  }
}

/** A lock file that is `what` instead, as a system call's refusal (BSD's "inappropriate file type"; Linux has none): every command says it in one line (D184). */
function notALock(path: string, what: string): Error {
  return Object.assign(new Error(`${printableName(path)} is ${what}, not a lock file Tome writes: remove it`), {
    code: "EFTYPE",
    syscall: "open",
    path,
  });
}

/**
 * Every read of a lock file's text goes through `read` (readLockText): a test replaces it to play another process's
 * move between two of this one's reads (keys.test.ts, the stale-lock races).
 */
export const lockFiles = { read: readLockText };

/** How long a taker of a lock waits before looking at it again. */
const LOCK_RETRY_MS = 20;

export interface LockPolicy {
  /**
   * The error when a live holder still holds the lock once `patience` has passed: `pid` its id, in another container or
   * machine if `elsewhere` (lockHolderShown says so).
   */
  held: (pid: number, elsewhere: boolean) => Error;
  /** The lock file cannot be made or read (not because it exists). */
  unwritable: (err: Error) => Error;
  /** How long a live holder is waited for before held(): 0 (the default) refuses at once, as a second server or build is. */
  patience?: number;
  /**
   * A lock naming this process is waited for as any holder's, for locks that several calls of one process take in
   * turn (keys.json's, by the dashboard's changes); otherwise it is taken again, a release that does nothing.
   */
  waitForThisProcess?: boolean;
  /** Called once if the lock, while held, is found no longer this process's (broken and taken by another, or removed and not made again). */
  lost?: () => void;
  /** Called when the lock, while held, was found deleted and made again (D190). */
  remade?: () => void;
  /**
   * Called once when the lock, while held, was found deleted and cannot be made again for another reason than another
   * process's lock there (ENOSPC, EROFS, its folder gone): no process holds it. Tried again at each renewal; `remade` once made.
   */
  unmade?: (err: Error) => void;
}

/**
 * Takes the lock file `path` for this process (its id, start time and pid space in it: lockText), one look at a time: yields the milliseconds
 * its caller is to wait before the next look (sleeping its thread in takeLock, awaiting in takeLockAsync: every lock
 * follows these steps), and returns the function that lets it go. A lock whose process is gone, or whose id another
 * process now has (ids are reused, in containers soon), is broken (breakStaleLock); an empty one once it is
 * EMPTY_LOCK_GRACE_MS old; a live holder's is waited for `patience` ms, then held(pid, elsewhere).
 */
function* lockSteps(path: string, policy: LockPolicy): Generator<number, () => void, void> {
  const mine = lockText();
  // A duration, on the monotonic clock: the wall clock stepped back 10 minutes made a taker wait 10 minutes more, forward
  // an hour gave up at its second look.
  const deadline = performance.now() + (policy.patience ?? 0);
  for (let breaks = 0; ; ) {
    try {
      createLockFile(path, `${mine}\n`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw policy.unwritable(err as Error);
      const found = lockJudged(path);
      if (found === "gone") continue;
      if (found instanceof Error) throw policy.unwritable(found);
      if (typeof found === "object" && "elsewhere" in found) {
        // Not renewed lately by this clock, and not yet looked at again: waited for whatever the patience (lockJudged).
        if ("unconfirmed" in found) {
          yield LOCK_RETRY_MS;
          continue;
        }
        if (found.pid === process.pid && !found.elsewhere && !policy.waitForThisProcess) return () => {};
        if (performance.now() >= deadline) throw policy.held(found.pid, found.elsewhere);
      } else if (found !== "young") {
        if (++breaks > 50) throw policy.unwritable(new Error(`${path} cannot be replaced`));
        if (breakStaleLock(path, found.stale)) continue;
      }
      yield LOCK_RETRY_MS;
      continue;
    }
    // Its holder's sign of life for a taker in another pid space (lockHolder), which cannot see its process. Only while
    // the file is still its own: one broken and taken by another (this holder stood still past LOCK_STALE_MS) is the
    // other's to renew, and this holder is told it lost the lock. One deleted (by hand, its holder alive) is made again,
    // if no other has made it meanwhile, and its holder told (`remade`): left gone, a second server started on the
    // folder was let in beside the first, each writing over the other's counts (D190).
    let unmade = false;
    const renew = setInterval(() => {
      let text: string | undefined;
      try {
        text = lockFiles.read(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") return;
        try {
          createLockFile(path, `${mine}\n`);
          unmade = false;
          policy.remade?.();
          return;
        } catch (made) {
          // EEXIST: another process made it meanwhile, and holds it (lost, below). Any other refusal leaves no holder:
          // said as itself, not as another's lock (which /healthz then claimed), and tried again at the next renewal.
          if ((made as NodeJS.ErrnoException).code !== "EEXIST") {
            if (!unmade) policy.unmade?.(made as Error);
            unmade = true;
            return;
          }
        }
      }
      if (text?.trim() !== mine) {
        clearInterval(renew);
        policy.lost?.();
        return;
      }
      try {
        const now = new Date();
        utimesSync(path, now, now);
      } catch {}
    }, LOCK_RENEW_MS);
    renew.unref();
    const release = () => {
      clearInterval(renew);
      heldLocks.delete(release);
      try {
        if (lockFiles.read(path).trim() === mine) rmSync(path, { force: true });
      } catch {}
    };
    heldLocks.add(release);
    return release;
  }
}

/**
 * What the lock file `path` tells of its holder: its process id while it runs (`elsewhere`: in another pid space,
 * renewed lately); "young" while it is empty and younger than
 * EMPTY_LOCK_GRACE_MS; its text, to break, when its holder is gone; "gone" if it was removed meanwhile; the error if it
 * cannot be read.
 */
function lockFound(path: string): LockHolder | "young" | "gone" | StaleLock | Error {
  try {
    const text = lockFiles.read(path);
    if (!text.trim())
      return Math.abs(Date.now() - statSync(path).mtimeMs) < EMPTY_LOCK_GRACE_MS ? "young" : { stale: text };
    // Read only for a lock of another pid space, which is judged by it (lockHolder).
    let renewed: number | undefined;
    return (
      lockHolder(text, () => (renewed = statSync(path).mtimeMs)) ?? {
        stale: text,
        ...(renewed === undefined ? {} : { renewed, pid: Number(text.trim().split(" ")[0]) }),
      }
    );
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : (err as Error);
  }
}

/**
 * A lock found stale: its text, to break it; and for one of another pid space, found not renewed within LOCK_STALE_MS
 * by this machine's clock, its mtime and its holder's id, for the second look lockJudged takes before breaking it.
 */
interface StaleLock {
  stale: string;
  renewed?: number;
  pid?: number;
}

/**
 * How long after a lock of another pid space is first found not renewed lately its taker looks for a renewal before
 * breaking it: a live holder renews it every LOCK_RENEW_MS (its timer may run late on a busy thread).
 */
const RENEWAL_LOOK_MS = 2.5 * LOCK_RENEW_MS;

/**
 * Locks of another pid space found not renewed lately by this clock (lockFound), by path: their mtime then, and when
 * (the monotonic clock's), for the next look at them.
 */
const unrenewedSeen = new Map<string, { renewed: number; at: number }>();

/**
 * What the lock file `path` tells of its holder (lockFound), a lock of another pid space found not renewed lately judged
 * as every caller judges it (a taker, a look without taking, clearing a folder's leftovers): not renewed by this clock
 * means its holder is gone, or the clock stepped (this machine's, by NTP or a VM resumed, which its holder's next renewal
 * follows; or another machine's). So it is stale only once its mtime has stood unchanged RENEWAL_LOOK_MS since first
 * seen; until then its holder is `unconfirmed`, after a renewal it is live.
 */
function lockJudged(path: string): LockHolder | "young" | "gone" | StaleLock | Error {
  const found = lockFound(path);
  if (typeof found !== "object" || !("stale" in found) || found.renewed === undefined) {
    unrenewedSeen.delete(path);
    return found;
  }
  const now = performance.now();
  const seen = unrenewedSeen.get(path);
  if (seen?.renewed === found.renewed) {
    return now - seen.at < RENEWAL_LOOK_MS ? { pid: found.pid!, elsewhere: true, unconfirmed: true } : found;
  }
  unrenewedSeen.set(path, { renewed: found.renewed, at: now });
  // Renewed since it was first seen: its holder lives (its clock behind this one's, or the step between).
  return seen ? { pid: found.pid!, elsewhere: true } : { pid: found.pid!, elsewhere: true, unconfirmed: true };
}

/**
 * The live holder of the lock file `path`, looked at without taking it (lockJudged): none when it is free, stale or
 * unreadable. One of another pid space not renewed lately by this clock is still said held until a later look finds
 * it unrenewed RENEWAL_LOOK_MS on (a caller waiting for it looks again).
 */
export function lockHeld(path: string): LockHolder | undefined {
  const found = lockJudged(path);
  return typeof found === "object" && "elsewhere" in found ? found : undefined;
}

/** Takes the lock file `path` (lockSteps), waiting on this thread: a function that lets it go. */
export function takeLock(path: string, policy: LockPolicy): () => void {
  return waitedOnThread(lockSteps(path, policy));
}

/** takeLock for a running server: while it waits, its other requests are answered. */
export function takeLockAsync(path: string, policy: LockPolicy): Promise<() => void> {
  return waitedAsync(lockSteps(path, policy));
}

/** Runs `steps` to its end, each wait it yields (ms) taken on this thread: what it returns. */
function waitedOnThread<T>(steps: Generator<number, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    Bun.sleepSync(step.value);
  }
}

/** Runs `steps` to its end, each wait it yields (ms) awaited, the thread left to others: what it returns. */
async function waitedAsync<T>(steps: Generator<number, T, void>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await Bun.sleep(step.value);
  }
}
