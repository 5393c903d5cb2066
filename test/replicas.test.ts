/**
 * The deployment example, as its plain commands (deploy/replicas.sh): Redis, three replicas and
 * HAProxy started by the script, used through HAProxy, and stopped by it.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { createApp, serve } from "../src/http";
import { EN_2016, engineFor, NO_SEARCH_THREADS, ROOT, runToExit, snapshotFor, tempDir } from "./helpers";
import { freePort } from "../bench/redis-server";

setDefaultTimeout(90_000);

const runDir = tempDir("tome-deploy-");
const ports = {
  PORT: freePort(),
  REDIS_PORT: freePort(),
  REPLICA_PORTS: [freePort(), freePort(), freePort()].join(" "),
};
const env = {
  ...process.env,
  RUN_DIR: runDir,
  PORT: String(ports.PORT),
  REDIS_PORT: String(ports.REDIS_PORT),
  REPLICA_PORTS: ports.REPLICA_PORTS,
  // The replicas take it from the script's environment: no search threads (D101, 0: searches on the request thread),
  // as this test asks for no search; each thread costs a replica's start about 1.2 CPU-s (it loads the engine and opens
  // the snapshot).
  ...NO_SEARCH_THREADS,
};
const script = join(ROOT, "deploy/replicas.sh");

const run = (args: string[], extra: Record<string, string> = {}) =>
  runToExit(["bash", script, ...args], { ...env, ...extra });

/** Whether a process runs (a zombie that init has not reaped yet does not: daemons are reparented to it). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

let pids: number[] = [];

afterAll(async () => {
  await run(["stop"]);
});

test("deploy/replicas.sh starts Redis, 3 replicas and HAProxy; they share one quota; a second start is refused; stop ends them all", async () => {
  const snapshot = await snapshotFor({ dumps: [EN_2016] });
  const started = await run(["start"], { TOME_SNAPSHOT: snapshot });
  expect([started.code, started.stderr]).toEqual([
    0,
    expect.stringContaining(`serving on http://127.0.0.1:${ports.PORT} (3 replicas`),
  ]);
  pids = ["redis", "haproxy", "replica-1", "replica-2", "replica-3"].map((name) =>
    Number(readFileSync(join(runDir, `${name}.pid`), "utf8")),
  );
  for (const pid of pids) expect(alive(pid)).toBe(true);

  const made = Bun.spawnSync(
    ["bun", join(ROOT, "src/cli/keys.ts"), "create", "--json", "--name", "lb", "--plan", "growth"],
    {
      env: { ...process.env, TOME_REDIS_URL: `redis://127.0.0.1:${ports.REDIS_PORT}` },
    },
  );
  const key = JSON.parse(made.stdout.toString()).key as string;
  const url = `http://127.0.0.1:${ports.PORT}`;
  const statuses: number[] = [];
  const remaining: number[] = [];
  for (let i = 0; i < 30; i++) {
    const r = await fetch(`${url}/v1/chunk/39_2`, { headers: { "X-API-Key": key } });
    await r.arrayBuffer();
    statuses.push(r.status);
    remaining.push(Number(r.headers.get("x-quota-remaining")));
  }
  expect(statuses).toEqual(Array.from({ length: 30 }, () => 200));
  // One account's quota, whichever replica answered: it falls by one each time.
  expect(remaining).toEqual(Array.from({ length: 30 }, (_, i) => 250_000 - 1 - i));
  // HAProxy spread them over the three replicas (round robin). A replica writes its log line
  // once the answer is sent, so the last line may come after the client has it: wait for all 30.
  const answered = () =>
    [1, 2, 3].map((n) => readFileSync(join(runDir, `replica-${n}.log`), "utf8").match(/GET \/v1\/chunk/g)?.length ?? 0);
  for (let waited = 0; answered().reduce((a, b) => a + b, 0) < 30 && waited < 5000; waited += 50) await Bun.sleep(50);
  expect(answered()).toEqual([10, 10, 10]);

  // A replica killed: until its checks fail, HAProxy passes the requests it refuses to the others.
  process.kill(pids[4]!, "SIGKILL");
  const afterKill: number[] = [];
  for (let i = 0; i < 9; i++) {
    const r = await fetch(`${url}/v1/chunk/39_2`, { headers: { "X-API-Key": key } });
    await r.arrayBuffer();
    afterKill.push(r.status);
  }
  expect(afterKill).toEqual(Array.from({ length: 9 }, () => 200));

  // Started again while it runs: refused at once, the pid files left to stop.
  const again = await run(["start"], { TOME_SNAPSHOT: snapshot });
  expect([again.code, again.stderr]).toEqual([1, expect.stringContaining("already running")]);
  expect(
    ["redis", "haproxy", "replica-1", "replica-2", "replica-3"].map((name) =>
      Number(readFileSync(join(runDir, `${name}.pid`), "utf8")),
    ),
  ).toEqual(pids);

  const stopped = await run(["stop"]);
  expect(stopped.code).toBe(0);
  for (const pid of pids) expect(alive(pid)).toBe(false);
});

test("deploy/compose.yaml is the tested deployment in containers: three replicas on one Redis with the AOF, behind deploy/haproxy.cfg (which HAProxy accepts)", () => {
  const compose = Bun.YAML.parse(readFileSync(join(ROOT, "deploy/compose.yaml"), "utf8")) as {
    services: Record<string, { command?: string[]; environment?: Record<string, string>; volumes?: string[] }>;
  };
  const replicas = Object.keys(compose.services).filter((name) => compose.services[name]!.environment?.TOME_REDIS_URL);
  expect(replicas).toEqual(["replica1", "replica2", "replica3"]);
  for (const name of replicas) {
    const env = compose.services[name]!.environment!;
    expect(env.TOME_REDIS_URL).toBe("redis://redis:6379");
    expect(env.TOME_SNAPSHOT).toStartWith("/app/snapshots/");
    expect(compose.services[name]!.command).toEqual(["bun", "src/cli/start.ts"]);
  }
  expect(compose.services.redis!.command!.join(" ")).toContain("--appendonly yes --appendfsync everysec");
  expect(compose.services.haproxy!.volumes).toContain("./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro");
  const cfg = readFileSync(join(ROOT, "deploy/haproxy.cfg"), "utf8");
  const servers = [...cfg.matchAll(/^\s*server (\S+) (\S+):8080/gm)].map((m) => [m[1], m[2]]);
  expect(servers).toEqual(replicas.map((r) => [r, r]));
  const check = Bun.spawnSync(["haproxy", "-c", "-q", "-f", join(ROOT, "deploy/haproxy.cfg")]);
  expect(check.stderr.toString()).toBe("");
  expect(check.exitCode).toBe(0);
});

test("HAProxy as deploy/replicas.sh configures it closes a client address's 101st connection at once, and serves another address meanwhile (D201)", async () => {
  const replica = serve(createApp(await engineFor({ dumps: [EN_2016] })), { port: 0, hostname: "127.0.0.1" });
  const port = freePort();
  const config = await run(["haproxy-config"], { PORT: String(port), REPLICA_PORTS: String(replica.url.port) });
  const file = join(runDir, "bound.cfg");
  writeFileSync(file, config.stdout);
  const proxy = Bun.spawn(["haproxy", "-db", "-f", file], { stdout: "ignore", stderr: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const held: Socket[] = [];
  /** A connection from `from` that sends nothing: whether the proxy closed it within 1 s of its opening. */
  const closedAtOnce = (from: string) =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port, localAddress: from });
      held.push(socket);
      socket.on("error", () => {});
      socket.on("close", () => resolve(true));
      socket.on("connect", () => setTimeout(() => resolve(false), 1000));
    });
  try {
    for (let i = 0; i < 50 && !(await fetch(`${url}/healthz`).catch(() => undefined))?.ok; i++) await Bun.sleep(100);
    const opened = await Promise.all(Array.from({ length: 100 }, () => closedAtOnce("127.0.0.2")));
    expect(opened.filter(Boolean)).toHaveLength(0);
    expect(await closedAtOnce("127.0.0.2")).toBe(true);
    // Another address is served while the first holds its 100.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  } finally {
    for (const socket of held) socket.destroy();
    proxy.kill();
    await replica.stop();
  }
});
