/**
 * From Tome to a vector store, and kept fresh: a snapshot's export (`snapshot:export`, one JSON
 * object per chunk) read in batches, each batch's text embedded by a function you supply, the
 * vectors stored in LanceDB (@lancedb/lancedb, in process, on disk); then, from a running
 * server, the pages GET /v1/changes lists since the last sync are fetched again and their
 * chunks replaced.
 *
 *     bun run snapshot:export --out chunks.jsonl.zst
 *     bun examples/embedding-pipeline.ts load --export chunks.jsonl.zst --db vectors/
 *     TOME_URL=http://localhost:8080 TOME_API_KEY=wk_... bun examples/embedding-pipeline.ts sync --db vectors/
 *     bun examples/embedding-pipeline.ts query --db vectors/ "albedo of snow"
 *
 * The command line embeds with `deterministicHashEmbedding`, a stand-in that needs no model
 * (hashed words, no meaning): pass your model's function to loadExport, syncChanges and
 * nearest instead. Every row keeps what a reuser must show: the article's url, the revision's
 * permalink, the license and the modifications (CC BY-SA 4.0; see GET /v1/license).
 */
import * as lancedb from "@lancedb/lancedb";
import { createReadStream, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { createGunzip, createZstdDecompress } from "node:zlib";

/** One line of `snapshot:export`: what GET /v1/chunk/{id} answers. */
export interface ExportedChunk {
  id: string;
  page_id: number;
  chunk_id: number;
  rev_id: number;
  title: string;
  section: string;
  text: string;
  url: string;
  timestamp: string;
  source: { project: string; page_id: number; revision_id: number; source_url: string; permalink: string };
  license: { name: string; url: string };
  modifications: string[];
}

/** Your embedding model: one vector per text, all of the same length. */
export type Embed = (texts: string[]) => Promise<number[][]>;

/** A row of the store: the chunk, its attribution, and its vector. */
interface Row extends Record<string, unknown> {
  id: string;
  page_id: number;
  chunk_id: number;
  rev_id: number;
  title: string;
  section: string;
  text: string;
  url: string;
  permalink: string;
  timestamp: string;
  license: string;
  modifications: string;
  vector: number[];
}

const TABLE = "chunks";
/**
 * Where the store keeps the time of the newest change it has seen, and the revision of each page
 * changed in that second: the next sync asks /v1/changes from that second (it lists the pages
 * changed at or after it) and skips those pages when their revision is the one stored.
 */
const SYNC_FILE = "tome-sync.json";
/**
 * There while a load replaces the table, removed once it has stored the export's last chunk: a load stopped part-way
 * (killed, or its export not read to its end) leaves it, and sync and query then refuse the store, which holds part of
 * an export (and the sync point of the load before).
 */
const LOADING_FILE = "tome-loading";

/** What the next sync starts from: a time in Unix seconds, and the pages (id → revision) already stored from that second. */
interface SyncPoint {
  since: number;
  seen: Map<number, number>;
}

/** A sync point moved on by a page stored (its id, revision and time). */
function advance(point: SyncPoint, page: { page_id: number; rev_id: number; ts_unix: number }): void {
  if (page.ts_unix > point.since) {
    point.since = page.ts_unix;
    point.seen.clear();
  }
  if (page.ts_unix === point.since) point.seen.set(page.page_id, page.rev_id);
}

function readSyncPoint(db: string): SyncPoint {
  const path = join(db, SYNC_FILE);
  if (!existsSync(path)) return { since: 0, seen: new Map() };
  const saved = JSON.parse(readFileSync(path, "utf8")) as { since: number; seen?: [number, number][] };
  return { since: saved.since, seen: new Map(saved.seen ?? []) };
}

function writeSyncPoint(db: string, point: SyncPoint): void {
  writeFileSync(join(db, SYNC_FILE), JSON.stringify({ since: point.since, seen: [...point.seen] }));
}

/** The export's chunks, one at a time (plain, .gz or .zst, by the file's name, however its ending is spelt: .GZ, .Zst). */
export async function* readExport(path: string): AsyncGenerator<ExportedChunk> {
  let input: Readable = createReadStream(path);
  if (/\.gz$/i.test(path)) input = input.pipe(createGunzip());
  else if (/\.zst$/i.test(path)) input = input.pipe(createZstdDecompress());
  let n = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    n++;
    if (!line) continue;
    let chunk: ExportedChunk;
    try {
      chunk = JSON.parse(line) as ExportedChunk;
    } catch {
      throw new Error(
        `line ${n} of ${path} is not JSON: give the file snapshot:export wrote (JSON Lines, plain or compressed as its name ends, .gz or .zst).`,
      );
    }
    yield chunk;
  }
}

