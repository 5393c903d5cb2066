/**
 * The server's snapshot swap (issue 17), measured on the real `bun run start`: the time from a
 * snapshot renamed into snapshots/ to its being served (the server's own log: open, verify,
 * switch), and the server's memory meanwhile, read from /proc/PID/status every 50 ms (VmHWM,
 * reset before each swap through /proc/PID/clear_refs; VmRSS as RssAnon, the heap, and
 * RssFile, the snapshot's mapped pages), then once the snapshot swapped out is let go.
 *
 * The server starts on the first snapshot given, then each next one is copied beside
 * snapshots/ and renamed into place in turn (the files given are only read); each must hold
 * other content than the one before it, of the same wiki (host).
 *
 *   bun bench/update/swap.ts [--connections N] FIRST.tome NEXT.tome [NEXT.tome…]
 *
 * --connections N keeps N autocannon connections on /v1/search during the swaps (default 0).
 * The figures in the report ($WORK: any scratch directory): English, from two snapshot:build
 * outputs of the shared dumps,
 *   bun run snapshot:build --dump test/fixtures/data/dumps/enwiki-2016-sample.xml.bz2 --out $WORK/en-2016.tome
 *   bun run snapshot:build --dump test/fixtures/data/dumps/enwik8-head.xml.bz2 --out $WORK/en-2006.tome
 *   bun bench/update/swap.ts $WORK/en-2016.tome $WORK/en-2006.tome
 * and 1M chunks, between a small synthetic snapshot of the same host and the big one, both ways
 * ($WORK/w1m/scale.tome: bench/search/README.md says how to build it):
 *   bun bench/corpus/gen-corpus.ts --chunks 20000 --out $WORK/syn20k.xml
 *   bun run snapshot:build --dump $WORK/syn20k.xml --out $WORK/syn20k.tome
 *   bun bench/update/swap.ts $WORK/syn20k.tome $WORK/w1m/scale.tome $WORK/syn20k.tome
 */
import { copyFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals: files } = parseArgs({
  options: { connections: { type: "string", default: "0" }, help: { type: "boolean" } },
  allowPositionals: true,
});
const connections = Number(values.connections);
if (values.help || files.length < 2 || !Number.isInteger(connections)) {
  console.error("Usage: bun bench/update/swap.ts [--connections N] FIRST.tome NEXT.tome [NEXT.tome…]");
  process.exit(values.help ? 0 : 2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { START, tempDir } = await import("../support");
const { spawnServer } = await import("../servers");

interface Status {
  hwm: number;
  rss: number;
  anon: number;
  file: number;
}

function status(pid: number): Status {
  const text = Bun.spawnSync(["cat", `/proc/${pid}/status`]).stdout.toString();
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN) * 1024;
  return { hwm: kb("VmHWM"), rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") };
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

const dir = tempDir("tome-bench-swap-");
mkdirSync(join(dir, "snapshots"));
copyFileSync(files[0]!, join(dir, "snapshots/s0.tome"));

const server = await spawnServer(
  ["bun", START],
  { HOST: "127.0.0.1", TOME_AUTH: "off", TOME_DATA: join(dir, "data"), TOME_SNAPSHOT: "" },
  dir,
);
const { url } = server;
/** The server's log so far. */
const log = () => server.stderr();
// The boot snapshot's background verify done, so that it does not overlap the first swap.
await Bun.sleep(1000);
const load = connections
  ? autocannon(
      {
        url,
        connections,
        duration: 3600,
        requests: [{ method: "GET", path: "/v1/search?q=history+of+science&limit=10" }],
      },
      () => {},
    )
  : undefined;

interface Row {
  to: string;
  bytes: number;
  openMs: string;
  verifyMs: string;
  switchMs: string;
  renamedToServedMs: number;
  before: Status;
  peak: Status;
  afterLetGo: Status;
}
const rows: Row[] = [];

async function swapTo(file: string, name: string): Promise<void> {
  // The copy is written beside, then renamed into place, as a build or an update leaves it.
  const hidden = join(dir, "snapshots", `.${name}.tmp`);
  copyFileSync(file, hidden);
  await Bun.sleep(1500);
  writeFileSync(`/proc/${server.pid}/clear_refs`, "5");
  const before = status(server.pid);
  const peak = { ...before };
  const sample = () => {
    const s = status(server.pid);
    for (const k of Object.keys(peak) as (keyof Status)[]) peak[k] = Math.max(peak[k], s[k]);
  };
  const seenBefore = log().length;
  const renamed = performance.now();
  renameSync(hidden, join(dir, "snapshots", name));
  const served = new RegExp(
    `swap: now serving \\S*${name.replace(".", "\\.")} .*opened in ([\\d.]+ m?s), verified in ([\\d.]+ m?s), switched in ([\\d.]+ m?s)`,
    "y",
  );
  let m: RegExpExecArray | null = null;
  while (!m) {
    served.lastIndex = log().indexOf("swap: now serving", seenBefore);
    m = served.lastIndex >= 0 ? served.exec(log()) : null;
    if (!m) {
      if (/swap: refused/.test(log().slice(seenBefore))) throw new Error(log().slice(seenBefore));
      sample();
      await Bun.sleep(50);
    }
  }
  const renamedToServedMs = Math.round(performance.now() - renamed);
  const tail = () => log().slice(seenBefore);
  const deadline = Date.now() + 60_000;
  while (!/is let go: its requests in flight are answered/.test(tail()) && Date.now() < deadline) {
    sample();
    await Bun.sleep(50);
  }
  await Bun.sleep(1000);
  sample();
  rows.push({
    to: `${name} (${file})`,
    bytes: Bun.file(file).size,
    openMs: m[1]!,
    verifyMs: m[2]!,
    switchMs: m[3]!,
    renamedToServedMs,
    before,
    peak,
    afterLetGo: status(server.pid),
  });
}

try {
  for (let i = 1; i < files.length; i++) await swapTo(files[i]!, `s${i}.tome`);
} finally {
  load?.stop();
  await server.stop();
  // The copies (a 1M-chunk one is 1 GB).
  rmSync(dir, { recursive: true, force: true });
}

console.log(`bun bench/update/swap.ts --connections ${connections} ${files.join(" ")}`);
console.log(
  "| swap to | file | open | verify | switch | renamed → served | RSS before (anon/file) | peak RSS during (VmHWM) | RSS after the old one is let go (anon/file) |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.to} | ${mb(r.bytes)} | ${r.openMs} | ${r.verifyMs} | ${r.switchMs} | ${r.renamedToServedMs} ms | ${mb(r.before.rss)} (${mb(r.before.anon)}/${mb(r.before.file)}) | ` +
      `${mb(r.peak.hwm)} (anon ≤ ${mb(r.peak.anon)}, file ≤ ${mb(r.peak.file)}) | ${mb(r.afterLetGo.rss)} (${mb(r.afterLetGo.anon)}/${mb(r.afterLetGo.file)}) |`,
  );
}
console.log(
  log()
    .split("\n")
    .filter((l) => l.startsWith("swap"))
    .join("\n"),
);
