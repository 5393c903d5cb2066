/**
 * Moves the running server to a newer snapshot (issue 17), the newest data first (D55). It watches snapshots/ (or, with
 * TOME_SNAPSHOT, that one file's folder for that file) and reacts to SIGHUP; on either it
 * loads the snapshot that should be served beside the one served, checks it whole, and swaps it
 * in (the app keeps each request in flight on the snapshot it started on: ../http/current.ts).
 *
 * A snapshot is checked before it serves, not after as at boot: opening checks its header,
 * length and table, then every section's hash is verified (hashing yields between slices, so
 * the server keeps answering). A damaged file is then refused while the old one keeps serving,
 * instead of stopping a server that was serving well; the cost is the time to hash the file,
 * which also brings it into the page cache before the first request needs it. A snapshot of
 * another wiki is refused too (a restart with TOME_SNAPSHOT serves another wiki), unless the sample is served (D86). Each refusal is one log line,
 * and the same file is not tried again until it changes (its size, time or inode).
 *
 * Files being written are ignored: a snapshot is complete when it is renamed into place under
 * a name ending in .tome (snapshot:build writes a hidden temporary file, then renames it).
 *
 * The snapshot served first is hashed in the background; damaged, it gives way to the next one
 * as any refused snapshot does (D85). Every snapshot served is held under a read lease (D84): a
 * process opening its file to write it (cp over it) waits until the server has stopped reading
 * it (503 until a whole snapshot is loaded) and let go of it; where no lease can be taken, a
 * write in place is only seen once it has begun (D56).
 */
