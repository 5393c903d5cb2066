/**
 * Replicas sharing keys, rate limits and quotas through Redis (TOME_REDIS_URL; issue 18): three
 * real servers on one snapshot and one real redis-server started here, with the real key tool.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  INVALID_KEY,
  INVALID_KEY_NEXT,
  readKeyFile,
  readUsage,
  redisAddress,
  usagePath,
  type Grant,
  type Refusal,
} from "../src/access";
import { dayOf, writeUsage } from "../src/access/usage";
import { RedisAccess, RedisKeyStore } from "../src/access/redis";
import { ADMIT, REQUEST_HOLD_LEASE_MS, UNADMIT } from "../src/access/redis/scripts";
import { hashKey } from "../src/access/key-text";
import { SOCKET_IDLE_SECONDS, WORKER_STUCK_MS } from "../src/request-time";
import { createApp } from "../src/http";
import {
  EN_2016,
  engineFor,
  keyMade,
  type KeyMade,
  keyTool,
  NO_SEARCH_THREADS,
  ROOT,
  runToExit,
  type ServerProcess,
  snapshotFor,
  startServer,
  tempDir,
} from "./helpers";
import { startRedis, type RedisServer } from "../bench/redis-server";

setDefaultTimeout(60_000);

type Json = Record<string, any>;
const month = () => new Date().toISOString().slice(0, 7);

let snapshot: string;
let redis: RedisServer;
let replicas: ServerProcess[] = [];

/** The key tool against a Redis (and, for import and export, a data directory). */
function keysOn(url: string, args: string[], dataDir = tempDir("tome-data-")) {
  return keyTool({ TOME_REDIS_URL: url, TOME_DATA: dataDir }, ...args);
}

/** The same in a process of its own: for the commands that race each other. */
function keysOnSpawned(url: string, args: string[], dataDir = tempDir("tome-data-")) {
  return runToExit(["bun", join(ROOT, "src/cli/keys.ts"), ...args], { TOME_REDIS_URL: url, TOME_DATA: dataDir });
}

/** A new key in the Redis at url, made in this process as `keys create --json` makes it there (keyMade): for set-up. */
async function keyOn(url: string, o: KeyMade): Promise<Json> {
  const store = await RedisKeyStore.open(url);
  try {
    return await keyMade(store, o);
  } finally {
    store.close();
  }
}

async function call(url: string, key: string | undefined, path = "/v1/chunk/39_2") {
  const res = await fetch(url + path, { headers: key ? { "X-API-Key": key } : {} });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {}, headers: res.headers };
}

const startReplica = (url = redis.url) =>
  startServer({ ...NO_SEARCH_THREADS, TOME_SNAPSHOT: snapshot, TOME_REDIS_URL: url });

beforeAll(async () => {
  snapshot = await snapshotFor({ dumps: [EN_2016] });
  redis = await startRedis();
  replicas = await Promise.all([startReplica(), startReplica(), startReplica()]);
  // Three servers starting at once beside other test files' processes: past the tests' 60 s on a loaded machine.
}, 180_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
});

