/**
 * bun bench/http/pipelined-flood.ts [--snapshot FILE] [--seconds S] [--connections N] [--depth D] [--rate R] [--workers W] [--attacker rate|none|options|method|healthz] [--nice]
 *
 * A flood written pipelined (D183, D188): one server in its own process; a victim (an enterprise key) sends --rate
 * requests a second, in turn /v1/chunk, a one-word search and /v1/lucky, for --seconds, first alone, then while an
 * attacker (a child process: this script with --attack) writes --depth requests at once on each of --connections
 * connections, again and again: GET /v1/license with a key past its rate (a starter key, `rate`) or with none (`none`),
 * refusals (D183); or requests answered without a key (D188): a CORS preflight (`options`: OPTIONS /v1/search), a
 * method the API does not take (`method`: DELETE /v1/license, 405) or the liveness check (`healthz`: GET /healthz).
 * Prints the victim's p50 and p99 per path in each phase, and how many answers the attacker read. With D183 each
 * refusal ends its connection, so the attacker reads one answer a connection, not --depth; with D188 a connection
 * ends after its keyless answers pass their bound.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { quantile } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "4" },
    depth: { type: "string", default: "200" },
    rate: { type: "string", default: "25" },
    workers: { type: "string", default: "2" },
    attacker: { type: "string", default: "rate" },
    nice: { type: "boolean", default: false },
    // The attacker's own run (the child): the server's URL and its key ("" for none).
    attack: { type: "string" },
    key: { type: "string", default: "" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(
    "Usage: bun bench/http/pipelined-flood.ts [--snapshot FILE] [--seconds S (default 10)] [--connections N (default 4)]\n" +
      "       [--depth D (requests written at once a connection, default 200)] [--rate R (victim's requests a second, default 25)]\n" +
      "       [--workers W (TOME_SEARCH_WORKERS, default 2)]\n" +
      "       [--attacker rate|none|options|method|healthz (GET /v1/license with a key past its rate, or with none; or,\n" +
      "        answered without a key, OPTIONS /v1/search, DELETE /v1/license (405), GET /healthz; default rate)]\n" +
      "       [--nice (the attacker at nice 10)]\n",
  );
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { benchKey, benchSnapshot, randomChunkIds, ROOT, spawnServer } = await import("../servers");
const { tempDir } = await import("../support");

const seconds = Number(values.seconds);

/** The attacker's request line for each --attacker: a refusal of its key (D183) or an answer given without one (D188). */
const ATTACKS: Record<string, string> = {
  rate: "GET /v1/license",
  none: "GET /v1/license",
  options: "OPTIONS /v1/search",
  method: "DELETE /v1/license",
  healthz: "GET /healthz",
};
const attackLine = ATTACKS[values.attacker];
if (attackLine === undefined) {
  process.stderr.write(`--attacker: one of ${Object.keys(ATTACKS).join(", ")}, not ${values.attacker}\n`);
  process.exit(2);
}

/**
 * The attacker: writes --depth requests on each connection and reads what comes back; once every one is answered (the
 * connection kept open), writes --depth more; once the server closes it, opens another; until --seconds pass.
 */
async function attack(url: string, key: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const line = `${attackLine} HTTP/1.1\r\nHost: a\r\n${key ? `X-API-Key: ${key}\r\n` : ""}\r\n`;
  const depth = Number(values.depth);
  const burst = line.repeat(depth);
  const end = performance.now() + seconds * 1000;
  let answers = 0;
  const connection = async () => {
    while (performance.now() < end) {
      await new Promise<void>((done) => {
        // The status line's start, looked for across reads: the last 8 characters read are kept (one short of it, so
        // that none is counted twice).
        let tail = "";
        let read = 0;
        Bun.connect({
          hostname,
          port: Number(port),
          socket: {
            open: (socket) => void socket.write(burst),
            data(socket, data) {
              const text = tail + data.toString("latin1");
              const met = text.split("HTTP/1.1 ").length - 1;
              answers += met;
              read += met;
              tail = text.slice(-8);
              if (performance.now() >= end) socket.end();
              // Every request of the burst answered and the connection open: the next burst on it. (The last answer's
              // body may still be on its way: it is read with the next burst's.)
              else if (read === depth) {
                read = 0;
                socket.write(burst);
              }
            },
            close: () => done(),
            error: () => done(),
            connectError: () => done(),
          },
        }).catch(() => done());
      });
    }
  };
  await Promise.all(Array.from({ length: Number(values.connections) }, connection));
  console.log(JSON.stringify({ answers }));
}