/** Groups of `size` items (the last may hold fewer). */
export async function* batches<T>(items: AsyncIterable<T> | Iterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

async function rowsOf(chunks: ExportedChunk[], embed: Embed): Promise<Row[]> {
  const vectors = await embed(
    chunks.map((c) => (c.section ? `${c.title} — ${c.section}\n${c.text}` : `${c.title}\n${c.text}`)),
  );
  if (vectors.length !== chunks.length)
    throw new Error(`the embedding function gave ${vectors.length} vectors for ${chunks.length} texts`);
  return chunks.map((c, i) => ({
    id: c.id,
    page_id: c.page_id,
    chunk_id: c.chunk_id,
    rev_id: c.rev_id,
    title: c.title,
    section: c.section,
    text: c.text,
    url: c.url,
    permalink: c.source.permalink,
    timestamp: c.timestamp,
    license: `${c.license.name} (${c.license.url})`,
    modifications: c.modifications.join("; "),
    vector: vectors[i]!,
  }));
}

/**
 * Loads an export into a new table of the store at `db` (replacing one there), `batchSize`
 * chunks per call of `embed`; returns the chunks stored. The next sync starts from the newest
 * change the export held.
 */
export async function loadExport(options: {
  exportPath: string;
  db: string;
  embed: Embed;
  batchSize?: number;
  onBatch?: (stored: number) => void;
}): Promise<number> {
  if (!existsSync(options.exportPath))
    throw new Error(`no export at ${options.exportPath}: write one with \`bun run snapshot:export --out FILE\`.`);
  if (statSync(options.exportPath).isDirectory())
    throw new Error(
      `${options.exportPath} is a folder, not an export: name the file snapshot:export wrote in it (e.g. chunks.jsonl.zst).`,
    );
  const connection = await lancedb.connect(options.db);
  // "overwrite" where there is no table yet would log a warning that it creates one.
  const mode = (await connection.tableNames()).includes(TABLE) ? "overwrite" : "create";
  let table: lancedb.Table | undefined;
  let stored = 0;
  const point: SyncPoint = { since: 0, seen: new Map() };
  for await (const batch of batches(readExport(options.exportPath), options.batchSize ?? 256)) {
    const rows = await rowsOf(batch, options.embed);
    if (table) await table.add(rows);
    else {
      writeFileSync(join(options.db, LOADING_FILE), "");
      table = await connection.createTable(TABLE, rows, { mode });
    }
    stored += rows.length;
    for (const c of batch) advance(point, { ...c, ts_unix: Math.floor(Date.parse(c.timestamp) / 1000) });
    options.onBatch?.(stored);
  }
  writeSyncPoint(options.db, point);
  rmSync(join(options.db, LOADING_FILE), { force: true });
  return stored;
}

/** The server, as the sync reads it. */
export interface Server {
  url: string;
  apiKey: string;
}

/** Tries of one request when the server answers 429 or 503 with a Retry-After of at most MAX_RETRY_WAIT_S (a key's rate, a busy server), as client.ts makes them. */
const TRIES = 4;
/** A longer wait (a spent monthly quota waits for the next month) fails at once. */
const MAX_RETRY_WAIT_S = 10;

async function get<T>(server: Server, path: string): Promise<T> {
  const url = `${server.url.replace(/\/$/, "")}${path}`;
  for (let tried = 1; ; tried++) {
    let res: Response;
    try {
      res = await fetch(url, { headers: { authorization: `Bearer ${server.apiKey}` } });
    } catch (err) {
      throw new Error(`cannot reach ${server.url} (${(err as Error).message}): is the server running? Set TOME_URL.`);
    }
    if (res.ok) return (await res.json()) as T;
    const body = (await res.json().catch(() => ({}))) as { message?: string };
    const retryAfter = res.headers.get("retry-after");
    const wait = retryAfter !== null && /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) : undefined;
    if ((res.status === 429 || res.status === 503) && wait !== undefined && wait <= MAX_RETRY_WAIT_S && tried < TRIES) {
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      continue;
    }
    throw new Error(`GET ${path}: ${res.status}${body.message ? `, ${body.message}` : ""}`);
  }
}

