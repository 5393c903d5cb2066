/**
 * D89: names from outside never reach Object.prototype. No account is named after a member
 * every JavaScript object has (`__proto__`, `constructor`, `toString`…) or `prototype`: the key
 * tool, the dashboard's operator form and keys.json as read refuse them, saying what to do; and
 * what is kept by account or key id lives in tables without a prototype, so that a store or a
 * usage file that holds such a name (a Redis written before D89) is served like any other.
 * Issue 57 found an operator's account `__proto__` putting a token on Object.prototype: every
 * route answered 500 until a restart.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createKey, keysPath, monthOf, RedisAccess, RedisKeyStore, updateKeyFile } from "../src/access";
import { bumpGeneration, generationPath } from "../src/access/generation";
import { hashKey, newKey } from "../src/access/key-text";
import { readUsage, UsageLedger, usagePath, writeUsage } from "../src/access/usage";
import { createApp, type App } from "../src/http";
import {
  appWithAccounts,
  cookieOf,
  csrfOf,
  dashboardSignIn,
  EN_2016,
  engineFor,
  FORM,
  keys,
  ROOT,
  runToExit,
  snapshotFor,
  START,
  tempDir,
} from "./helpers";
import { startRedis, type RedisServer } from "../bench/redis-server";

setDefaultTimeout(120_000);

/** Every name D89 refuses. */
const RESERVED = [...Object.getOwnPropertyNames(Object.prototype), "prototype"];
const ADMIN_TOKEN = "operator-token-0123456789abcdef";

/** Whether anything was put on Object.prototype or Object (what broke every route). */
function expectUnpolluted(): void {
  expect(Object.keys(Object.prototype)).toEqual([]);
  expect(Object.keys({})).toEqual([]);
  expect(Object.keys(Object)).toEqual([]);
}

/**
 * keys.json's text with an account of each name and a full key in it, as a hand or a Tome before
 * D89 could write it (JSON keeps "__proto__" as a name like any other); and the keys.
 */
function storeText(names: string[]): { text: string; keys: Record<string, string> } {
  const made: Record<string, string> = {};
  const accounts: string[] = [];
  const records: string[] = [];
  names.forEach((name, i) => {
    const key = newKey();
    made[name] = key;
    accounts.push(`${JSON.stringify(name)}: {"plan": "business"}`);
    records.push(
      JSON.stringify({
        id: `key_names${String(i).padStart(7, "0")}`,
        hash: hashKey(key),
        name: `key of ${name}`,
        account: name,
        scopes: ["full"],
        created_at: "2026-01-01T00:00:00.000Z",
        expires_at: null,
        revoked_at: null,
      }),
    );
  });
  const text = `{"format": "tome-keys", "version": 1, "accounts": {${accounts.join(", ")}}, "keys": [${records.join(", ")}]}`;
  return { text, keys: made };
}

/** A data directory whose store holds one key, of account "acme" (made as the key tool makes it). */
function goodStore(): { dir: string; key: string } {
  const dir = tempDir("tome-data-");
  const key = updateKeyFile(
    dir,
    (f) => createKey(f, { name: "k", account: "acme", plan: "business", scope: "full", now: Date.now() }).key,
  );
  return { dir, key };
}

const get = (app: App, path: string, key?: string) =>
  app.handle(new Request(`http://localhost${path}`, { headers: key ? { "x-api-key": key } : {} }));

/** /healthz and a keyed /v1 route answer (not 500), and nothing is on Object.prototype. */
async function expectServing(app: App, key: string) {
  expectUnpolluted();
  const health = await get(app, "/healthz");
  expect(health.status).toBe(200);
  expect((await get(app, "/v1/chunk/39_2", key)).status).toBe(200);
  expect((await get(app, "/v1/meta", key)).status).toBe(200);
  return (await health.json()) as { status: string; problems?: string[] };
}