describe("three replicas on one Redis", () => {
  test("a replica makes no key of its own, and says how to make one", () => {
    for (const r of replicas) {
      expect(r.key).toBeUndefined();
      expect(r.stderr()).toContain("holds no API key yet");
    }
  });

  test("a replica started with other settings than the replica before it says so at start, naming each; the same settings say nothing (D39)", async () => {
    const said = async (server: ServerProcess) => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(100))
        if (/holds no API key|key\(s\)/.test(server.stderr())) break;
      return server.stderr();
    };
    for (const started of replicas) expect(await said(started)).not.toContain("settings differ");
    const other = await startServer({
      ...NO_SEARCH_THREADS,
      TOME_SNAPSHOT: snapshot,
      TOME_REDIS_URL: redis.url,
      TOME_KEY_MS_PER_SECOND: "100",
      TOME_ADMIN_TOKEN: "operator-token-of-another-replica",
    });
    try {
      const warning = (await said(other)).split("\n").find((line) => line.includes("settings differ"));
      expect(warning).toContain("TOME_KEY_MS_PER_SECOND is 100 here, 0 there");
      expect(warning).toContain("TOME_ADMIN_TOKEN is a token whose sha256 begins ");
      expect(warning).toContain(", unset there");
      expect(warning).not.toContain("operator-token-of-another-replica");
      expect(warning).not.toContain("TOME_PUBLIC_URL");
    } finally {
      await other.stop();
    }
  });

  test("a replica started while Redis is down compares its settings once Redis answers, and says how they differ (D39), and that Redis runs without its append-only file (D41)", async () => {
    const down = await startRedis();
    const before = { TOME_KEY_MS_PER_SECOND: "0", TOME_PUBLIC_URL: "unset" };
    down.cli("SET", "tome:settings", JSON.stringify({ at: "2026-12-01T00:00:00.000Z", settings: before }));
    down.cli("CONFIG", "SET", "appendonly", "no");
    // Stopped (SIGSTOP), not killed: it keeps what it holds without its append-only file.
    process.kill(down.pid(), "SIGSTOP");
    let late: ServerProcess | undefined;
    try {
      late = await startServer({
        ...NO_SEARCH_THREADS,
        TOME_SNAPSHOT: snapshot,
        TOME_REDIS_URL: down.url,
        TOME_KEY_MS_PER_SECOND: "100",
      });
      const server = late;
      const said = () => server.stderr();
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(100))
        if (said().includes("cannot be reached yet")) break;
      expect(said()).toContain("cannot be reached yet");
      process.kill(down.pid(), "SIGCONT");
      const line = (text: string) =>
        said()
          .split("\n")
          .find((l) => l.includes(text));
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(100))
        if (line("settings differ") && line("without its append-only file")) break;
      expect(line("settings differ")).toContain("TOME_KEY_MS_PER_SECOND is 100 here, 0 there");
      expect(line("without its append-only file")).toBeDefined();
      expect(JSON.parse(down.cli("GET", "tome:settings")).settings.TOME_KEY_MS_PER_SECOND).toBe("100");
    } finally {
      process.kill(down.pid(), "SIGCONT");
      await late?.stop();
      await down.stop();
    }
  });

  test("a Redis without the append-only file is found, for the replica's warning at start (what a restart of Redis would lose)", async () => {
    const bare = await startRedis();
    const withAof = new RedisAccess({ url: redis.url, keyMsPerSecond: 0 });
    const without = new RedisAccess({ url: bare.url, keyMsPerSecond: 0 });
    try {
      bare.cli("CONFIG", "SET", "appendonly", "no");
      await Promise.all([withAof.start(), without.start()]);
      expect([await withAof.appendOnly(), await without.appendOnly()]).toEqual([true, false]);
    } finally {
      withAof.stop();
      without.stop();
      await bare.stop();
    }
  });

  test("per key, the answers of all replicas counted per second never exceed the plan's rate", async () => {
    const { key } = await keyOn(redis.url, { name: "rate", account: "rate", plan: "free" });
    const admitted = new Map<number, number>();
    const until = Date.now() + 2600;
    while (Date.now() < until) {
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) => call(replicas[i % 3]!.url, key, "/v1/license")),
      );
      for (const r of results) {
        expect([200, 429]).toContain(r.status);
        const window = Number(r.headers.get("x-ratelimit-reset")) - 1;
        if (r.status === 200) admitted.set(window, (admitted.get(window) ?? 0) + 1);
        else
          expect([r.body.error, r.headers.get("retry-after"), r.headers.get("x-ratelimit-remaining")]).toEqual([
            "rate_limit_exceeded",
            "1",
            "0",
          ]);
      }
    }
    const windows = [...admitted.keys()].sort();
    expect(windows.length).toBeGreaterThanOrEqual(3);
    for (const w of windows) expect(admitted.get(w)!).toBeLessThanOrEqual(10);
    // The seconds the bursts covered whole admitted exactly the rate, not 3 × it.
    for (const w of windows.slice(1, -1)) expect({ w, admitted: admitted.get(w) }).toEqual({ w, admitted: 10 });
    const spent = Number(redis.cli("HGET", `tome:spent:${month()}`, "rate"));
    expect(spent).toBe([...admitted.values()].reduce((a, b) => a + b, 0));
  });

  test("the quota is never overspent: 200 requests in flight over 3 replicas and 4 keys, 50 credits left", async () => {
    const made: Json[] = [];
    for (let i = 0; i < 4; i++) made.push(await keyOn(redis.url, { name: `q${i}`, account: "acct", plan: "business" }));
    redis.cli("HSET", `tome:spent:${month()}`, "acct", "999950");
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => call(replicas[i % 3]!.url, made[i % 4]!.key, `/v1/chunk/39_${i % 5}`)),
    );
    const ok = results.filter((r) => r.status === 200);
    const over = results.filter((r) => r.status === 429);
    expect([ok.length, over.length]).toEqual([50, 150]);
    for (const r of over) {
      expect(r.body).toEqual({
        error: "quota_exceeded",
        message: expect.any(String),
        quota_limit: 1_000_000,
        quota_used: 1_000_000,
        retry_after: expect.any(Number),
      });
      expect(r.headers.get("x-quota-remaining")).toBe("0");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    expect(Number(redis.cli("HGET", `tome:spent:${month()}`, "acct"))).toBe(1_000_000);
    expect(Number(redis.cli("HGET", `tome:held:${month()}`, "acct"))).toBe(0);
    // Errors cost nothing, on any replica.
    const bad = await call(replicas[1]!.url, made[0]!.key, "/v1/page/abc");
    expect([bad.status, bad.headers.get("x-quota-remaining")]).toEqual([400, "0"]);
  });

  test("D19 and D20 headers are those of a single server with files", async () => {
    const data = tempDir("tome-data-");
    const single = await startServer({ ...NO_SEARCH_THREADS, TOME_SNAPSHOT: snapshot, TOME_DATA: data });
    try {
      const fileKey = (await keyMade(data, { name: "h", account: "h", plan: "free" })).key;
      const redisKey = (await keyOn(redis.url, { name: "h", account: "h", plan: "free" })).key;
      redis.cli("HSET", `tome:spent:${month()}`, "h", "4995");
      // Usage edited with the server stopped (a running one saves its own counts over a hand edit, D190); a restart
      // reads it.
      await single.stop();
      writeUsage(usagePath(data), { months: { [month()]: { h: 4995 } }, last_used: {} });
      const fileServer = await startServer({ ...NO_SEARCH_THREADS, TOME_SNAPSHOT: snapshot, TOME_DATA: data });
      const paths = [
        "/v1/chunk/39_2",
        "/v1/page/abc",
        "/v1/chunk/39_99999",
        "/v1/nothing",
        ...Array.from({ length: 12 }, () => "/v1/chunk/39_1"),
      ];
      const seen = async (url: string, key: string) => {
        // Within one second, as the rate window is.
        while (Date.now() % 1000 > 500) await Bun.sleep(10);
        const out: string[][] = [];
        for (const path of paths) {
          // The answer's second is the clock's when the server answered, between the test's reads before and after
          // it: a slow answer (a loaded machine) crosses a second, and either side of it is right.
          const before = Math.floor(Date.now() / 1000);
          const r = await call(url, key, path);
          const after = Math.floor(Date.now() / 1000);
          const headers = [...r.headers].filter(
            ([h]) => /^x-(ratelimit|quota)-|^retry-after$/.test(h) && h !== "x-ratelimit-reset",
          );
          // The quota's Retry-After counts the seconds to the month's end, which pass between the two runs.
          const shown = headers.map(
            ([h, v]) =>
              `${h}: ${h === "retry-after" && r.body.error === "quota_exceeded" ? "(to the month's end)" : v}`,
          );
          out.push([String(r.status), r.body.error ?? "", ...shown.sort()]);
          const reset = Number(r.headers.get("x-ratelimit-reset"));
          expect(reset).toBeGreaterThanOrEqual(before + 1);
          expect(reset).toBeLessThanOrEqual(after + 1);
        }
        return out;
      };
      try {
        const fromFiles = await seen(fileServer.url, fileKey);
        const fromRedis = await seen(replicas[2]!.url, redisKey);
        expect(fromRedis).toEqual(fromFiles);
        // The sequence met each case: 200s, a 400, 404s, the quota's and the rate's 429s.
        expect(fromFiles.map((r) => r[0] + (r[0] === "429" ? ` ${r[1]}` : ""))).toEqual([
          "200",
          "400",
          "404",
          "404",
          "200",
          "200",
          "200",
          "200",
          "429 quota_exceeded",
          "429 quota_exceeded",
          ...Array.from({ length: 6 }, () => "429 rate_limit_exceeded"),
        ]);
      } finally {
        await fileServer.stop();
      }
    } finally {
      await single.stop();
    }
  });

  test("a read key's 403 for a PDF carries its key's X-RateLimit-* and X-Quota-* headers, counting nothing, as with files (D23)", async () => {
    const data = tempDir("tome-data-");
    const fileServer = await startServer({ ...NO_SEARCH_THREADS, TOME_SNAPSHOT: snapshot, TOME_DATA: data });
    try {
      const fileKey = (await keyMade(data, { name: "r", account: "reader", plan: "free", scope: "read" })).key;
      const redisKey = (await keyOn(redis.url, { name: "r", account: "reader", plan: "free", scope: "read" })).key;
      const paths = ["/v1/chunk/39_1", "/v1/chunk/39_1", "/v1/pdf/39", "/v1/pdf/39.pdf", "/v1/chunk/39_1"];
      const seen = async (url: string, key: string) => {
        // Within one second, as the rate window is.
        while (Date.now() % 1000 > 500) await Bun.sleep(10);
        const out: string[] = [];
        for (const path of paths) {
          const before = Math.floor(Date.now() / 1000);
          const r = await call(url, key, path);
          const after = Math.floor(Date.now() / 1000);
          // The clock's second when the server answered, + 1: a slow answer crosses a second, either side is right.
          const reset = Number(r.headers.get("x-ratelimit-reset"));
          expect(reset).toBeGreaterThanOrEqual(before + 1);
          expect(reset).toBeLessThanOrEqual(after + 1);
          const now = new Date();
          const monthEnd = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1) / 1000;
          expect({ path, quotaReset: r.headers.get("x-quota-reset") }).toEqual({ path, quotaReset: String(monthEnd) });
          const h = (name: string) => r.headers.get(name);
          out.push(
            `${r.status} ${r.body.error ?? ""}: rate ${h("x-ratelimit-remaining")} of ${h("x-ratelimit-limit")}, quota ${h("x-quota-remaining")} of ${h("x-quota-limit")}`,
          );
        }
        return out;
      };
      const fromFiles = await seen(fileServer.url, fileKey);
      // The 403s report the key's standing, and the request after them finds neither its rate nor its quota counted them.
      expect(fromFiles).toEqual([
        "200 : rate 9 of 10, quota 4999 of 5000",
        "200 : rate 8 of 10, quota 4998 of 5000",
        "403 forbidden: rate 8 of 10, quota 4998 of 5000",
        "403 forbidden: rate 8 of 10, quota 4998 of 5000",
        "200 : rate 7 of 10, quota 4997 of 5000",
      ]);
      expect(await seen(replicas[1]!.url, redisKey)).toEqual(fromFiles);
    } finally {
      await fileServer.stop();
    }
  });

  test("the key tool on Redis: a revocation and a plan change hold on every replica's next request", async () => {
    const made = await keyOn(redis.url, { name: "rev", account: "rev", plan: "free" });
    for (const r of replicas) expect((await call(r.url, made.key)).headers.get("x-ratelimit-limit")).toBe("10");
    // Scope (D23): a read key may not render a PDF, on any replica, and that costs nothing.
    const pdf = await call(replicas[0]!.url, made.key, "/v1/pdf/39");
    expect([pdf.status, pdf.body.message]).toEqual([403, expect.stringContaining("scope is read")]);
    expect((await keysOn(redis.url, ["plan", "--account", "rev", "--plan", "growth"])).code).toBe(0);
    for (const r of replicas) expect((await call(r.url, made.key)).headers.get("x-ratelimit-limit")).toBe("50");
    // The key's header sent twice (HTTP joins the two with a comma) is refused as it is from the file store (D18).
    const twice = await call(replicas[1]!.url, `${made.key}, ${made.key}`);
    expect([twice.status, twice.body.message]).toEqual([403, expect.stringContaining("more than one key")]);
    expect((await keysOn(redis.url, ["revoke", made.id])).code).toBe(0);
    for (const r of replicas) {
      const refused = await call(r.url, made.key);
      expect([refused.status, refused.body.message]).toEqual([403, `${INVALID_KEY}${INVALID_KEY_NEXT}`]);
    }
    const listed = JSON.parse((await keysOn(redis.url, ["list", "--json"])).stdout) as Json[];
    const row = listed.find((k) => k.id === made.id)!;
    expect([row.state, row.plan, row.usage_this_month, row.last_used_at === null]).toEqual([
      "revoked",
      "growth",
      6,
      false,
    ]);
    expect(JSON.stringify(listed)).not.toContain(made.key);
  });

  test("a plan change holds on every replica after Redis came back from an older state (its store's version counted again)", async () => {
    const made = await keyOn(redis.url, { name: "rewind", account: "rewind", plan: "free" });
    expect((await call(replicas[0]!.url, made.key)).headers.get("x-ratelimit-limit")).toBe("10");
    // A Redis restored from a backup, or one whose AOF lost its last writes, holds an earlier version.
    const seen = Number(redis.cli("GET", "tome:keys:version"));
    redis.cli("SET", "tome:keys:version", String(seen - 1));
    expect((await keysOn(redis.url, ["plan", "--account", "rewind", "--plan", "growth"])).code).toBe(0);
    expect((await call(replicas[0]!.url, made.key)).headers.get("x-ratelimit-limit")).toBe("50");
  });

  test("keys per plan (D21) hold when key commands race: 6 creates at once, 3 made", async () => {
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => keysOnSpawned(redis.url, ["create", "--name", `r${i}`, "--account", "race"])),
    );
    expect(runs.filter((r) => r.code === 0).length).toBe(3);
    for (const r of runs.filter((r) => r.code !== 0)) expect(r.stderr).toContain("already holds 3 active keys");
    const listed = JSON.parse((await keysOn(redis.url, ["list", "--json"])).stdout) as Json[];
    expect(listed.filter((k) => k.account === "race").length).toBe(3);
  });

  test("kill -9 of a replica loses nothing: every answer it gave is spent, and the others go on", async () => {
    const { key } = await keyOn(redis.url, { name: "kill", account: "kill", plan: "business" });
    const victim = await startReplica();
    let ok = 0;
    let inFlight = 0;
    let stop = false;
    const worker = async () => {
      while (!stop) {
        inFlight++;
        try {
          const r = await fetch(`${victim.url}/v1/chunk/39_3`, { headers: { "X-API-Key": key } });
          await r.arrayBuffer();
          if (r.status === 200) ok++;
        } catch {
          return; // the replica is gone
        } finally {
          inFlight--;
        }
        await Bun.sleep(5);
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    await Bun.sleep(700);
    victim.proc.kill("SIGKILL");
    const holding = inFlight;
    stop = true;
    await Promise.all(workers);
    await victim.proc.exited;
    const spent = Number(redis.cli("HGET", `tome:spent:${month()}`, "kill"));
    const held = Number(redis.cli("HGET", `tome:held:${month()}`, "kill") || "0");
    expect(ok).toBeGreaterThan(20);
    // Each answer was settled before it was sent: none is missing. At most the requests in
    // flight at the kill were settled without reaching the client, or hold credits until their lease lapses.
    expect(spent).toBeGreaterThanOrEqual(ok);
    expect(spent + held - ok).toBeLessThanOrEqual(holding);
    await Bun.sleep(1000); // past the key's rate window, which the workers filled
    const next = await call(replicas[0]!.url, key);
    expect(next.status).toBe(200);
    expect(Number(next.headers.get("x-quota-remaining"))).toBe(1_000_000 - spent - held - 1);
  });
});

