/**
 * What wall-clock time does to Tome: a month or a day ending while requests are in flight, and the clock stepped back
 * (NTP correcting by minutes, a VM resumed) or forward. The access layer's clock (`now`) is moved by the test; what
 * measures a duration reads the monotonic clock, which a step of the wall clock does not move.
 */
import { describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  Access,
  createAccountAccess,
  readUsage,
  RedisAccess,
  RedisKeyStore,
  updateKeyFile,
  usagePath,
  type Grant,
} from "../src/access";
import { createApp } from "../src/http";
import { UsageLedger, writeUsage } from "../src/access/usage";
import { startRedis } from "../bench/redis-server";
import {
  clearLeftoversAsync,
  clearStaleScratch,
  LOCK_RENEW_MS,
  lockFiles,
  lockHeld,
  takeLock,
  takeLockAsync,
} from "../src/files";
import { accountsUpWhile, cookieOf, dashboardSignIn, EN_2016, engineFor, keyMade, tempDir } from "./helpers";

// The dashboard's test builds an engine of the fixture's sample (seconds on a busy machine).
setDefaultTimeout(60_000);

const headersOf = (key: string) => new Headers({ "x-api-key": key });

/** One request of `key` admitted (cost 1) and settled as served: what its settlement gives (RedisAccess: a promise). */
const served = async (access: Access | RedisAccess, key: string) =>
  access.settle((await access.admit(headersOf(key), 1)) as Grant, true);

/** The wall clock and the monotonic clock an access layer reads: `run` moves both (time passing), `step` the wall clock alone (NTP, a VM resumed). */
function clocks(wall: string) {
  const c = {
    wall: Date.parse(wall),
    mono: 0,
    run: (ms: number) => {
      c.wall += ms;
      c.mono += ms;
    },
    step: (to: string) => {
      c.wall = Date.parse(to);
      c.mono += 1_000;
    },
    options: { now: () => c.wall, monotonic: () => c.mono },
  };
  return c;
}