/** Signs the operator in to the app's dashboard; posts a form with the session's CSRF token. */
async function operator(app: App) {
  const signedIn = await dashboardSignIn(app, ADMIN_TOKEN);
  expect(signedIn.status).toBe(303);
  const cookie = cookieOf(signedIn);
  const page = await app.handle(new Request("http://localhost/dashboard", { headers: { cookie } }));
  expect(page.status).toBe(200);
  const csrf = csrfOf(await page.text());
  return async (path: string, fields: Record<string, string>) => {
    const r = await app.handle(
      new Request(`http://localhost${path}`, {
        method: "POST",
        headers: { "content-type": FORM, cookie },
        body: new URLSearchParams({ csrf, ...fields }),
      }),
    );
    return { status: r.status, html: await r.text() };
  };
}

/** The operator's form refuses each name, saying why; the plan of none can be changed. */
async function expectOperatorRefuses(app: App) {
  const post = await operator(app);
  for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "prototype"]) {
    const created = await post("/dashboard/accounts", { account: name, plan: "free" });
    expect({ name, status: created.status }).toEqual({ name, status: 400 });
    expect(created.html).toContain("(D89)");
    expect(created.html).not.toMatch(/wd_[A-Za-z0-9]{32}\./);
    const plan = await post(`/dashboard/accounts/${name}/plan`, { plan: "growth" });
    expect({ name, status: plan.status }).toEqual({ name, status: 404 });
    expectUnpolluted();
  }
}

describe("the key tool", () => {
  test("refuses every name D89 reserves as an account, in every command that takes one, saying why; nothing is written", async () => {
    const dir = tempDir("tome-data-");
    const runs = [
      ...RESERVED.map((name) => ["account", "create", "--account", name]),
      ...["__proto__", "constructor", "toString"].flatMap((name) => [
        ["create", "--name", "k", "--account", name],
        ["account", "token", "--account", name],
        ["plan", "--account", name, "--plan", "growth"],
      ]),
    ];
    const results = await Promise.all(runs.map((args) => keys(dir, ...args)));
    results.forEach((r, i) => {
      const name = runs[i]!.at(runs[i]![0] === "plan" ? -3 : -1)!;
      expect({ args: runs[i], code: r.code, stdout: r.stdout }).toEqual({ args: runs[i], code: 2, stdout: "" });
      expect(r.stderr).toContain(`--account may not be "${name}": no account is named after a member`);
      expect(r.stderr).toContain("(D89). Choose another name");
      expect(r.stderr).not.toContain("    at ");
    });
    expect(existsSync(keysPath(dir))).toBe(false);
    // A name next to them is an account like any other.
    const made = await keys(dir, "account", "create", "--account", "constructors", "--json");
    expect(made.code).toBe(0);
    expect(Object.keys(JSON.parse(readFileSync(keysPath(dir), "utf8")).accounts)).toEqual(["constructors"]);
  });

  test('"." and "..", which a browser drops from the dashboard\'s addresses of an account, are refused as names; "..." is one', async () => {
    const dir = tempDir("tome-data-");
    for (const name of [".", ".."]) {
      const r = await keys(dir, "account", "create", "--account", name);
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
      expect(r.stderr).toContain(`--account may not be "${name}": a browser drops it`);
    }
    expect(existsSync(keysPath(dir))).toBe(false);
    expect((await keys(dir, "account", "create", "--account", "...")).code).toBe(0);
  });

  test("a keys.json holding such an account is damaged: start, list and import refuse it and say how to repair it", async () => {
    for (const name of ["__proto__", "constructor"]) {
      const dir = tempDir("tome-data-");
      writeFileSync(keysPath(dir), storeText(["acme", name]).text);
      const before = readFileSync(keysPath(dir), "utf8");
      const says = [
        `${keysPath(dir)} is damaged: it holds an account named "${name}", a name no account may have (D89`,
        `Rename the account in keys.json (its entry under "accounts" and the "account" of each of its keys)`,
      ];
      // A real snapshot: start checks the one named before it opens the data folder, whose keys.json is to refuse it.
      const started = await runToExit(["bun", START], {
        TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2016] }),
        TOME_DATA: dir,
      });
      const list = await keys(dir, "list");
      const imported = await runToExit(["bun", join(ROOT, "src/cli/keys.ts"), "import"], {
        TOME_DATA: dir,
        TOME_REDIS_URL: "redis://127.0.0.1:9",
      });
      for (const r of [started, list, imported]) {
        expect(r.code).toBe(1);
        for (const s of says) expect(r.stderr).toContain(s);
        expect(r.stderr).not.toContain("    at ");
        expect(r.stdout).not.toMatch(/wk_[A-Za-z0-9]{32}/);
      }
      expect(readFileSync(keysPath(dir), "utf8")).toBe(before);
    }
  });
});