import { type FSWatcher, statSync, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { type Engine, openUnguarded } from "../search";
import {
  bySnapshotOrder,
  identityOf,
  isSnapshotFile,
  isSnapshotName,
  isoSeconds,
  openContainer,
  sectionsDamaged,
  type SkippedFile,
  type SnapshotFile,
  snapshotFile,
  SnapshotError,
  SnapshotReplaced,
} from "../snapshot";
import { isSample, servingOrder, snapshotsToServe } from "./snapshots";
import { commandLine } from "../invocation";
import { printableName, shellWord } from "../printable";

/**
 * Two times (Unix seconds) as a message sets them side by side: their days, or their times to the second where the days
 * are equal ('(2026-11-01) is older than … (2026-11-01)' read as no difference).
 */
function timesApart(a: number, b: number): [string, string] {
  const [x, y] = [isoSeconds(a), isoSeconds(b)];
  return x.slice(0, 10) === y.slice(0, 10) ? [x, y] : [x.slice(0, 10), y.slice(0, 10)];
}

/** Where the snapshot to serve comes from. */
export interface SnapshotSource {
  /** The snapshots that could be served, best first (D55), and the files that cannot. */
  look(): { usable: SnapshotFile[]; skipped: SkippedFile[] };
  /** The order look() gives: negative when a is served before b. */
  order(a: SnapshotFile, b: SnapshotFile): number;
  /** The folder to watch, and the file names in it whose changes matter. */
  dir: string;
  relevant(name: string): boolean;
}

/** The *.tome files of a folder, the newest data first (D55), the sample last (D86). */
export function newestIn(dir: string): SnapshotSource {
  return {
    look: () => snapshotsToServe(dir),
    order: servingOrder,
    dir,
    relevant: isSnapshotName,
  };
}

/** One file, pinned (TOME_SNAPSHOT): replacing it (renamed over) serves the new one. */
export function pinned(path: string): SnapshotSource {
  return {
    look: () => {
      const found = snapshotFile(path);
      return isSnapshotFile(found) ? { usable: [found], skipped: [] } : { usable: [], skipped: [found] };
    },
    order: bySnapshotOrder,
    dir: dirname(path),
    relevant: (name) => name === basename(path),
  };
}

/** The server as the swap sees it. */
export interface Swappable {
  /** The snapshot served now, and its requests in flight. */
  served(): { engine: Engine; path: string; id: string; inFlight: number };
  swap(engine: Engine): void;
  /** Answers 503 until the next swap: the snapshot served must not be read any more. */
  suspend(reason: string): void;
  /** Resolves once no request that took this engine's snapshot (before a suspend) is in flight. */
  drained(engine: Engine): Promise<void>;
}

export interface SwapReport {
  path: string;
  /** Opening (header, table, indexes mapped) and verifying every section's hash, in ms. */
  openMs: number;
  verifyMs: number;
  /** The switch itself (making the routes over the new snapshot and swapping), in ms. */
  switchMs: number;
  /** The snapshot served before, and its requests still in flight at the switch. */
  previous: string;
  inFlight: number;
}

type Outcome = "swapped" | "refused" | "same";

export class SnapshotSwapper {
  /** Files already dealt with (refused, or holding the content served), by resolved path: their identity then; not tried again until it changes. */
  private readonly dealtWith = new Map<string, string>();
  /** The file served: its resolved path, its identity when it was opened, its place in the order (D55), and when it was loaded. */
  private served: { path: string; identity: string | undefined; file: SnapshotFile | undefined; since: Date };
  /** Set once the file served is written over in place (D56), until a swap. */
  private suspended = false;
  private watcher: FSWatcher | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Looks for the folder watched again, once moved or removed (folderMoved). */
  private refolder: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private again: string | undefined;
  /** Said once: why this server cannot take read leases on its snapshots (D84). */
  private unleased = false;
  /** Files that come after the one served in the order (D55), as said (path → identity): said once each, those there at start never. */
  private readonly passedOver = new Map<string, string>();
  /** Files open for writing when they were to be served, as logged (path → identity): tried again shortly, logged once. */
  private readonly busy = new Map<string, string>();
  /** Says a line of what it does, printable. */
  private readonly log: (line: string) => void;

  constructor(
    private readonly app: Swappable,
    private readonly source: SnapshotSource,
    log: (line: string) => void,
    /** Told of each swap done (benchmarks, tests). */
    private readonly onSwap: (report: SwapReport) => void = () => {},
    private readonly debounceMs = 500,
  ) {
    // Every line printable here, whatever path or message it names (a file's name may hold a terminal's escapes).
    this.log = (line) => log(printableName(line));
    const found = snapshotFile(app.served().path);
    this.served = {
      path: resolve(found.path),
      identity: found.identity,
      file: isSnapshotFile(found) ? found : undefined,
      since: new Date(),
    };
    for (const file of source.look().usable) this.passedOver.set(resolve(file.path), file.identity);
    if (!this.guard(app.served().engine))
      this.log(
        `swap: ${app.served().path} is open for writing by another process as the server starts: it cannot be guarded (D84), and writing it in place can stop the server.`,
      );
  }

  /** Watches the source's folder; false (and a log line) if it cannot be watched. */
  watch(): boolean {
    const dir = this.source.dir;
    try {
      const folder = statSync(dir).ino;
      // Moved, its watch follows it; removed while a file in it is open (the one served), it says nothing of itself.
      const moved = (): boolean => {
        if (statSync(dir, { throwIfNoEntry: false })?.ino === folder) return false;
        this.folderMoved();
        return true;
      };
      this.watcher = watch(dir, (_event, name) => {
        if (name === basename(dir) && moved()) return;
        if (name && !this.source.relevant(name)) return;
        // At once, not after the pause: a request reading the file cut short would kill the process.
        if (!name || resolve(this.source.dir, name) === this.served.path) this.guardServed();
        clearTimeout(this.timer);
        this.timer = setTimeout(() => moved() || void this.check(`a change in ${dir}/`), this.debounceMs);
      });
      this.watcher.on("error", (err) =>
        this.log(`swap: watching ${this.source.dir}/ failed (${err.message}); send SIGHUP to load a newer snapshot.`),
      );
      return true;
    } catch (err) {
      this.log(
        `swap: cannot watch ${this.source.dir}/ (${(err as Error).message}); send SIGHUP to load a newer snapshot.`,
      );
      return false;
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    clearTimeout(this.refolder);
    this.watcher?.close();
  }

  /**
   * The folder watched was moved or removed (mv snapshots snapshots.old; mkdir snapshots): its watch is on the old one,
   * and a snapshot put in the new folder was never seen. The folder of that name is watched again once it is there.
   */
  private folderMoved(): void {
    this.watcher?.close();
    this.watcher = undefined;
    const dir = this.source.dir;
    this.log(
      `swap: ${dir}/ was moved or removed: the folder of that name is watched once it is there again (SIGHUP looks at it at once).`,
    );
    const again = () => {
      this.refolder = setTimeout(() => {
        if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) again();
        else if (this.watch()) void this.check(`a change in ${dir}/`);
      }, this.debounceMs);
    };
    again();
  }

  /**
   * Hashes the snapshot served first, in the background (before serving, a 20 GB one would keep
   * the server from answering for minutes: D38). A damaged one is refused as any other (D85): it
   * is not read any more, requests get 503, and the next snapshot in the order is checked and
   * served. Resolves false when none can be (the caller stops the server), true otherwise.
   */
  async verifyFirst(): Promise<boolean> {
    const { engine, path } = this.app.served();
    let damage: string | undefined;
    try {
      damage = sectionsDamaged(await engine.snapshot.container.verify());
    } catch (err) {
      // Stopped: its file is being written over in place (logged where that was seen).
      this.log(`start: checking ${path} stopped: ${(err as Error).message}`);
      return true;
    }
    if (!damage) return true;
    const what = `${path} is damaged (${damage})`;
    // Swapped out meanwhile: it no longer matters.
    if (this.app.served().engine !== engine) {
      this.log(`start: ${what}; it is no longer served.`);
      return true;
    }
    this.dealtWith.set(this.served.path, this.served.identity ?? "");
    this.suspendServed(what);
    this.log(
      `start: ${what}: it is not served (requests get 503 meanwhile); looking for the next snapshot. Copy it or build it again (${commandLine("snapshot:build")}), or remove it.`,
    );
    await this.check(`${path} was found damaged`);
    if (this.app.served().engine !== engine) return true;
    this.log(
      `start: ${what}, and no other snapshot can be served; stopping. Rebuild it with \`${commandLine("snapshot:build")}\`, or copy it again.`,
    );
    return false;
  }

  /** Stops reading the snapshot served and answers 503 until a swap. */
  private suspendServed(why: string): void {
    this.suspended = true;
    this.app.served().engine.snapshot.container.stopReading(why);
    this.app.suspend(`The snapshot is being replaced; retry in a few seconds.`);
  }

  /**
   * Takes a read lease on a snapshot's file (D84): a process opening it to write it (cp over it)
   * then waits until the server has let go of it. False when the file is open for writing now
   * (being written: not to be served yet). Where leases cannot be taken, says so once, and the
   * file is guarded as D56 says.
   */
  private guard(engine: Engine): boolean {
    const refused = engine.snapshot.container.lease((graceMs) => this.writerCame(engine, graceMs));
    if (!refused) return true;
    if (refused.writing) return false;
    if (!this.unleased)
      this.log(
        `swap: cannot take a read lease on ${engine.snapshot.path} (${refused.reason}): copying over a snapshot while it is served can stop the server here. Replace snapshots by renaming: copy to a temporary name in the same folder, then mv it into place. (Said once.)`,
      );
    this.unleased = true;
    return true;
  }

  /** Another process opened a snapshot's file to write it: nothing may read it once it lets go; the rewritten file is looked at then. */
  private async writerCame(engine: Engine, graceMs: number): Promise<void> {
    const path = engine.snapshot.path;
    const served = this.app.served().engine === engine;
    if (served) {
      const why = `${path} is being written over in place while it is served`;
      if (!this.suspended) this.suspendServed(why);
      // Loaded again once whole, even if nothing in it changed.
      this.dealtWith.delete(this.served.path);
      this.log(
        `swap: ${why} (another process opened it to write it). The server lets go of it first (D84): requests get 503 until a whole snapshot is loaded. Never copy over a served snapshot: copy it to a temporary name in the same folder, then mv it into place.`,
      );
    }
    const answered = await Promise.race([
      this.app.drained(engine).then(() => true),
      Bun.sleep(graceMs).then(() => false),
    ]);
    if (!answered)
      this.log(
        `swap: ${path}: requests still in flight on it after ${graceMs} ms are let go with it (the writer waits only so long: they read zeros from now on).`,
      );
    if (served) this.recheck(`${path} was opened to be written`);
  }

  /** Looks again after the watch's pause (a change seen meanwhile moves it later). */
  private recheck(reason: string): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.check(reason), this.debounceMs);
  }

  /**
   * The file served is mapped: written over in place (the same inode, another size or table),
   * reading it could kill the process with SIGBUS, so it is not read any more, and requests get
   * 503 until a whole snapshot is swapped in (D56). Renamed over or removed, the mapping holds.
   */
  private guardServed(): void {
    if (this.suspended || !this.served.identity) return;
    const now = identityOf(this.served.path);
    if (!now || now === this.served.identity) return;
    // Identities are "inode:size:mtime": renamed over (another inode), the mapping holds.
    const [ino, size] = now.split(":");
    const [servedIno, servedSize] = this.served.identity.split(":");
    if (ino !== servedIno) return;
    const engine = this.app.served().engine;
    if (size === servedSize && this.sameTable(engine)) {
      this.served.identity = now;
      return;
    }
    const why = `${this.served.path} is being written over in place while it is served (it is mapped; reading it now could kill the server)`;
    this.suspendServed(why);
    this.log(
      `swap: ERROR: ${why}. Requests get 503 until a whole snapshot is loaded. Never copy over a served snapshot: copy it to a temporary name in the same folder, then mv it into place.`,
    );
  }

  /** Whether the file served still holds the table it was opened with (touched, or written over with the same bytes): read, not mapped. */
  private sameTable(engine: Engine): boolean {
    const served = engine.snapshot.container.sections;
    try {
      const table = openContainer(this.served.path).sections;
      return (
        table.length === served.length &&
        table.every((s, i) => s.sha256 === served[i]!.sha256 && s.offset === served[i]!.offset)
      );
    } catch {
      return false; // not whole: being written
    }
  }

  /** Looks for a snapshot to move to and moves to it; one check at a time (a check asked meanwhile runs after). */
  check(reason: string): Promise<void> {
    if (this.running) {
      this.again = reason;
      return this.running;
    }
    this.running = (async () => {
      let next: string | undefined = reason;
      while (next) {
        this.again = undefined;
        await this.attempt(next);
        next = this.again;
      }
      this.running = undefined;
    })();
    return this.running;
  }

  private async attempt(reason: string): Promise<void> {
    this.guardServed();
    const { usable, skipped } = this.source.look();
    for (const file of skipped) {
      const key = resolve(file.path);
      const seenAs = file.identity ?? `skipped: ${file.reason}`;
      // The file served, still there (touched: guardServed looked at it) or removed, is no refusal; another renamed over it is.
      const servedOrGone = key === this.served.path && !this.suspended && this.servedFileThere() !== "replaced";
      if (servedOrGone || this.dealtWith.get(key) === seenAs) continue;
      this.dealtWith.set(key, seenAs);
      this.log(
        `swap: refused ${file.path} (after ${reason}): ${file.reason.replace(/\.$/, "")}. ${this.stillServing()}`,
      );
    }
    // A snapshot served whose file is still there keeps its place in the order (even if that
    // file no longer opens: its mapping holds what was renamed over); one removed gives way to the best left.
    const servedThere = identityOf(this.served.path) !== undefined;
    for (const [i, file] of usable.entries()) {
      const key = resolve(file.path);
      const atServed = key === this.served.path;
      if (!this.suspended) {
        if (atServed && file.identity === this.served.identity) {
          this.sayPassedOver(usable.slice(i + 1), reason);
          break;
        }
        if (!atServed && servedThere && this.served.file && this.source.order(file, this.served.file) > 0) {
          this.sayPassedOver(usable.slice(i), reason);
          break;
        }
      }
      if (this.dealtWith.get(key) !== file.identity) {
        this.dealtWith.set(key, file.identity);
        if ((await this.tryServing(file, reason)) === "swapped") return;
      }
      if (atServed && !this.suspended) break;
    }
    if (reason !== "SIGHUP") return;
    if (this.servedFileThere() === "there")
      this.log(`swap: SIGHUP: nothing newer than ${this.app.served().path}, which is still served.`);
    else this.log(`swap: SIGHUP: no other snapshot can be served; still serving ${this.servedNamed()}.`);
  }

  /**
   * Says why a snapshot put in the folder is not served (once per file as it is): the one served comes first in the
   * order (D55), which a newcomer renaming an older snapshot into place would otherwise wait on in silence.
   */
  private sayPassedOver(files: SnapshotFile[], reason: string): void {
    const served = this.served.file;
    if (!served) return;
    for (const file of files) {
      const key = resolve(file.path);
      if (key === this.served.path || this.passedOver.get(key) === file.identity) continue;
      this.passedOver.set(key, file.identity);
      const [older, newer] = timesApart(file.newestRevision, served.newestRevision);
      const why =
        file.newestRevision < served.newestRevision
          ? `its newest revision (${older}) is older than ${served.path}'s (${newer})`
          : file.createdAt < served.createdAt
            ? `it was built before ${served.path}, from data as new`
            : `${served.path} comes before it (the newest data first, then the newest build, D55)`;
      this.log(
        `swap: ${file.path} (after ${reason}) is not served: ${why}. Still serving ${this.servedNamed()}. To serve it, remove the snapshots before it from ${this.source.dir}/, or start the server with TOME_SNAPSHOT=${shellWord(file.path)}.`,
      );
    }
  }

  /** What a refusal's line ends with: the snapshot still served, or, while the one served was written over in place, that none is. */
  private stillServing(): string {
    if (!this.suspended) return `Still serving ${this.servedNamed()}.`;
    return `Nothing is served (requests get 503) until a whole snapshot is put in place: copy one under a temporary name in the same folder, then mv it into place.`;
  }

  /** Whether the file at the served path is still the one served (its mapping outlives a file renamed over it, or removed). */
  private servedFileThere(): "there" | "replaced" | "removed" {
    const now = identityOf(this.served.path);
    if (now === undefined) return "removed";
    // Identities are "inode:size:mtime": written in place it is still the file (guardServed watches that).
    return this.served.identity === undefined || now.split(":")[0] === this.served.identity.split(":")[0]
      ? "there"
      : "replaced";
  }

  /** The snapshot served, as a log line names it: its path, or, once another file is there or none, what was loaded from it and when. */
  private servedNamed(): string {
    const { path, id } = this.app.served();
    const there = this.servedFileThere();
    if (there === "there") return path;
    const now = there === "removed" ? "that file is removed" : "the file there now is another";
    return `the snapshot loaded from ${path} at ${this.served.since.toISOString()} (content hash ${id.slice(0, 12)}; ${now})`;
  }

  private async tryServing(file: SnapshotFile, reason: string): Promise<Outcome> {
    const served = this.app.served();
    const { path } = file;
    const started = performance.now();
    let engine: Engine | undefined;
    let opened: number;
    try {
      engine = openUnguarded(path);
      engine.snapshot.container.mapAll();
      opened = performance.now();
      const meta = engine.snapshot.meta;
      const now = served.engine.snapshot.meta;
      // The same content in another file at the served path (an identical copy renamed over it) is moved to all the
      // same: the file served is gone from the folder, and its mapping would hold its disk space until a restart.
      const replacesServed = resolve(path) === this.served.path && file.identity !== this.served.identity;
      if (meta.contentHash === served.id && !this.suspended && !replacesServed) {
        this.log(
          `swap: ${path} holds the same content as ${served.path} (content hash ${served.id.slice(0, 12)}); nothing to do.`,
        );
        engine.close();
        return "same";
      }
      // The host names the wiki (D14: it is in every URL served); old dumps have no dbname. The sample gives way to any wiki (D86).
      if (meta.wiki.host !== now.wiki.host && !isSample(served.path)) {
        throw new SnapshotError(
          // Named by TOME_SNAPSHOT: a plain restart serves D55's best of the folder, which may be the wiki served again.
          `it is a snapshot of ${meta.wiki.host}, and this server serves ${now.wiki.host}. To serve it, restart the server as TOME_SNAPSHOT=${path} ${commandLine("start")}.`,
        );
      }
      if (!this.guard(engine)) {
        // Being written: looked at again shortly, and said once.
        this.dealtWith.delete(resolve(path));
        this.recheck(`${path} was open for writing`);
        if (this.busy.get(path) === file.identity) return "refused";
        this.busy.set(path, file.identity);
        throw new SnapshotError("it is open for writing (being copied?); it is looked at again once it is closed.");
      }
      const damage = sectionsDamaged(await engine.snapshot.container.verify());
      if (damage) throw new SnapshotError(`it is damaged: ${damage}. Copy or build it again.`);
    } catch (err) {
      // Let go now, not when collected (an idle server may not collect for hours): mapped whole, and perhaps leased,
      // a file refused and then removed kept its disk space.
      engine?.close();
      const message = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ");
      // Another file renamed onto it while it was opened (D84): nothing of either read. The file there now is looked
      // at shortly, where a pinned snapshot (not watched) waited for the next SIGHUP; only if the path names another
      // file than the one listed, so that a file removed meanwhile, or a file system whose inodes are not stable (FUSE),
      // is refused once and not looked at again and again.
      const there = err instanceof SnapshotReplaced ? identityOf(path) : undefined;
      if (there !== undefined && there !== file.identity) {
        this.dealtWith.delete(resolve(path));
        this.recheck(`${path} was replaced while it was being opened`);
        this.log(
          `swap: ${path} (after ${reason}): ${message} The file there now is looked at again. ${this.stillServing()}`,
        );
        return "refused";
      }
      this.log(`swap: refused ${path} (after ${reason}): ${message} ${this.stillServing()}`);
      // What was being copied in is no snapshot to serve: clients are told it will not come by waiting a few seconds.
      if (this.suspended)
        this.app.suspend(
          "The snapshot was replaced by a file that cannot be served; the service answers again once its operator puts a whole snapshot in place.",
        );
      return "refused";
    }
    const verified = performance.now();
    const previous = this.app.served();
    this.app.swap(engine);
    // The file served until now comes after this one: no news to say of it.
    if (this.served.identity) this.passedOver.set(this.served.path, this.served.identity);
    this.served = { path: resolve(path), identity: file.identity, file, since: new Date() };
    this.suspended = false;
    const switched = performance.now();
    const report: SwapReport = {
      path,
      openMs: opened - started,
      verifyMs: verified - opened,
      switchMs: switched - verified,
      previous: previous.path,
      inFlight: previous.inFlight,
    };
    const m = engine.snapshot.meta;
    this.log(
      `swap: now serving ${path} (after ${reason}): ${m.wiki.host}, ${m.indexedPages} pages, ${m.indexedChunks} chunks, content hash ${m.contentHash.slice(0, 12)}; ` +
        `opened in ${ms(report.openMs)}, verified in ${ms(report.verifyMs)}, switched in ${ms(report.switchMs)}. ` +
        `${previous.path} is let go once its ${previous.inFlight} request(s) in flight are answered.`,
    );
    this.onSwap(report);
    return "swapped";
  }
}

const ms = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${n.toFixed(0)} ms`);
