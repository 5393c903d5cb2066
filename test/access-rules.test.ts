/**
 * The access rules, one suite run against both gates: the file store (src/access, TypeScript)
 * and Redis (src/access/redis, Lua scripts), so that the two versions of D18–D20 and D23
 * cannot drift apart. Each case seeds the same keys and usage into a fresh store, drives the
 * gate through the Gate interface the HTTP keys step uses, on a clock the test moves, and
 * checks what D19 (rate) and D20 (quota) say.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  Access,
  COST,
  createKey,
  type Gate,
  type Grant,
  type KeyFile,
  monthOf,
  NEEDS,
  RedisAccess,
  RedisKeyStore,
  type Refusal,
  readKeyFile,
  revokeKey,
  type Scope,
  updateKeyFile,
  usagePath,
  writeUsage,
  keysPath,
} from "../src/access";
import type { PlanName } from "../src/access";
import { tempDir } from "./helpers";
import { startRedis, type RedisServer } from "../bench/redis-server";

setDefaultTimeout(60_000);

/** 2026-11-15 12:00:00.100 UTC: mid-month, a tenth into a second. */
const T0 = Date.UTC(2026, 10, 15, 12, 0, 0, 100);
const NEXT_MONTH = Date.UTC(2026, 11, 1) / 1000;

interface KeySpec {
  name: string;
  account: string;
  plan: PlanName;
  scope?: Scope;
  revoked?: boolean;
}

interface Seed {
  keys: KeySpec[];
  /** Credits each account has spent this month before the case starts. */
  spent?: Record<string, number>;
}

interface Opened {
  gate: Gate;
  /** The key text of each spec, by name. */
  key: Record<string, string>;
  clock: { now: number };
  close(): Promise<void> | void;
}

/** The keys and usage of a seed, made as the key tool makes them. */
function seedFiles(seed: Seed, dir: string, now: number): Record<string, string> {
  const key: Record<string, string> = {};
  updateKeyFile(dir, (file: KeyFile) => {
    for (const spec of seed.keys) {
      key[spec.name] = createKey(file, {
        name: spec.name,
        account: spec.account,
        plan: spec.plan,
        scope: spec.scope ?? "full",
        now: now - 60_000,
      }).key;
      if (spec.revoked) revokeKey(file, key[spec.name]!, now - 1000);
    }
  });
  writeUsage(usagePath(dir), { months: { [monthOf(now)]: seed.spent ?? {} }, last_used: {} });
  return key;
}

let redis: RedisServer;

const BACKENDS: Record<string, (seed: Seed) => Promise<Opened>> = {
  "file store": async (seed) => {
    const clock = { now: T0 };
    const dir = tempDir("tome-rules-");
    const key = seedFiles(seed, dir, clock.now);
    const access = new Access({ dataDir: dir, now: () => clock.now, keyMsPerSecond: 0, log: () => {} });
    return { gate: access, key, clock, close: () => access.stop() };
  },
  "Redis store": async (seed) => {
    const clock = { now: T0 };
    const dir = tempDir("tome-rules-");
    const key = seedFiles(seed, dir, clock.now);
    redis.cli("FLUSHALL");
    const store = await RedisKeyStore.open(redis.url);
    const month = monthOf(clock.now);
    expect(
      await store.importStore(
        readKeyFile(keysPath(dir)),
        { months: { [month]: seed.spent ?? {} }, last_used: {} },
        month,
      ),
    ).toBe(true);
    store.close();
    const access = new RedisAccess({ url: redis.url, now: () => clock.now, keyMsPerSecond: 0, log: () => {} });
    await access.start();
    return { gate: access, key, clock, close: () => access.stop() };
  },
};

const isGrant = (r: Grant | Refusal): r is Grant => "key" in r;

async function admit(
  o: Opened,
  name: string | undefined,
  cost: number = COST.request,
  needs: Scope = NEEDS.request,
): Promise<Grant | Refusal> {
  const headers = new Headers(name === undefined ? {} : { "X-API-Key": o.key[name] ?? name });
  return o.gate.admit(headers, cost, needs);
}

async function granted(
  o: Opened,
  name: string,
  cost: number = COST.request,
  needs: Scope = NEEDS.request,
): Promise<Grant> {
  const r = await admit(o, name, cost, needs);
  if (!isGrant(r)) throw new Error(`refused: ${r.reason}`);
  return r;
}

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