/** Unix seconds, or an RFC 3339 date-time with a zone, as /v1/changes reads `since`. */
export function readSince(raw: string): number {
  if (/^[0-9]+$/.test(raw)) return Number(raw);
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(raw)
    ? Date.parse(raw)
    : Number.NaN;
  if (Number.isNaN(ms))
    throw new RangeError(
      `--since takes Unix seconds or an RFC 3339 date-time with a zone (2026-01-01T00:00:00Z), not "${raw}".`,
    );
  return Math.floor(ms / 1000);
}

/** Every chunk of a page, as the export has them: GET /v1/page answers the page (its revision, url, source, license) and its chunks. */
async function chunksOfPage(server: Server, pageId: number): Promise<ExportedChunk[]> {
  type PageBody = {
    page: Pick<ExportedChunk, "rev_id" | "url" | "timestamp" | "source" | "license">;
    chunks: { results: Pick<ExportedChunk, "id" | "page_id" | "chunk_id" | "title" | "section" | "text">[] };
    attribution: { modifications: string[] };
  };
  const { page, chunks, attribution } = await get<PageBody>(server, `/v1/page/${pageId}?max_chunks=200000`);
  const { rev_id, url, timestamp, source, license } = page;
  return chunks.results.map((c) => ({
    ...c,
    rev_id,
    url,
    timestamp,
    source,
    license,
    modifications: attribution.modifications,
  }));
}

/**
 * Brings the store up to date with the server: every page GET /v1/changes lists since the last
 * load or sync (or since `since`, all of them again) has its rows replaced by its chunks now,
 * but a page the last one stored at the revision listed. Returns the pages synced and the time
 * the next sync starts from. Pages deleted from the wiki are not listed by /v1/changes: reload
 * from a new export to drop them.
 */
export async function syncChanges(options: {
  db: string;
  server: Server;
  embed: Embed;
  since?: number;
  pageSize?: number;
}): Promise<{ pages: number; chunks: number; since: number }> {
  const table = await openStore(options.db);
  const point = options.since === undefined ? readSyncPoint(options.db) : { since: options.since, seen: new Map() };
  const from = point.since;
  const stored = new Map(point.seen);
  const limit = options.pageSize ?? 100;
  let pages = 0;
  let chunks = 0;
  for (let offset = 0; ; offset += limit) {
    const changed = await get<{ results: { page_id: number; rev_id: number; ts_unix: number }[]; total: number }>(
      options.server,
      `/v1/changes?since=${from}&offset=${offset}&limit=${limit}`,
    );
    for (const page of changed.results) {
      if (page.ts_unix === from && stored.get(page.page_id) === page.rev_id) continue;
      const fresh = await chunksOfPage(options.server, page.page_id);
      await table.delete(`page_id = ${page.page_id}`);
      if (fresh.length) await table.add(await rowsOf(fresh, options.embed));
      pages++;
      chunks += fresh.length;
      advance(point, page);
    }
    if (offset + limit >= changed.total) break;
  }
  writeSyncPoint(options.db, point);
  return { pages, chunks, since: point.since };
}

/** The store's table, or an error saying how to make one (and no folder made where none was: connect would make one). */
async function openStore(db: string): Promise<lancedb.Table> {
  const none = () => new Error(`no store at ${db}: load an export into it first (load --export FILE --db ${db}).`);
  if (!existsSync(db)) throw none();
  const connection = await lancedb.connect(db);
  if (!(await connection.tableNames()).includes(TABLE)) throw none();
  if (existsSync(join(db, LOADING_FILE)))
    throw new Error(
      `the last load into ${db} did not finish (stopped, or its export not read to its end): the store holds part of an export. Load it again: load --export FILE --db ${db}.`,
    );
  return connection.openTable(TABLE);
}