describe("a server on keys.json", () => {
  let app: App;
  let dir: string;
  let key: string;

  beforeAll(async () => {
    ({ dir, key } = goodStore());
    app = await appWithAccounts(dir, { dumps: [EN_2016] }, { adminToken: ADMIN_TOKEN });
  });

  afterAll(() => app?.close());

  test("the operator's form refuses those names, and every route keeps answering", async () => {
    const before = readFileSync(keysPath(dir), "utf8");
    await expectOperatorRefuses(app);
    expect(await expectServing(app, key)).toEqual({ status: "ok" });
    expect((await app.handle(new Request("http://localhost/docs"))).status).toBe(200);
    expect(readFileSync(keysPath(dir), "utf8")).toBe(before);
  });

  test("a keys.json edited to hold them while it runs is refused: the keys last read are served, /healthz says so", async () => {
    const good = readFileSync(keysPath(dir), "utf8");
    const { text, keys: made } = storeText(["constructor", "__proto__", "toString"]);
    const edited = JSON.parse(good);
    const extra = JSON.parse(text);
    writeFileSync(
      keysPath(dir),
      // JSON.stringify keeps "__proto__" only as an own key, as JSON.parse made it.
      JSON.stringify({
        ...edited,
        accounts: { ...edited.accounts, ...extra.accounts },
        keys: [...edited.keys, ...extra.keys],
      }),
    );
    bumpGeneration(generationPath(dir));
    const health = await expectServing(app, key);
    expect(health).toEqual({ status: "degraded", problems: [expect.stringContaining("the key store cannot be read")] });
    for (const k of Object.values(made)) expect((await get(app, "/v1/meta", k)).status).toBe(403);
    writeFileSync(keysPath(dir), good);
    bumpGeneration(generationPath(dir));
    expect(await expectServing(app, key)).toEqual({ status: "ok" });
  });
});

describe("usage kept by account and key id", () => {
  test("usage.json and the counts of a running server keep __proto__ and constructor as names like any other", async () => {
    const path = usagePath(tempDir("tome-data-"));
    const now = Date.UTC(2026, 10, 15, 12);
    const month = monthOf(now);
    writeUsage(path, {
      months: JSON.parse(`{"${month}": {"__proto__": 5, "constructor": 3}}`),
      last_used: JSON.parse(`{"__proto__": "2026-11-15T11:00:00.000Z"}`),
      key_days: JSON.parse(`{"2026-11-15": {"__proto__": [2, 5]}}`),
    });
    const ledger = new UsageLedger(path);
    expect([ledger.spent("__proto__", month), ledger.spent("constructor", month)]).toEqual([5, 3]);
    expect([ledger.spent("toString", month), ledger.remaining("valueOf", month, 10)]).toEqual([0, 10]);
    // Key ids from the store: a hand may have written any.
    for (const id of ["__proto__", "constructor", "hasOwnProperty"]) {
      ledger.touch(id, now);
      ledger.settle(ledger.hold("acme", month, 1, 100)!, 1, true, id, now);
    }
    await ledger.stop();
    expectUnpolluted();
    // The dashboard's reading of an account's month (D81), asking for a key id that has no use too.
    const usage = ledger.accountMonth(month, "__proto__", ["__proto__", "constructor", "hasOwnProperty", "valueOf"]);
    expect(Object.entries(usage.months[month]!)).toEqual([["__proto__", 5]]);
    expect(Object.entries(usage.key_days!["2026-11-15"]!)).toEqual([
      ["__proto__", [3, 6]],
      ["constructor", [1, 1]],
      ["hasOwnProperty", [1, 1]],
    ]);
    const at = new Date(now).toISOString();
    expect(Object.entries(usage.last_used)).toEqual([
      ["__proto__", at],
      ["constructor", at],
      ["hasOwnProperty", at],
    ]);
    expect(usage.last_used.valueOf).toBeUndefined();
    expect(Object.keys(readUsage(path).months[month]!)).toEqual(["__proto__", "constructor", "acme"]);
  });
});

