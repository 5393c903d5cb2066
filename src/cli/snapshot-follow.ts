import { SNAPSHOT_EXTENSION } from "../files";
import { WIKIMEDIA_INCR } from "../build-defaults";
import { given, readOptions } from "./args";
import { ArgumentError, mainAfterOptions } from "./main";
import { restartWithAllocatorSettings } from "./allocator";
import type { FollowArgs } from "./follow-run";
import { bytesOf, positiveInt, workersOf } from "./snapshot-build";
import { commandLine } from "../invocation";
import { MAX_BUILD_WORKERS } from "../scheduling";

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

/** The command, on its arguments (what follows its name). */
export async function main(argv: string[]): Promise<void> {
  await mainAfterOptions(
    "snapshot:follow",
    () => parseFollowArgs(argv),
    HELP,
    // The build and the snapshot layer are loaded once the arguments are read: --help and a wrong option load neither.
    async (args) => (await import("./follow-run")).follow(args),
    { lowered: true },
  );
}

if (import.meta.main) {
  restartWithAllocatorSettings();
  await main(Bun.argv.slice(2));
}
