/**
 * The dashboard's store (src/access/accounts.ts, redis/accounts.ts) on both backends: what it
 * keeps is bounded (D82: sessions per account and in all, failed sign-ins per window), and its
 * reads are of one account or one page of accounts (D81), the same in files and in Redis,
 * including a Redis store written before its per-account index existed.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  Access,
  type AccountStore,
  createAccountAccess,
  createKey,
  keysPath,
  monthOf,
  RedisAccess,
  RedisKeyStore,
  readKeyFile,
  revokeKey,
  SESSION_MS,
  type Session,
  updateKeyFile,
  usagePath,
  writeUsage,
} from "../src/access";
import { MAX_SESSIONS, SESSIONS_PER_ACCOUNT } from "../src/access/accounts";
import { ADDRESS_FAILURES, MAX_COUNTED_ADDRESSES } from "../src/access/sign-in-limits";
import { tempDir } from "./helpers";
import { startRedis, type RedisServer } from "../bench/redis-server";

setDefaultTimeout(60_000);

const T0 = Date.UTC(2026, 10, 15, 12);
const session = (account: string, now = T0): Session => ({
  account,
  tokenHash: "0".repeat(64),
  csrf: "c".repeat(43),
  expires: now + SESSION_MS,
});

const fileStore = (dir = tempDir("tome-dash-store-")) =>
  new Access({ dataDir: dir, keyMsPerSecond: 0, log: () => {} }).accounts();

/** The heap's size after a full collection, in bytes. */
function heap(): number {
  Bun.gc(true);
  return process.memoryUsage().heapUsed;
}

let redis: RedisServer;
const opened: RedisAccess[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const access of opened) access.stop();
  await redis?.stop();
});

async function redisStore(): Promise<AccountStore> {
  const access = new RedisAccess({ url: redis.url, keyMsPerSecond: 0, log: () => {} });
  await access.start();
  opened.push(access);
  return access.accounts();
}

describe("what the store keeps is bounded (D82)", () => {
  test("40,000 sign-ins of one account keep its last SESSIONS_PER_ACCOUNT sessions, in bounded memory", async () => {
    const store = fileStore();
    const before = heap();
    for (let i = 0; i < 40_000; i++) await store.putSession(`h${i}`, session("acme", T0 + i), T0 + i);
    const grown = heap() - before;
    expect(await store.session("h0", T0 + 40_000)).toBeUndefined();
    expect(await store.session(`h${40_000 - SESSIONS_PER_ACCOUNT}`, T0 + 40_000)).toBeDefined();
    expect(await store.session(`h${40_000 - SESSIONS_PER_ACCOUNT - 1}`, T0 + 40_000)).toBeUndefined();
    expect(grown).toBeLessThan(5_000_000);
  });

  test("sessions of many accounts stay within MAX_SESSIONS: the oldest ends first", async () => {
    const store = fileStore();
    for (let i = 0; i <= MAX_SESSIONS; i++) await store.putSession(`h${i}`, session(`account${i}`), T0);
    expect(await store.session("h0", T0)).toBeUndefined();
    expect(await store.session("h1", T0)).toBeDefined();
    expect(await store.session(`h${MAX_SESSIONS}`, T0)).toBeDefined();
  });

  test("failed sign-ins from 200,000 addresses grow memory by little: past MAX_COUNTED_ADDRESSES, new ones share one count", async () => {
    const store = fileStore();
    const before = heap();
    for (let i = 0; i < 200_000; i++) await store.failures(`address:2001:db8:${i.toString(16)}::/64`, true, T0);
    const grown = heap() - before;
    expect(grown).toBeLessThan(10_000_000);
    // Those counted apart keep their own count; the others are counted together, and so soon refused together.
    expect(await store.failures("address:2001:db8:0::/64", false, T0)).toBe(1);
    expect(await store.failures("address:2001:db8:ffff::/64", false, T0)).toBe(200_000 - MAX_COUNTED_ADDRESSES);
    // A new window starts afresh.
    expect(await store.failures("address:2001:db8:ffff::/64", false, T0 + 15 * 60_000)).toBe(0);
  });

  test("a flood of new addresses from one IPv6 /48 fills the names; past them a new address is counted with its /48 or IPv4 /24, so that other clients are not refused with the flood (D82)", async () => {
    const store = fileStore();
    // 10,020 /64s of 2001:db8:1::/48, as addressGroup writes them, each failing once.
    for (let i = 0; i < MAX_COUNTED_ADDRESSES + ADDRESS_FAILURES; i++)
      await store.failures(`address:2001:db8:1:${i.toString(16)}::/64`, true, T0);
    expect(await store.failures("address:2001:db8:1:ffff::/64", false, T0)).toBe(ADDRESS_FAILURES);
    expect(await store.failures("address:2001:db8:2:0::/64", false, T0)).toBe(0);
    expect(await store.failures("address:192.0.2.7", false, T0)).toBe(0);
    // The blocks are bounded too: past as many again, new ones share one count.
    for (let i = 0; i < MAX_COUNTED_ADDRESSES + 5; i++)
      await store.failures(`address:2001:db9:${i.toString(16)}:0::/64`, true, T0);
    expect(await store.failures("address:2001:dba:1:0::/64", false, T0)).toBe(6);
  });

  test("in Redis too, an account keeps its last SESSIONS_PER_ACCOUNT sessions", async () => {
    redis.cli("FLUSHALL");
    const store = await redisStore();
    // Redis ends each session at its own time (PXAT): the real clock.
    const now = Date.now();
    for (let i = 0; i < SESSIONS_PER_ACCOUNT + 2; i++)
      await store.putSession(`h${i}`, session("acme", now + i), now + i);
    expect(await store.session("h0", now)).toBeUndefined();
    expect(await store.session("h1", now)).toBeUndefined();
    expect(await store.session("h2", now)).toBeDefined();
    expect(redis.cli("ZCARD", "tome:account_sessions:acme")).toBe(String(SESSIONS_PER_ACCOUNT));
    await store.dropSession("h2", "acme");
    expect(redis.cli("ZCARD", "tome:account_sessions:acme")).toBe(String(SESSIONS_PER_ACCOUNT - 1));
  });
});

