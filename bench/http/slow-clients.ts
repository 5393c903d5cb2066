/**
 * bun bench/http/slow-clients.ts [--snapshot FILE] [--mode unread|slow|idle|headers] [--connections N,N…] [--depth D] [--seconds S] [--rate R]
 *
 * One client holding the server with slow or idle connections (D201): the real server in its own process (2 search
 * workers); a victim key sends --rate GET /v1/chunk/… a second for --seconds, first alone, then while one attacker
 * address (and one key of its own) holds N connections, for each N of --connections:
 *
 * - `unread`: each connection writes D requests at once (pipelined) for the largest answer there is (/v1/page of the
 *   page with the most chunks, format=concat) and never reads a byte;
 * - `slow`: the same, each connection reading once every 3 s (a paused socket resumed for one read);
 * - `idle`: each connection sends nothing at all;
 * - `headers`: each connection writes a request's head one byte a second, never finished.
 *
 * Prints, per phase: the server's resident memory (VmRSS, /proc/PID/status) at its most and at the phase's end, the
 * server's open sockets at their most and at the phase's end, the victim's p50/p99 and failures, and the statuses the
 * server logged for the attacker's requests.
 */
import { join } from "node:path";
import { connect, type Socket } from "node:net";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { parseArgs } from "node:util";
import { quantile } from "../stats";

const USAGE = `Usage: bun bench/http/slow-clients.ts [options]
  --snapshot FILE     the snapshot served (default: enwiki-2016-sample + enwik8-head, built now)
  --mode M            unread | slow | idle | headers (default unread)
  --connections N,N…  the attacker's connections in each phase (default 100,1000)
  --depth D           requests written at once on each connection (unread, slow; default 4)
  --seconds S         each phase's length (default 15: past the server's 10 s idle timeout)
  --rate R            the victim's requests a second (default 25)
  --work-share MS     TOME_KEY_MS_PER_SECOND (default: the server's own, D25)
  --nofile K          the server's limit of open files (prlimit --nofile), to see what the OS's limit does
  --proxy             through HAProxy as deploy/replicas.sh configures it (haproxy-config; the attacker from
                      127.0.0.2, the victim from 127.0.0.1); its sockets are counted, not the server's
  --root DIR          the checkout whose deploy/replicas.sh configures the proxy (default this one)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    mode: { type: "string", default: "unread" },
    connections: { type: "string", default: "100,1000" },
    depth: { type: "string", default: "4" },
    seconds: { type: "string", default: "15" },
    rate: { type: "string", default: "25" },
    "work-share": { type: "string" },
    nofile: { type: "string" },
    proxy: { type: "boolean", default: false },
    root: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const mode = values.mode;
const counts = values.connections.split(",").map(Number);
const [depth, seconds, rate] = [values.depth, values.seconds, values.rate].map(Number);
if (
  !["unread", "slow", "idle", "headers"].includes(mode) ||
  !counts.every((n) => Number.isInteger(n) && n > 0) ||
  ![depth, seconds, rate].every((v) => v! > 0)
) {
  console.error(USAGE);
  process.exit(2);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { benchKey, benchSnapshot, randomChunkIds, ROOT } = await import("../servers");
// The server's request log kept (bench/servers.ts's drops it): it says which of the attacker's requests were answered.
const { spawnServer, tempDir } = await import("../support");
const { longestPageId } = await import("../queries");

const work = tempDir("tome-slow-clients-");
const { path, snapshot } = await benchSnapshot(values.snapshot, work);
const data = join(work, "data");
const victim = await benchKey(data);
const tool = join(ROOT, "src/cli/keys.ts");
const env = { ...process.env, TOME_DATA: data };
const attackerKey: string = JSON.parse(
  await Bun.$`bun ${tool} create --name slow --account slow --plan enterprise --json`.env(env).text(),
).key;
await Bun.$`bun ${tool} plan --account slow --plan enterprise --rate 1000000`.env(env).quiet();
const command = ["bun", join(ROOT, "src/cli/start.ts")];
if (values.nofile) command.unshift("prlimit", `--nofile=${values.nofile}`);
const server = await spawnServer(command, {
  TOME_SNAPSHOT: path,
  TOME_SNAPSHOT_WATCH: "off",
  TOME_DATA: data,
  TOME_SEARCH_WORKERS: "2",
  // Behind --proxy, the client is the address HAProxy names (D80).
  TOME_TRUSTED_PROXIES: "127.0.0.1",
  // The work share (D25) as the server's default unless told: it bounds the attacker's CPU, not its connections.
  TOME_KEY_MS_PER_SECOND: values["work-share"],
});
/** HAProxy in front (--proxy): its configuration the checkout's, its one replica this server. */
let proxy: { url: string; proc: ReturnType<typeof Bun.spawn> } | undefined;
if (values.proxy) {
  const { freePort } = await import("../redis-server");
  const proxyPort = freePort();
  const config = await Bun.$`bash ${join(values.root ?? ROOT, "deploy/replicas.sh")} haproxy-config`
    .env({ ...process.env, PORT: String(proxyPort), REPLICA_PORTS: new URL(server.url).port })
    .text();
  await Bun.write(join(work, "haproxy.cfg"), config);
  const proc = Bun.spawn(["haproxy", "-db", "-f", join(work, "haproxy.cfg")], { stdout: "ignore", stderr: "ignore" });
  proxy = { url: `http://127.0.0.1:${proxyPort}`, proc };
  for (let i = 0; i < 100 && !(await fetch(`${proxy.url}/healthz`).catch(() => undefined))?.ok; i++)
    await Bun.sleep(100);
}
const front = proxy?.url ?? server.url;
const heldBy = proxy?.proc.pid ?? server.pid;
const { hostname, port } = new URL(front);
const largest = `/v1/page/${longestPageId(snapshot)}?format=concat`;
const chunk = `/v1/chunk/${randomChunkIds(snapshot, 1)[0]}`;

