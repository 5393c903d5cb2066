/** bun run snapshot:build — MediaWiki dumps → a Tome snapshot. */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_CHUNK_WORDS, DumpError, ingest } from "../ingest";
import { buildIndexes, encodeIndexes, indexPath } from "../search";
import { atomicWrite } from "../files";
import { fromIngest, SNAPSHOT_EXTENSION, SnapshotError, writeSnapshot } from "../snapshot";
import { indexProgress, ingestProgress } from "./progress";

const HELP = `Usage: bun run snapshot:build --dump <path|url> [--dump <path|url> …] [options]

Builds a Tome snapshot from MediaWiki XML dumps (schema 0.3 to 0.11; plain, .bz2, .gz or
.xz, recognised by content). Several dumps of the same wiki merge: the newest revision of
each page wins. Dumps of different wikis are refused.

Options:
  --dump <path|url>     a dump file or http(s) URL; repeat for several (required)
  --out <file>          where to write the snapshot (default: snapshots/<dbname>${SNAPSHOT_EXTENSION})
  --limit <n>           stop after n articles
  --chunk-words <n>     words per chunk, at most (default ${DEFAULT_CHUNK_WORDS}; 2 characters of
                        Japanese or Chinese count as one word)
  --allow-truncated     keep the complete pages of a truncated or corrupt dump, and mark the
                        snapshot truncated, instead of failing
  --workers <n>         parsing workers (default: one per core)
  --no-index            do not build the search indexes now (the server builds them at
                        its first boot instead, and keeps them beside the snapshot)
  -h, --help            show this help

Example:
  bun run snapshot:build --dump ../shared/data/dumps/enwiki-2016-sample.xml.bz2 --out snapshots/en.tome
`;

export interface BuildArgs {
  dumps: string[];
  out?: string;
  limit?: number;
  chunkWords: number;
  allowTruncated: boolean;
  workers?: number;
  /** Build and keep the search indexes beside the snapshot (default true). */
  index?: boolean;
}

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) < 1) throw new UsageError(`--${name} takes a whole number ≥ 1, not "${value}".`);
  return Number(value);
}

class UsageError extends Error {}

export function parseBuildArgs(argv: string[]): BuildArgs | "help" {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        dump: { type: "string", multiple: true },
        out: { type: "string" },
        limit: { type: "string" },
        "chunk-words": { type: "string" },
        "allow-truncated": { type: "boolean", default: false },
        workers: { type: "string" },
        "no-index": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) return "help";
  if (!v.dump?.length) throw new UsageError("no dump given: pass --dump <path|url>.");
  return {
    dumps: v.dump,
    out: v.out,
    limit: positiveInt("limit", v.limit),
    chunkWords: positiveInt("chunk-words", v["chunk-words"]) ?? DEFAULT_CHUNK_WORDS,
    allowTruncated: v["allow-truncated"] ?? false,
    workers: positiveInt("workers", v.workers),
    index: !v["no-index"],
  };
}

/** Builds and writes a snapshot; returns its path. Messages go to stderr. */
export async function buildSnapshot(args: BuildArgs, log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  const started = performance.now();
  const progress = ingestProgress();
  let result;
  try {
    result = await ingest({
      dumps: args.dumps,
      limit: args.limit,
      chunkWords: args.chunkWords,
      allowTruncated: args.allowTruncated,
      workers: args.workers,
      onProgress: (p) => progress.update(p),
    });
  } finally {
    progress.stop();
  }
  for (const s of result.sources) {
    log(`${s.dump}: schema ${s.schema}, ${s.articles} articles, ${s.redirects} redirects${s.truncated ? " (TRUNCATED)" : ""}`);
    if (s.damage) log(`  kept the complete pages before the damage: ${s.damage}`);
  }
  for (const f of result.failures.slice(0, 20)) log(`  left out page ${f.pageId} "${f.title}": ${f.error}`);
  if (result.failures.length > 20) log(`  … and ${result.failures.length - 20} more pages left out`);

  const snapshot = fromIngest(result, args.chunkWords);
  const out = args.out ?? join("snapshots", `${result.wiki.dbname || result.wiki.host}${SNAPSHOT_EXTENSION}`);
  const { bytes } = writeSnapshot(out, snapshot);
  const m = snapshot.meta;
  let indexNote = "";
  if (args.index !== false) {
    const t = performance.now();
    const bars = indexProgress();
    try {
      atomicWrite(indexPath(out), encodeIndexes(snapshot, buildIndexes(snapshot, bars.update)));
    } finally {
      bars.stop();
    }
    indexNote = `, search indexes in ${((performance.now() - t) / 1000).toFixed(1)} s`;
  }
  log(
    `wrote ${out}: ${m.indexedPages} pages, ${m.indexedChunks} chunks, ${m.skippedRedirects} redirects, ` +
      `${(bytes / 1e6).toFixed(1)} MB${m.truncated ? ", truncated" : ""}${indexNote}, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return out;
}

if (import.meta.main) {
  try {
    const args = parseBuildArgs(Bun.argv.slice(2));
    if (args === "help") {
      process.stdout.write(HELP);
      process.exit(0);
    }
    await buildSnapshot(args);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`snapshot:build: ${err.message}\nRun \`bun run snapshot:build --help\` for usage.`);
      process.exit(2);
    }
    if (err instanceof DumpError || err instanceof SnapshotError) {
      console.error(`snapshot:build: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}
