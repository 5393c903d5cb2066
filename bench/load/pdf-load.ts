/**
 * bun bench/load/pdf-load.ts [--concurrent N] [--snapshot FILE] [--json]
 *
 * PDFs under load (issue 13): the real server (its own process, core 0) gets N concurrent
 * requests for uncached PDFs from one key, and meanwhile another key asks for one small
 * PDF. Reports how many were delivered (200), refused (503 with Retry-After) or otherwise
 * answered, the credits charged (from usage.json, after the server saved it), the small
 * PDF's time, and the server's resident memory before and at its peak (polled from /proc).
 * Credits are read once the server is idle: renders still under way may charge after
 * their connections closed.
 */
import { readFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    concurrent: { type: "string", default: "80" },
    snapshot: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(`Usage: bun bench/load/pdf-load.ts [--concurrent N] [--snapshot FILE] [--json]

  --concurrent N    uncached PDFs asked for at once by one key (default 80)
  --snapshot FILE   serve this snapshot (default: one built from the shared English dumps)
  --json            print the figures as JSON
`);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { readUsage, usagePath } = await import("../../src/access");
const { onServerCore, pinLoadGenerator } = await import("../cores");
const { benchSnapshot, cpuMs, ROOT, spawnServer } = await import("../servers");

const n = Number(values.concurrent);

await pinLoadGenerator();
const work = mkdtempSync(join(tmpdir(), "tome-pdf-load-"));
const { path, snapshot } = await benchSnapshot(values.snapshot, work);
const dataDir = join(work, "data");
const tool = join(ROOT, "src/cli/keys.ts");
const env = { ...process.env, TOME_DATA: dataDir };
const keyOf = async (name: string) =>
  JSON.parse(
    await Bun.$`bun ${tool} create --name ${name} --account ${name} --plan business --scope full --json`
      .env(env)
      .text(),
  ).key as string;
const heavy = await keyOf("heavy");
const light = await keyOf("light");

// The largest pages first: the load the issue saw. The small one: the page with the fewest chunks.
const pages = snapshot.pages
  .list()
  .filter((p) => p.chunks.length)
  .sort((a, b) => b.chunks.length - a.chunks.length);
const many = pages.slice(0, n);
const small = pages.at(-1)!;

const server = await spawnServer(onServerCore(["bun", join(ROOT, "src/cli/start.ts")]), {
  TOME_SNAPSHOT: path,
  TOME_DATA: dataDir,
});
/** The server's resident MB (0 once it has exited). */
const rss = () => {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
};
try {
  await (await fetch(`${server.url}/healthz`)).arrayBuffer();
  const rssBefore = rss();
  let rssPeak = rssBefore;
  const poll = setInterval(() => (rssPeak = Math.max(rssPeak, rss())), 50);
  const started = performance.now();
  const answers = many.map(async (p) => {
    const r = await fetch(`${server.url}/v1/pdf/${p.pageId}`, { headers: { "x-api-key": heavy } }).catch(
      () => undefined,
    );
    if (!r) return { status: 0, ms: performance.now() - started };
    const body = await r.arrayBuffer().catch(() => new ArrayBuffer(0));
    return { status: r.status, bytes: body.byteLength, ms: performance.now() - started };
  });
  await Bun.sleep(20);
  const t = performance.now();
  // A connection closed without an answer counts as status 0.
  const smallAnswer = await fetch(`${server.url}/v1/pdf/${small.pageId}`, { headers: { "x-api-key": light } })
    .then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    })
    .catch(() => 0);
  const smallMs = performance.now() - t;
  const results = await Promise.all(answers);
  // Renders may go on after their connections closed (and charge then): wait until the server is idle.
  for (let before = -1, now = cpuMs(server.pid); now !== before; before = now, now = cpuMs(server.pid))
    await Bun.sleep(1000);
  clearInterval(poll);
  await Bun.sleep(300); // usage.json is saved within 100 ms of a change
  const month = new Date().toISOString().slice(0, 7);
  const usage = readUsage(usagePath(dataDir)).months[month] ?? {};
  const count = (s: number) => results.filter((r) => r.status === s).length;
  const figures = {
    concurrent: n,
    delivered: count(200),
    refused503: count(503),
    /** Status 0: the connection closed with no answer. */
    other: results.filter((r) => r.status !== 200 && r.status !== 503).map((r) => r.status),
    charged: usage.heavy ?? 0,
    chargedExpected: 10 * count(200),
    lastAnswerMs: Math.round(Math.max(...results.map((r) => r.ms))),
    smallPdf: { status: smallAnswer, ms: Math.round(smallMs), charged: usage.light ?? 0 },
    rssMB: { before: Math.round(rssBefore), peak: Math.round(rssPeak) },
  };
  if (values.json) console.log(JSON.stringify(figures, null, 2));
  else {
    console.log(
      `${n} concurrent uncached PDFs: ${figures.delivered} delivered, ${figures.refused503} refused (503), other ${JSON.stringify(figures.other)}; all answered in ${figures.lastAnswerMs} ms`,
    );
    console.log(`charged ${figures.charged} credits (10 × delivered = ${figures.chargedExpected})`);
    console.log(
      `another key's small PDF meanwhile: ${figures.smallPdf.status} in ${figures.smallPdf.ms} ms, charged ${figures.smallPdf.charged}`,
    );
    console.log(`server RSS: ${figures.rssMB.before} MB before, ${figures.rssMB.peak} MB at peak`);
  }
} finally {
  await server.stop();
}
