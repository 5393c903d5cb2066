/**
 * bun bench/http/pool-memory.ts --snapshot FILE [--workers W] [--searches N]
 *
 * The server's memory with and without the search pool (issue 60, D101): the real server on the
 * snapshot, with TOME_SEARCH_WORKERS=0 and then W (default 2), one after the other; each is sent
 * N searches of the mix (default 2,000, 8 at a time) once it serves and has checked the snapshot's
 * hashes in the background (which reads every page: it is idle again), and its memory is read from
 * /proc/<pid>/smaps_rollup: RSS (which counts a file page once for each mapping of it: the
 * snapshot is mapped by the request thread and by every worker), PSS (each page once, shared
 * among its mappings), and its anonymous part (the heaps: each worker's own indexes' objects).
 * What a worker adds is the difference over W.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    workers: { type: "string", default: "2" },
    searches: { type: "string", default: "2000" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help || !values.snapshot) {
  console.log("Usage: bun bench/http/pool-memory.ts --snapshot FILE [--workers W] [--searches N]");
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { openSnapshot } = await import("../../src/snapshot");
const { queryMix } = await import("../queries");
const { cpuMs, ROOT, spawnServer } = await import("../servers");

const path = values.snapshot;
const workers = Number(values.workers);
const searches = Number(values.searches);
const mix = queryMix(openSnapshot(path));
const queries = Object.values(mix)
  .flatMap((make) => Array.from({ length: 50 }, make))
  .filter((q) => q.replace(/"/g, "").trim());

/** smaps_rollup's figures, MB. */
function memory(pid: number) {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const mb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? NaN) / 1024;
  return {
    rss: mb("Rss"),
    pss: mb("Pss"),
    pssAnon: mb("Pss_Anon"),
    pssFile: mb("Pss_File"),
    anonymous: mb("Anonymous"),
  };
}

async function measure(searchWorkers: number) {
  const started = performance.now();
  const server = await spawnServer(["bun", join(ROOT, "src/cli/start.ts")], {
    TOME_SNAPSHOT: path,
    TOME_SNAPSHOT_WATCH: "off",
    TOME_AUTH: "off",
    TOME_SEARCH_WORKERS: String(searchWorkers),
  });
  const startMs = performance.now() - started;
  // Until the background check of every section's hash is done: a second with under 50 ms of CPU.
  for (let last = cpuMs(server.pid); ; ) {
    await Bun.sleep(1000);
    const now = cpuMs(server.pid);
    if (now - last < 50) break;
    last = now;
  }
  let i = 0;
  const one = async () => {
    while (i < searches) {
      const r = await fetch(`${server.url}/v1/search?q=${encodeURIComponent(queries[i++ % queries.length]!)}`);
      await r.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, one));
  const m = memory(server.pid);
  await server.stop();
  return { workers: searchWorkers, startMs, ...m };
}

const single = await measure(0);
const pooled = await measure(workers);
const fmt = (x: number) => x.toFixed(0);
console.log(`${path}; ${searches} searches of the mix each; MB from /proc/<pid>/smaps_rollup`);
console.log("| search workers | start s | RSS | PSS | PSS anonymous (heaps) | PSS file (the snapshot's pages) |");
console.log("|---|---|---|---|---|---|");
for (const m of [single, pooled])
  console.log(
    `| ${m.workers} | ${(m.startMs / 1000).toFixed(1)} | ${fmt(m.rss)} | ${fmt(m.pss)} | ${fmt(m.pssAnon)} | ${fmt(m.pssFile)} |`,
  );
console.log(
  `each worker adds ${fmt((pooled.pssAnon - single.pssAnon) / workers)} MB of heap (PSS anonymous), ` +
    `${fmt((pooled.pss - single.pss) / workers)} MB of PSS in all`,
);