describe("Redis unreachable", () => {
  test("keyed requests get 503 with Retry-After on every replica, /healthz is degraded, and all recover when it returns", async () => {
    const { key } = await keyOn(redis.url, { name: "down", account: "down", plan: "starter" });
    expect((await call(replicas[0]!.url, key)).status).toBe(200);
    await redis.kill();
    for (const r of replicas) {
      const refused = await call(r.url, key);
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({
        error: "service_unavailable",
        message: expect.stringContaining("nothing was charged"),
        retry_after: 2,
      });
      expect(refused.headers.get("retry-after")).toBe("2");
      expect(refused.headers.get("x-quota-remaining")).toBeNull();
      // Without a key, still 401: nothing needs Redis to say so.
      expect((await call(r.url, undefined)).status).toBe(401);
      const health = await call(r.url, undefined, "/healthz");
      expect(health.status).toBe(200);
      expect(health.body).toEqual({
        status: "degraded",
        problems: [expect.stringContaining("(Redis) cannot be reached since")],
      });
    }
    await redis.restart();
    const deadline = Date.now() + 10_000;
    for (const r of replicas) {
      let status = 0;
      while (status !== 200 && Date.now() < deadline) {
        status = (await call(r.url, key)).status;
        if (status !== 200) await Bun.sleep(100);
      }
      expect(status).toBe(200);
      expect((await call(r.url, undefined, "/healthz")).body).toEqual({ status: "ok" });
      expect(r.stderr()).toContain("answers again");
    }
    // The key and its usage outlived the Redis restart (AOF).
    expect(Number(redis.cli("HGET", `tome:spent:${month()}`, "down"))).toBeGreaterThanOrEqual(4);
  });

  test("a Redis that hangs (SIGSTOP) is unreachable after 2 s: 503, not requests waiting on it; it recovers when it runs again", async () => {
    const { key } = await keyOn(redis.url, { name: "hang", account: "hang", plan: "starter" });
    expect((await call(replicas[1]!.url, key)).status).toBe(200);
    process.kill(redis.pid(), "SIGSTOP");
    try {
      const started = performance.now();
      const stalled = await call(replicas[1]!.url, key);
      const waited = performance.now() - started;
      expect([stalled.status, stalled.body.error]).toEqual([503, "service_unavailable"]);
      expect(waited).toBeGreaterThan(1900);
      expect(waited).toBeLessThan(4000);
      // From then on, refused at once.
      const next = performance.now();
      expect((await call(replicas[1]!.url, key)).status).toBe(503);
      expect(performance.now() - next).toBeLessThan(500);
    } finally {
      process.kill(redis.pid(), "SIGCONT");
    }
    let status = 0;
    for (const deadline = Date.now() + 10_000; status !== 200 && Date.now() < deadline; ) {
      status = (await call(replicas[1]!.url, key)).status;
      if (status !== 200) await Bun.sleep(100);
    }
    expect(status).toBe(200);
  });

  test("an answer whose credit Redis can no longer take is withheld: 503, nothing free, nothing charged", async () => {
    const { key } = await keyOn(redis.url, { name: "late", account: "late", plan: "starter" });
    const access = new RedisAccess({ url: redis.url, keyMsPerSecond: 0, log: () => {} });
    await access.start();
    // Redis goes away between the request's admission and its settlement.
    const gate = Object.assign(Object.create(access) as RedisAccess, {
      admit: async (headers: Headers, cost: number, needs?: "read" | "full") => {
        const grant = await access.admit(headers, cost, needs);
        await redis.kill();
        return grant;
      },
    });
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: gate });
    try {
      const r = await app.handle(new Request("http://localhost/v1/chunk/39_2", { headers: { "X-API-Key": key } }));
      const body = (await r.json()) as Json;
      expect([r.status, body.error, r.headers.get("retry-after")]).toEqual([503, "service_unavailable", "2"]);
      expect(body.message).toContain("its answer is withheld");
    } finally {
      app.close();
      access.stop();
      await redis.restart();
    }
    expect(redis.cli("HGET", `tome:spent:${month()}`, "late")).toBe("");
    // Its hold stays until its lease lapses (the replica cannot tell whether Redis took the settlement).
    expect(redis.cli("HGET", `tome:held:${month()}`, "late")).toBe("1");
  });
});

