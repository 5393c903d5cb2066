/** bun run snapshot:update — a snapshot plus incremental dumps (and deletions) → a new snapshot. */
import type { Deletions, UpdateReport } from "../build";
import { DEFAULT_MEMORY_BYTES } from "../build-defaults";
import { ArgumentError, mainAfterOptions, note } from "./main";
import { restartWithAllocatorSettings } from "./allocator";
import { readOptions } from "./args";
import { checkOut } from "./out";
import {
  bytesOf,
  claimOutput,
  logSources,
  memoryHere,
  sizeText,
  stoppable,
  workersOf,
  logTextless,
  writtenSummary,
} from "./snapshot-build";
import { MAX_BUILD_WORKERS } from "../scheduling";
import { commandLine } from "../invocation";
import { printableName } from "../printable";
import type { BuildProgressDisplay } from "./progress";

const HELP = `Usage: ${commandLine("snapshot:update")} --base <snapshot> --dump <path|url> [--dump …] [--deleted <file>] --out <snapshot>

Applies MediaWiki dumps of newer revisions (Wikimedia's daily "adds-changes" incremental
dumps, other/incr/<wiki>/<YYYYMMDD>/, or any export of the same wiki) to a snapshot, and
writes the result as a new snapshot. The base is left as it is, unless --out names it: then
it is replaced, once the new snapshot is whole (a kill before leaves it as it was).

  - a newer revision of a page, article or redirect, replaces it (an older or equal one is
    ignored; a base built before snapshots kept their redirects' revisions counts its
    redirects older than any revision in the dumps);
  - new pages are added; redirects are added, changed or replaced (a redirect that became
    an article, an article that became a redirect);
  - the pages and redirects named in --deleted are removed;
  - the newest page holding a title keeps it, as in a full build.

The result is what a full build over the base's dumps followed by these would give (the same
pages, chunks, search index and rankings). It costs the change plus a merge of the base's
index, not a rebuild. Its metadata records the base (content hash) and the dumps applied
(meta.updates). /v1/changes?since=<time before the update> lists the pages it changed.

The base is checked whole first (every section's checksum). A corrupt base, a damaged or
truncated dump, or a dump of another wiki is refused, and nothing is written.

Options:
  --base <file>         the snapshot to start from (required)
  --dump <path|url>     a dump to apply (plain, .bz2, .gz or .xz); repeat for several, oldest
                        first
  --deleted <file>      pages to remove, one a line: a page id (digits, or id:123), or a
                        title (title:1984 for a title of digits); blank lines and # comments
                        are ignored. Deletions are not in the incremental dumps (they come
                        from the mediawiki.page_change event stream). A file that is not
                        text is refused; lines naming no page are counted in a warning.
  --out <file>          where to write the new snapshot (required; written to a temporary
                        file and renamed into place)
  --memory <size>       memory for the new pages' index inversion before it spills a run
                        (e.g. 500M, 2G; at least 1M, at most this machine's memory or its container's
                        limit, ${memoryHere()}; default ${sizeText(DEFAULT_MEMORY_BYTES)}), as for snapshot:build
  --workers <n>         parsing threads, at most ${MAX_BUILD_WORKERS} (default: TOME_BUILD_WORKERS, else one per core);
                        the snapshot is the same bytes whatever their number
  -h, --help            show this help

Example:
  ${commandLine("snapshot:update")} --base snapshots/enwiki.tome \\
    --dump enwiki-20240102-pages-meta-hist-incr.xml.bz2 --out snapshots/enwiki-20240102.tome

To follow a wiki day after day, see \`${commandLine("snapshot:follow")} --help\`.
`;

export interface UpdateArgs {
  base: string;
  dumps: string[];
  deleted?: string;
  out: string;
  memoryBytes?: number;
  workers?: number;
}