describe("the month's end while requests are in flight", () => {
  test("a request admitted before 00:00 UTC on the 1st and answered after: its credit and its key's day are the month it was held in (D20)", async () => {
    const dir = tempDir("tome-data-");
    const { key, id } = await keyMade(dir, { name: "m", account: "m", plan: "free" });
    let now = Date.parse("2026-11-30T23:59:59.900Z");
    const access = new Access({ dataDir: dir, now: () => now, log: () => {} });
    access.start();
    try {
      const grant = (await access.admit(headersOf(key), 1)) as Grant;
      expect(grant.held).toBeDefined();
      now = Date.parse("2026-12-01T00:00:00.100Z");
      access.settle(grant, true);
      // As a reader beside the server finds it (usage.json and its journal), and as the stop saves it.
      const journaled = readUsage(usagePath(dir));
      await access.stop();
      for (const usage of [journaled, readUsage(usagePath(dir))]) {
        expect(usage.months).toEqual({ "2026-11": { m: 1 } });
        // The dashboard's keys add up to the account's, in each month: the credit is on a November day, as is the
        // request. Before: credited on 2026-12-01, where December's account had spent nothing.
        const credits = Object.entries(usage.key_days ?? {}).map(([day, keys]) => [day, keys[id]?.[1] ?? 0]);
        expect(credits.filter(([, n]) => n)).toEqual([["2026-11-30", 1]]);
      }
    } finally {
      await access.stop();
    }
  });

  test("a November hold settled once the ledger's day is 1 December is added to 30 November's counts where they are, the ledger staying on 1 December (D20)", async () => {
    const dir = tempDir("tome-data-");
    const a = await keyMade(dir, { name: "a", account: "a", plan: "free" });
    const b = await keyMade(dir, { name: "b", account: "b", plan: "free" });
    let now = Date.parse("2026-11-30T23:59:59.900Z");
    const access = new Access({ dataDir: dir, now: () => now, keyMsPerSecond: 0, log: () => {} });
    try {
      const late = (await access.admit(headersOf(a.key), 1)) as Grant;
      now = Date.parse("2026-12-01T00:00:00.100Z");
      await served(access, b.key); // the ledger's day is 1 December
      const newDay = spyOn(UsageLedger.prototype as unknown as { newDay(now: number): void }, "newDay");
      try {
        access.settle(late, true);
        await served(access, b.key);
        // Before: 2, to 30 November for the settlement and back for the next request (each over every day's counts).
        expect(newDay).toHaveBeenCalledTimes(0);
      } finally {
        newDay.mockRestore();
      }
      // As a reader beside the server finds the credits (its journal's lines name their days), and as the stop saves them.
      const credits = (usage: ReturnType<typeof readUsage>) =>
        Object.entries(usage.key_days ?? {}).map(([day, keys]) => [day, keys[a.id]?.[1] ?? 0, keys[b.id]?.[1] ?? 0]);
      const journaled = readUsage(usagePath(dir));
      await access.stop();
      const saved = readUsage(usagePath(dir));
      for (const usage of [journaled, saved]) {
        expect(usage.months).toEqual({ "2026-11": { a: 1 }, "2026-12": { b: 2 } });
        expect(credits(usage).sort()).toEqual([
          ["2026-11-30", 1, 0],
          ["2026-12-01", 0, 2],
        ]);
      }
      expect(saved.key_days).toEqual({ "2026-11-30": { [a.id]: [1, 1] }, "2026-12-01": { [b.id]: [2, 2] } });
    } finally {
      await access.stop();
    }
  });

  test("with Redis too: a request held in November and answered in December is counted on a November day (D20)", async () => {
    const redis = await startRedis();
    try {
      const store = await RedisKeyStore.open(redis.url);
      const { key, id } = await keyMade(store, { name: "m", account: "m", plan: "free" }).finally(() => store.close());
      let now = Date.parse("2026-11-30T23:59:59.900Z");
      const access = new RedisAccess({ url: redis.url, now: () => now, keyMsPerSecond: 0, log: () => {} });
      await access.start();
      try {
        const grant = (await access.admit(headersOf(key), 1)) as Grant;
        expect(grant.held).toBeDefined();
        now = Date.parse("2026-12-01T00:00:00.100Z");
        expect(await access.settle(grant, true)).toBe(true);
        expect(redis.cli("HGET", "tome:spent:2026-11", "m")).toBe("1");
        // Before: the credit went to 2026-12-01's key counts, December's account having spent none.
        expect([
          redis.cli("HGET", "tome:use:2026-11-30", `${id}:c`),
          redis.cli("HGET", "tome:use:2026-12-01", `${id}:c`),
        ]).toEqual(["1", ""]);
      } finally {
        access.stop();
      }
    } finally {
      await redis.stop();
    }
  });
});

