/**
 * Moves the running server to a newer snapshot (issue 17). It watches snapshots/ (or, with
 * TOME_SNAPSHOT, that one file's folder for that file) and reacts to SIGHUP; on either it
 * loads the snapshot that should be served beside the one served, checks it whole, and swaps it
 * in (the app keeps each request in flight on the snapshot it started on: ../http/current.ts).
 *
 * A snapshot is checked before it serves, not after as at boot: opening checks its header,
 * length and table, then every section's hash is verified (hashing yields between slices, so
 * the server keeps answering). A damaged file is then refused while the old one keeps serving,
 * instead of stopping a server that was serving well; the cost is the time to hash the file,
 * which also brings it into the page cache before the first request needs it. A snapshot of
 * another wiki is refused too (a restart serves another wiki). Each refusal is one log line,
 * and the same file is not tried again until it changes (its size, time or inode).
 *
 * Files being written are ignored: a snapshot is complete when it is renamed into place under
 * a name ending in .tome (snapshot:build writes a hidden temporary file, then renames it).
 */
import { type FSWatcher, statSync, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { type Engine, open } from "../search";
import { latestSnapshot, SNAPSHOT_EXTENSION, SnapshotError } from "../snapshot";

/** Where the snapshot to serve comes from. */
export interface SnapshotSource {
  /** The snapshot that should be served now, if there is one. */
  candidate(): string | undefined;
  /** The folder to watch, and the file names in it whose changes matter. */
  dir: string;
  relevant(name: string): boolean;
}

/** The newest *.tome in a folder. */
export function newestIn(dir: string): SnapshotSource {
  return { candidate: () => latestSnapshot(dir), dir, relevant: (name) => name.endsWith(SNAPSHOT_EXTENSION) && !name.startsWith(".") };
}

/** One file, pinned (TOME_SNAPSHOT): replacing it (renamed over) serves the new one. */
export function pinned(path: string): SnapshotSource {
  return { candidate: () => path, dir: dirname(path), relevant: (name) => name === basename(path) };
}

/** The server as the swap sees it. */
export interface Swappable {
  /** The snapshot served now, and its requests in flight. */
  served(): { engine: Engine; path: string; id: string; inFlight: number };
  swap(engine: Engine): void;
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

/** What a file is, to tell a changed file from one already seen under the same name. */
function identity(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return undefined;
  }
}

export class SnapshotSwapper {
  /** Files already dealt with (served, refused, or holding the same content), by resolved path: their identity then. */
  private readonly seen = new Map<string, string>();
  private watcher: FSWatcher | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<void> | undefined;
  private again: string | undefined;

  constructor(
    private readonly app: Swappable,
    private readonly source: SnapshotSource,
    private readonly log: (line: string) => void,
    /** Told of each swap done (benchmarks, tests). */
    private readonly onSwap: (report: SwapReport) => void = () => {},
    private readonly debounceMs = 500,
  ) {
    const served = app.served().path;
    const id = identity(served);
    if (id) this.seen.set(resolve(served), id);
  }

  /** Watches the source's folder; false (and a log line) if it cannot be watched. */
  watch(): boolean {
    try {
      this.watcher = watch(this.source.dir, (_event, name) => {
        if (name && !this.source.relevant(name)) return;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.check(`a change in ${this.source.dir}/`), this.debounceMs);
      });
      this.watcher.on("error", (err) => this.log(`swap: watching ${this.source.dir}/ failed (${err.message}); send SIGHUP to load a newer snapshot.`));
      return true;
    } catch (err) {
      this.log(`swap: cannot watch ${this.source.dir}/ (${(err as Error).message}); send SIGHUP to load a newer snapshot.`);
      return false;
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
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
    const served = this.app.served();
    const path = this.source.candidate();
    const id = path && identity(path);
    if (!path || !id) {
      if (reason === "SIGHUP") this.log(`swap: SIGHUP: no snapshot to load${path ? ` (${path} cannot be read)` : ""}; still serving ${served.path}.`);
      return;
    }
    if (this.seen.get(resolve(path)) === id) {
      if (reason === "SIGHUP") this.log(`swap: SIGHUP: nothing newer than ${served.path}, which is still served.`);
      return;
    }
    this.seen.set(resolve(path), id);
    const started = performance.now();
    let engine: Engine;
    let opened: number;
    try {
      engine = open(path);
      engine.snapshot.container.mapAll();
      opened = performance.now();
      const meta = engine.snapshot.meta;
      const now = served.engine.snapshot.meta;
      if (meta.contentHash === served.id) {
        this.log(`swap: ${path} holds the same content as ${served.path} (content hash ${served.id.slice(0, 12)}); nothing to do.`);
        return;
      }
      // The host names the wiki (D14: it is in every URL served); old dumps have no dbname.
      if (meta.wiki.host !== now.wiki.host) {
        throw new SnapshotError(`it is a snapshot of ${meta.wiki.host}, and this server serves ${now.wiki.host}: restart the server to serve another wiki.`);
      }
      const damaged = await engine.snapshot.container.verify();
      if (damaged.length) throw new SnapshotError(`it is damaged: section(s) ${damaged.join(", ")} do not match their hash. Copy or build it again.`);
    } catch (err) {
      const message = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ");
      this.log(`swap: refused ${path} (after ${reason}): ${message} Still serving ${served.path}.`);
      return;
    }
    const verified = performance.now();
    const previous = this.app.served();
    this.app.swap(engine);
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
  }
}

const ms = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${n.toFixed(0)} ms`);