export function parseUpdateArgs(argv: string[]): UpdateArgs | "help" {
  const v = readOptions(argv, {
    base: { type: "string" },
    dump: { type: "string", multiple: true },
    deleted: { type: "string" },
    out: { type: "string" },
    memory: { type: "string" },
    workers: { type: "string" },
  });
  if (v === "help") return "help";
  if (!v.base) throw new ArgumentError("no base given: pass --base <snapshot>.");
  if (!v.dump?.length && !v.deleted)
    throw new ArgumentError("nothing to apply: pass --dump <path|url> (or --deleted <file>).");
  if (!v.out) throw new ArgumentError("no output given: pass --out <snapshot>.");
  // Found now, not after the update's work: its snapshot is renamed to --out at the end. The base it may replace.
  checkOut(v.out, [...(v.dump ?? []), ...(v.deleted ? [v.deleted] : [])]);
  return {
    base: v.base,
    dumps: v.dump ?? [],
    deleted: v.deleted,
    out: v.out,
    memoryBytes: bytesOf(v.memory),
    workers: workersOf(v.workers),
  };
}

/** Applies the update; messages go to `log`. */
export async function runUpdate(
  args: UpdateArgs,
  log: (line: string) => void = note,
  days?: string[],
  shown?: BuildProgressDisplay,
): Promise<UpdateReport> {
  // The build is loaded once the arguments are read: --help and a wrong option load no engine. Timed from after it.
  const { readDeletions } = await import("../build");
  const started = performance.now();
  const deleted = args.deleted ? readDeletions(args.deleted) : undefined;
  const release = claimOutput(args.out, log);
  try {
    return await updateTo(args, log, started, deleted, days, shown);
  } finally {
    release();
  }
}

async function updateTo(
  args: UpdateArgs,
  log: (line: string) => void,
  started: number,
  deleted: Deletions | undefined,
  days: string[] | undefined,
  shown: BuildProgressDisplay | undefined,
): Promise<UpdateReport> {
  const [{ updateSnapshot }, { buildProgress }] = await Promise.all([import("../build"), import("./progress")]);
  const progress = shown ?? buildProgress();
  let report: UpdateReport;
  try {
    report = await stoppable((signal) =>
      updateSnapshot({
        base: args.base,
        dumps: args.dumps,
        deleted,
        out: args.out,
        memoryBytes: args.memoryBytes,
        workers: args.workers,
        days,
        onProgress: progress.reading,
        progress: progress.stage,
        signal,
      }),
    );
  } finally {
    progress.stop();
  }
  const { meta: m, applied: a, result } = report;
  logSources(result, log);
  const byList = a.deleted
    ? ` (${a.deleted.pages} by ${printableName(a.deleted.file)}), ${a.deleted.redirects} redirect(s) removed by ${printableName(a.deleted.file)}`
    : "";
  log(
    `wrote ${printableName(args.out)}: ${a.changed} pages changed, ${a.added} added, ${a.removed} removed${byList}; ${writtenSummary(m, report.bytes, report.runs, started)}`,
  );
  const unmatched = report.unmatchedDeletions;
  if (unmatched && a.deleted) {
    const lines = unmatched.count === 1 ? "1 line" : `${unmatched.count} lines`;
    log(
      `  warning: ${lines} of ${printableName(a.deleted.file)} matched no page or redirect of the base or the dumps, the first line ${unmatched.first.line}: "${printableName(unmatched.first.text)}". Check that it is the list meant, page ids or titles one a line (D45).`,
    );
  }
  logTextless(report.textless, log);
  return report;
}

/** The command, on its arguments (what follows its name). */
export async function main(argv: string[]): Promise<void> {
  await mainAfterOptions(
    "snapshot:update",
    () => parseUpdateArgs(argv),
    HELP,
    (args) => runUpdate(args),
    {
      lowered: true,
    },
  );
}

if (import.meta.main) {
  restartWithAllocatorSettings();
  await main(Bun.argv.slice(2));
}