for (const [backend, open] of Object.entries(BACKENDS)) {
  describe(`access rules on the ${backend}`, () => {
    test("D18, D23: no key, an unknown key, a revoked key, and a read key asking for a PDF are refused", async () => {
      const o = await open({
        keys: [
          { name: "live", account: "a", plan: "free", scope: "read" },
          { name: "gone", account: "a", plan: "free", revoked: true },
        ],
      });
      try {
        expect(((await admit(o, undefined)) as Refusal).reason).toBe("no key");
        expect(((await admit(o, `wk_${"x".repeat(32)}`)) as Refusal).reason).toBe("invalid key");
        expect(((await admit(o, "gone")) as Refusal).reason).toBe("invalid key");
        expect(((await admit(o, "live", COST.pdf, NEEDS.pdf)) as Refusal).reason).toBe("read scope");
        expect(isGrant(await admit(o, "live"))).toBe(true);
      } finally {
        await o.close();
      }
    });

    test("D19, D20, D23: a read key refused a PDF is told where its key stands, its rate not counted and nothing charged", async () => {
      const o = await open({
        keys: [
          { name: "reader", account: "a", plan: "free", scope: "read" },
          { name: "other", account: "a", plan: "free" },
        ],
        spent: { a: 100 },
      });
      try {
        for (let i = 0; i < 3; i++) await o.gate.settle(await granted(o, "reader"), true);
        // Another key's request of the same account, in flight: the standing counts what it holds.
        const inFlight = await granted(o, "other", COST.pdf, NEEDS.pdf);
        const refusal = (await admit(o, "reader", COST.pdf, NEEDS.pdf)) as Refusal;
        expect(refusal.reason).toBe("read scope");
        const standing = refusal.standing!;
        expect(standing).toMatchObject({ rateRemaining: 7, rateReset: Math.floor(T0 / 1000) + 1, held: undefined });
        expect(o.gate.quotaOf(standing)).toMatchObject({ limit: 5_000, used: 113, remaining: 4_887 });
        expect(o.gate.quotaTextsOf(standing)).toEqual(["4887", String(NEXT_MONTH)]);
        await o.gate.settle(inFlight, false);
        // Neither the rate nor the quota counted the refusal.
        const next = await granted(o, "reader");
        expect(next.rateRemaining).toBe(6);
        expect(o.gate.quotaOf(next)).toMatchObject({ used: 104, remaining: 4_896 });
        await o.gate.settle(next, false);
        // A key over its rate is told so, not a negative count.
        for (let i = 0; i < 6; i++) await o.gate.settle(await granted(o, "reader"), false);
        const over = (await admit(o, "reader", COST.pdf, NEEDS.pdf)) as Refusal;
        expect(over.standing!.rateRemaining).toBe(0);
      } finally {
        await o.close();
      }
    });

    test("D18: only spaces and tabs are taken off around a key; one wrapped in U+00A0 or another space String's trim() strips is malformed", async () => {
      const o = await open({ keys: [{ name: "k", account: "a", plan: "free" }] });
      const key = o.key.k!;
      const reason = async (headers: Record<string, string>) => {
        const r = await o.gate.admit(new Headers(headers), COST.request, NEEDS.request);
        return isGrant(r) ? "granted" : r.reason;
      };
      try {
        // HTTP's own whitespace (RFC 9110's OWS), as a client may send it.
        expect(await reason({ "X-API-Key": ` \t${key}\t ` })).toBe("granted");
        expect(await reason({ Authorization: `Bearer \t${key} \t` })).toBe("granted");
        // Bytes 0xA0, 0x0B and 0x0C arrive as these characters (Bun reads header bytes as Latin-1).
        for (const space of ["\u00a0", "\u000b", "\u000c"]) {
          const wrapped = `${space}${key}${space}`;
          expect({ space, reason: await reason({ "X-API-Key": wrapped }) }).toEqual({ space, reason: "invalid key" });
          expect({ space, reason: await reason({ Authorization: `Bearer ${wrapped}` }) }).toEqual({
            space,
            reason: "invalid key",
          });
          expect({ space, reason: await reason({ Authorization: `Bearer ${key}${space}` }) }).toEqual({
            space,
            reason: "invalid key",
          });
          // Not the Bearer scheme's separator either: no Bearer credential, so no key (401), never the key.
          expect({ space, reason: await reason({ Authorization: `Bearer${space}${key}` }) }).toEqual({
            space,
            reason: "no key",
          });
        }
      } finally {
        await o.close();
      }
    });

    test("D19: a free key gets 10 requests a second, the 11th is over its rate and holds nothing; the next second starts afresh", async () => {
      const o = await open({ keys: [{ name: "k", account: "a", plan: "free" }] });
      try {
        const second = Math.floor(o.clock.now / 1000);
        const remaining: number[] = [];
        for (let i = 0; i < 10; i++) {
          const g = await granted(o, "k");
          remaining.push(g.rateRemaining);
          expect(g.rateReset).toBe(second + 1);
          expect(g.held).toBeDefined();
          await o.gate.settle(g, true);
        }
        expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
        const over = await granted(o, "k");
        expect([over.rateRemaining, over.held]).toEqual([-1, undefined]);
        await o.gate.settle(over, false);
        o.clock.now += 1000;
        const next = await granted(o, "k");
        expect([next.rateRemaining, next.rateReset]).toEqual([9, second + 2]);
      } finally {
        await o.close();
      }
    });

    test("D20: a 2xx spends its cost (a PDF 10), anything else gives it back; fewer credits than the cost is a refusal, never a negative remainder", async () => {
      const o = await open({ keys: [{ name: "k", account: "a", plan: "free" }], spent: { a: 5_000 - 12 } });
      try {
        const failed = await granted(o, "k", COST.pdf, NEEDS.pdf);
        expect(failed.held).toBeDefined();
        expect(o.gate.quotaOf(failed)).toMatchObject({ limit: 5_000, used: 4_998, remaining: 2, reset: NEXT_MONTH });
        await o.gate.settle(failed, false);

        const pdf = await granted(o, "k", COST.pdf, NEEDS.pdf);
        expect(o.gate.quotaOf(pdf)).toMatchObject({ used: 4_998, remaining: 2 });
        await o.gate.settle(pdf, true);

        const refused = await granted(o, "k", COST.pdf, NEEDS.pdf);
        expect(refused.held).toBeUndefined();
        expect(o.gate.quotaOf(refused)).toMatchObject({ used: 4_998, remaining: 2 });
        await o.gate.settle(refused, false);

        for (let i = 0; i < 2; i++) await o.gate.settle(await granted(o, "k"), true);
        const empty = await granted(o, "k");
        expect(empty.held).toBeUndefined();
        expect(o.gate.quotaOf(empty)).toMatchObject({ used: 5_000, remaining: 0 });
        expect(o.gate.quotaTextsOf(empty)).toEqual(["0", String(NEXT_MONTH)]);
        await o.gate.settle(empty, false);
      } finally {
        await o.close();
      }
    });

    test("D20: the keys of one account share its quota, and the month starts afresh at 00:00 UTC on the 1st", async () => {
      const o = await open({
        keys: [
          { name: "one", account: "shared", plan: "free" },
          { name: "two", account: "shared", plan: "free" },
        ],
        spent: { shared: 100 },
      });
      try {
        await o.gate.settle(await granted(o, "one"), true);
        const seen = await granted(o, "two");
        expect(o.gate.quotaOf(seen)).toMatchObject({ used: 102, remaining: 4_898 });
        await o.gate.settle(seen, true);
        o.clock.now = NEXT_MONTH * 1000;
        const fresh = await granted(o, "two");
        expect(o.gate.quotaOf(fresh)).toMatchObject({ used: 1, remaining: 4_999, reset: Date.UTC(2027, 0, 1) / 1000 });
        await o.gate.settle(fresh, true);
      } finally {
        await o.close();
      }
    });

    test("D20: concurrent requests never spend more than the quota (20 at once, 5 credits left)", async () => {
      const o = await open({ keys: [{ name: "k", account: "a", plan: "business" }], spent: { a: 1_000_000 - 5 } });
      try {
        const grants = (await Promise.all(Array.from({ length: 20 }, () => admit(o, "k")))).filter(isGrant);
        expect(grants.length).toBe(20);
        expect(grants.filter((g) => g.held).length).toBe(5);
        await Promise.all(grants.map((g) => o.gate.settle(g, g.held !== undefined)));
        const after = await granted(o, "k");
        expect([after.held, o.gate.quotaOf(after).remaining]).toEqual([undefined, 0]);
        await o.gate.settle(after, false);
      } finally {
        await o.close();
      }
    });

    test("D20: an unlimited plan sends unlimited as its remaining credits", async () => {
      const o = await open({ keys: [{ name: "k", account: "big", plan: "enterprise" }] });
      try {
        const g = await granted(o, "k");
        expect(g.held).toBeDefined();
        expect(o.gate.quotaTextsOf(g)).toEqual(["unlimited", String(NEXT_MONTH)]);
        await o.gate.settle(g, true);
      } finally {
        await o.close();
      }
    });
  });
}