if (values.attack !== undefined) {
  await attack(values.attack, values.key);
  process.exit(0);
}

const work = tempDir("tome-pipelined-flood-");
const { path, snapshot } = await benchSnapshot(values.snapshot, work);
const data = join(work, "data");
const victim = await benchKey(data);
const attackerKey =
  values.attacker !== "rate"
    ? ""
    : JSON.parse(
        await Bun.$`bun ${join(ROOT, "src/cli/keys.ts")} create --name flood --account flood --plan starter --json`
          .env({ ...process.env, TOME_DATA: data })
          .text(),
      ).key;
const server = await spawnServer(["bun", join(ROOT, "src/cli/start.ts")], {
  TOME_SNAPSHOT: path,
  TOME_SNAPSHOT_WATCH: "off",
  TOME_DATA: data,
  TOME_SEARCH_WORKERS: values.workers,
  // No work share (0): the victim's first searches, cold, would be refused; the attacker is refused before any work.
  TOME_KEY_MS_PER_SECOND: "0",
});
const ATTACKER_NAMES: Record<string, string> = {
  rate: "a key past its rate",
  none: "no key",
  options: "OPTIONS, no key",
  method: "405s, no key",
  healthz: "/healthz, no key",
};
const paths = [`/v1/chunk/${randomChunkIds(snapshot, 1)[0]}`, "/v1/search?q=albedo", "/v1/lucky?q=albedo"];

/** The victim for --seconds: --rate requests a second, each path in turn; each path's times in ms. */
async function victimRun(): Promise<number[][]> {
  const times = paths.map((): number[] => []);
  const gap = 1000 / Number(values.rate);
  const asked: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; performance.now() - start < seconds * 1000; i++) {
    const at = start + i * gap;
    await Bun.sleep(Math.max(0, at - performance.now()));
    const which = i % paths.length;
    asked.push(
      (async () => {
        const t = performance.now();
        const r = await fetch(server.url + paths[which], { headers: { "X-API-Key": victim } });
        if (r.status !== 200) throw new Error(`${paths[which]}: ${r.status} ${await r.text()}`);
        await r.arrayBuffer();
        times[which]!.push(performance.now() - t);
      })(),
    );
  }
  await Promise.all(asked);
  return times;
}

function report(phase: string, times: number[][]): void {
  for (const [i, p] of paths.entries()) {
    const ms = (q: number) => quantile(times[i]!, q).toFixed(0);
    console.log(`${phase}: ${p}: p50 ${ms(0.5)} ms, p99 ${ms(0.99)} ms (${times[i]!.length})`);
  }
}

try {
  // Each path once first, so that neither phase pays for the first search's cold start.
  for (const p of paths) await (await fetch(server.url + p, { headers: { "X-API-Key": victim } })).arrayBuffer();
  report("victim alone", await victimRun());
  const self = join(ROOT, "bench/http/pipelined-flood.ts");
  const command = ["bun", self, "--attack", server.url, "--key", attackerKey, "--seconds", String(seconds)];
  command.push("--connections", values.connections, "--depth", values.depth, "--attacker", values.attacker);
  const attacker = Bun.spawn(values.nice ? ["nice", "-n", "10", ...command] : command, { stdout: "pipe" });
  report(`victim with the attacker (${ATTACKER_NAMES[values.attacker]})`, await victimRun());
  await attacker.exited;
  const { answers } = JSON.parse(await new Response(attacker.stdout).text());
  console.log(`attacker: ${answers} answers read in ${seconds} s`);
} finally {
  await server.stop();
}