/** Every row of the store at `db`. */
export async function storedRows(db: string): Promise<Row[]> {
  return (await (await openStore(db)).query().toArray()) as Row[];
}

/** The `k` stored chunks nearest to the query's vector. */
export async function nearest(options: { db: string; embed: Embed; query: string; k?: number }): Promise<Row[]> {
  const table = await openStore(options.db);
  const [vector] = await options.embed([options.query]);
  return (await table
    .search(vector!)
    .limit(options.k ?? 5)
    .toArray()) as Row[];
}

/**
 * A deterministic stand-in for an embedding model, for trying the pipeline and for its test:
 * each lower-cased word hashed into one of `dimensions` buckets, the counts normalised. It
 * captures shared words, not meaning: use a real model's function in its place.
 */
export function deterministicHashEmbedding(dimensions = 64): Embed {
  return async (texts) =>
    texts.map((text) => {
      const v = new Array<number>(dimensions).fill(0);
      for (const word of text.toLowerCase().match(/\p{L}+|\p{N}+/gu) ?? [])
        v[Number(Bun.hash(word) % BigInt(dimensions))]! += 1;
      const norm = Math.hypot(...v) || 1;
      return v.map((x) => x / norm);
    });
}

const HELP = `Usage: bun examples/embedding-pipeline.ts load --export FILE --db DIR [--batch N]
       bun examples/embedding-pipeline.ts sync --db DIR [--since T]      (TOME_URL, TOME_API_KEY)
       bun examples/embedding-pipeline.ts query --db DIR TEXT

load   stores every chunk of a snapshot:export file (.jsonl, .gz or .zst) in LanceDB at DIR
sync   replaces the chunks of every page the server's /v1/changes lists since the last load or sync
       (--since T: since T instead, Unix seconds or an RFC 3339 date-time: 2026-01-01T00:00:00Z)
query  prints the 5 stored chunks nearest to TEXT, with their attribution

Embeds with a deterministic hashing stand-in (no model): put your model in its place.
`;

/** The command line: its arguments, then what it prints; a mistake or a failure is one line on stderr, never a stack trace. */
async function main(argv: string[]): Promise<void> {
  const { parseArgs } = await import("node:util");
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      export: { type: "string" },
      db: { type: "string" },
      batch: { type: "string" },
      since: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
  });
  const [command, ...rest] = positionals;
  if (values.help || !command || !values.db) {
    process.stdout.write(HELP);
    process.exit(values.help ? 0 : 2);
  }
  const embed = deterministicHashEmbedding();
  if (command === "load" && values.export) {
    const stored = await loadExport({
      exportPath: values.export,
      db: values.db,
      embed,
      batchSize: values.batch ? Number(values.batch) : undefined,
    });
    console.log(`stored ${stored} chunks in ${values.db}`);
  } else if (command === "sync") {
    const since = values.since === undefined ? undefined : readSince(values.since);
    const apiKey = process.env.TOME_API_KEY;
    if (!apiKey) throw new RangeError("sync needs the server's key in TOME_API_KEY (and its address in TOME_URL).");
    const url = process.env.TOME_URL ?? "http://localhost:8080";
    const synced = await syncChanges({ db: values.db, server: { url, apiKey }, embed, since });
    console.log(`synced ${synced.pages} pages (${synced.chunks} chunks); next sync from ${synced.since}`);
  } else if (command === "query" && rest.length) {
    for (const row of await nearest({ db: values.db, embed, query: rest.join(" ") }))
      console.log(
        `${row.id}  ${row.title} · ${row.section || "intro"}  ${row.permalink}\n  ${row.text.slice(0, 160)}…`,
      );
  } else {
    process.stderr.write(HELP);
    process.exit(2);
  }
}

if (import.meta.main) {
  try {
    await main(Bun.argv.slice(2));
  } catch (err) {
    // A mistake in the arguments (RangeError, or parseArgs' TypeError) exits 2; anything else 1.
    const mistake = err instanceof RangeError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    console.error(`embedding-pipeline: ${(err as Error).message}`);
    process.exit(mistake ? 2 : 1);
  }
}
