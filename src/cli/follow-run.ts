/**
 * snapshot:follow's work (src/cli/snapshot-follow.ts loads it once its arguments are read): the newest snapshot of a
 * folder brought up to date from the daily incremental dumps, once or every --every hours, under the folder's lock.
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { UserError } from "../errors";
import { lockHolderShown, takeLock } from "../files";
import { appliedDays, dayOf, daysToApply, httpPlace, localPlace, nextDay, wikiOf, type DumpPlace } from "../build";
import {
  openSnapshot,
  pageDates,
  type Snapshot,
  type SnapshotMeta,
  SNAPSHOT_EXTENSION,
  snapshotsIn,
} from "../snapshot";
import { SnapshotError } from "../snapshot";
import { ArgumentError, note } from "./main";
import { runUpdate } from "./snapshot-update";
import type { BuildProgressDisplay } from "./progress";
import { commandLine } from "../invocation";
import { printableName } from "../printable";

/** snapshot:follow's arguments, as parsed (src/cli/snapshot-follow.ts). */
export interface FollowArgs {
  dir: string;
  snapshot?: string;
  from?: string;
  url: string;
  wiki?: string;
  startDay?: string;
  everyHours?: number;
  keep: number;
  memoryBytes?: number;
  workers?: number;
}

const DATABASE_NAME = /^[\w-]+$/;

/**
 * One pass: applies what is new; returns the snapshot written, if any. `shown` takes the update's progress (a bar on a
 * terminal by default): test/update.test.ts reads it from the pass its set-up makes, its snapshot the tests' update.
 */
export async function followOnce(
  args: FollowArgs,
  log: (line: string) => void,
  shown?: BuildProgressDisplay,
): Promise<string | undefined> {
  const current = args.snapshot ?? toFollow(args.dir, args.wiki);
  if (!current)
    throw new SnapshotError(
      `no snapshot in ${printableName(args.dir)}/. Build one first with \`${commandLine("snapshot:build")} --dump <dump>\`.`,
    );
  const snapshot = openSnapshot(current);
  const meta = snapshot.meta;
  const wiki = args.wiki ?? wikiOf(meta);
  // Another wiki's days were looked for ("up to date: no frwiki incremental dump"), and one found was refused by the update.
  if (args.wiki && meta.wiki.dbname && args.wiki !== meta.wiki.dbname)
    throw new ArgumentError(
      `${printableName(current)} is a snapshot of ${meta.wiki.dbname} (${meta.wiki.host}), not ${args.wiki}: only its own wiki's dumps apply to it. Leave --wiki out, or give --snapshot a snapshot of ${args.wiki}.`,
    );
  if (!wiki)
    throw new ArgumentError(
      `${printableName(current)} does not name its wiki's database: pass --wiki <dbname> (e.g. enwiki).`,
    );
  // The name comes from the dump (<dbname>), and goes into paths, URLs and the pattern of the snapshots --keep deletes.
  if (!DATABASE_NAME.test(wiki))
    throw new ArgumentError(
      `"${wiki}" is not a wiki's database name (letters, digits, _ and -, e.g. enwiki): pass --wiki <dbname>.`,
    );
  const applied = appliedDays(meta);
  const start = args.startDay ?? (applied.length ? nextDay(applied.at(-1)!) : firstDay(current, meta, snapshot, log));
  const place: DumpPlace = args.from ? localPlace(args.from) : httpPlace(args.url);
  const listed = await place.days(wiki);
  // A day still being written holds back the days after it: applied without it, its changes would never be.
  const waiting = listed.unfinished.find((d) => d >= start);
  if (waiting)
    log(
      `${waiting} is not finished yet (its status.txt does not say done): it and the days after it wait for a later run.`,
    );
  const { days, missing } = daysToApply(
    listed.done.filter((d) => !waiting || d < waiting),
    start,
  );
  const fresh = days.filter((d) => !applied.includes(d));
  if (!fresh.length) {
    log(
      `${printableName(basename(current))} is up to date: no ${wiki} incremental dump from ${start} on${applied.length ? ` (last applied: ${applied.at(-1)})` : ""}.`,
    );
    return undefined;
  }
  for (const m of missing)
    log(`not published, passed over: ${m.first}${m.count > 1 ? `…${m.last} (${m.count} days)` : ""}`);
  const out = join(args.dir, `${wiki}-${fresh.at(-1)}${SNAPSHOT_EXTENSION}`);
  log(
    `applying ${fresh.length} day(s) ${fresh[0]}${fresh.length > 1 ? `…${fresh.at(-1)}` : ""} to ${printableName(basename(current))}`,
  );
  await runUpdate(
    {
      base: current,
      dumps: fresh.map((d) => place.dump(wiki, d)),
      out,
      memoryBytes: args.memoryBytes,
      workers: args.workers,
    },
    log,
    fresh,
    shown,
  );
  prune(args.dir, wiki, args.keep, [out, current], log);
  return out;
}