/** Three accounts (one with the dashboard, one with a revoked key), as the key tool makes them. */
function seed(dir: string): void {
  updateKeyFile(dir, (f) => {
    for (const [name, account] of [
      ["k1", "beta"],
      ["k2", "alpha"],
      ["k3", "alpha"],
      ["k4", "gamma"],
    ])
      createKey(f, { name: name!, account: account!, plan: "growth", scope: "read", now: T0 - 60_000 });
    revokeKey(f, f.keys[2]!.id, T0 - 1000);
    createAccountAccess(f, "delta", "free");
  });
  writeUsage(usagePath(dir), { months: { [monthOf(T0)]: { alpha: 7 } }, last_used: {} });
}

describe("reads of one account or one page, the same in files and in Redis (D81)", () => {
  const dir = tempDir("tome-dash-store-");
  seed(dir);
  const file = readKeyFile(keysPath(dir));

  const backends: [string, () => Promise<AccountStore>][] = [
    ["files", async () => fileStore(dir)],
    [
      "Redis, a store written before its per-account index",
      async () => {
        redis.cli("FLUSHALL");
        const tool = await RedisKeyStore.open(redis.url);
        await tool.importStore(file, { months: { [monthOf(T0)]: { alpha: 7 } }, last_used: {} }, monthOf(T0));
        tool.close();
        redis.cli("DEL", "tome:indexed", "tome:account_names", "tome:account_keys:alpha", "tome:account_keys:beta");
        return redisStore();
      },
    ],
  ];

  for (const [backend, open] of backends) {
    test(backend, async () => {
      const store = await open();
      expect((await store.account("alpha"))?.plan).toBe("growth");
      expect((await store.account("delta"))?.dashboard_token).toBe(file.accounts.delta!.dashboard_token!);
      expect(await store.account("nobody")).toBeUndefined();
      expect(await store.account("__proto__")).toBeUndefined();
      const ids = (keys: readonly { id: string }[]) => keys.map((k) => k.id).sort();
      expect(ids(await store.keysOf("alpha"))).toEqual(ids(file.keys.filter((k) => k.account === "alpha")));
      expect(await store.keysOf("delta")).toEqual([]);
      const names = async (after: string, limit: number) => {
        const page = await store.accountsAfter(after, limit);
        return { names: page.accounts.map(([name]) => name), more: page.more };
      };
      expect(await names("", 2)).toEqual({ names: ["alpha", "beta"], more: true });
      expect(await names("beta", 2)).toEqual({ names: ["delta", "gamma"], more: false });
      expect(await names("gamma", 2)).toEqual({ names: [], more: false });
      // A change to one account: a new key; the account's keys and its page see it.
      await store.update("delta", (f) => createKey(f, { name: "d", account: "delta", scope: "read", now: T0 }));
      expect((await store.keysOf("delta")).map((k) => k.name)).toEqual(["d"]);
      const usage = await store.usage(monthOf(T0), "alpha", ids(await store.keysOf("alpha")));
      expect(usage.months[monthOf(T0)]).toEqual({ alpha: 7 });
      expect(await store.spent(monthOf(T0), ["alpha", "beta"])).toEqual([7, 0]);
    });
  }
});