const rssMb = (): number => {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"));
  return Number(line?.[1] ?? 0) / 1024;
};

/** The server's (or the proxy's) open sockets (its file descriptors that are sockets): the connections it holds, and a few of its own. */
const socketsHeld = (): number => {
  let n = 0;
  for (const fd of readdirSync(`/proc/${heldBy}/fd`)) {
    try {
      if (readlinkSync(`/proc/${heldBy}/fd/${fd}`).startsWith("socket:")) n++;
    } catch {
      // Closed while read.
    }
  }
  return n;
};

/** The victim for --seconds: --rate requests a second; its times in ms and its failures. */
async function victimRun(): Promise<{ times: number[]; failed: number; peakMb: number; peakSockets: number }> {
  const times: number[] = [];
  let failed = 0;
  let peakMb = 0;
  let peakSockets = 0;
  const asked: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; performance.now() - start < seconds! * 1000; i++) {
    await Bun.sleep(Math.max(0, start + (i * 1000) / rate! - performance.now()));
    peakMb = Math.max(peakMb, rssMb());
    if (i % rate! === 0) peakSockets = Math.max(peakSockets, socketsHeld());
    asked.push(
      (async () => {
        const t = performance.now();
        try {
          const r = await fetch(front + chunk, {
            headers: { "X-API-Key": victim },
            signal: AbortSignal.timeout(30_000),
          });
          await r.arrayBuffer();
          if (r.status !== 200) failed++;
          else times.push(performance.now() - t);
        } catch {
          failed++;
        }
      })(),
    );
  }
  await Promise.all(asked);
  return { times, failed, peakMb, peakSockets };
}

/** The attacker's N connections, held as --mode says. (A paused socket never sees its close: the server's side is counted.) */
function attack(n: number): { opened: () => number; end: () => void } {
  const request = `GET ${largest} HTTP/1.1\r\nHost: a\r\nX-API-Key: ${attackerKey}\r\n\r\n`;
  const sockets: Socket[] = [];
  const timers: ReturnType<typeof setInterval>[] = [];
  let opened = 0;
  for (let i = 0; i < n; i++) {
    const socket = connect({ host: hostname, port: Number(port), ...(proxy ? { localAddress: "127.0.0.2" } : {}) });
    sockets.push(socket);
    socket.on("error", () => {});
    socket.on("connect", () => {
      opened++;
      if (mode === "unread" || mode === "slow") {
        socket.pause();
        socket.write(request.repeat(depth!));
        // One read (what the kernel holds, up to 64 KiB) every 3 s: the server's write progresses within its idle timeout.
        if (mode === "slow")
          timers.push(
            setInterval(() => {
              socket.once("data", () => socket.pause());
              socket.resume();
            }, 3000),
          );
      } else if (mode === "headers") {
        let at = 0;
        timers.push(setInterval(() => socket.write(request[at++ % (request.length - 4)]!), 1000));
      }
    });
  }
  return {
    opened: () => opened,
    end: () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
    },
  };
}

function report(phase: string, run: Awaited<ReturnType<typeof victimRun>>, extra = ""): void {
  const ms = (q: number) => (run.times.length ? quantile(run.times, q).toFixed(1) : "-");
  console.log(
    `| ${phase} | ${run.peakMb.toFixed(0)} | ${rssMb().toFixed(0)} | ${run.peakSockets} | ${socketsHeld()} | ${ms(0.5)} | ${ms(0.99)} | ${run.failed} | ${extra} |`,
  );
}

try {
  for (let i = 0; i < 20; i++) await (await fetch(front + chunk, { headers: { "X-API-Key": victim } })).text();
  const answer = await fetch(front + largest, { headers: { "X-API-Key": victim } });
  const bytes = (await answer.arrayBuffer()).byteLength;
  console.log(`mode ${mode}, ${largest}: ${answer.status}, ${bytes} bytes; depth ${depth}, ${seconds} s a phase\n`);
  console.log(
    "| phase | RSS MB peak | RSS MB at end | sockets held, most | at end | victim p50 ms | victim p99 ms | victim failed | attacker |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  report("alone", await victimRun());
  for (const n of counts) {
    const logged = server.stdout().length;
    const held = attack(n);
    const run = await victimRun();
    const statuses: Record<string, number> = {};
    for (const m of server
      .stdout()
      .slice(logged)
      .matchAll(/^GET \/v1\/page\/\S* (\d+) /gm))
      statuses[m[1]!] = (statuses[m[1]!] ?? 0) + 1;
    report(`${n} ${mode}`, run, `${held.opened()} connected; answered ${JSON.stringify(statuses)}`);
    held.end();
    await Bun.sleep(2000);
    report(`after ${n} ${mode}, alone`, await victimRun());
  }
} finally {
  proxy?.proc.kill();
  await server.stop();
}