/**
 * The snapshot of the folder to follow: its newest (D55), or with --wiki the newest of that wiki (another wiki's with newer
 * data, dropped in, came first and was refused at every run); none of it: the newest, refused naming its wiki.
 */
function toFollow(dir: string, wiki: string | undefined): string | undefined {
  const { usable } = snapshotsIn(dir);
  return (usable.find((file) => wiki && file.meta.wiki.dbname === wiki) ?? usable[0])?.path;
}

/**
 * The day a snapshot's first follow starts at: its newest page's. A page dated after the snapshot was built is a clock's
 * error (a mirror's, a hand-made dump's): counted, it held every day back until its date, each run "up to date" (D180).
 */
function firstDay(current: string, meta: SnapshotMeta, snapshot: Snapshot, log: (line: string) => void): string {
  const built = Date.parse(meta.createdAt) / 1000;
  const { newest, later, latest } = pageDates(snapshot.pages.ts, built);
  if (!later) return dayOf(newest);
  const day = dayOf(newest || built);
  log(
    `${printableName(basename(current))} has ${later} page${later > 1 ? "s" : ""} dated after it was built (the latest ${new Date(latest * 1000).toISOString().replace(".000Z", "Z")}): ` +
      `a clock was wrong; its days are counted from ${newest ? "its newest page before that" : "the day it was built"} (${day}).`,
  );
  return day;
}

/** Deletes this wiki's follow-made snapshots (<wiki>-YYYYMMDD.tome) beyond the newest `keep`; never those in `spare`. */
function prune(dir: string, wiki: string, keep: number, spare: string[], log: (line: string) => void): void {
  const mine = new RegExp(`^${wiki}-\\d{8}\\${SNAPSHOT_EXTENSION}$`);
  const made = readdirSync(dir)
    .filter((n) => mine.test(n))
    .sort()
    .reverse();
  for (const name of made.slice(keep)) {
    const path = join(dir, name);
    if (spare.some((s) => resolve(s) === resolve(path))) continue;
    rmSync(path, { force: true });
    log(`removed ${printableName(path)} (--keep ${keep})`);
  }
}

/** A lock file in the snapshots' folder: refuses a second follower while the first is alive (takeLock: a lock left by a process that is gone, or by an earlier process of the same id, is taken over). */
function lock(dir: string): () => void {
  return takeLock(join(dir, ".follow.lock"), {
    held: (pid, elsewhere) =>
      new UserError(
        `another snapshot:follow ${lockHolderShown(pid, elsewhere)} is running on ${printableName(dir)}/; wait for it to finish.`,
      ),
    unwritable: (err) =>
      new SnapshotError(`cannot write the lock in ${printableName(dir)}/: ${printableName(err.message)}.`),
  });
}

/** Follows as `args` say, until one pass is done (or for good, with --every). */
export async function follow(args: FollowArgs): Promise<void> {
  const log = (line: string) => note(`${new Date().toISOString().slice(0, 19)}Z ${line}`);
  if (!existsSync(args.dir))
    throw new SnapshotError(
      args.snapshot
        ? `no folder ${printableName(args.dir)}/ to write the updated snapshot in: create it, or pass --dir (e.g. --dir ${printableName(dirname(args.snapshot))}, beside --snapshot).`
        : `no folder ${printableName(args.dir)}/. Build a snapshot there first with \`${commandLine("snapshot:build")} --dump <dump>\`, or pass --dir.`,
    );
  const unlock = lock(args.dir);
  process.on("exit", unlock);
  // While an update runs, its own handler removes its temporary files and exits.
  let updating = false;
  // Before the update has its own handler (listing the days, fetching the index, waiting for the next look), nothing
  // is written yet: stop at once, the lock let go, on Ctrl-C as on SIGTERM (SIGINT had no handler: killed, the lock left).
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => (updating && process.listenerCount(signal) > 1) || process.exit(0));
  const pass = async () => {
    updating = true;
    try {
      await followOnce(args, log);
    } finally {
      updating = false;
    }
  };
  try {
    if (args.everyHours === undefined) {
      await pass();
      return;
    }
    for (;;) {
      try {
        await pass();
      } catch (err) {
        // A day that failed (network, a damaged download) is tried again next time.
        log(`failed: ${(err as Error).message}`);
      }
      log(`next look in ${args.everyHours} h`);
      await Bun.sleep(args.everyHours * 3600_000);
    }
  } finally {
    unlock();
  }
}