describe("a settlement Redis runs after the replica gave up on it", () => {
  // An enterprise account's too (its quota unlimited: before, nothing was held, and its withheld answer was counted).
  test.each(["starter", "enterprise"] as const)(
    "a withheld answer is not charged when its settlement, queued in a stalled Redis, runs later (stopped past the 2 s timeout): %s plan",
    async (plan) => {
      const { key, id } = await keyOn(redis.url, { name: "queued", account: `queued-${plan}`, plan });
      const access = new RedisAccess({ url: redis.url, keyMsPerSecond: 0, log: () => {} });
      await access.start();
      // Redis stalls between the request's admission and its settlement (SIGSTOP): the settlement waits in its socket past
      // the replica's timeout, and runs when Redis goes on (as after DEBUG SLEEP 3, or a reply lost as Redis shut down).
      let paused = false;
      const gate = Object.assign(Object.create(access) as RedisAccess, {
        admit: async (headers: Headers, cost: number, needs?: "read" | "full") => {
          const grant = await access.admit(headers, cost, needs);
          if (!paused) process.kill(redis.pid(), "SIGSTOP");
          paused = true;
          return grant;
        },
      });
      const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: gate });
      const get = () => app.handle(new Request("http://localhost/v1/chunk/39_2", { headers: { "X-API-Key": key } }));
      try {
        const withheld = await get();
        const body = (await withheld.json()) as Json;
        expect([withheld.status, body.message]).toEqual([503, expect.stringContaining("nothing was charged")]);
        // Redis goes on, and runs the settlement it was sent; the replica serves again: one answer, one credit.
        process.kill(redis.pid(), "SIGCONT");
        let status = 0;
        for (const deadline = Date.now() + 10_000; status !== 200 && Date.now() < deadline; ) {
          status = (await get()).status;
          if (status !== 200) await Bun.sleep(100);
        }
        expect(status).toBe(200);
        let spent = "";
        for (const deadline = Date.now() + 5_000; Date.now() < deadline; await Bun.sleep(100)) {
          spent = redis.cli("HGET", `tome:spent:${month()}`, `queued-${plan}`);
          if (spent === "1" && redis.cli("HGET", `tome:held:${month()}`, `queued-${plan}`) === "0") break;
        }
        expect([spent, redis.cli("HGET", `tome:held:${month()}`, `queued-${plan}`)]).toEqual(["1", "0"]);
        // The dashboard's count of the key's credits: the answer's, not the withheld one's.
        expect(redis.cli("HGET", `tome:use:${dayOf(Date.now())}`, `${id}:c`)).toBe("1");
      } finally {
        process.kill(redis.pid(), "SIGCONT");
        app.close();
        access.stop();
      }
    },
  );
});

describe("a settlement given up on across an outage longer than its hold's lease", () => {
  test("one that ran before the outage is not charged: its hold is gone and was not marked lapsed, however far the clock moved", async () => {
    const { key } = await keyOn(redis.url, { name: "longout", account: "longout", plan: "starter" });
    let now = Date.now();
    const access = new RedisAccess({ url: redis.url, now: () => now, keyMsPerSecond: 0, log: () => {} });
    await access.start();
    // As "a withheld answer is not charged…" above: the settlement waits in a stopped Redis, which runs it as it goes on.
    let paused = false;
    const gate = Object.assign(Object.create(access) as RedisAccess, {
      admit: async (headers: Headers, cost: number, needs?: "read" | "full") => {
        const grant = await access.admit(headers, cost, needs);
        if (!paused) process.kill(redis.pid(), "SIGSTOP");
        paused = true;
        return grant;
      },
    });
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: gate });
    const get = () => app.handle(new Request("http://localhost/v1/chunk/39_2", { headers: { "X-API-Key": key } }));
    try {
      const withheld = await get();
      expect(withheld.status).toBe(503);
      // The outage outlasts the hold's lease (the replica's clock is moved on rather than the test waiting 50 s).
      now += REQUEST_HOLD_LEASE_MS + 1_000;
      process.kill(redis.pid(), "SIGCONT");
      let status = 0;
      for (const deadline = Date.now() + 10_000; status !== 200 && Date.now() < deadline; ) {
        status = (await get()).status;
        if (status !== 200) await Bun.sleep(100);
      }
      expect(status).toBe(200);
      // One answer, one credit (before: 2, the withheld answer's settlement taken for a lapse and left charged).
      expect([
        redis.cli("HGET", `tome:spent:${month()}`, "longout"),
        redis.cli("HGET", `tome:held:${month()}`, "longout"),
      ]).toEqual(["1", "0"]);
    } finally {
      process.kill(redis.pid(), "SIGCONT");
      app.close();
      access.stop();
    }
  });

  test("one whose hold lapsed (another replica's clock ahead gave it back) and that never ran is not undone: the account gains no credit", async () => {
    const { key } = await keyOn(redis.url, { name: "ahead", account: "ahead", plan: "starter" });
    redis.cli("HSET", `tome:spent:${month()}`, "ahead", "100");
    const behind = new RedisAccess({ url: redis.url, keyMsPerSecond: 0, log: () => {} });
    const ahead = new RedisAccess({
      url: redis.url,
      now: () => Date.now() + REQUEST_HOLD_LEASE_MS + 1_000,
      keyMsPerSecond: 0,
      log: () => {},
    });
    await Promise.all([behind.start(), ahead.start()]);
    const headers = new Headers({ "X-API-Key": key });
    try {
      const grant = (await behind.admit(headers, 1)) as Grant;
      expect(grant.held).toBeDefined();
      // The replica ahead finds the hold lapsed, gives it back, and spends a credit of its own.
      expect(await ahead.settle((await ahead.admit(headers, 1)) as Grant, true)).toBe(true);
      expect(redis.cli("HGET", `tome:spent:${month()}`, "ahead")).toBe("101");
      // The replica behind loses Redis (stopped past its 2 s timeout) before settling: the settlement is never sent.
      process.kill(redis.pid(), "SIGSTOP");
      try {
        await behind.redis.command("PING", []).catch(() => {});
        expect(behind.redis.outage).toBeDefined();
        expect(await behind.settle(grant, true)).toBe("unreachable");
      } finally {
        process.kill(redis.pid(), "SIGCONT");
      }
      for (let i = 0; i < 100 && behind.redis.outage; i++) await Bun.sleep(50);
      // Its undoing ran (admissions wait for it): before, its hold gone before this replica's lapse was taken for a
      // settlement that ran, and a credit never spent was given back (100).
      await behind.admit(new Headers({ "X-API-Key": `wk_${"0".repeat(32)}` }), 1);
      expect(redis.cli("HGET", `tome:spent:${month()}`, "ahead")).toBe("101");
    } finally {
      process.kill(redis.pid(), "SIGCONT");
      behind.stop();
      ahead.stop();
    }
  });
});

