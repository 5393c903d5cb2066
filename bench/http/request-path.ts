/**
 * bun bench/http/request-path.ts [--seconds S] [--connections C] [--rounds R] [--snapshot FILE] [--json]
 *
 * What a search costs through the server beyond the search itself (issue 43): for each query
 * class of bench/http/http.ts's mix (bench/queries.ts, 100 queries a class), the library's searches a
 * second in this process (Engine.search with the route's defaults, one core) and the server's
 * searches a second (`bun run start` in its own process on core 0, keyed requests from
 * autocannon on core 1, C connections). Rounds interleave the two; the figures are medians,
 * and the ratio server ÷ in process is taken per round. The target: at least 0.5 for every class.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const HELP = `Usage: bun bench/http/request-path.ts [options]

  --seconds S       seconds per class, each way, per round (default 2)
  --connections C   the server's load: autocannon connections (default 8)
  --rounds R        rounds (default 3)
  --snapshot FILE   this snapshot (default: one built from the shared English dumps)
  --root DIR        the checkout whose server to run (default: this one), for a before/after
  --json            print the figures as JSON
`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    seconds: { type: "string", default: "2" },
    connections: { type: "string", default: "8" },
    rounds: { type: "string", default: "3" },
    snapshot: { type: "string" },
    root: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { DEFAULTS, open } = await import("../../src/search");
const { onServerCore, pinLoadGenerator } = await import("../cores");
const { queryMix } = await import("../queries");
const { BENCH_WORK_SHARE, benchKey, benchSnapshot, ROOT, spawnServer } = await import("../servers");

const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const root = values.root ?? ROOT;

await pinLoadGenerator();
const work = mkdtempSync(join(tmpdir(), "tome-request-path-"));
const { path, snapshot } = await benchSnapshot(values.snapshot, work);
const dataDir = join(work, "data");
const key = await benchKey(dataDir, root);
const server = await spawnServer(onServerCore(["bun", join(root, "src/cli/start.ts")]), {
  TOME_SNAPSHOT: path,
  TOME_DATA: dataDir,
  TOME_KEY_MS_PER_SECOND: BENCH_WORK_SHARE,
});
const engine = open(path);

const mix = queryMix(snapshot);
const classes = Object.entries(mix).map(([name, make]) => ({
  name,
  queries: Array.from({ length: 100 }, make).filter((q) => q.replace(/"/g, "").trim()),
}));
/** The route's defaults (api.md 4.1, DEFAULTS in src/search/options.ts). */
const OPTIONS = { ...DEFAULTS };

function inProcess(queries: string[]): number {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < end) engine.search(queries[n++ % queries.length]!, OPTIONS);
  return n / seconds;
}

async function throughServer(queries: string[]): Promise<number> {
  let i = 0;
  const result = await autocannon({
    url: server.url,
    connections,
    duration: seconds,
    headers: { "x-api-key": key },
    requests: [
      {
        setupRequest: (req) => ({ ...req, path: `/v1/search?q=${encodeURIComponent(queries[i++ % queries.length]!)}` }),
      },
    ],
  });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.total / seconds;
}

const perClass = new Map(
  classes.map((c) => [c.name, { library: [] as number[], server: [] as number[], ratio: [] as number[] }]),
);
try {
  for (const c of classes) {
    inProcess(c.queries.slice(0, 20));
    await throughServer(c.queries.slice(0, 20)); // warm-up
  }
  for (let r = 0; r < rounds; r++) {
    for (const c of classes) {
      const library = inProcess(c.queries);
      const served = await throughServer(c.queries);
      const row = perClass.get(c.name)!;
      row.library.push(library);
      row.server.push(served);
      row.ratio.push(served / library);
      console.error(`round ${r + 1}, ${c.name}: in process ${library.toFixed(0)}/s, server ${served.toFixed(0)}/s`);
    }
  }
} finally {
  await server.stop();
}

const rows = classes.map((c) => {
  const row = perClass.get(c.name)!;
  return { class: c.name, library: median(row.library), server: median(row.server), ratio: median(row.ratio) };
});
if (values.json) console.log(JSON.stringify({ seconds, connections, rounds, rows }, null, 2));
else {
  console.log(
    `| class | in process searches/s | server searches/s (${connections} connections) | server ÷ in process |`,
  );
  console.log("|---|---|---|---|");
  for (const r of rows)
    console.log(`| ${r.class} | ${r.library.toFixed(0)} | ${r.server.toFixed(0)} | ${r.ratio.toFixed(2)} |`);
}