describe("a server on Redis", () => {
  let redis: RedisServer;
  let app: App;
  let access: RedisAccess;
  const { text, keys: made } = storeText(["__proto__", "constructor", "acme"]);

  beforeAll(async () => {
    redis = await startRedis();
    // As a key tool before D89 could have left it: accounts named __proto__ and constructor.
    const store = await RedisKeyStore.open(redis.url);
    const file = JSON.parse(text);
    expect(await store.importStore(file, { months: {}, last_used: {} }, monthOf(Date.now()))).toBe(true);
    store.close();
    access = new RedisAccess({ url: redis.url, keyMsPerSecond: 0 });
    await access.start();
    app = createApp(await engineFor({ dumps: [EN_2016] }), {
      access,
      accounts: access.accounts(),
      adminToken: ADMIN_TOKEN,
    });
  });

  afterAll(async () => {
    app?.close();
    access?.stop();
    await redis?.stop();
  });

  test("accounts it holds under such names are served, and listed by the key tool, as any other", async () => {
    for (const key of Object.values(made)) expect(await expectServing(app, key)).toEqual({ status: "ok" });
    const list = await runToExit(["bun", join(ROOT, "src/cli/keys.ts"), "list"], {
      TOME_REDIS_URL: redis.url,
      TOME_DATA: tempDir("tome-data-"),
    });
    expect(list.code).toBe(0);
    const accountRows = list.stdout.trim().split("\n\n")[1]!.split("\n").slice(1);
    expect(accountRows.map((row) => row.split(/\s+/)[0]).sort()).toEqual(["__proto__", "acme", "constructor"]);
  });

  test("the dashboard's store reads such an account, its part of the store and its usage, in tables without a prototype", async () => {
    const store = access.accounts();
    expect((await store.account("__proto__"))?.plan).toBe("business");
    // The part of the store a dashboard change is made from (D81): the account is an own entry.
    const seen = await store.update("__proto__", (f) => Object.entries(f.accounts).map(([name, a]) => [name, a.plan]));
    expect(seen).toEqual([["__proto__", "business"]]);
    const month = monthOf(Date.now());
    const usage = await store.usage(month, "constructor", ["valueOf", "constructor"]);
    expect(Object.keys(usage.months[month]!)).toEqual(["constructor"]);
    expect(usage.last_used.valueOf).toBeUndefined();
    expect(Object.values(usage.key_days!).every((day) => day.valueOf === undefined)).toBe(true);
    expectUnpolluted();
  });

  test("the operator's form refuses new ones, and every route keeps answering", async () => {
    await expectOperatorRefuses(app);
    expect(await expectServing(app, made.acme!)).toEqual({ status: "ok" });
    expect(redis.cli("HKEYS", "tome:accounts").split("\n").sort()).toEqual(["__proto__", "acme", "constructor"]);
  });
});