describe("an admission Redis runs after the replica gave up on it", () => {
  test("its hold goes back when Redis answers again: the account's last credit is not kept from it by a request answered 503", async () => {
    const { key } = await keyOn(redis.url, { name: "stalled", account: "stalled", plan: "starter" });
    redis.cli("HSET", `tome:spent:${month()}`, "stalled", "49999");
    const access = new RedisAccess({ url: redis.url, keyMsPerSecond: 0, log: () => {} });
    await access.start();
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access });
    const get = () => app.handle(new Request("http://localhost/v1/chunk/39_2", { headers: { "X-API-Key": key } }));
    try {
      // Redis stops with the admission in its socket: the request is 503 after 2 s; Redis runs it when it goes on.
      process.kill(redis.pid(), "SIGSTOP");
      const stalled = get();
      try {
        expect((await stalled).status).toBe(503);
      } finally {
        process.kill(redis.pid(), "SIGCONT");
      }
      let answer = await get();
      for (const deadline = Date.now() + 10_000; answer.status === 503 && Date.now() < deadline; answer = await get())
        await Bun.sleep(100);
      expect([answer.status, answer.headers.get("x-quota-remaining")]).toEqual([200, "0"]);
      expect(redis.cli("HGET", `tome:spent:${month()}`, "stalled")).toBe("50000");
    } finally {
      process.kill(redis.pid(), "SIGCONT");
      app.close();
      access.stop();
    }
  });

  test("run only after its undoing (UNADMIT), it holds nothing and counts nothing: the account's last credit is its next request's, not kept for the hold's lease", async () => {
    const { key, id } = await keyOn(redis.url, { name: "undone-first", account: "undone-first", plan: "starter" });
    redis.cli("HSET", `tome:spent:${month()}`, "undone-first", "49999");
    const access = new RedisAccess({ url: redis.url, keyMsPerSecond: 0, log: () => {} });
    await access.start();
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access });
    try {
      // The order no stall could be made to give here (Redis reads the stalled socket before the probe's new one), but
      // another route (a proxy holding the bytes back) may: the replica's undoing first, then the admission it gave up on.
      const now = Date.now();
      const holdId = "gaveup:1";
      const day = dayOf(now);
      await access.redis.run(UNADMIT, [hashKey(key), month(), holdId, "1", day]);
      const late = [hashKey(key), String(now), "1", "0", month(), holdId, String(REQUEST_HOLD_LEASE_MS), "", day];
      await access.redis.run(ADMIT, late);
      const held = Number(redis.cli("HGET", `tome:held:${month()}`, "undone-first"));
      expect([held, Number(redis.cli("HGET", `tome:use:${day}`, `${id}:r`))]).toEqual([0, 0]);
      const answer = await app.handle(new Request("http://localhost/v1/chunk/39_2", { headers: { "X-API-Key": key } }));
      expect([answer.status, answer.headers.get("x-quota-remaining")]).toEqual([200, "0"]);
      expect(redis.cli("HGET", `tome:spent:${month()}`, "undone-first")).toBe("50000");
    } finally {
      app.close();
      access.stop();
    }
  });
});

test("ADMIT's hold is 0 or 1, an unlimited quota's as any other's (the replica reads only whether one was held)", async () => {
  const access = new RedisAccess({ url: redis.url, keyMsPerSecond: 0, log: () => {} });
  await access.start();
  try {
    const holds: number[] = [];
    for (const plan of ["starter", "enterprise"] as const) {
      const { key } = await keyOn(redis.url, { name: `hold-${plan}`, account: `hold-${plan}`, plan });
      const now = Date.now();
      const args = [
        hashKey(key),
        String(now),
        "1",
        "0",
        month(),
        `hold-${plan}:1`,
        String(REQUEST_HOLD_LEASE_MS),
        "",
        dayOf(now),
      ];
      holds.push(Number(((await access.redis.run(ADMIT, args)) as unknown[])[7]));
    }
    expect(holds).toEqual([1, 1]);
  } finally {
    access.stop();
  }
});

describe("a hold that lapsed (D181)", () => {
  /** A starter key of account `name` with one credit left, and a started RedisAccess whose clock `later` moves on. */
  async function oneCreditLeft(name: string) {
    const { key } = await keyOn(redis.url, { name, account: name, plan: "starter" });
    redis.cli("HSET", `tome:spent:${month()}`, name, "49999");
    let now = Date.now();
    const access = new RedisAccess({ url: redis.url, now: () => now, keyMsPerSecond: 0, log: () => {} });
    await access.start();
    const later = (ms: number) => {
      now += ms;
    };
    return { key, access, later };
  }

  test("a 2xx settled after its hold lapsed is not answered free: with the quota spent meanwhile it is 429 quota_exceeded; with room, charged its whole cost", async () => {
    const { key, access, later } = await oneCreditLeft("drip");
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access });
    try {
      // A request held past its hold's lease (in-process, a body not yet sent; over HTTP, another replica whose clock runs
      // that far ahead of this one's lapses its holds at once): it holds the last credit.
      let send!: (text: string) => void;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          send = (text) => {
            c.enqueue(new TextEncoder().encode(text));
            c.close();
          };
        },
      });
      const slow = app.handle(
        new Request("http://localhost/mcp", {
          method: "POST",
          headers: {
            "X-API-Key": key,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body,
        }),
      );
      for (let i = 0; i < 200 && redis.cli("HGET", `tome:held:${month()}`, "drip") !== "1"; i++) await Bun.sleep(10);
      expect(redis.cli("HGET", `tome:held:${month()}`, "drip")).toBe("1");
      // Past the hold's lease: the next request finds it lapsed, takes the credit back, and spends it.
      later(REQUEST_HOLD_LEASE_MS + 1_000);
      const next = await app.handle(new Request("http://localhost/v1/chunk/39_2", { headers: { "X-API-Key": key } }));
      expect([next.status, next.headers.get("x-quota-remaining")]).toEqual([200, "0"]);
      send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "get_chunk", arguments: { id: "39_0" } },
        }),
      );
      const late = await slow;
      const answer = (await late.json()) as Json;
      // Its hold had lapsed and the last credit was spent meanwhile: before D181 it was answered 200 with the chunk and
      // charged nothing; now it is withheld as the quota's 429, still charging nothing.
      expect([late.status, answer.error, late.headers.get("x-quota-remaining")]).toEqual([429, "quota_exceeded", "0"]);
      expect(redis.cli("HGET", `tome:spent:${month()}`, "drip")).toBe("50000");
      // With room left, a lapsed hold's 2xx is answered and charged, as before.
      redis.cli("HSET", `tome:spent:${month()}`, "drip", "49995");
      const gate = Object.assign(Object.create(access) as RedisAccess, {
        admit: async (headers: Headers, cost: number, needs?: "read" | "full") => {
          const grant = await access.admit(headers, cost, needs);
          later(REQUEST_HOLD_LEASE_MS + 1_000);
          // Another request lapses its hold and takes 3 of the 5 credits left meanwhile.
          for (let i = 0; i < 3; i++) await access.settle((await access.admit(headers, 1)) as Grant, true);
          return grant;
        },
      });
      const second = createApp(await engineFor({ dumps: [EN_2016] }), { access: gate });
      try {
        const r = await second.handle(new Request("http://localhost/v1/chunk/39_2", { headers: { "X-API-Key": key } }));
        expect([r.status, r.headers.get("x-quota-remaining")]).toEqual([200, "1"]);
        expect(redis.cli("HGET", `tome:spent:${month()}`, "drip")).toBe("49999");
      } finally {
        second.close();
      }
    } finally {
      app.close();
      access.stop();
    }
  });
  test("a request as slow as one answered in time may be (its body closed by Bun 2 s past its idle timeout, then a search until its worker is taken for stuck) keeps its hold: the credit is not another's meanwhile, and it is charged, not withheld", async () => {
    const { key, access, later } = await oneCreditLeft("slowest");
    try {
      const headers = new Headers({ "X-API-Key": key });
      const slow = (await access.admit(headers, 1)) as Grant;
      expect(slow.held).toBeDefined();
      // Bun closes a socket whose body is not whole at its next check after the idle timeout: 2 s late (12 s for 10, measured).
      later((SOCKET_IDLE_SECONDS + 2) * 1000 + WORKER_STUCK_MS - 1);
      // Another request finds the last credit still held: it is refused it, by the quota (not its rate or work share).
      const other = (await access.admit(headers, 1)) as Grant;
      expect(["reason" in other, other.rateRemaining >= 0, other.workWait, other.held]).toEqual([
        false,
        true,
        0,
        undefined,
      ]);
      expect(access.quotaOf(other)).toMatchObject({ remaining: 0, used: 50000 });
      expect(await access.settle(slow, true)).toBe(true);
      expect(redis.cli("HGET", `tome:spent:${month()}`, "slowest")).toBe("50000");
    } finally {
      access.stop();
    }
  });
});

