/**
 * bun bench/load/cp-over-served.ts [--trials N] [--connections N] [--root DIR] [--json]
 *
 * `cp` over the snapshot the server serves, while it is under load (issue 57, D56, D84): the
 * real server serves snapshots/served.tome (enwiki-2016-sample, 300-word chunks); autocannon
 * keeps N connections busy with searches, chunk and page reads; each trial copies the other
 * build of the same dump (120-word chunks, another content hash) over the served file with
 * `cp`, then waits until the server serves it (or has died). Reports the trials the server
 * survived, how it died if it did (a SIGBUS is "Bus error"), how long each cp took (its open
 * waits while the server lets go of the file) and when the new content was served, and the
 * answers: 2xx, 503 (allowed while the file is rewritten, D56), other statuses, connection
 * errors and timeouts.
 */
import { copyFileSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Instance, Result } from "autocannon";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    trials: { type: "string", default: "4" },
    connections: { type: "string", default: "64" },
    root: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(`Usage: bun bench/load/cp-over-served.ts [--trials N] [--connections N] [--root DIR] [--json]

  --trials N        cp over the served snapshot N times (default 4), alternating two builds
  --connections N   concurrent connections of searches, chunk and page reads (default 64)
  --root DIR        the checkout whose server to run (default: this one), for a before/after
  --json            print the figures as JSON
`);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { dump, ROOT, spawnServer, writeSnapshot } = await import("../support");
const { ingest } = await import("../../src/ingest");

const trials = Number(values.trials);
const root = values.root ? resolve(values.root) : ROOT;

const work = mkdtempSync(join(tmpdir(), "tome-cp-over-"));
const builds = await Promise.all(
  [300, 120].map(async (chunkWords) => {
    const options = { dumps: [dump("enwiki-2016-sample.xml.bz2")], chunkWords };
    const path = join(work, `en-${chunkWords}.tome`);
    const report = writeSnapshot(await ingest(options), path, options);
    return { path, id: report.meta.contentHash };
  }),
);
const folder = join(work, "snapshots");
mkdirSync(folder);
const served = join(folder, "served.tome");
copyFileSync(builds[0]!.path, served);
const server = await spawnServer(
  ["bun", join(root, "src/cli/start.ts")],
  { TOME_AUTH: "off", TOME_SNAPSHOT: "", TOME_DATA: join(work, "data"), TOME_KEY_MS_PER_SECOND: "0" },
  { cwd: work, ignoreStdout: true },
);

const servedId = async (): Promise<string | undefined> => {
  try {
    const r = await fetch(`${server.url}/v1/meta`);
    if (r.status !== 200) return undefined;
    return ((await r.json()) as { search_engine_version: { commitSha: string } }).search_engine_version.commitSha;
  } catch {
    return undefined;
  }
};

const pages = [12, 25, 39, 290, 303, 305, 307, 308, 309, 316, 324, 330, 332, 334, 336, 339];
const words = ["history", "war", "water", "city", "music", "language", "river", "king"];
const requests = [
  ...words.map((w) => ({ method: "GET" as const, path: `/v1/search?q=${w}&limit=10` })),
  ...pages.map((p) => ({ method: "GET" as const, path: `/v1/chunk/${p}_0` })),
  ...pages.map((p) => ({ method: "GET" as const, path: `/v1/page/${p}` })),
];
let load!: Instance;
const finished = new Promise<Result>((done, fail) => {
  load = autocannon(
    { url: server.url, connections: Number(values.connections), duration: 3600, requests },
    (err, result) => (err ? fail(err) : done(result)),
  );
});

await Bun.sleep(1500);
let survived = 0;
const switchMs: number[] = [];
/** How long each cp took: its open waits while the server lets go of the file (D84). */
const cpMs: number[] = [];
for (let trial = 1; trial <= trials; trial++) {
  const next = builds[trial % 2]!;
  const started = Date.now();
  const cp = Bun.spawnSync(["cp", next.path, served]);
  if (cp.exitCode !== 0) throw new Error(`cp failed: ${cp.stderr}`);
  cpMs.push(Date.now() - started);
  let id: string | undefined;
  while (server.proc.exitCode === null && server.proc.signalCode === null && Date.now() - started < 20_000) {
    id = await servedId();
    if (id === next.id) break;
    await Bun.sleep(50);
  }
  if (id !== next.id) break;
  switchMs.push(Date.now() - started);
  survived++;
  await Bun.sleep(1000);
}
load.stop();
const result = await finished;
const alive = server.proc.exitCode === null && server.proc.signalCode === null;
if (alive) await server.stop();
else await server.proc.exited;

const statuses = Object.fromEntries(
  Object.entries(result.statusCodeStats as Record<string, { count: number }>).map(([code, s]) => [code, s.count]),
);
const figures = {
  root,
  trials,
  survived,
  alive,
  exit: alive ? null : (server.proc.signalCode ?? server.proc.exitCode),
  busError: server.stderr().includes("Bus error"),
  cpMs,
  switchMs,
  answers: result.requests.total,
  statuses,
  errors: result.errors,
  timeouts: result.timeouts,
};
if (values.json) console.log(JSON.stringify(figures));
else {
  console.log(
    `cp over the served snapshot under ${values.connections} connections: survived ${survived} of ${trials} trial(s); ` +
      (alive ? "the server is alive" : `the server died (${figures.exit}${figures.busError ? ", Bus error" : ""})`),
  );
  console.log(`cp took (ms): ${cpMs.join(", ")}; the new content served after (ms): ${switchMs.join(", ") || "none"}`);
  console.log(
    `answers ${figures.answers}: ${JSON.stringify(statuses)}; connection errors ${figures.errors}, timeouts ${figures.timeouts}`,
  );
}
