/**
 * bun bench/load/beside-build.ts [--seconds S] [--rounds R] [--nice N,N,…] [--json]
 *
 * Searches while a build runs beside the server (D189): the README builds into snapshots/ while the server serves. The
 * real server (2 search workers at their default nice, D142; no keys) serves the shared English dumps' snapshot; one
 * client asks searches one after the other (10 ms apart) for S seconds with no build, then with `snapshot:build` of
 * the same dumps running beside it at each TOME_BUILD_NICE given, in turn, R rounds. Reports each case's search
 * latency (p50, p90, p99, the median over rounds) and the build's wall time where it ended within the window.
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    seconds: { type: "string", default: "15" },
    rounds: { type: "string", default: "3" },
    nice: { type: "string", default: "0,10" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(`Usage: bun bench/load/beside-build.ts [--seconds S] [--rounds R] [--nice N,N,…] [--json]

  --seconds S   seconds of searches per case and round (default 15)
  --rounds R    rounds of every case, in turn (default 3); figures are medians over them
  --nice N,…    the builds' TOME_BUILD_NICE, one case each (default 0,10: before D189, and its default)
  --json        print the figures as JSON
`);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { join } = await import("node:path");
const { benchSnapshot, spawnServer, ROOT } = await import("../servers");
const { dump, tempDir } = await import("../support");

const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const nices = values.nice.split(",").map(Number);
const QUERIES = ["albedo of snow", "history of anarchism", "einstein relativity", "apollo moon landing", "gold rush"];
const DUMPS = [dump("enwiki-2016-sample.xml.bz2"), dump("enwik8-head.xml.bz2")];

const work = tempDir("tome-beside-build-");
const { path } = await benchSnapshot(undefined, work);
const server = await spawnServer(["bun", join(ROOT, "src/cli/start.ts")], {
  TOME_SNAPSHOT: path,
  TOME_AUTH: "off",
  TOME_SEARCH_WORKERS: "2",
  TOME_DATA: join(work, "data"),
});

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** Latencies of searches asked one at a time for `seconds`. */
async function searches(): Promise<{ n: number; p50: number; p90: number; p99: number }> {
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < end; i++) {
    const started = performance.now();
    await (await fetch(`${server.url}/v1/search?q=${encodeURIComponent(QUERIES[i % QUERIES.length]!)}`)).arrayBuffer();
    times.push(performance.now() - started);
    await Bun.sleep(10);
  }
  times.sort((a, b) => a - b);
  return { n: times.length, p50: percentile(times, 0.5), p90: percentile(times, 0.9), p99: percentile(times, 0.99) };
}

type Case = { name: string; nice?: number };
const cases: Case[] = [
  { name: "no build" },
  ...nices.map((nice) => ({ name: `build at TOME_BUILD_NICE=${nice}`, nice })),
];
const results = new Map<string, { p50: number[]; p90: number[]; p99: number[]; n: number[]; buildSeconds: number[] }>();
for (const c of cases) results.set(c.name, { p50: [], p90: [], p99: [], n: [], buildSeconds: [] });

try {
  await searches(); // warm the workers
  for (let round = 0; round < rounds; round++)
    for (const c of cases) {
      const r = results.get(c.name)!;
      const started = performance.now();
      const build =
        c.nice === undefined
          ? undefined
          : Bun.spawn(
              ["bun", join(ROOT, "src/cli/snapshot-build.ts"), ...DUMPS.flatMap((d) => ["--dump", d])].concat([
                "--out",
                join(work, `beside-${round}-${c.nice}.tome`),
              ]),
              { env: { ...process.env, TOME_BUILD_NICE: String(c.nice) }, stdout: "ignore", stderr: "ignore" },
            );
      const s = await searches();
      if (build) {
        if (build.exitCode !== null) r.buildSeconds.push((performance.now() - started) / 1000);
        build.kill();
        await build.exited;
      }
      r.p50.push(s.p50);
      r.p90.push(s.p90);
      r.p99.push(s.p99);
      r.n.push(s.n);
      console.error(
        `round ${round + 1}, ${c.name}: ${s.n} searches, p50 ${s.p50.toFixed(1)} p90 ${s.p90.toFixed(1)} p99 ${s.p99.toFixed(1)} ms`,
      );
    }
} finally {
  await server.stop();
}

const rows = cases.map((c) => {
  const r = results.get(c.name)!;
  return {
    case: c.name,
    searches: median(r.n),
    p50: median(r.p50),
    p90: median(r.p90),
    p99: median(r.p99),
    buildsEnded: r.buildSeconds.length,
  };
});
if (values.json) console.log(JSON.stringify({ seconds, rounds, rows }));
else {
  console.log(`Searches one at a time beside a build, ${seconds} s a case, medians of ${rounds} rounds (ms):\n`);
  console.log("| case | searches | p50 | p90 | p99 |\n|---|---|---|---|---|");
  for (const r of rows)
    console.log(`| ${r.case} | ${r.searches} | ${r.p50.toFixed(1)} | ${r.p90.toFixed(1)} | ${r.p99.toFixed(1)} |`);
}