describe("Redis that lost its keys (D156)", () => {
  test("a store flushed under a running replica is 503 and /healthz degraded, not 403 for every key, until the keys are imported again", async () => {
    const store = await startRedis();
    const lines: string[] = [];
    const access = new RedisAccess({ url: store.url, keyMsPerSecond: 0, log: (line) => lines.push(line) });
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access });
    const get = async (key: string | undefined, path = "/v1/chunk/39_2") => {
      const r = await app.handle(new Request(`http://localhost${path}`, { headers: key ? { "X-API-Key": key } : {} }));
      return { status: r.status, body: (await r.json()) as Json };
    };
    try {
      const { key } = await keyOn(store.url, { name: "flushed", account: "flushed", plan: "starter" });
      await access.start();
      expect((await get(key)).status).toBe(200);
      const saved = tempDir("tome-data-");
      expect((await keysOn(store.url, ["export"], saved)).code).toBe(0);
      // A request in flight when the store is flushed writes nothing for its account, which no longer exists.
      const grant = await access.admit(new Headers({ "X-API-Key": key }), 1);
      store.cli("FLUSHALL");
      expect(await access.settle(grant as Grant, true)).toBe("keys lost");
      expect(store.cli("HGETALL", `tome:spent:${month()}`)).toBe("");
      for (let i = 0; i < 2; i++) {
        const r = await get(key);
        expect([r.status, r.body.error]).toEqual([503, "service_unavailable"]);
        expect(r.body.message).toContain("lost its keys");
      }
      expect((await get(undefined, "/healthz")).body).toEqual({
        status: "degraded",
        problems: [expect.stringContaining("(Redis) has lost its keys since")],
      });
      // Redis's address is the operator's: the log has it, /healthz (anyone's) does not.
      expect(JSON.stringify((await get(undefined, "/healthz")).body)).not.toContain(new URL(store.url).host);
      expect(lines.filter((l) => l.includes("has lost its keys"))).toHaveLength(1);
      expect((await keysOn(store.url, ["import"], saved)).code).toBe(0);
      expect((await get(key)).status).toBe(200);
      expect((await get(undefined, "/healthz")).body).toEqual({ status: "ok" });
      expect(lines.at(-1)).toContain("holds its keys again");
    } finally {
      app.close();
      access.stop();
      await store.stop();
    }
  });

  test("an answer in flight when the store is flushed is withheld with a 503 that says the store lost its keys (keys import), not that it is unreachable", async () => {
    const store = await startRedis();
    const access = new RedisAccess({ url: store.url, keyMsPerSecond: 0, log: () => {} });
    // The store is flushed between the request's admission and its settlement.
    const gate = Object.assign(Object.create(access) as RedisAccess, {
      admit: async (headers: Headers, cost: number, needs?: "read" | "full") => {
        const grant = await access.admit(headers, cost, needs);
        store.cli("FLUSHALL");
        return grant;
      },
    });
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access: gate });
    try {
      const { key } = await keyOn(store.url, { name: "inflight", account: "inflight", plan: "starter" });
      await access.start();
      const r = await app.handle(new Request("http://localhost/v1/chunk/39_2", { headers: { "X-API-Key": key } }));
      const body = (await r.json()) as Json;
      expect([r.status, body.error, r.headers.get("retry-after")]).toEqual([503, "service_unavailable", "2"]);
      expect(body.message).toContain("its answer is withheld");
      expect(body.message).toContain("has lost its keys, which an operator imports again with `bun run keys import`");
      expect(body.message).not.toContain("unreachable");
    } finally {
      app.close();
      access.stop();
      await store.stop();
    }
  });

  test("a replica on a store that never held a key answers 403 to an unknown key, as before (nothing was lost)", async () => {
    const store = await startRedis();
    const access = new RedisAccess({ url: store.url, keyMsPerSecond: 0, log: () => {} });
    try {
      await access.start();
      const refused = await access.admit(new Headers({ "X-API-Key": `wk_${"a".repeat(32)}` }), 1);
      expect((refused as Refusal).reason).toBe("invalid key");
      expect(access.health().ok).toBe(true);
    } finally {
      access.stop();
      await store.stop();
    }
  });
});

