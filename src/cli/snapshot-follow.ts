/** bun run snapshot:follow — keeps a snapshot up to date from its wiki's daily incremental dumps. */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { UserError } from "../errors";
import { lockHolderShown, takeLock } from "../files";
import {
  appliedDays,
  dayOf,
  daysToApply,
  httpPlace,
  localPlace,
  nextDay,
  WIKIMEDIA_INCR,
  wikiOf,
  type DumpPlace,
} from "../build";
import {
  openSnapshot,
  pageDates,
  type Snapshot,
  type SnapshotMeta,
  SNAPSHOT_EXTENSION,
  snapshotsIn,
} from "../snapshot";
import { SnapshotError } from "../snapshot";
import { given } from "./args";
import { ArgumentError, mainOf, note } from "./main";
import { runUpdate } from "./snapshot-update";
import { bytesOf, positiveInt, readOptions, workersOf } from "./snapshot-build";
import { commandLine } from "../invocation";
import { MAX_BUILD_WORKERS } from "../scheduling";
import { printableName } from "../printable";

const HELP = `Usage: ${commandLine("snapshot:follow")} [options]

Brings the newest snapshot in snapshots/ up to date: finds the daily incremental dumps of its
wiki that it has not had yet (Wikimedia publishes one a day, about 12 hours behind, at
${WIKIMEDIA_INCR}/<wiki>/<YYYYMMDD>/<wiki>-<YYYYMMDD>-pages-meta-hist-incr.xml.bz2,
complete once that day's status.txt says "done"), applies them all in one snapshot:update,
and writes the result beside it as snapshots/<wiki>-<last day>${SNAPSHOT_EXTENSION} (to a temporary file,
renamed into place when whole). A running server (${commandLine("start")}) picks it up.

The days applied are recorded in the snapshot's metadata (meta.updates[].days): the next run
starts after the last of them. The first run starts at the day of the snapshot's newest page
(a page dated after the snapshot was built, by a wrong clock, is not counted).
Days missing in between (Wikimedia keeps about two weeks, and sometimes skips a day) are
reported and passed over: pages edited only on those days stay as they were until they are
edited again or the next full build. Deletions and page moves are not in these dumps.

Options:
  --dir <dir>           where the snapshots are (default snapshots)
  --snapshot <file>     start from this snapshot instead of the newest in --dir
  --from <dir>          read the dumps from a local directory instead of Wikimedia: laid out
                        as <dir>/<wiki>/<YYYYMMDD>/<file> (a mirror; a status.txt there must
                        say "done") or with the files side by side in <dir>
  --url <url>           a mirror of other/incr (default ${WIKIMEDIA_INCR})
  --wiki <dbname>       the wiki's database name, e.g. enwiki (default: from the snapshot; for
                        one that does not record it; another than the one it records is refused);
                        without --snapshot, the newest snapshot of this wiki in --dir is followed
  --start-day <YYYYMMDD>  apply days from this one on (skips days never published)
  --every <hours>       keep running: look again every this many hours, at least 0.0167 (a
                        minute; default: run once)
  --keep <n>            snapshots of this wiki made by snapshot:follow to keep (default 3; the
                        older ones are deleted; others are never touched)
  --memory <size>       as for snapshot:update
  --workers <n>         parsing threads, at most ${MAX_BUILD_WORKERS} (default: TOME_BUILD_WORKERS, else one per core);
                        the snapshot is the same bytes whatever their number
  -h, --help            show this help

Exit code: 0 when up to date (whether or not a day was applied), 1 on an error (nothing is
written then; the next run tries again).

From cron, once a day (at 14:00 UTC the previous day's dump is usually published):

  0 14 * * *  cd /srv/tome && ${commandLine("snapshot:follow")} >> /var/log/tome-follow.log 2>&1

Or as a long-running process instead of cron:  ${commandLine("snapshot:follow")} --every 6
Two runs at once are refused (a lock file, snapshots/.follow.lock).
`;

interface FollowArgs {
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

/** A day of the calendar as YYYYMMDD: 20261301 and 20260230 are none (taken, they were "up to date: no dump from 20261301 on"). */
function isDay(text: string): boolean {
  const m = /^((?:19|20)\d\d)(\d\d)(\d\d)$/.exec(text);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return date.getUTCMonth() === Number(m[2]) - 1 && date.getUTCDate() === Number(m[3]);
}

/**
 * The least --every (D168): a minute. `--every 1e-9` looked again with no pause, listing the dumps' folder over and over
 * (by default on dumps.wikimedia.org), where a new day comes once a day.
 */
const LEAST_EVERY_HOURS = 1 / 60;

export function parseFollowArgs(argv: string[]): FollowArgs | "help" {
  const v = readOptions(argv, {
    dir: { type: "string" },
    snapshot: { type: "string" },
    from: { type: "string" },
    url: { type: "string" },
    wiki: { type: "string" },
    "start-day": { type: "string" },
    every: { type: "string" },
    keep: { type: "string" },
    memory: { type: "string" },
    workers: { type: "string" },
  });
  if (v === "help") return "help";
  if (v["start-day"] !== undefined && !isDay(v["start-day"]))
    throw new ArgumentError(`--start-day takes a day as YYYYMMDD, not ${given(v["start-day"])}.`);
  // Decimal digits only, as --memory's figure (D168): Number() read "0x10" as 16 hours, "0b11" as 3, " 6 " as 6.
  if (v.every !== undefined && !(/^[0-9]+(?:\.[0-9]+)?$/.test(v.every) && Number(v.every) >= LEAST_EVERY_HOURS))
    throw new ArgumentError(
      `--every takes a number of hours from 0.0167 (a minute) up, e.g. 6, not ${given(v.every)}: Wikimedia publishes a day's incremental dump once a day (D168).`,
    );
  // fetch reads a file: URL but not a folder (the listing), and a dump named by one would be opened as a path.
  if (v.url !== undefined && !/^https?:\/\/./i.test(v.url))
    throw new ArgumentError(
      `--url takes an http(s) address, not ${given(v.url)}: for a folder on this machine use --from <dir>.`,
    );
  if (v.from && v.url) throw new ArgumentError("--from and --url both say where the dumps are: give one.");
  return {
    dir: v.dir ?? "snapshots",
    snapshot: v.snapshot,
    from: v.from,
    url: v.url ?? WIKIMEDIA_INCR,
    wiki: v.wiki,
    startDay: v["start-day"],
    everyHours: v.every === undefined ? undefined : Number(v.every),
    keep: positiveInt("keep", v.keep) ?? 3,
    memoryBytes: bytesOf(v.memory),
    workers: workersOf(v.workers),
  };
}

const DATABASE_NAME = /^[\w-]+$/;

/** One pass: applies what is new; returns the snapshot written, if any. */
async function followOnce(args: FollowArgs, log: (line: string) => void): Promise<string | undefined> {
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

/** The command, on its arguments (what follows its name). */
export async function main(argv: string[]): Promise<void> {
  await mainOf("snapshot:follow", async () => {
    const args = parseFollowArgs(argv);
    if (args === "help") {
      process.stdout.write(HELP);
      return;
    }
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
  });
}

if (import.meta.main) await main(Bun.argv.slice(2));
