/**
 * bun run start — serves the API (PORT, default 8080) from the newest snapshot in snapshots/ (or TOME_SNAPSHOT). When there
 * is none, builds one first from TOME_DUMP (a path or URL; by default the latest Simple
 * English Wikipedia pages-articles dump).
 */
import { createApp, DOCS_PATH, serve } from "../http";
import { DEFAULT_CHUNK_WORDS, DumpError } from "../ingest";
import { open } from "../search";
import { latestSnapshot, SnapshotError } from "../snapshot";
import { buildSnapshot } from "./snapshot-build";

export const DEFAULT_DUMP = "https://dumps.wikimedia.org/simplewiki/latest/simplewiki-latest-pages-articles.xml.bz2";
const SNAPSHOT_DIR = "snapshots";
const DEFAULT_PORT = 8080;

const HELP = `Usage: bun run start

Environment:
  TOME_SNAPSHOT  snapshot to serve (default: the newest *.tome in ${SNAPSHOT_DIR}/)
  TOME_DUMP      dump to build a snapshot from when there is none (path or URL;
                 default: ${DEFAULT_DUMP})
  PORT           HTTP port (default 8080; 0 picks a free one)
`;

/** The snapshot to serve, building one first if there is none. */
export async function ensureSnapshot(env = process.env): Promise<string> {
  const explicit = env.TOME_SNAPSHOT;
  if (explicit) return explicit;
  const found = latestSnapshot(SNAPSHOT_DIR);
  if (found) return found;
  const dump = env.TOME_DUMP || DEFAULT_DUMP;
  console.error(`No snapshot in ${SNAPSHOT_DIR}/: building one from ${dump} (set TOME_DUMP to use another dump).`);
  return buildSnapshot({ dumps: [dump], chunkWords: DEFAULT_CHUNK_WORDS, allowTruncated: false });
}

function readPort(raw: string | undefined): number {
  if (raw === undefined || raw === "") return DEFAULT_PORT;
  const port = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!(port <= 65535)) {
    console.error(`start: PORT must be a number from 0 to 65535 (0 picks a free port), not "${raw}".`);
    process.exit(2);
  }
  return port;
}

if (import.meta.main) {
  if (Bun.argv.includes("--help") || Bun.argv.includes("-h")) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  try {
    const path = await ensureSnapshot();
    const started = performance.now();
    const tome = await open(path, { log: (l) => console.error(l) });
    const m = tome.snapshot.meta;
    console.error(
      `Loaded ${path}: ${m.wiki.host}, ${m.indexedPages} pages, ${m.indexedChunks} chunks${m.truncated ? " (truncated)" : ""}, in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
    );
    const port = readPort(process.env.PORT);
    const running = serve(createApp(tome), { port });
    console.error(`Tome is serving on ${running.url.origin} (API docs: ${running.url.origin}${DOCS_PATH}). Stop it with Ctrl-C or SIGTERM.`);
    const stop = async (signal: string) => {
      console.error(`${signal}: no new connections; finishing the requests in flight.`);
      const before = running.answered();
      await running.stop();
      console.error(`Stopped: ${running.answered() - before} request(s) answered after ${signal}.`);
      process.exit(0);
    };
    process.once("SIGTERM", () => void stop("SIGTERM"));
    process.once("SIGINT", () => void stop("SIGINT"));
  } catch (err) {
    if (err instanceof DumpError || err instanceof SnapshotError) {
      console.error(`start: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}