describe("Redis that answers, but not as asked", () => {
  test("a Redis out of memory (noeviction) refuses every request's script: 503 until it has room, not service back at each PING it answers; /healthz says why", async () => {
    const { key } = await keyOn(redis.url, { name: "oom", account: "oom", plan: "starter" });
    const logged: string[] = [];
    const access = new RedisAccess({ url: redis.url, keyMsPerSecond: 0, log: (line) => logged.push(line) });
    await access.start();
    const admit = () => access.admit(new Headers({ "X-API-Key": key }), 1);
    try {
      expect(await admit()).toMatchObject({ rateRemaining: 24 });
      redis.cli("CONFIG", "SET", "maxmemory", "1");
      try {
        expect(await admit()).toMatchObject({ reason: "unavailable" });
        // Several probes: each PING is answered, and each write refused.
        await Bun.sleep(1000);
        expect(await admit()).toMatchObject({ reason: "unavailable" });
        expect(logged).toEqual([expect.stringContaining("is unreachable (OOM command not allowed")]);
        // /healthz says why, in its own words (the log has Redis's): Redis answers, so "cannot be reached" alone points at
        // the network.
        expect(access.health().problems).toEqual([
          expect.stringContaining("(it answers but is out of memory (OOM: maxmemory reached under noeviction);"),
        ]);
      } finally {
        redis.cli("CONFIG", "SET", "maxmemory", "0");
      }
      for (const deadline = Date.now() + 10_000; access.redis.outage && Date.now() < deadline; ) await Bun.sleep(50);
      expect(await admit()).toMatchObject({ rateRemaining: expect.any(Number) });
      expect(logged[1]).toContain("answers again");
    } finally {
      access.stop();
    }
  });

  test("a wrong password, or none, is said as Redis says it (WRONGPASS, NOAUTH), and no password is ever printed", async () => {
    const password = "pw-Zq81sEcRet";
    const url = (auth: string) => redis.url.replace("redis://", `redis://${auth}`);
    const asAdmin = ["-a", password, "--no-auth-warning"];
    redis.cli("CONFIG", "SET", "requirepass", password);
    try {
      const wrong = await keysOn(url(":not-it@"), ["list"]);
      expect([wrong.code, wrong.stderr.trim()]).toEqual([
        1,
        `keys list: Redis at ${redis.url} (TOME_REDIS_URL) refused the connection (WRONGPASS invalid username-password pair or user is disabled.): check the user and password TOME_REDIS_URL gives (redis://[USER]:PASSWORD@HOST:PORT). Nothing was changed.`,
      ]);
      const none = await keysOn(redis.url, ["list"]);
      expect(none.stderr).toContain("refused the connection (NOAUTH Authentication required.)");
      // A replica logs it at its start, and serves 503 until Redis takes the password.
      const logged: string[] = [];
      const access = new RedisAccess({ url: url(":not-it@"), keyMsPerSecond: 0, log: (line) => logged.push(line) });
      await access.start();
      access.stop();
      expect(logged).toEqual([expect.stringContaining("refused the connection (WRONGPASS")]);
      const right = await keysOn(url(`:${password}@`), ["list", "--json"]);
      expect(right.code).toBe(0);
      for (const out of [wrong, none, right]) expect(out.stdout + out.stderr).not.toContain(password);
      expect(logged.join("\n")).not.toContain("not-it");
    } finally {
      redis.cli(...asAdmin, "CONFIG", "SET", "requirepass", "");
    }
  });

  test("/healthz says why Redis cannot be used in a fixed sentence, never what Redis, a proxy or the connection said (a host, an internal address, a user): the log has that", async () => {
    const password = "pw-Hz55sEcRet";
    redis.cli("CONFIG", "SET", "requirepass", password);
    // Something that answers every command with an error naming an internal host, as a proxy in front of Redis may.
    const proxy = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data: (socket) => void socket.write("-ERR proxy: upstream redis-7.internal:6379 (10.9.8.7) is down\r\n"),
      },
    });
    const nothing = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data: () => {} } });
    const closed = nothing.port;
    nothing.stop(true);
    const port = new URL(redis.url).port;
    const cases = [
      // A user and a wrong password: Redis's WRONGPASS.
      [
        `redis://tome-replica:not-it@127.0.0.1:${port}`,
        "it refused the user or password TOME_REDIS_URL gives",
        "WRONGPASS",
      ],
      [`redis://:${password}@127.0.0.1:${proxy.port}`, "it refused the connection", "redis-7.internal"],
      [`redis://:${password}@127.0.0.1:${closed}`, "the connection to it failed or closed", "Connection closed"],
    ] as const;
    try {
      for (const [url, said, raw] of cases) {
        const logged: string[] = [];
        const access = new RedisAccess({ url, keyMsPerSecond: 0, log: (line) => logged.push(line) });
        const app = createApp(await engineFor({ dumps: [EN_2016] }), { access });
        try {
          await access.start();
          const health = await app.handle(new Request("http://localhost/healthz"));
          const body = (await health.json()) as Json;
          expect([url, health.status, body]).toEqual([
            url,
            200,
            {
              status: "degraded",
              problems: [
                expect.stringMatching(
                  new RegExp(
                    `^the shared store of keys and quotas \\(Redis\\) cannot be reached since \\S+ \\(${said}; the server's log has what was said\\): requests that need a key get 503 until it answers again$`,
                  ),
                ),
              ],
            },
          ]);
          const text = JSON.stringify(body);
          for (const secret of [
            raw,
            "127.0.0.1",
            String(new URL(url).port),
            "tome-replica",
            "not-it",
            password,
            "10.9.8.7",
          ])
            expect([url, text]).not.toEqual([url, expect.stringContaining(secret)]);
          // The log has what was said, with where (no user, no password).
          expect([url, logged.join("\n")]).toEqual([url, expect.stringContaining(raw)]);
          expect(logged.join("\n")).toContain(`127.0.0.1:${new URL(url).port}`);
          for (const secret of ["not-it", password]) expect(logged.join("\n")).not.toContain(secret);
        } finally {
          app.close();
          access.stop();
        }
      }
    } finally {
      proxy.stop(true);
      redis.cli("-a", password, "--no-auth-warning", "CONFIG", "SET", "requirepass", "");
    }
  });

  test("create, revoke and plan name the Redis they wrote to, without its user or password", async () => {
    const password = "pw-Nm27sEcRet";
    const url = `${redis.url.replace("redis://", `redis://default:${password}@`)}/3`;
    redis.cli("CONFIG", "SET", "requirepass", password);
    try {
      const made = await keysOn(url, ["create", "--name", "where", "--account", "where"]);
      expect(made.stderr).toContain(`(free plan, scope read) in Redis at ${redis.url}/3. This is the only time`);
      const id = /Created (key_\w+)/.exec(made.stderr)![1]!;
      const revoked = await keysOn(url, ["revoke", id]);
      expect(revoked.stderr).toEndWith(`, in Redis at ${redis.url}/3.\n`);
      const plan = await keysOn(url, ["plan", "--account", "where", "--plan", "growth"]);
      expect(plan.stderr).toContain(`credits a month (in Redis at ${redis.url}/3).`);
      for (const out of [made, revoked, plan]) expect(out.stderr).not.toContain(password);
    } finally {
      redis.cli("-a", password, "--no-auth-warning", "CONFIG", "SET", "requirepass", "");
    }
  });

  test("TOME_REDIS_URL's password is never printed: not from its query, nor when the client refuses the URL", async () => {
    expect(redisAddress("redis://u:pw1@10.0.0.5:6379/2?password=pw2#pw3")).toBe("redis://10.0.0.5:6379/2");
    // A database that is not a number: Bun's client refuses the URL when it is made, which threw a stack trace.
    const bad = await keysOn("redis://:pw4@127.0.0.1:1/abc", ["list"]);
    expect([bad.code, bad.stderr.trim()]).toEqual([
      2,
      'keys list: TOME_REDIS_URL cannot be used (Invalid database number in Redis URL: "abc"): give it as redis://[:PASSWORD@]HOST:PORT[/DATABASE NUMBER].',
    ]);
  });
});

