/**
 * Which snapshot of a folder to serve (D55): the one holding the newest data of the wiki (its
 * newest revision), then the one built last, then the file written last. Whatever else is in
 * the folder (a link to nothing or a looping one, a directory, an empty, foreign, unreadable
 * or half-written file) is skipped with the reason, never thrown: nothing put there may stop
 * a server.
 */
import { lstatSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { openContainer } from "./container";
import type { SnapshotMeta } from "./format";
import { isSnapshotName } from "../files";

/** A snapshot file that opens (header, length and table checked; sections not verified). */
export interface SnapshotFile {
  path: string;
  /** Inode, size and modification time: tells a changed file from the one seen before under its name. */
  identity: string;
  meta: SnapshotMeta;
  /** Its newest revision, in unix seconds (D55). */
  newestRevision: number;
  createdAt: number;
  mtimeMs: number;
}

/** A file that cannot be a snapshot, and why (a sentence for the log). */
export interface SkippedFile {
  path: string;
  /** Undefined when it cannot even be looked at (a link to nothing). */
  identity: string | undefined;
  reason: string;
}

/** A file's identity: inode, size and modification time (after links); undefined if it cannot be looked at. */
export function identityOf(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return undefined;
  }
}

/**
 * Snapshots written before meta.newestRevision, or whose newest is dated after their build: read once from the page
 * table, per file identity.
 */
const newestReadFromPages = new Map<string, number>();

/** Looks at one file as a snapshot to serve. */
export function snapshotFile(path: string): SnapshotFile | SkippedFile {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const link = lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink();
    const reason =
      code === "ELOOP"
        ? "it is a link that loops"
        : code === "ENOENT"
          ? link
            ? "it is a link to nothing"
            : "it is gone"
          : `it cannot be looked at (${code ?? (err as Error).message})`;
    return { path, identity: undefined, reason };
  }
  const identity = `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
  if (!stats.isFile()) return { path, identity, reason: "it is not a file (a directory?)" };
  if (stats.size === 0) return { path, identity, reason: "it is empty" };
  try {
    const container = openContainer(path);
    const meta = container.meta as SnapshotMeta;
    const createdAt = Date.parse(meta.createdAt) || 0;
    const built = createdAt ? createdAt / 1000 : Infinity;
    let newest = meta.newestRevision ? Date.parse(meta.newestRevision) / 1000 : undefined;
    // A revision dated after the build is a clock's error (D180): counted, it put the file first until that date.
    if (newest === undefined || newest > built) {
      newest = newestReadFromPages.get(identity);
      if (newest === undefined) {
        newest = pageDates(new Float64Array(container.read("pages.ts").buffer), built).newest;
        // Every page dated after it: the day it was built.
        if (!newest && createdAt) newest = built;
        newestReadFromPages.set(identity, newest);
      }
    }
    return {
      path,
      identity,
      meta,
      newestRevision: newest,
      createdAt,
      mtimeMs: stats.mtimeMs,
    };
  } catch (err) {
    return { path, identity, reason: (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ") };
  }
}

export const isSnapshotFile = (found: SnapshotFile | SkippedFile): found is SnapshotFile => "meta" in found;

/** Best first: the newest data, then the newest build, then the newest file, then the name. */
export function bySnapshotOrder(a: SnapshotFile, b: SnapshotFile): number {
  return (
    b.newestRevision - a.newestRevision ||
    b.createdAt - a.createdAt ||
    b.mtimeMs - a.mtimeMs ||
    (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

/** The *.tome files of a folder (hidden ones are being written): those that open, best first, and those skipped. */
export function snapshotsIn(dir: string): { usable: SnapshotFile[]; skipped: SkippedFile[] } {
  const usable: SnapshotFile[] = [];
  const skipped: SkippedFile[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { usable, skipped };
  }
  for (const name of names.sort()) {
    if (!isSnapshotName(name)) continue;
    const found = snapshotFile(join(dir, name));
    if (isSnapshotFile(found)) usable.push(found);
    else skipped.push(found);
  }
  return { usable: usable.sort(bySnapshotOrder), skipped };
}

/** The snapshot of a folder to serve (D55), if any opens. */
export function latestSnapshot(dir: string): string | undefined {
  return snapshotsIn(dir).usable[0]?.path;
}

/**
 * A snapshot's page dates (Unix seconds) against when it was built (`built`, seconds): the newest no later than that
 * (0 if none), and those dated after it, a clock's error (D180): how many, and the latest.
 */
export function pageDates(ts: ArrayLike<number>, built: number): { newest: number; later: number; latest: number } {
  let newest = 0;
  let later = 0;
  let latest = 0;
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i]!;
    if (t > built) {
      later++;
      latest = Math.max(latest, t);
    } else newest = Math.max(newest, t);
  }
  return { newest, later, latest };
}
