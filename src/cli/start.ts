/**
 * bun run start — serves the API (PORT, default 8080) from the newest snapshot in
 * snapshots/ (or TOME_SNAPSHOT), with the keys and usage under TOME_DATA. When there is no
 * snapshot, builds one first from TOME_DUMP (a path or URL; by default the latest Simple
 * English Wikipedia pages-articles dump). When there is no key, creates one and prints it.
 */
import { Access, createKey, DEFAULT_DATA_DIR, DEFAULT_KEY_MS_PER_SECOND, KeyStoreError, updateKeyFile, UsageError } from "../access";
import { createApp, DOCS_PATH, serve, stdoutLog } from "../http";
import { DEFAULT_CHUNK_WORDS, DumpError } from "../ingest";
import { open } from "../search";
import { latestSnapshot, SnapshotError } from "../snapshot";
import { buildSnapshot } from "./snapshot-build";
import { indexProgress } from "./progress";

export const DEFAULT_DUMP = "https://dumps.wikimedia.org/simplewiki/latest/simplewiki-latest-pages-articles.xml.bz2";
const SNAPSHOT_DIR = "snapshots";
const DEFAULT_PORT = 8080;

const HELP = `Usage: bun run start

Environment:
  TOME_SNAPSHOT  snapshot to serve (default: the newest *.tome in ${SNAPSHOT_DIR}/)
  TOME_DUMP      dump to build a snapshot from when there is none (path or URL;
                 default: ${DEFAULT_DUMP})
  PORT           HTTP port (default 8080; 0 picks a free one)
  TOME_DATA      API keys and usage counters (default ./${DEFAULT_DATA_DIR}); manage keys with
                 "bun run keys"
  TOME_AUTH      "off" serves every route without a key, for benchmarks and local use only
  TOME_KEY_MS_PER_SECOND
                 milliseconds of the server's thread one key may use per second, on average
                 (default ${DEFAULT_KEY_MS_PER_SECOND}; 0: no limit); past it, 429 rate_limit_exceeded
`;

/** Keys and usage, or none when TOME_AUTH=off. Creates the first key when there is none. */
function openAccess(env = process.env): Access | undefined {
  if (env.TOME_AUTH === "off") {
    console.error("WARNING: TOME_AUTH=off: every route answers without a key, with no rate limit or quota. For benchmarks and local use only.");
    return undefined;
  }
  if (env.TOME_AUTH !== undefined && env.TOME_AUTH !== "" && env.TOME_AUTH !== "on") {
    console.error(`start: TOME_AUTH must be "on" (the default) or "off", not "${env.TOME_AUTH}".`);
    process.exit(2);
  }
  const dataDir = env.TOME_DATA || DEFAULT_DATA_DIR;
  const share = env.TOME_KEY_MS_PER_SECOND;
  if (share !== undefined && share !== "" && !/^[0-9]+$/.test(share)) {
    console.error(`start: TOME_KEY_MS_PER_SECOND must be a whole number of milliseconds (0: no limit), not "${share}".`);
    process.exit(2);
  }
  const access = new Access({ dataDir, keyMsPerSecond: share ? Number(share) : undefined });
  if (access.firstStart) {
    const { key, record } = updateKeyFile(dataDir, (file) =>
      createKey(file, { name: "default", account: "default", plan: "enterprise", scope: "full", now: Date.now() }),
    );
    console.error(
      `No API key existed in ${dataDir}/, so one was created (${record.id}, account default, enterprise plan):\n\n` +
        `    ${key}\n\nIt is shown only this once: keep it. Send it as X-API-Key (or Authorization: Bearer). ` +
        `Manage keys with "bun run keys" (see --help).`,
    );
  }
  return access;
}

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
    const access = openAccess();
    const path = await ensureSnapshot();
    const started = performance.now();
    const bars = indexProgress();
    const tome = await open(path, { log: (l) => console.error(l), progress: bars.update }).finally(() => bars.stop());
    const m = tome.snapshot.meta;
    console.error(
      `Loaded ${path}: ${m.wiki.host}, ${m.indexedPages} pages, ${m.indexedChunks} chunks${m.truncated ? " (truncated)" : ""}, in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
    );
    const port = readPort(process.env.PORT);
    const requests = stdoutLog();
    const running = serve(createApp(tome, { access, log: requests.sink }), { port });
    access?.start();
    console.error(`Tome is serving on ${running.url.origin} (API docs: ${running.url.origin}${DOCS_PATH}). Stop it with Ctrl-C or SIGTERM.`);
    const stop = async (signal: string) => {
      console.error(`${signal}: no new connections; finishing the requests in flight.`);
      const before = running.answered();
      await running.stop();
      await requests.flush();
      access?.stop();
      console.error(`Stopped: ${running.answered() - before} request(s) answered after ${signal}.`);
      process.exit(0);
    };
    process.once("SIGTERM", () => void stop("SIGTERM"));
    process.once("SIGINT", () => void stop("SIGINT"));
  } catch (err) {
    if (err instanceof DumpError || err instanceof SnapshotError || err instanceof KeyStoreError || err instanceof UsageError) {
      console.error(`start: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}