describe("keys import and export", () => {
  test("move keys and this month's usage from files into an empty Redis and back", async () => {
    const data = tempDir("tome-data-");
    const a = await keyMade(data, { name: "a", account: "mover", plan: "starter" });
    const b = await keyMade(data, { name: "b", account: "mover", scope: "full" });
    expect((await keyTool(data, "revoke", b.id)).code).toBe(0);
    writeUsage(usagePath(data), {
      months: { [month()]: { mover: 1234 }, "2001-01": { mover: 7 } },
      last_used: { [a.id]: "2026-01-02T03:04:05.000Z" },
    });
    const empty = await startRedis();
    try {
      // Nothing there yet: an export says so and writes nothing (it wrote a store without keys, which no server starts on).
      const none = tempDir("tome-data-");
      const nothing = await keysOn(empty.url, ["export"], none);
      expect([nothing.code, nothing.stderr]).toEqual([
        1,
        expect.stringContaining(`holds no keys or accounts: there is nothing to export.`),
      ]);
      expect(readdirSync(none)).toEqual([]);
      const imported = await keysOn(empty.url, ["import"], data);
      expect([imported.code, imported.stderr]).toEqual([
        0,
        expect.stringContaining("Imported 2 key(s) of 1 account(s)"),
      ]);
      expect((await keysOn(empty.url, ["import"], data)).stderr).toContain(
        "already holds keys or accounts; nothing was imported",
      );
      const s = await startReplica(empty.url);
      try {
        const r = await call(s.url, a.key);
        expect([r.status, r.headers.get("x-quota-remaining")]).toEqual([200, String(50_000 - 1234 - 1)]);
        expect((await call(s.url, b.key)).status).toBe(403);
      } finally {
        await s.stop();
      }
      const out = tempDir("tome-data-");
      const exported = await keysOn(empty.url, ["export"], out);
      expect([exported.code, exported.stderr]).toEqual([0, expect.stringContaining("Exported 2 key(s)")]);
      expect((await keysOn(empty.url, ["export"], out)).stderr).toContain("already exists");
      // usage.json's journal (D20) left in TOME_DATA: its credits would be added to those exported (before: exported).
      const journalOnly = tempDir("tome-data-");
      writeFileSync(
        join(journalOnly, "usage.json.journal.2"),
        `${JSON.stringify([month(), "mover", 5, "key_a", `${month()}-01`])}\n`,
      );
      const refused = await keysOn(empty.url, ["export"], journalOnly);
      expect([refused.code, refused.stderr]).toEqual([
        1,
        expect.stringContaining(`${join(journalOnly, "usage.json.journal.2")} already exists`),
      ]);
      expect(readdirSync(journalOnly)).toEqual(["usage.json.journal.2"]);
      const before = readKeyFile(join(data, "keys.json"));
      const after = readKeyFile(join(out, "keys.json"));
      expect(after.accounts).toEqual(before.accounts);
      expect([...after.keys].sort((x, y) => x.id.localeCompare(y.id))).toEqual(
        [...before.keys].sort((x, y) => x.id.localeCompare(y.id)),
      );
      const usage = readUsage(usagePath(out));
      expect(usage.months).toEqual({ [month()]: { mover: 1235 } });
      expect(Date.parse(usage.last_used[a.id]!)).toBeGreaterThan(Date.parse("2026-01-02T03:04:05.000Z"));
      // A single server serves the exported store.
      const single = await startServer({ ...NO_SEARCH_THREADS, TOME_SNAPSHOT: snapshot, TOME_DATA: out });
      try {
        const r = await call(single.url, a.key);
        expect([r.status, r.headers.get("x-quota-remaining")]).toEqual([200, String(50_000 - 1235 - 1)]);
      } finally {
        await single.stop();
      }
      expect(existsSync(join(out, "keys.gen"))).toBe(true);
    } finally {
      await empty.stop();
    }
  });

  test("an import with no TOME_REDIS_URL, or a Redis that does not answer, says so before asking to stop the server that serves the folder", async () => {
    const data = tempDir("tome-data-");
    await keyMade(data, { name: "a", account: "mover" });
    const single = await startServer({ ...NO_SEARCH_THREADS, TOME_SNAPSHOT: snapshot, TOME_DATA: data });
    try {
      const unset = await keyTool(data, "import");
      expect([unset.code, unset.stderr]).toEqual([
        1,
        expect.stringContaining("keys import: TOME_REDIS_URL is not set"),
      ]);
      const away = await keysOn("redis://127.0.0.1:1", ["import"], data);
      expect([away.code, away.stderr]).toEqual([
        1,
        expect.stringContaining("keys import: cannot reach Redis at redis://127.0.0.1:1"),
      ]);
    } finally {
      await single.stop();
    }
  });

  test("an import from a folder a server still serves is refused, as its help says to stop it first; after its stop it goes", async () => {
    const data = tempDir("tome-data-");
    const a = await keyMade(data, { name: "a", account: "mover" });
    const empty = await startRedis();
    try {
      const single = await startServer({ ...NO_SEARCH_THREADS, TOME_SNAPSHOT: snapshot, TOME_DATA: data });
      try {
        expect((await call(single.url, a.key)).status).toBe(200);
        const refused = await keysOn(empty.url, ["import"], data);
        expect([refused.code, refused.stderr]).toEqual([
          1,
          expect.stringContaining(`a Tome server (process ${single.pid}) serves from ${data}`),
        ]);
        expect(empty.cli("--scan", "--pattern", "tome:*")).toBe("");
      } finally {
        await single.stop();
      }
      const imported = await keysOn(empty.url, ["import"], data);
      expect([imported.code, imported.stderr]).toEqual([0, expect.stringContaining("Imported 1 key(s)")]);
    } finally {
      await empty.stop();
    }
  });

  test("a usage.json or keys.json Redis cannot take is refused before anything is written, and the import can be run again", async () => {
    const data = tempDir("tome-data-");
    const a = await keyMade(data, { name: "a", account: "mover" });
    // Written by hand, with a terminal escape (ESC [2J clears the screen): named escaped, where it was sent raw.
    writeUsage(usagePath(data), { months: { [month()]: { mover: 3 } }, last_used: { [a.id]: "yester\u001b[2Jday" } });
    const empty = await startRedis();
    try {
      const bad = await keysOn(empty.url, ["import"], data);
      expect([bad.code, bad.stderr]).toEqual([
        1,
        expect.stringContaining(`last use of key ${a.id} is not a time ("yester\\u001b[2Jday")`),
      ]);
      expect(empty.cli("--scan", "--pattern", "tome:*")).toBe("");
      const file = readKeyFile(join(data, "keys.json"));
      file.accounts["two\u001b[2J words"] = { plan: "free" };
      file.keys[0]!.account = "two\u001b[2J words";
      writeFileSync(join(data, "keys.json"), JSON.stringify(file));
      writeUsage(usagePath(data), { months: {}, last_used: {} });
      const spaced = await keysOn(empty.url, ["import"], data);
      expect([spaced.code, spaced.stderr]).toEqual([
        1,
        expect.stringContaining(`of account "two\\u001b[2J words" has a space in its id or its account's name`),
      ]);
      expect(empty.cli("--scan", "--pattern", "tome:*")).toBe("");
      file.keys[0]!.account = "mover";
      writeFileSync(join(data, "keys.json"), JSON.stringify(file));
      expect((await keysOn(empty.url, ["import"], data)).code).toBe(0);
    } finally {
      await empty.stop();
    }
  });

  test("an export that fails or is killed before its end leaves no keys.json: no server starts on the store without its usage", async () => {
    const filled = await startRedis();
    try {
      expect((await keysOn(filled.url, ["create", "--name", "a", "--account", "mover"])).code).toBe(0);
      filled.cli("HSET", `tome:spent:${month()}`, "mover", "77");
      const out = tempDir("tome-data-");
      const env = { ...process.env, TOME_REDIS_URL: filled.url, TOME_DATA: out };
      const cut = Bun.spawn(["bun", join(ROOT, "src/cli/keys.ts"), "export"], {
        env,
        stdout: "ignore",
        stderr: "ignore",
      });
      // usage.json's temporary file taken (before the command, starting, gets to it): its write fails, as a kill there would stop it.
      mkdirSync(join(out, `.usage.json.${cut.pid}.tmp`));
      expect(await cut.exited).not.toBe(0);
      expect([existsSync(join(out, "keys.json")), existsSync(usagePath(out))]).toEqual([false, false]);
      rmSync(join(out, `.usage.json.${cut.pid}.tmp`), { recursive: true });
      expect((await keysOn(filled.url, ["export"], out)).code).toBe(0);
      expect(readUsage(usagePath(out)).months).toEqual({ [month()]: { mover: 77 } });
    } finally {
      await filled.stop();
    }
  });

  test("import is refused by a Redis that holds an account without keys (made for the dashboard): its plan and token stay", async () => {
    const target = await startRedis();
    try {
      expect((await keysOn(target.url, ["account", "create", "--account", "acme", "--plan", "business"])).code).toBe(0);
      const before = target.cli("HGET", "tome:accounts", "acme");
      const data = tempDir("tome-data-");
      await keyMade(data, { name: "a", account: "acme", plan: "free" });
      const refused = await keysOn(target.url, ["import"], data);
      expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining("already holds keys or accounts")]);
      expect(target.cli("HGET", "tome:accounts", "acme")).toBe(before);
      expect(target.cli("HLEN", "tome:keys")).toBe("0");
    } finally {
      await target.stop();
    }
  });

  test("the key tool waits for an import Redis takes over 2 s to answer (a large store), rather than say it failed while Redis makes it", async () => {
    const slow = await startRedis();
    const store = await RedisKeyStore.open(slow.url);
    try {
      const data = tempDir("tome-data-");
      await keyMade(data, { name: "a", account: "big" });
      // Redis answering nothing for 2.5 s, as while it runs the script of an import of a few hundred thousand keys
      // (paused, not busy: the machine's cores stay the tests').
      slow.cli("CLIENT", "PAUSE", "2500", "ALL");
      const file = readKeyFile(join(data, "keys.json"));
      const started = performance.now();
      expect(await store.importStore(file, readUsage(usagePath(data)), month())).toBe(true);
      expect(performance.now() - started).toBeGreaterThan(2000);
      expect(slow.cli("HLEN", "tome:keys")).toBe("1");
    } finally {
      store.close();
      await slow.stop();
    }
  });

  test("a wrong or unreachable TOME_REDIS_URL is a clear error, never a stack trace", async () => {
    // A setting that cannot be used: exit 2, as start says it (ConfigError), where the key tool said 1.
    const wrong = await keysOn("http://127.0.0.1:1", ["list"]);
    expect([wrong.code, wrong.stderr.trim()]).toEqual([
      2,
      "keys list: TOME_REDIS_URL must start with redis:// or rediss:// (or redis+unix://), not http://.",
    ]);
    const gone = await keysOn("redis://127.0.0.1:1", ["create", "--name", "x"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("keys create: cannot reach Redis at redis://127.0.0.1:1 (TOME_REDIS_URL)");
    expect(gone.stderr).not.toContain("    at ");
  });
});