describe("the wall clock stepped back or forward", () => {
  test("the work share measures durations on the monotonic clock: the wall clock stepped back 10 minutes does not make a key owe 10 minutes, nor forward an hour forgive its debt (D25)", async () => {
    const dir = tempDir("tome-data-");
    const a = await keyMade(dir, { name: "a", account: "a", plan: "enterprise" });
    const b = await keyMade(dir, { name: "b", account: "b", plan: "enterprise" });
    let now = Date.parse("2026-12-02T12:00:00Z");
    const access = new Access({ dataDir: dir, now: () => now, keyMsPerSecond: 100, log: () => {} });
    try {
      const first = (await access.admit(headersOf(a.key), 1)) as Grant;
      access.spent(first, 50); // half its share: it may go on
      access.settle(first, true);
      const other = (await access.admit(headersOf(b.key), 1)) as Grant; // another key is there: the share binds
      access.settle(other, true);
      now -= 10 * 60_000; // NTP steps the clock back
      const back = (await access.admit(headersOf(a.key), 1)) as Grant;
      // Before: 600 (seconds), a's bucket refilled by minus 10 minutes of its share.
      expect(back.workWait).toBe(0);
      access.spent(back, 1_000); // now it owes 9 s of its share
      access.settle(back, true);
      await served(access, b.key);
      now += 70 * 60_000; // a VM resumed an hour later
      const forward = (await access.admit(headersOf(a.key), 1)) as Grant;
      // Before: 0, its debt forgiven by the hour the wall clock jumped.
      expect(forward.workWait).toBeGreaterThanOrEqual(8);
      access.settle(forward, true);
    } finally {
      await access.stop();
    }
  });

  test("with Redis too: the work share measures on the monotonic clock, a step back of 10 minutes makes no key owe, forward an hour forgives no debt (D25)", async () => {
    const redis = await startRedis();
    try {
      const store = await RedisKeyStore.open(redis.url);
      const [a, b] = await Promise.all(
        ["a", "b"].map((name) => keyMade(store, { name, account: name, plan: "enterprise" })),
      ).finally(() => store.close());
      let now = Date.parse("2026-12-02T12:00:00Z");
      const access = new RedisAccess({ url: redis.url, now: () => now, keyMsPerSecond: 100, log: () => {} });
      await access.start();
      try {
        const first = (await access.admit(headersOf(a!.key), 1)) as Grant;
        access.spent(first, 50);
        await access.settle(first, true);
        await served(access, b!.key);
        now -= 10 * 60_000;
        const back = (await access.admit(headersOf(a!.key), 1)) as Grant;
        expect(back.workWait).toBe(0);
        access.spent(back, 1_000);
        await access.settle(back, true);
        await served(access, b!.key);
        now += 70 * 60_000;
        expect(((await access.admit(headersOf(a!.key), 1)) as Grant).workWait).toBeGreaterThanOrEqual(8);
      } finally {
        access.stop();
      }
    } finally {
      await redis.stop();
    }
  });

  test("a lock's taker waits its patience on the monotonic clock: the wall clock stepped forward an hour does not end the wait at once (keys.json's 10 s)", () => {
    const path = join(tempDir("tome-lock-"), "keys.json.lock");
    const policy = {
      held: () => new Error("held"),
      unwritable: (err: Error) => err,
      waitForThisProcess: true,
    };
    const release = takeLock(path, policy);
    const looks = spyOn(lockFiles, "read");
    // Stepped an hour forward right after the wait began (a VM resumed).
    const wall = Date.now;
    let calls = 0;
    const clock = spyOn(Date, "now").mockImplementation(() => wall() + (calls++ ? 3_600_000 : 0));
    try {
      // 200 ms of patience, a look every 20 ms (LOCK_RETRY_MS): about 10 looks before it gives up.
      expect(() => takeLock(path, { ...policy, patience: 200 })).toThrow("held");
      // Before: given up at the second look, the deadline an hour past.
      expect(looks.mock.calls.length).toBeGreaterThanOrEqual(5);
    } finally {
      clock.mockRestore();
      looks.mockRestore();
      release();
    }
  });

  test("a clock stepped back 10 minutes over the 1st, the server having run into December, stays in December: its quota is not left for November's again, and November takes no more spending (D20)", async () => {
    const dir = tempDir("tome-data-");
    const { key, id } = await keyMade(dir, { name: "m", account: "m", plan: "free" });
    // November's quota spent to the last credit.
    writeUsage(usagePath(dir), { months: { "2026-11": { m: 5000 } }, last_used: {} });
    const clock = clocks("2026-11-30T23:59:50.000Z");
    const access = new Access({ dataDir: dir, ...clock.options, keyMsPerSecond: 0, log: () => {} });
    try {
      expect(((await access.admit(headersOf(key), 1)) as Grant).held).toBeUndefined(); // refused: November's spent
      clock.run(40_000); // the server runs into December
      const december = (await access.admit(headersOf(key), 1)) as Grant;
      access.settle(december, true);
      clock.step("2026-11-30T23:50:30.000Z"); // NTP steps it back 10 minutes
      const back = (await access.admit(headersOf(key), 1)) as Grant;
      // Before 25d8d79: refused (November's 5000 spent), its reset at 00:00 on the 1st again.
      expect(back.held).toBeDefined();
      expect(access.quota(back.key)).toMatchObject({
        remaining: 4998,
        reset: Date.parse("2027-01-01T00:00:00Z") / 1000,
      });
      access.settle(back, true);
      await access.stop();
      const usage = readUsage(usagePath(dir));
      expect(usage.months).toEqual({ "2026-11": { m: 5000 }, "2026-12": { m: 2 } });
      expect(usage.key_days?.["2026-12-01"]?.[id]).toEqual([2, 2]);
    } finally {
      await access.stop();
    }
  });

  test("a server started before the 1st whose first request comes after it: the month was entered while running, and a step back over the 1st stays in December (D20)", async () => {
    const dir = tempDir("tome-data-");
    const { key } = await keyMade(dir, { name: "m", account: "m", plan: "free" });
    const clock = clocks("2026-11-30T23:59:50.000Z");
    const access = new Access({ dataDir: dir, ...clock.options, keyMsPerSecond: 0, log: () => {} });
    try {
      access.start(); // November, at the start
      clock.run(40_000); // the server runs into December, no request yet
      await served(access, key);
      clock.step("2026-11-30T23:50:30.000Z"); // NTP steps it back 10 minutes
      await served(access, key);
      await access.stop();
      // Before: the clock first read at the first request, December found there (not entered), November's again.
      expect(readUsage(usagePath(dir)).months).toEqual({ "2026-12": { m: 2 } });
    } finally {
      await access.stop();
    }
  });

  test("a clock ahead at the start (December at the first reading: a hardware clock in local time, a VM resumed), then set right, is followed: November's requests are November's (D20)", async () => {
    const dir = tempDir("tome-data-");
    const { key } = await keyMade(dir, { name: "m", account: "m", plan: "free" });
    const clock = clocks("2026-12-01T00:00:30.000Z");
    const access = new Access({ dataDir: dir, ...clock.options, keyMsPerSecond: 0, log: () => {} });
    try {
      await served(access, key);
      clock.step("2026-11-30T23:40:00.000Z"); // set right, 20 minutes back
      // Before: held in December (within a day of its start), a real November request charged to December.
      await served(access, key);
      clock.step("2026-11-30T23:00:00.000Z"); // a server that ran into December is held only within an hour: here too
      await served(access, key);
      await access.stop();
      expect(readUsage(usagePath(dir)).months).toEqual({ "2026-12": { m: 1 }, "2026-11": { m: 2 } });
    } finally {
      await access.stop();
    }
  });

  test("with Redis too: a replica whose clock steps back over the 1st stays in December, and counts the request on 1 December (D20)", async () => {
    const redis = await startRedis();
    try {
      const store = await RedisKeyStore.open(redis.url);
      const { key, id } = await keyMade(store, { name: "m", account: "m", plan: "free" }).finally(() => store.close());
      redis.cli("HSET", "tome:spent:2026-11", "m", "5000");
      const clock = clocks("2026-11-30T23:59:50.000Z");
      const access = new RedisAccess({ url: redis.url, ...clock.options, keyMsPerSecond: 0, log: () => {} });
      await access.start();
      try {
        expect(((await access.admit(headersOf(key), 1)) as Grant).held).toBeUndefined();
        clock.run(40_000);
        expect(await served(access, key)).toBe(true);
        clock.step("2026-11-30T23:50:30.000Z");
        const back = (await access.admit(headersOf(key), 1)) as Grant;
        expect(back.held).toBeDefined();
        expect(await access.settle(back, true)).toBe(true);
        expect([redis.cli("HGET", "tome:spent:2026-11", "m"), redis.cli("HGET", "tome:spent:2026-12", "m")]).toEqual([
          "5000",
          "2",
        ]);
        expect([
          redis.cli("HGET", "tome:use:2026-12-01", `${id}:r`),
          redis.cli("HGET", "tome:use:2026-11-30", `${id}:r`),
        ]).toEqual(["2", "1"]); // November's one the request refused before midnight
      } finally {
        access.stop();
      }
    } finally {
      await redis.stop();
    }
  });

  test("with Redis too: a replica started before the 1st whose first request comes after it stays in December after a step back (D20)", async () => {
    const redis = await startRedis();
    try {
      const store = await RedisKeyStore.open(redis.url);
      const { key } = await keyMade(store, { name: "m", account: "m", plan: "free" }).finally(() => store.close());
      const clock = clocks("2026-11-30T23:59:50.000Z");
      const access = new RedisAccess({ url: redis.url, ...clock.options, keyMsPerSecond: 0, log: () => {} });
      await access.start(); // November, at the start
      try {
        clock.run(40_000); // into December, no request yet
        expect(await served(access, key)).toBe(true);
        clock.step("2026-11-30T23:50:30.000Z");
        expect(await served(access, key)).toBe(true);
        // Before: the clock first read at the first request, December not entered, the second charged to November.
        expect([redis.cli("HGET", "tome:spent:2026-11", "m"), redis.cli("HGET", "tome:spent:2026-12", "m")]).toEqual([
          "",
          "2",
        ]);
      } finally {
        access.stop();
      }
    } finally {
      await redis.stop();
    }
  });

  test("a lock of another container, its holder alive, found just after the clock stepped an hour forward is held, not broken: a taker breaks it only if no renewal comes (D175)", async () => {
    const path = join(tempDir("tome-lock-"), "server.lock");
    // As a server in another container writes it (pid 1 there, another pid space), renewed just now.
    const elsewhere = "1 1 00000000-0000-0000-0000-000000000000/4026531836\n";
    writeFileSync(path, elsewhere);
    const wall = Date.now;
    // The machine's clock (the containers share it) stepped an hour forward; the holder's next renewal follows it.
    const clock = spyOn(Date, "now").mockImplementation(() => wall() + 3_600_000);
    const renew = () => utimesSync(path, Date.now() / 1000, Date.now() / 1000);
    const renewing = setInterval(renew, LOCK_RENEW_MS);
    try {
      // Before: broken at the first look (renewed "an hour ago") and taken: two servers on one folder.
      expect(
        await takeLockAsync(path, { held: () => new Error("held"), unwritable: (err) => err }).catch(
          (e: Error) => e.message,
        ),
      ).toBe("held");
      expect(readFileSync(path, "utf8")).toBe(elsewhere);
    } finally {
      clearInterval(renewing);
      clock.mockRestore();
    }
  });

  test("a build in another container, alive, its lock found just after the clock stepped an hour forward: one starting beside it (clearStaleScratch) neither breaks its lock nor removes its scratch (D175)", async () => {
    const dir = tempDir("tome-snapshots-");
    const lock = join(dir, ".enwiki.tome.lock");
    const elsewhere = "4000000 1 00000000-0000-0000-0000-000000000000/4026531836\n";
    writeFileSync(lock, elsewhere);
    mkdirSync(join(dir, ".tome-sorted-4000000-abc"));
    // Its holder, another process, renews it by the stepped clock (the containers share it): often, and said once it
    // runs, so that a slow start (a loaded machine) cannot leave clearStaleScratch's second look without a renewal.
    const renewer = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const renew = () => { const t = (Date.now() + 3_600_000) / 1000; require("node:fs").utimesSync(${JSON.stringify(lock)}, t, t); }; renew(); setInterval(renew, 200); console.log("renewing");`,
      ],
      { stdout: "pipe", stderr: "ignore" },
    );
    const wall = Date.now;
    const clock = spyOn(Date, "now").mockImplementation(() => wall() + 3_600_000);
    try {
      await renewer.stdout.getReader().read();
      // Found not renewed by the stepped clock (its holder's last renewal before the step), as at the step.
      const before = wall() / 1000;
      utimesSync(lock, before, before);
      // Before: the lock broken and the build's scratch removed, its lock "renewed an hour ago".
      expect(clearStaleScratch(dir)).toEqual([]);
      expect(readFileSync(lock, "utf8")).toBe(elsewhere);
      expect(existsSync(join(dir, ".tome-sorted-4000000-abc"))).toBe(true);
    } finally {
      clock.mockRestore();
      renewer.kill();
      await renewer.exited;
    }
  });

  test("a look without taking (lockHeld: start waiting for a build, a second server told) says such a lock held until no renewal comes, then free (D175)", async () => {
    const path = join(tempDir("tome-lock-"), ".enwiki.tome.lock");
    writeFileSync(path, "4000000 1 00000000-0000-0000-0000-000000000000/4026531836\n");
    const wall = Date.now;
    const clock = spyOn(Date, "now").mockImplementation(() => wall() + 3_600_000);
    try {
      // Before: free at the first look, its holder renewing it or not.
      expect(lockHeld(path)).toMatchObject({ pid: 4000000, elsewhere: true });
      // No renewal comes: its holder is gone, and a waiter (start-serve's, every 500 ms) stops waiting.
      let looks = 1;
      while (lockHeld(path) && looks < 40) {
        await Bun.sleep(500);
        looks++;
      }
      expect(lockHeld(path)).toBeUndefined();
      expect(looks).toBeGreaterThan(1);
    } finally {
      clock.mockRestore();
    }
  });

  test("a server starting beside a lock of another container not renewed lately (clearLeftoversAsync): its thread is free while it waits for the second look, then the lock goes (D175)", async () => {
    const dir = tempDir("tome-snapshots-");
    const lock = join(dir, ".enwiki.tome.lock");
    writeFileSync(lock, "4000000 1 00000000-0000-0000-0000-000000000000/4026531836\n");
    const long = (Date.now() - 60_000) / 1000;
    utimesSync(lock, long, long);
    // What the server's timers are: its own lock's renewal, Redis.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 100);
    const lines: string[] = [];
    try {
      await clearLeftoversAsync(dir, (line) => lines.push(line));
    } finally {
      clearInterval(timer);
    }
    // Before: clearLeftovers (Bun.sleepSync) held the thread for the whole look; no timer ran.
    expect(ticks).toBeGreaterThan(0);
    expect(existsSync(lock)).toBe(false);
    expect(lines).toEqual([expect.stringContaining(".enwiki.tome.lock")]);
  });

  test("the dashboard shows the month the API charges: after a clock stepped back over the 1st, December, not November again (D20)", async () => {
    const dir = tempDir("tome-data-");
    const token = updateKeyFile(dir, (f) => createAccountAccess(f, "m", "free").token);
    const { key } = await keyMade(dir, { name: "k", account: "m", plan: "free" });
    writeUsage(usagePath(dir), { months: { "2026-11": { m: 4321 } }, last_used: {} });
    const clock = clocks("2026-11-30T23:59:50.000Z");
    const access = new Access({ dataDir: dir, ...clock.options, keyMsPerSecond: 0, log: () => {} });
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access, accounts: access.accounts() });
    try {
      await served(access, key);
      clock.run(40_000); // into December
      await served(access, key);
      clock.step("2026-11-30T23:50:30.000Z");
      const cookie = cookieOf(await dashboardSignIn(app, token));
      const page = await (await app.handle(new Request("http://localhost/dashboard", { headers: { cookie } }))).text();
      // Before: November's page, its 4,321 credits spent, while the API charged December.
      expect(page).toContain("December");
      expect(page).not.toContain("November");
      expect(page).not.toContain("4,321");
    } finally {
      await access.stop();
    }
  });

  test("the operator's page names the month its credits are of: after a clock stepped back over the 1st, Credits December over December's figures (D20)", async () => {
    const dir = tempDir("tome-data-");
    const { key } = await keyMade(dir, { name: "k", account: "m", plan: "free" });
    writeUsage(usagePath(dir), { months: { "2026-11": { m: 4321 } }, last_used: {} });
    const clock = clocks("2026-11-30T23:59:50.000Z");
    const access = new Access({ dataDir: dir, ...clock.options, keyMsPerSecond: 0, log: () => {} });
    const adminToken = "operator-token-0123456789abcdef";
    const app = createApp(await engineFor({ dumps: [EN_2016] }), { access, accounts: access.accounts(), adminToken });
    try {
      await served(access, key);
      clock.run(40_000); // into December
      await served(access, key);
      clock.step("2026-11-30T23:50:30.000Z");
      const cookie = cookieOf(await dashboardSignIn(app, adminToken));
      const page = await (await app.handle(new Request("http://localhost/dashboard", { headers: { cookie } }))).text();
      expect(page).toContain(">1 / 5,000<"); // December's figures
      // Before: "Credits November" over them.
      expect(page).toContain("Credits December");
      expect(page).not.toContain("November");
    } finally {
      await access.stop();
    }
  });

  test("how long Redis could not be reached is said on the monotonic clock: never a negative outage after the clock stepped back (D200)", async () => {
    const redis = await startRedis();
    try {
      const store = await RedisKeyStore.open(redis.url);
      const { key } = await keyMade(store, { name: "o", account: "o", plan: "free" }).finally(() => store.close());
      const lines: string[] = [];
      const access = new RedisAccess({ url: redis.url, keyMsPerSecond: 0, log: (line) => lines.push(line) });
      await access.start();
      const wall = Date.now;
      let clock: ReturnType<typeof spyOn> | undefined;
      try {
        await served(access, key);
        await redis.kill();
        await access.admit(headersOf(key), 1); // found unreachable: the outage begins
        clock = spyOn(Date, "now").mockImplementation(() => wall() - 600_000); // NTP steps the clock back
        await redis.restart();
        for (let i = 0; i < 100 && !lines.some((l) => l.includes("answers again (after")); i++) await Bun.sleep(100);
        // Before: "(after -600.0 s)".
        expect(lines.find((l) => l.includes("answers again (after"))).toMatch(/answers again \(after \d+\.\d s\)/);
      } finally {
        clock?.mockRestore();
        access.stop();
      }
    } finally {
      await redis.stop();
    }
  });

  test("how long the account store could not answer /metrics is said on the monotonic clock: never a negative outage after the clock stepped back (D200)", async () => {
    const access = new Access({ dataDir: tempDir("tome-data-"), keyMsPerSecond: 0, log: () => {} });
    const store = access.accounts();
    let up = false;
    const notices: string[] = [];
    const token = "metrics-test-token-0123456789abcdef";
    const app = createApp(await engineFor({ dumps: [EN_2016] }), {
      access,
      accounts: accountsUpWhile(store, () => up),
      adminToken: token,
      notice: (line) => notices.push(line),
    });
    const scrape = () =>
      app.handle(new Request("http://tome/metrics", { headers: { authorization: `Bearer ${token}` } }));
    const wall = Date.now;
    try {
      expect((await scrape()).status).toBe(200); // counted in memory: the store failed
      const clock = spyOn(Date, "now").mockImplementation(() => wall() - 600_000);
      up = true;
      try {
        expect((await scrape()).status).toBe(200);
      } finally {
        clock.mockRestore();
      }
      // Before: "(after -600.0 s)".
      expect(notices[1]).toMatch(/^\/metrics: the account store answers again \(after \d+\.\d s\)/);
    } finally {
      app.close();
    }
  });
});
