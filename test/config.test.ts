/**
 * One configuration module (src/cli/config.ts): every TOME_* setting src/ names is in its
 * table, only it reads the environment, the README's table is its table, and bad values are
 * refused with a message naming the setting.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, relative, resolve } from "node:path";
import { checkRedisUrl } from "../src/access";
import { ConfigError, readConfig, SETTINGS, settingsTable } from "../src/cli/config";
import { type ListenError, readHost } from "../src/cli/listen";
import { BENCH_WORK_SHARE } from "../bench/servers";
import { tempDir } from "./helpers";

const ROOT = resolve(import.meta.dir, "..");
const SRC = join(ROOT, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("settings", () => {
  test("every TOME_* setting named in src/ is in SETTINGS", () => {
    const known = new Set<string>(SETTINGS.map((s) => s.name));
    const unknown = sourceFiles(SRC).flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/\bTOME_[A-Z_]+\b/g)]
        .map((m) => m[0])
        .filter((name) => !known.has(name))
        .map((name) => `${relative(ROOT, file)}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  test("only src/cli/config.ts reads the environment (and src/cli/allocator.ts the allocator's, D209)", () => {
    const readers = sourceFiles(SRC)
      .filter((file) =>
        /process\.env\b(?!:)|Bun\.env\b|\/proc\/self\/environ/.test(
          readFileSync(file, "utf8").replace(/^\s*(\*|\/\/).*$/gm, ""),
        ),
      )
      .map((file) => relative(ROOT, file))
      .sort();
    // The allocator's restart reads the environment the process started with, as the allocator did: not Tome's settings.
    expect(readers).toEqual(["src/cli/allocator.ts", "src/cli/config.ts"]);
  });

  test("README.md's Configuration table is the settings' table (bun src/cli/config.ts prints it)", () => {
    expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain(settingsTable());
  });

  test("defaults when nothing is set", () => {
    const config = readConfig({});
    expect(config).toMatchObject({
      snapshot: undefined,
      snapshotWatch: true,
      auth: true,
      dataDir: "data",
      keyMsPerSecond: undefined,
      searchTimeoutMs: undefined,
      searchWorkers: availableParallelism(),
      searchWorkerNice: 10,
      buildNice: 10,
      zstd: "system",
      memoryLog: "off",
      trustedProxies: [],
    });
  });

  test("values are read and checked", () => {
    expect(
      readConfig({
        TOME_AUTH: "off",
        TOME_KEY_MS_PER_SECOND: "0",
        TOME_SEARCH_TIMEOUT_MS: "250",
        TOME_SEARCH_WORKERS: "0",
        TOME_SEARCH_WORKER_NICE: "19",
        TOME_DATA: "/x",
        TOME_DEBUG_MEM: "gc",
        TOME_ZSTD: "node",
        TOME_BUILD_WORKERS: "3",
        TOME_BUILD_NICE: "0",
        TOME_TRUSTED_PROXIES: "127.0.0.1, ::FFFF:10.0.0.2,2001:db8::1",
        TOME_PUBLIC_URL: "https://tome.example.com:8443",
        TOME_DUMP: "https://dumps.example.org/x.xml.bz2",
      }),
    ).toMatchObject({
      publicUrl: "https://tome.example.com:8443",
      dump: "https://dumps.example.org/x.xml.bz2",
      trustedProxies: ["127.0.0.1", "::FFFF:10.0.0.2", "2001:db8::1"],
      auth: false,
      keyMsPerSecond: 0,
      searchTimeoutMs: 250,
      searchWorkers: 0,
      searchWorkerNice: 19,
      dataDir: "/x",
      dataDirGiven: true,
      memoryLog: "gc",
      zstd: "node",
      buildWorkers: 3,
    });
    for (const [name, value] of [
      ["TOME_AUTH", "yes"],
      ["TOME_SNAPSHOT_WATCH", "maybe"],
      ["TOME_KEY_MS_PER_SECOND", "1.5"],
      ["TOME_SEARCH_TIMEOUT_MS", "-1"],
      // Past 4 s no answer would reach a client: Bun closes a connection 10 s after its request with none begun.
      ["TOME_SEARCH_TIMEOUT_MS", "4001"],
      ["TOME_SEARCH_TIMEOUT_MS", "60000"],
      ["TOME_SEARCH_WORKERS", "two"],
      ["TOME_SEARCH_WORKERS", "1000"],
      ["TOME_SEARCH_WORKERS", "65"],
      ["TOME_SEARCH_WORKER_NICE", "20"],
      ["TOME_SEARCH_WORKER_NICE", "-5"],
      ["TOME_BUILD_NICE", "20"],
      ["TOME_BUILD_NICE", "-1"],
      ["TOME_ADMIN_TOKEN", "short"],
      ["TOME_ZSTD", "lz4"],
      ["TOME_BUILD_WORKERS", "0"],
      ["TOME_BUILD_WORKERS", "all"],
      ["TOME_BUILD_WORKERS", "65"],
      ["TOME_BUILD_WORKERS", "1000"],
      ["TOME_TRUSTED_PROXIES", "127.0.0.1,proxy.local"],
      ["TOME_TRUSTED_PROXIES", "10.0.0.0/8"],
      // URLs the dashboard and the download parse: the pattern alone passed them, and they threw there with a stack.
      ["TOME_PUBLIC_URL", "https://tome example.com"],
      ["TOME_PUBLIC_URL", "https://tome.example.com:99999"],
      ["TOME_DUMP", "https://"],
      ["TOME_DUMP", "http://dumps example.org/x.xml.bz2"],
    ] as const) {
      expect(() => readConfig({ [name]: value })).toThrow(ConfigError);
      expect(() => readConfig({ [name]: value })).toThrow(name);
    }
  });

  test("TOME_PUBLIC_URL with a path (a proxy serving Tome under /tome), a query or a user is refused naming the setting, where only its origin was kept silently (D170)", () => {
    for (const url of ["https://x.com/tome", "https://x.com/tome/", "https://x.com/?a=b", "https://u:p@x.com"]) {
      expect(() => readConfig({ TOME_PUBLIC_URL: url })).toThrow(ConfigError);
      expect(() => readConfig({ TOME_PUBLIC_URL: url })).toThrow(
        `TOME_PUBLIC_URL must be where clients reach the server, as http(s)://HOST[:PORT] and nothing more, not "${url}": Tome answers at the root of its origin`,
      );
    }
    expect(readConfig({ TOME_PUBLIC_URL: "https://x.com/" })).toMatchObject({ publicUrl: "https://x.com/" });
    expect(readConfig({ TOME_PUBLIC_URL: "http://x.com:8080" })).toMatchObject({ publicUrl: "http://x.com:8080" });
  });

  test("TOME_DATA starting with a ~ the shell left (quoted, an env file) is refused, where start made a folder named '~' (D187)", () => {
    // Where the test runs and in a folder holding a "~" (which the bug left in Tome's): refused in both.
    const withTilde = tempDir("tome-config-");
    mkdirSync(join(withTilde, "~"));
    for (const cwd of [process.cwd(), withTilde]) {
      const was = process.cwd();
      process.chdir(cwd);
      try {
        expect(() => readConfig({ TOME_DATA: "~/data" })).toThrow(
          'TOME_DATA starts with "~", which the shell did not turn into a home folder (it does not in quotes or an env file), not "~/data": give the full path, or ./~/data for a folder really named so (D187).',
        );
      } finally {
        process.chdir(was);
      }
    }
    expect(readConfig({ TOME_DATA: "data~/x" })).toMatchObject({ dataDir: "data~/x" });
    expect(readConfig({ TOME_DATA: "./~/data" })).toMatchObject({ dataDir: "./~/data" });
  });

  test("the benchmarks' servers are given a work share the server takes (bench/servers.ts)", () => {
    expect(readConfig({ TOME_KEY_MS_PER_SECOND: BENCH_WORK_SHARE })).toMatchObject({
      keyMsPerSecond: Number(BENCH_WORK_SHARE),
    });
  });

  test("TOME_KEY_MS_PER_SECOND past 65000 (a second of the request thread and 64 search workers) is refused with the bound, where any run of digits was taken and a huge one became Infinity (D25)", () => {
    expect(readConfig({ TOME_KEY_MS_PER_SECOND: "65000" })).toMatchObject({ keyMsPerSecond: 65000 });
    for (const value of ["65001", "9".repeat(400)]) {
      expect(() => readConfig({ TOME_KEY_MS_PER_SECOND: value })).toThrow(ConfigError);
      expect(() => readConfig({ TOME_KEY_MS_PER_SECOND: value })).toThrow(
        `TOME_KEY_MS_PER_SECOND must be a whole number of milliseconds, 0 to 65000 (0: no limit), not "${value}": a second holds at most 65000 ms of the server's threads, its request thread's and 64 search workers' (D25).`,
      );
    }
    expect(SETTINGS.find((s) => s.name === "TOME_KEY_MS_PER_SECOND")!.meaning).toContain("at most 65000");
  });

  test("TOME_SEARCH_TIMEOUT_MS=0 is taken, and what it does is said where the setting is (README, start --help): every search cut off, not no limit", () => {
    expect(readConfig({ TOME_SEARCH_TIMEOUT_MS: "0" })).toMatchObject({ searchTimeoutMs: 0 });
    const { meaning } = SETTINGS.find((s) => s.name === "TOME_SEARCH_TIMEOUT_MS")!;
    expect(meaning).toContain("0 answers every search from those alone, timed out");
    expect(meaning).toContain('0 is not "no limit"');
    // It said "for that, give a large number, e.g. 60000": Bun closes a connection that has no answer begun 10 s after
    // its request (12 s measured), so such a search worked on for no one. 4 s, two fifths of that, is the most.
    expect(meaning).toContain("At most 4000");
    expect(readConfig({ TOME_SEARCH_TIMEOUT_MS: "4000" })).toMatchObject({ searchTimeoutMs: 4000 });
  });

  test("worker threads stop at 64, the limit named (D113, D101): each holds memory, and 1000 asked for ~17 GB", () => {
    expect(readConfig({ TOME_BUILD_WORKERS: "64", TOME_SEARCH_WORKERS: "64" })).toMatchObject({
      buildWorkers: 64,
      searchWorkers: 64,
    });
    expect(() => readConfig({ TOME_BUILD_WORKERS: "1000" })).toThrow(
      'TOME_BUILD_WORKERS must be a whole number of threads, 1 to 64 (each holds about 17 MB), not "1000".',
    );
    expect(() => readConfig({ TOME_SEARCH_WORKERS: "65" })).toThrow("0 to 64");
  });
});

describe("applyConfig", () => {
  test("loads a layer only to tell it a setting other than its default (a command's --help loads none); one told otherwise is told the default again", async () => {
    const path = (p: string) => JSON.stringify(join(SRC, p));
    const script = `const { applyConfig, readConfig } = await import(${path("cli/config.ts")});
      const layers = () => Object.keys(require.cache).filter((m) => /\\/src\\/(ingest|search|snapshot|build)\\//.test(m)).length;
      await applyConfig(readConfig({}));
      const byDefaults = layers();
      await applyConfig(readConfig({ TOME_ZSTD: "node", TOME_DEBUG_MEM: "1", TOME_BUILD_WORKERS: "3" }));
      const { zstdInUse } = await import(${path("snapshot/index.ts")});
      const { buildWorkers } = await import(${path("ingest/index.ts")});
      const told = { zstd: zstdInUse(), workers: buildWorkers() };
      await applyConfig(readConfig({}));
      console.log(JSON.stringify({ byDefaults, told, workersAfter: buildWorkers() }));`;
    const proc = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "inherit" });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(JSON.parse(out)).toEqual({
      byDefaults: 0,
      told: { zstd: "node", workers: 3 },
      workersAfter: Math.min(availableParallelism(), 64),
    });
  }, 60_000); // a bun process loading the layers, on a loaded machine
});

describe("TOME_REDIS_URL", () => {
  test("a URL with no host (redis://, rediss://) is refused naming the setting, where the server started and answered 503 to every keyed request", () => {
    for (const url of ["redis://", "rediss://", "redis:///0"])
      expect([url, checkRedisUrl(url)]).toEqual([
        url,
        "TOME_REDIS_URL names no host: give it as redis://HOST:PORT, e.g. redis://127.0.0.1:6379.",
      ]);
    for (const url of ["redis://127.0.0.1:6379", "redis://localhost", "redis+unix:///tmp/redis.sock"])
      expect([url, checkRedisUrl(url)]).toEqual([url, undefined]);
  });
});

describe("HOST", () => {
  test("an address with its port is said so, with the two settings to give, exit 2: it was 'neither an IP address nor a name that resolves'", async () => {
    for (const [raw, host] of [
      ["127.0.0.1:8080", "127.0.0.1"],
      ["[::1]:8080", "[::1]"],
      ["localhost:8080", "localhost"],
    ]) {
      const err = await readHost(raw).then(
        () => undefined,
        (e: ListenError) => e,
      );
      expect(err?.message).toBe(
        `HOST "${raw}" holds a port: HOST is the address alone, the port is PORT (HOST=${host} PORT=8080).`,
      );
      expect(err?.exitCode).toBe(2);
    }
    expect(await readHost("::1")).toBe("::1");
    expect(await readHost("[::1]")).toBe("::1");
  });
});
