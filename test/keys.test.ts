/**
 * The key store's edge cases and the key tool (issue 13): a damaged keys.gen or an empty,
 * damaged or missing keys.json is refused at start, never silently replaced; a store damaged
 * while the server runs leaves it serving its last good keys, and says so in its health;
 * revoke by the key's own text; no expiry in the past; scopes that hold.
 */
import { describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import * as fs from "node:fs";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import {
  Access,
  checkKeyStore,
  COST,
  createKey,
  keysPath,
  NEEDS,
  readKeyFile,
  revokeKey,
  shownPrefix,
  updateKeyFile,
  type KeyStoreState,
} from "../src/access";
import { GenerationCounter } from "../src/access/generation";
import { lockDataFolder } from "../src/access/server-lock";
import { writeUsage } from "../src/access/usage";
import { READ_ASIDE_BYTES } from "../src/access/ring";
import { DATA_FILE_LIMIT, lockFiles, lockText, readWholeText } from "../src/files";
import { KEY_STORE_READ_SECONDS } from "../src/request-time";
import {
  keyMade,
  keyTool,
  newKey,
  killedMidWrite,
  NO_SEARCH_THREADS,
  ROOT,
  runToExit,
  snapshotFor,
  SQUAD,
  START,
  startServer,
  startTool,
  tempDir,
} from "./helpers";

// Per file (bun applies it to the current file only): one test builds a snapshot from a real dump.
setDefaultTimeout(120_000);

type Json = Record<string, any>;
const genPath = (dir: string) => join(dir, "keys.gen");
const headersOf = (key: string) => new Headers({ "X-API-Key": key });

/**
 * Runs start (its main, in this process: startTool) on dataDir until it exits, refused by its key store: the snapshot
 * named is a real one, since start checks the one TOME_SNAPSHOT names before it opens the data folder (b3ad77b).
 */
async function start(dataDir: string) {
  const { code, stdout, stderr } = await startTool({
    TOME_SNAPSHOT: await snapshotFor({ dumps: [SQUAD] }),
    TOME_DATA: dataDir,
  });
  return { code, out: stdout + stderr };
}

/** A new key, from the key tool's `keys create --json` run in this process (newKey's inProcess: keyTool). */
const madeByTool = (dataDir: string, ...args: string[]): Promise<Json> => newKey({ dataDir, inProcess: true }, ...args);

/** The files of a data directory, as they are. */
function filesOf(dir: string): Record<string, string | null> {
  const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), "latin1") : null);
  return { "keys.json": read("keys.json"), "keys.gen": read("keys.gen"), "usage.json": read("usage.json") };
}

/** A refusal to start: exit 1, the message, no stack, no key made, nothing under dataDir changed. */
async function expectRefused(dir: string, ...says: string[]) {
  const before = filesOf(dir);
  const { code, out } = await start(dir);
  expect({ code, out }).toEqual({ code: 1, out: expect.stringContaining(says[0]!) });
  for (const s of says) expect(out).toContain(s);
  expect(out).not.toContain("    at ");
  expect(out).not.toContain("No API key existed");
  expect(out).not.toMatch(/wk_[A-Za-z0-9]{32}/);
  expect(filesOf(dir)).toEqual(before);
}

describe("a damaged keys.gen", () => {
  test("start and the key tool refuse an empty or garbage keys.gen: which file, what is wrong, what to do; no stack", async () => {
    const dir = tempDir("tome-data-");
    await keyMade(dir, { name: "k", scope: "full" });
    for (const content of ["", "garbage", "0123456789abcdef"]) {
      writeFileSync(genPath(dir), content);
      await expectRefused(
        dir,
        `${genPath(dir)} is damaged`,
        `holds ${content.length} bytes where Tome writes 8`,
        "delete it and start again",
      );
      const before = filesOf(dir);
      const tool = await keyTool(dir, "create", "--name", "k2");
      expect({ code: tool.code, stdout: tool.stdout }).toEqual({ code: 1, stdout: "" });
      expect(tool.stderr).toContain(`${genPath(dir)} is damaged`);
      expect(tool.stderr).not.toContain("    at ");
      expect(filesOf(dir)).toEqual(before);
    }
    // Deleted, as the message says: it is made anew and the store is served.
    rmSync(genPath(dir));
    expect(new Access({ dataDir: dir }).hasKeys).toBe(true);
    expect(readFileSync(genPath(dir)).length).toBe(8);
  });

  test("a first start on a full disk leaves no empty keys.gen, which the next start would refuse as damaged", () => {
    const dir = tempDir("tome-data-");
    // A full tmpfs makes the file, then refuses its bytes.
    const full = spyOn(fs, "writeFileSync").mockImplementation(((path: string) => {
      fs.closeSync(fs.openSync(path, "wx"));
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    }) as typeof fs.writeFileSync);
    try {
      expect(() => new GenerationCounter(genPath(dir))).toThrow(`could not write ${genPath(dir)}: ENOSPC`);
    } finally {
      full.mockRestore();
    }
    expect(readdirSync(dir)).toEqual([]);
    // Space again: the next start makes it and goes on.
    expect(new GenerationCounter(genPath(dir)).read()).toBe(0);
    expect(readFileSync(genPath(dir)).length).toBe(8);
    expect(readdirSync(dir)).toEqual(["keys.gen"]);
  });
});

describe("start with an empty, damaged or missing keys.json", () => {
  test("a missing keys.json where an earlier store left keys.gen or usage.json is refused, and the way on is the key tool", async () => {
    const withGen = tempDir("tome-data-");
    await keyMade(withGen, { name: "k" });
    rmSync(keysPath(withGen));
    await expectRefused(
      withGen,
      `${keysPath(withGen)} is missing, but ${genPath(withGen)} shows that a key store was kept here`,
      "Restore keys.json from a backup",
      "bun run keys create",
    );

    const withUsage = tempDir("tome-data-");
    writeUsage(join(withUsage, "usage.json"), { months: { "2026-11": { default: 12 } }, last_used: {} });
    await expectRefused(withUsage, `${keysPath(withUsage)} is missing, but ${join(withUsage, "usage.json")} shows`);

    // usage.json's journal (D20) alone: a store's credits, which a new store's first start counted for its accounts.
    const withJournal = tempDir("tome-data-");
    writeFileSync(join(withJournal, "usage.json.journal.4"), '["2026-11","default",12,"key_a","2026-11-02"]\n');
    await expectRefused(
      withJournal,
      `${keysPath(withJournal)} is missing, but ${join(withJournal, "usage.json.journal.4")} shows`,
    );

    // A new store, made on purpose with the key tool, is served.
    await madeByTool(withGen, "--name", "new", "--scope", "full");
    expect(checkKeyStore(withGen)).toBe("present");
  });

  test("an empty keys.json is refused: no bytes, blanks, or a store without a key", async () => {
    const dir = tempDir("tome-data-");
    await keyMade(dir, { name: "k" });
    const cases: Record<string, [text: string, says: string]> = {
      "no bytes": ["", "is empty (a crash or a full disk may have cut it short). Restore it from a backup"],
      blanks: ["\n  \n", "is empty"],
      "no key": [
        JSON.stringify({ format: "tome-keys", version: 1, accounts: {}, keys: [] }),
        "holds no key, so every request would be refused. Create one: bun run keys create",
      ],
    };
    for (const [text, says] of Object.values(cases)) {
      writeFileSync(keysPath(dir), text);
      await expectRefused(dir, `${keysPath(dir)} ${says}`);
    }
  });

  test("a store whose keys would misbehave is damaged: unknown scopes, an expiry that does not parse", async () => {
    const dir = tempDir("tome-data-");
    await keyMade(dir, { name: "k" });
    const good = JSON.parse(readFileSync(keysPath(dir), "utf8"));
    for (const [field, value, says] of [
      ["scopes", ["admin"], "has no valid scopes"],
      ["expires_at", "someday", "has an invalid expires_at"],
    ] as const) {
      writeFileSync(keysPath(dir), JSON.stringify({ ...good, keys: [{ ...good.keys[0], [field]: value }] }));
      await expectRefused(dir, `${keysPath(dir)} is damaged: key ${good.keys[0].id} ${says}`);
    }
  });

  test("a store edited by hand: a key's created_at not a date, its name not text, or two keys with one id is damaged (keys list printed a TypeError's stack)", async () => {
    const dir = tempDir("tome-data-");
    await keyMade(dir, { name: "k" });
    const good = JSON.parse(readFileSync(keysPath(dir), "utf8"));
    const key = good.keys[0];
    for (const [keys, says] of [
      [[{ ...key, created_at: 5 }], `key ${key.id} has an invalid created_at`],
      [[{ ...key, created_at: "yesterday" }], `key ${key.id} has an invalid created_at`],
      [[{ ...key, name: 5 }], `key ${key.id} has no name`],
      [[key, { ...key, hash: "0".repeat(64) }], `two keys have the id ${key.id}`],
    ] as const) {
      writeFileSync(keysPath(dir), JSON.stringify({ ...good, keys }));
      expect(() => readKeyFile(keysPath(dir))).toThrow(
        `${keysPath(dir)} is damaged: ${says}. Restore it from a backup`,
      );
    }
    writeFileSync(keysPath(dir), JSON.stringify({ ...good, keys: [{ ...key, created_at: 5 }] }));
    const list = await keyTool(dir, "list");
    expect({ code: list.code, stderr: list.stderr }).toEqual({
      code: 1,
      stderr: `keys list: ${keysPath(dir)} is damaged: key ${key.id} has an invalid created_at. Restore it from a backup; nothing was changed.\n`,
    });
  });

  test("D190: keys.json or usage.json that is a device (/dev/zero), a pipe or over 1 GiB: said at once, never read to its end", async () => {
    // Each was read whole before a word was said: /dev/zero filled memory without end, a pipe's open waited for a writer.
    const run = async (dir: string) => {
      const proc = Bun.spawn(["bun", join(ROOT, "src/cli/keys.ts"), "list"], {
        env: { ...process.env, TOME_DATA: dir },
        stdout: "pipe",
        stderr: "pipe",
        // A guard against the hang, not a measure: said at once, `keys list` ends in about a second. 15 s, not 10: on a
        // machine at load 21 a bun process of this file's was killed at 10 s (code 143, 23dcd09), loading, not hanging.
        timeout: 15_000,
      });
      return { code: await proc.exited, stderr: (await new Response(proc.stderr).text()).trim() };
    };
    const cases = [
      ["a device", (path: string) => fs.symlinkSync("/dev/zero", path)],
      ["a pipe", (path: string) => expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0)],
      // Sparse: a gigabyte said, none of it on disk.
      [
        "1073741825 bytes, more than the 1073741824 (1 GiB)",
        (path: string) => {
          fs.writeFileSync(path, "");
          fs.truncateSync(path, 2 ** 30 + 1);
        },
      ],
    ] as const;
    for (const [what, make] of cases) {
      const keysDir = tempDir("tome-data-");
      await keyMade(keysDir, { name: "k" });
      rmSync(keysPath(keysDir));
      make(keysPath(keysDir));
      const keys = await run(keysDir);
      expect({ what, code: keys.code }).toEqual({ what, code: 1 });
      expect(keys.stderr).toStartWith(`keys list: ${keysPath(keysDir)} is ${what}`);
      expect(keys.stderr).toContain("restore keys.json from a backup; nothing was changed.");

      const usageDir = tempDir("tome-data-");
      await keyMade(usageDir, { name: "k" });
      make(join(usageDir, "usage.json"));
      const usage = await run(usageDir);
      expect({ what, code: usage.code }).toEqual({ what, code: 1 });
      expect(usage.stderr).toStartWith(`keys list: ${join(usageDir, "usage.json")} is damaged (it is ${what}`);
      expect(usage.stderr).toContain("Restore it from a backup");
    }
  });

  test("D190: a lock (server.lock, keys.json.lock) linked to /dev/full: said at once, never read to its end", async () => {
    // Read whole, /dev/full never ended: start and the key tool hung, eating memory, without a word.
    const run = async (command: string[], env: Record<string, string>) => {
      const proc = Bun.spawn(command, {
        env: { ...process.env, ...env },
        stdout: "pipe",
        stderr: "pipe",
        // A guard against the hang, not a measure: said at once, each ends in about a second. 15 s, not 10: on a
        // machine at load 21, 10 s killed a start here (code 143, 23dcd09) while it loaded the server, not hanging.
        timeout: 15_000,
      });
      return { code: await proc.exited, stderr: (await new Response(proc.stderr).text()).trim() };
    };
    const dir = tempDir("tome-data-");
    await keyMade(dir, { name: "k" });
    const lock = join(dir, "keys.json.lock");
    fs.symlinkSync("/dev/full", lock);
    const keys = await run(["bun", join(ROOT, "src/cli/keys.ts"), "create", "--name", "k2"], { TOME_DATA: dir });
    expect(keys.code).toBe(1);
    expect(keys.stderr).toBe(`keys create: ${lock} is a device, not a lock file Tome writes: remove it`);
    rmSync(lock);
    fs.symlinkSync("/dev/full", join(dir, "server.lock"));
    const started = await run(["bun", START], {
      TOME_DATA: dir,
      TOME_SNAPSHOT: await snapshotFor({ dumps: [SQUAD] }),
      PORT: "0",
    });
    expect(started.code).toBe(1);
    expect(started.stderr).toContain(`${join(dir, "server.lock")} is a device, not a lock file Tome writes: remove it`);
    expect(started.stderr).not.toContain("    at ");
  });

  test("D190: server.lock or keys.json that is a unix socket is said to be one (remove it), not 'no such device or address'", async () => {
    // The open without waiting (O_NONBLOCK) fails on a socket with ENXIO before anything looks at it: before, the
    // server said only that code, with "Make it writable by this user" and not what the file is.
    const dir = tempDir("tome-data-");
    const listening = (path: string) =>
      new Promise<Server>((resolve) => {
        const server = createServer();
        server.listen(path, () => resolve(server));
      });
    const lock = join(dir, "server.lock");
    const sockets = [await listening(lock), await listening(join(dir, "keys.json"))];
    try {
      expect(() => lockDataFolder(dir)).toThrow(`${lock} is a socket, not a lock file Tome writes: remove it`);
      expect(() => lockDataFolder(dir)).not.toThrow("ENXIO");
      expect(readWholeText(join(dir, "keys.json"), DATA_FILE_LIMIT)).toEqual({ not: "a socket" });
    } finally {
      for (const socket of sockets) socket.close();
    }
  });

  test("D190: server.lock that is a socket, a device or a folder is said to be one, to remove, not 'Make it writable by this user'", async () => {
    const dir = tempDir("tome-data-");
    const lock = join(dir, "server.lock");
    const told = (what: string) =>
      `${lock} is ${what}, not a lock file Tome writes: remove it, or set TOME_DATA to another folder. The server makes ${lock} itself, to keep a second server off the data folder ${dir}/ (two would write over each other's usage counts).`;
    const refusal = () => {
      try {
        lockDataFolder(dir);
        return "taken";
      } catch (err) {
        return (err as Error).message;
      }
    };
    // Before: "cannot write to the data folder …/ (…/server.lock is a socket, not a lock file Tome writes: remove it):
    // the server keeps its usage counts there. Make it writable by this user, or set TOME_DATA to a folder that is."
    const socket = await new Promise<Server>((resolve) => {
      const server = createServer();
      server.listen(lock, () => resolve(server));
    });
    try {
      expect(refusal()).toBe(told("a socket"));
    } finally {
      socket.close();
    }
    rmSync(lock, { force: true });
    fs.symlinkSync("/dev/null", lock);
    expect(refusal()).toBe(told("a device"));
    rmSync(lock);
    mkdirSync(lock);
    expect(refusal()).toBe(told("a directory"));
  });

  test("D190: a data folder on a full disk at start: free space there, not 'make it writable by this user'", async () => {
    const store = tempDir("tome-data-");
    await keyMade(store, { name: "k" });
    const dir = join(store, "full");
    mkdirSync(dir);
    // A 16 KiB tmpfs, the store copied in and the rest filled, in a mount namespace of its own: root not needed.
    const script = [
      "set -e",
      `mount -t tmpfs -o size=16k tmpfs ${dir}`,
      `cp ${keysPath(store)} ${genPath(store)} ${dir}/`,
      `dd if=/dev/zero of=${dir}/fill bs=1k count=64 2>/dev/null || true`,
      `exec bun ${START}`,
    ].join("\n");
    const inOwnMounts = ["unshare", "--user", "--map-root-user", "--mount"];
    if (Bun.spawnSync([...inOwnMounts, "true"]).exitCode !== 0) {
      console.warn("keys.test.ts: the full-disk start is skipped: unshare cannot make a mount namespace here");
      return;
    }
    const { code, stderr } = await runToExit([...inOwnMounts, "sh", "-c", script], {
      TOME_DATA: dir,
      TOME_SNAPSHOT: await snapshotFor({ dumps: [SQUAD] }),
    });
    // Said "cannot write to the data folder … Make it writable by this user": permissions, for a disk full.
    expect({ code, said: stderr.trim() }).toEqual({
      code: 1,
      said: `start: could not write ${join(dir, "server.lock")}: ENOSPC: no space left on device, write: the disk is full: free space there, or write elsewhere (TOME_DATA). Nothing it would have replaced was changed.`,
    });
  });

  test("keys.json that is a directory: start and the key tool say so, without a stack trace", async () => {
    const dir = tempDir("tome-data-");
    mkdirSync(keysPath(dir));
    const says = `${keysPath(dir)} is a directory, not the key store's file. Move it away and restore keys.json from a backup; nothing was changed.`;
    const { code, out } = await start(dir);
    expect({ code, out: out.trim() }).toEqual({ code: 1, out: `start: ${says}` });
    for (const args of [["list"], ["create", "--name", "k"], ["revoke", "key_x"]]) {
      const r = await keyTool(dir, ...args);
      expect({ args, code: r.code, stdout: r.stdout, stderr: r.stderr.trim() }).toEqual({
        args,
        code: 1,
        stdout: "",
        stderr: `keys ${args[0]}: ${says}`,
      });
    }
  });

  test("only a data directory with no store at all is a first start, also after one that stopped before its first key", () => {
    const dir = tempDir("tome-data-");
    const states: KeyStoreState[] = [checkKeyStore(dir)];
    // The key ring has made keys.gen, but no key was written yet.
    const access = new Access({ dataDir: dir });
    expect(access.firstStart).toBe(true);
    expect(existsSync(genPath(dir))).toBe(true);
    states.push(checkKeyStore(dir));
    expect(states).toEqual(["fresh", "fresh"]);
  });
});

describe("keys.json damaged while the server runs", () => {
  test("the server keeps serving its last good keys, logs the damage once, and takes the file again when it is whole", async () => {
    const dir = tempDir("tome-data-");
    const server = await startServer({
      ...NO_SEARCH_THREADS,
      TOME_SNAPSHOT: await snapshotFor({ dumps: [SQUAD] }),
      TOME_DATA: dir,
    });
    try {
      const key = server.key!;
      const status = async () => (await fetch(`${server.url}/v1/license`, { headers: { "X-API-Key": key } })).status;
      expect(await status()).toBe(200);
      const good = readFileSync(keysPath(dir), "utf8");
      // A hand edit that broke it (in place, as an editor might).
      writeFileSync(keysPath(dir), good.slice(0, 40));
      const statuses: number[] = [];
      for (const until = Date.now() + 2500; Date.now() < until; await Bun.sleep(100)) statuses.push(await status());
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect(server.stderr().split(`${keysPath(dir)} is not valid JSON`).length - 1).toBe(1);
      expect(server.stderr()).toContain("the server keeps the 1 key(s) it last read");
      const health = await (await fetch(`${server.url}/healthz`)).json();
      expect(health).toEqual({
        status: "degraded",
        problems: [expect.stringContaining("the key store cannot be read since")],
      });
      // Repaired, with the key revoked meanwhile: the next look at the file takes it.
      const repaired = JSON.parse(good);
      repaired.keys[0].revoked_at = new Date().toISOString();
      writeFileSync(keysPath(dir), JSON.stringify(repaired));
      await Bun.sleep(1100);
      expect(await status()).toBe(403);
      // The log line reaches the pipe soon after the answer that saw the file whole: under load, not at once.
      const whole = `${keysPath(dir)} is whole again: serving its 1 key(s).`;
      for (const until = Date.now() + 3000; !server.stderr().includes(whole) && Date.now() < until; )
        await Bun.sleep(50);
      expect(server.stderr()).toContain(whole);
      expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: "ok" });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("D190: damaged right after a first start, before any request: the key it printed is still served", async () => {
    const dir = tempDir("tome-data-");
    const server = await startServer({
      ...NO_SEARCH_THREADS,
      TOME_SNAPSHOT: await snapshotFor({ dumps: [SQUAD] }),
      TOME_DATA: dir,
    });
    try {
      writeFileSync(keysPath(dir), "garbage");
      await Bun.sleep(1100);
      // 403: the server had read keys.json before it made the key, and kept those "last good keys", none.
      const res = await fetch(`${server.url}/v1/license`, { headers: { "X-API-Key": server.key! } });
      expect(res.status).toBe(200);
      // The log line reaches the pipe soon after the answer, not with it.
      const kept = "the server keeps the 1 key(s) it last read";
      for (const until = Date.now() + 3000; !server.stderr().includes(kept) && Date.now() < until; )
        await Bun.sleep(50);
      expect(server.stderr()).toContain(kept);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("health: ok; then a problem (no path) while keys.json is damaged or gone, the request still served; ok again once whole", async () => {
    const dir = tempDir("tome-data-");
    const { key } = await keyMade(dir, { name: "k" });
    const logged: string[] = [];
    const access = new Access({ dataDir: dir, log: (line) => logged.push(line) });
    const admitted = async () => {
      const grant = await access.admit(headersOf(key), COST.request);
      expect("reason" in grant ? grant : "granted").toBe("granted");
      if (!("reason" in grant)) access.settle(grant, false);
    };
    expect(access.health()).toEqual({ ok: true, problems: [] });
    const good = readFileSync(keysPath(dir), "utf8");
    const unhealthy = () => {
      const health = access.health();
      expect(health).toEqual({ ok: false, problems: [expect.stringContaining("the key store cannot be read since")] });
      expect(health.problems[0]).not.toContain(dir);
    };

    writeFileSync(keysPath(dir), "garbage");
    await Bun.sleep(1100);
    await admitted();
    unhealthy();
    await Bun.sleep(1100);
    await admitted();
    unhealthy();
    expect(logged.length).toBe(1);
    expect(logged[0]).toContain(`${keysPath(dir)} is not valid JSON`);

    rmSync(keysPath(dir));
    await Bun.sleep(1100);
    await admitted();
    unhealthy();
    expect(logged.length).toBe(2);
    expect(logged[1]).toContain(`${keysPath(dir)} is missing`);

    writeFileSync(keysPath(dir), good);
    await Bun.sleep(1100);
    // A changed store is read in a worker; /healthz answers from the keys served meanwhile, a key's request waits for it.
    await admitted();
    expect(access.health()).toEqual({ ok: true, problems: [] });
    expect(logged.slice(2)).toEqual([`${keysPath(dir)} is whole again: serving its 1 key(s).`]);
    await access.stop();
  });
});

test("R9: a changed keys.json is read and parsed off the request thread; /healthz answers meanwhile; the revoked key is refused at once", async () => {
  const dir = tempDir("tome-data-");
  const kept = await keyMade(dir, { name: "kept" });
  const gone = await keyMade(dir, { name: "gone" });
  overAside(dir);
  const access = new Access({ dataDir: dir });
  expect(await access.admit(headersOf(gone.key), COST.request)).toHaveProperty("key");
  updateKeyFile(dir, (f) => revokeKey(f, gone.id, Date.now()));
  // JSON.parse of this thread (a worker has its own), spied once the key tool's change is made: a parse of the store
  // here is one on the request thread.
  const parse = spyOn(JSON, "parse");
  try {
    const admitting = access.admit(headersOf(gone.key), COST.request);
    // The store is being read: /healthz is answered from the keys served meanwhile (before: read here, at once).
    expect(access.health()).toEqual({ ok: true, problems: [] });
    expect(admitting).toBeInstanceOf(Promise);
    expect(await admitting).toMatchObject({ reason: "invalid key" });
    expect(await access.admit(headersOf(kept.key), COST.request)).toHaveProperty("key");
    expect(parse.mock.calls.filter(([text]) => String(text).includes('"tome-keys"'))).toEqual([]);
  } finally {
    parse.mockRestore();
    await access.stop();
  }
});

test("R9: a changed keys.json of at most READ_ASIDE_BYTES is read on the request thread, no worker started for it", async () => {
  const dir = tempDir("tome-data-");
  const gone = await keyMade(dir, { name: "gone" });
  const access = new Access({ dataDir: dir });
  let started = 0;
  try {
    expect(await access.admit(headersOf(gone.key), COST.request)).toHaveProperty("key");
    updateKeyFile(dir, (f) => revokeKey(f, gone.id, Date.now()));
    const Counted = class extends Worker {
      constructor(url: string | URL) {
        super(url);
        started++;
      }
    };
    // Before: a worker started for every change, however small the store, and the request waited for it.
    const admitted = await withWorker(Counted, async () => {
      const admitting = access.admit(headersOf(gone.key), COST.request);
      expect(admitting).not.toBeInstanceOf(Promise);
      return admitting;
    });
    expect(admitted).toMatchObject({ reason: "invalid key" });
    expect(started).toBe(0);
  } finally {
    await access.stop();
  }
});

/** Adds keys (an account each) to dir's store until it is over READ_ASIDE_BYTES: a change to it is read in a worker. */
function overAside(dir: string): void {
  for (let i = 0; fs.statSync(keysPath(dir)).size <= READ_ASIDE_BYTES; i += 1000)
    updateKeyFile(dir, (f) => {
      for (let n = i; n < i + 1000; n++)
        createKey(f, { name: `filler ${n}`, account: `filler-${n}`, scope: "read", now: Date.now() });
    });
}

/** Runs fn with Worker replaced by `Stub` (a worker that cannot start, crashes, or stops), as a thread limit or a fault would. */
async function withWorker<T>(Stub: unknown, fn: () => Promise<T>): Promise<T> {
  const Real = globalThis.Worker;
  (globalThis as any).Worker = Stub;
  try {
    return await fn();
  } finally {
    (globalThis as any).Worker = Real;
  }
}

/** A worker running `source` in place of the key store's reader. */
const workerOf = (source: string) =>
  class extends Worker {
    constructor() {
      super(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
    }
  };

describe("R9: the key store's reader (a worker) fails, not the file", () => {
  for (const [how, Stub] of [
    [
      "cannot start",
      class {
        constructor() {
          throw new Error("EAGAIN: cannot start a thread");
        }
      },
    ],
    ["crashes", workerOf('self.onmessage = () => { throw new Error("boom"); };')],
    // Bun fires only close: before, the read never ended and every keyed request waited for it forever.
    ["stops without an error", workerOf("self.onmessage = () => process.exit(0);")],
    // A part the request thread cannot take (take threw in onmessage): before, the read never ended either.
    ["sends a part that cannot be taken", workerOf("self.onmessage = () => postMessage({ done: true });")],
  ] as const)
    test(`it ${how}: the store is read here instead, the revoked key refused, no problem reported`, async () => {
      const dir = tempDir("tome-data-");
      const gone = await keyMade(dir, { name: "gone" });
      overAside(dir);
      const lines: string[] = [];
      const access = new Access({ dataDir: dir, log: (line) => lines.push(line) });
      try {
        expect(await access.admit(headersOf(gone.key), COST.request)).toHaveProperty("key");
        updateKeyFile(dir, (f) => revokeKey(f, gone.id, Date.now()));
        // Before: taken for a damaged keys.json, not read again until it changed: the revoked key kept working.
        const admitted = await withWorker(Stub, async () => access.admit(headersOf(gone.key), COST.request));
        expect(admitted).toMatchObject({ reason: "invalid key" });
        expect(access.health()).toEqual({ ok: true, problems: [] });
        expect(lines.join("\n")).toContain("is read on the request thread instead");
        expect(lines.join("\n")).not.toContain("Until it is whole again");
      } finally {
        await access.stop();
      }
    }, 10_000);

  test("it never answers: stopped at its deadline (KEY_STORE_READ_SECONDS), the store read here; the read ends", async () => {
    const dir = tempDir("tome-data-");
    const gone = await keyMade(dir, { name: "gone" });
    overAside(dir);
    const lines: string[] = [];
    const access = new Access({ dataDir: dir, log: (line) => lines.push(line) });
    // The read's deadline is brought forward (its delay alone is told apart): no test waits 45 s.
    const realSetTimeout = globalThis.setTimeout;
    const timers = spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, ms?: number) =>
      realSetTimeout(fn, ms === KEY_STORE_READ_SECONDS * 1000 ? 0 : ms)) as any);
    try {
      updateKeyFile(dir, (f) => revokeKey(f, gone.id, Date.now()));
      const admitted = await withWorker(workerOf("self.onmessage = () => {};"), async () =>
        access.admit(headersOf(gone.key), COST.request),
      );
      expect(admitted).toMatchObject({ reason: "invalid key" });
      expect(access.health()).toEqual({ ok: true, problems: [] });
      expect(lines.join("\n")).toContain(`it had not finished after ${KEY_STORE_READ_SECONDS} s`);
    } finally {
      timers.mockRestore();
      await access.stop();
    }
  }, 10_000);
});

test("a key is shown by its first characters and an ellipsis, or a dash for one made before they were kept: one rule for the key tool's list and the dashboard", () => {
  expect([shownPrefix("wk_AbCd"), shownPrefix(undefined), shownPrefix(null)]).toEqual(["wk_AbCd…", "—", "—"]);
});

describe("the key tool", () => {
  test("a lock left by a key command whose process id another process now has is taken over, not waited on", async () => {
    const dir = tempDir("tome-data-");
    // As in a container, where a killed command ran as process 1 and the next has its id: this test's own process
    // is alive, and started at another time than the lock says.
    const lock = `${keysPath(dir)}.lock`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(lock, `${process.pid} 1\n`);
    const started = performance.now();
    const made = updateKeyFile(dir, (file) => file.keys.length);
    expect(made).toBe(0);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(existsSync(lock)).toBe(false);
    // One held by a live process, as it started, is waited on until it goes.
    writeFileSync(lock, lockText());
    const remover = Bun.spawn(["sh", "-c", `sleep 0.6; rm "${lock}"`]);
    const waitedFrom = performance.now();
    expect(updateKeyFile(dir, (file) => file.keys.length)).toBe(0);
    expect(performance.now() - waitedFrom).toBeGreaterThan(500);
    await remover.exited;
  }, 30_000);

  test("a stale lock found by two key commands at once is removed by one: the other waits for the lock the first took, never removes it", () => {
    const dir = tempDir("tome-data-");
    updateKeyFile(dir, (file) => void createKey(file, { name: "first", account: "a", scope: "full", now: Date.now() }));
    const lock = `${keysPath(dir)}.lock`;
    // Left by a key command killed with it (its process gone).
    writeFileSync(lock, "999999 1\n");
    // Another command (this test) reads the stale lock just after this one did, removes it and takes its own.
    const theOther = lockText();
    let reads = 0;
    let heldAsTaken: string | undefined;
    const read = lockFiles.read;
    const raced = spyOn(lockFiles, "read").mockImplementation((path) => {
      if (path !== lock) return read(path);
      const text = read(path);
      if (++reads === 1) {
        rmSync(lock);
        writeFileSync(lock, theOther);
      } else if (reads === 3) {
        // The other command is done: its lock as it left it, then let go.
        heldAsTaken = text;
        rmSync(lock);
      }
      return text;
    });
    try {
      updateKeyFile(
        dir,
        (file) => void createKey(file, { name: "second", account: "a", scope: "full", now: Date.now() }),
      );
    } finally {
      raced.mockRestore();
    }
    // On the code before, this command removed the other's lock and wrote the store while the other held it.
    expect(heldAsTaken).toBe(theOther);
    expect(readKeyFile(keysPath(dir)).keys.map((k) => k.name)).toEqual(["first", "second"]);
    expect(readdirSync(dir).sort()).toEqual(["keys.gen", "keys.json"]);
  });

  test("a stale server.lock found by two servers at once: the second is refused, never takes the first's lock", async () => {
    const dir = tempDir("tome-data-");
    mkdirSync(dir, { recursive: true });
    const lock = join(dir, "server.lock");
    writeFileSync(lock, "999999 1\n");
    // The first server: a live process, which reads the stale lock just after this one, removes it and takes its own.
    const first = Bun.spawn(["sleep", "60"]);
    let reads = 0;
    const read = lockFiles.read;
    const raced = spyOn(lockFiles, "read").mockImplementation((path) => {
      const text = read(path);
      if (path === lock && ++reads === 1) {
        rmSync(lock);
        writeFileSync(lock, `${first.pid}\n`);
      }
      return text;
    });
    try {
      expect(() => lockDataFolder(dir)).toThrow(`another Tome server (process ${first.pid})`);
    } finally {
      raced.mockRestore();
      first.kill();
      await first.exited;
    }
    expect(readFileSync(lock, "utf8")).toBe(`${first.pid}\n`);
  });

  test("revoke takes the key's own text as well as its id, matched by its hash, and never prints it", async () => {
    const dir = tempDir("tome-data-");
    const made = await keyMade(dir, { name: "k" });
    const unknown = `wk_${"Z".repeat(32)}`;
    for (const [text, says] of [
      [unknown, "the key given is not in this store"],
      ["wk_short", "the key given is not a whole key"],
    ] as const) {
      const r = await keyTool(dir, "revoke", text);
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: "" });
      expect(r.stderr).toContain(says);
      expect(r.stderr).not.toContain(text);
    }
    // As pasted, with blanks and a line break about it (it was "not a whole key").
    const r = await keyTool(dir, "revoke", ` ${made.key}\n`);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`Revoked ${made.id} ("k", account default)`);
    expect(r.stdout + r.stderr).not.toContain(made.key);
    const list = JSON.parse((await keyTool(dir, "list", "--json")).stdout) as Json[];
    expect(list.map((k) => [k.id, k.state])).toEqual([[made.id, "revoked"]]);
    // Again: refused, saying when, and nothing changed (the operator may have named the wrong key).
    const before = filesOf(dir);
    const again = await keyTool(dir, "revoke", `${made.id} `);
    expect({ code: again.code, stdout: again.stdout, stderr: again.stderr.trim() }).toEqual({
      code: 1,
      stdout: "",
      stderr: `keys revoke: ${made.id} ("k", account default) was already revoked at ${list[0]!.revoked_at}; nothing was changed. To stop a key that still works, find its id with: bun run keys list`,
    });
    expect(filesOf(dir)).toEqual(before);
  });

  test("keys create on a new store whose usage.json cannot be written: refused before the key is made when its link leads to a missing folder; else the key still shown, with a warning", async () => {
    // usage.json linked to a volume not mounted: before, keys.json was written and the key never shown (exit 1).
    const dir = tempDir("tome-data-");
    const volume = join(tempDir("tome-root-"), "vol");
    fs.symlinkSync(join(volume, "usage.json"), join(dir, "usage.json"));
    const refused = await keyTool(dir, "create", "--name", "app");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toStartWith(
      `keys create: ${join(dir, "usage.json")} is a link to ${join(volume, "usage.json")}, which is not there (a volume not mounted?)`,
    );
    expect(refused.stdout).toBe("");
    expect(existsSync(keysPath(dir))).toBe(false);
    // A write that fails past that check (a link to itself: ELOOP): the key is made, so it is shown, and the failure said.
    const looped = tempDir("tome-data-");
    fs.symlinkSync(join(looped, "usage.json"), join(looped, "usage.json"));
    const made = await keyTool(looped, "create", "--name", "app");
    expect(made.code).toBe(0);
    const key = made.stdout.trim();
    expect(readKeyFile(keysPath(looped)).keys.map((k) => k.prefix)).toEqual([key.slice(0, 7)]);
    expect(made.stderr).toContain(
      `WARNING: the key was made in ${keysPath(looped)}, but ${join(looped, "usage.json")}`,
    );
  });

  test("keys create through a keys.json linked to a folder not there: one line naming the link, no stack trace (D184, D190)", async () => {
    const dir = tempDir("tome-data-");
    const volume = join(tempDir("tome-root-"), "vol");
    fs.symlinkSync(join(volume, "keys.json"), keysPath(dir));
    const refused = await keyTool(dir, "create", "--name", "app");
    expect(refused.code).toBe(1);
    // Before: the Error's stack, from linkLeadsNowhere (no syscall: not taken for a system call's refusal).
    expect(refused.stderr).toBe(
      `keys create: ${keysPath(dir)} is a link to ${join(volume, "keys.json")}, which is not there (a volume not mounted?): its folder ${volume} is missing, and no folder is made through a link.\n`,
    );
    expect(existsSync(volume)).toBe(false);
  });

  test("a key made but printed to no one (keys create killed between its write and its print) is found by keys list, by its first characters, and revoked (D196)", async () => {
    const dir = tempDir("tome-data-");
    // What the kill leaves: the key in keys.json, counted against the plan, its text shown to nobody.
    const unseen = await keyMade(dir, { name: "app", plan: "free" });
    const retried = await keyTool(dir, "create", "--name", "app");
    expect(retried.code).toBe(0);
    const held = retried.stdout.trim();
    const list = await keyTool(dir, "list");
    const rows = list.stdout
      .split("\n\n")[0]!
      .split("\n")
      .map((line) => line.split(/ {2,}/));
    expect(rows[0]!.slice(0, 3)).toEqual(["ID", "KEY", "NAME"]);
    // The key whose first characters are not the printed one's, never used: the unseen one, with its time of making.
    const [other] = rows.slice(1).filter((row) => row[2] === "app" && !held.startsWith(row[1]!.replace("…", "")));
    expect(other).toBeDefined();
    expect([other![0], other![1], other![7], other![9]]).toEqual([
      unseen.id,
      `${unseen.key.slice(0, 7)}…`,
      unseen.created_at.replace("T", " ").slice(0, 19),
      "never",
    ]);
    expect(JSON.parse((await keyTool(dir, "list", "--json")).stdout)[0].prefix).toBe(unseen.key.slice(0, 7));
    expect((await keyTool(dir, "revoke", other![0]!)).code).toBe(0);
    expect((await keyTool(dir, "list")).stdout).toMatch(/^default +free +1 \/ 3 /m);
  });

  test("list: each key with its expiry; each account's usage once, on its own line, with its active keys out of its plan's", async () => {
    const dir = tempDir("tome-data-");
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const a = await keyMade(dir, { name: "a", account: "acme", plan: "starter", expires: tomorrow });
    await keyMade(dir, { name: "b", account: "acme" });
    await keyMade(dir, { name: "c", account: "solo" });
    updateKeyFile(dir, (f) => revokeKey(f, a.id, Date.now()));
    // Four keys made on growth, then the account moved to free (3 keys): over its plan, where the list said "4" alone.
    updateKeyFile(dir, (f) => {
      for (const name of ["d", "e", "f", "g"])
        createKey(f, { name, account: "shrunk", plan: "growth", scope: "full", now: Date.now() });
      f.accounts.shrunk!.plan = "free";
      createKey(f, { name: "h", account: "big", plan: "enterprise", scope: "full", now: Date.now() });
    });
    const month = new Date().toISOString().slice(0, 7);
    writeUsage(join(dir, "usage.json"), { months: { [month]: { acme: 1234, solo: 5 } }, last_used: {} });
    const r = await keyTool(dir, "list");
    expect(r.code).toBe(0);
    const [keyLines, accountLines] = r.stdout
      .trim()
      .split("\n\n")
      .map((block) => block.split("\n").map((line) => line.split(/ {2,}/)));
    expect(keyLines![0]).toEqual([
      "ID",
      "KEY",
      "NAME",
      "ACCOUNT",
      "PLAN",
      "SCOPES",
      "STATE",
      "CREATED",
      "EXPIRES",
      "LAST USED",
    ]);
    expect(keyLines!.slice(1, 4).map((l) => [l[2], l[6], l[8]])).toEqual([
      ["a", "revoked", `${tomorrow} 00:00:00`],
      ["b", "active", "never"],
      ["c", "active", "never"],
    ]);
    expect(r.stdout.match(/1234/g)).toHaveLength(1);
    expect(accountLines).toEqual([
      ["ACCOUNT", "PLAN", "ACTIVE KEYS", `USAGE ${month}`, "RATE/S PER KEY"],
      ["acme", "starter", "1 / 5", "1234 / 50000", "25"],
      ["solo", "free", "1 / 3", "5 / 5000", "10"],
      ["shrunk", "free", "4 / 3", "0 / 5000", "10"],
      ["big", "enterprise", "1 / unlimited", "0 / unlimited", "1000"],
    ]);
  });

  test("a key's name holding control characters or direction marks is refused; one kept before is listed with them escaped, never sent to the terminal", async () => {
    const dir = tempDir("tome-data-");
    // ESC [2J clears the operator's screen; a line break makes a row of its own in the list; U+202E turns the text round.
    for (const name of ["a\u001b[2Jb", "x\ny", "\u202eevil", "c\u009b1m"]) {
      const r = await keyTool(dir, "create", "--name", name, "--account", "acme");
      expect({ name, code: r.code, stdout: r.stdout }).toEqual({ name, code: 1, stdout: "" });
      expect(r.stderr).toContain("a key's name may not hold control characters");
      expect(r.stderr).not.toContain(name);
    }
    expect(existsSync(keysPath(dir))).toBe(false);
    // Kept before they were refused (or written into keys.json by hand): listed, and revoked, escaped.
    const made = await keyMade(dir, { name: "plain", account: "acme" });
    updateKeyFile(dir, (f) => {
      f.keys[0]!.name = "a\u001b]52;c;cHduZWQ=\u0007b\nfake row";
    });
    const list = await keyTool(dir, "list");
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(list.stdout).toContain("a\\u001b]52;c;cHduZWQ=\\u0007b\\u000afake row");
    const revoked = await keyTool(dir, "revoke", made.id);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout + revoked.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    // Revoked again: the refusal names it escaped too (it sent the name raw).
    const again = await keyTool(dir, "revoke", made.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(
      `${made.id} ("a\\u001b]52;c;cHduZWQ=\\u0007b\\u000afake row", account acme) was already revoked`,
    );
    expect(again.stdout + again.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    // A key's id and its account's name written into keys.json by hand: listed, revoked and named as damage
    // escaped too (each was sent raw).
    const id = "key_\u001b]52;c;cHduZWQ=\u0007x";
    const account = "ac\u001b[2Jme";
    const shownId = "key_\\u001b]52;c;cHduZWQ=\\u0007x";
    const shownAccount = "ac\\u001b[2Jme";
    const other = await keyMade(dir, { name: "other", account: "acme" });
    updateKeyFile(dir, (f) => {
      const k = f.keys.find((k) => k.id === other.id)!;
      k.id = id;
      k.account = account;
      f.accounts[account] = f.accounts.acme!;
    });
    const listed = await keyTool(dir, "list");
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(listed.stdout).toContain(`${shownId}  ${other.key.slice(0, 7)}…  other`);
    expect(listed.stdout).toContain(`\n${shownAccount} `);
    const first = await keyTool(dir, "revoke", id);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain(`Revoked ${shownId} ("other", account ${shownAccount})`);
    const second = await keyTool(dir, "revoke", id);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`${shownId} ("other", account ${shownAccount}) was already revoked`);
    for (const r of [first, second])
      expect(r.stdout + r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    const good = JSON.parse(readFileSync(keysPath(dir), "utf8"));
    const theirs = good.keys.find((k: Json) => k.id === id);
    for (const [damage, says] of [
      [{ keys: [...good.keys, theirs] }, `two keys have the id ${shownId}`],
      [{ keys: [{ ...theirs, scopes: [] }] }, `key ${shownId} has no valid scopes`],
      [{ accounts: { ...good.accounts, [account]: { plan: "gold" } } }, `account ${shownAccount} has no valid plan`],
    ] as const) {
      writeFileSync(keysPath(dir), JSON.stringify({ ...good, ...damage }));
      const r = await keyTool(dir, "list");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`is damaged: ${says}.`);
      expect(r.stdout + r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    }
  });

  test("keys list --json escapes the C1 controls and the direction marks in a name as \\uXXXX, as the table does, where it sent them raw", async () => {
    const dir = tempDir("tome-data-");
    const made = await keyMade(dir, { name: "plain", account: "acme" });
    // U+009B is a terminal's CSI (ESC [): "\u009b2J" clears the screen; U+0085 is a line break; the marks turn the row round.
    const name = "a\u009b2Jb\u0085c\u202eevil\u2066d\u2069\u200fe\u200e\u061cf\u2028g\u007f";
    updateKeyFile(dir, (f) => {
      f.keys[0]!.name = name;
    });
    const unshown = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
    const json = await keyTool(dir, "list", "--json");
    expect(json.code).toBe(0);
    expect(json.stdout).not.toMatch(unshown);
    expect(json.stdout).toContain(
      String.raw`"name": "a\u009b2Jb\u0085c\u202eevil\u2066d\u2069\u200fe\u200e\u061cf\u2028g\u007f"`,
    );
    // Still JSON, read back as the name kept.
    expect(JSON.parse(json.stdout)).toMatchObject([{ id: made.id, name }]);
    const table = await keyTool(dir, "list");
    expect(table.stdout).not.toMatch(unshown);
    expect(table.stdout).toContain(
      String.raw`a\u009b2Jb\u0085c\u202eevil\u2066d\u2069\u200fe\u200e\u061cf\u2028g\u007f`,
    );
    // And the marks the table did not escape (left-to-right, right-to-left, Arabic letter mark) are refused in a new name.
    for (const mark of ["\u200e", "\u200f", "\u061c"]) {
      const r = await keyTool(dir, "create", "--name", `x${mark}y`, "--account", "acme");
      expect({ mark, code: r.code }).toEqual({ mark, code: 1 });
      expect(r.stderr).toContain("a key's name may not hold control characters");
    }
  });

  test("TOME_DATA naming a file, or a folder inside one, is one line naming the fix, no stack, for the key tool and start", async () => {
    const file = join(tempDir("tome-data-"), "keys.json");
    writeFileSync(file, "not a folder");
    for (const data of [file, join(file, "data")]) {
      const made = await keyTool(data, "create", "--name", "x");
      // keys list said "No keys in <file>/keys.json", exit 0.
      const listed = await keyTool(data, "list");
      const served = await start(data);
      for (const { code, said } of [
        { code: made.code, said: made.stderr },
        { code: listed.code, said: listed.stderr },
        { code: served.code, said: served.out },
      ]) {
        expect({ data, code }).toEqual({ data, code: 1 });
        expect(said).toContain("a file stands where that path needs a folder: name a folder (TOME_DATA)");
        expect(said).not.toContain("    at ");
      }
    }
    expect(readFileSync(file, "utf8")).toBe("not a folder");
  });

  test("a key's name longer than the dashboard's 100 characters is refused, as the dashboard refuses it; 100 is taken", async () => {
    const dir = tempDir("tome-data-");
    const long = await keyTool(dir, "create", "--name", "x".repeat(101), "--account", "acme");
    expect({ code: long.code, stdout: long.stdout }).toEqual({ code: 1, stdout: "" });
    expect(long.stderr).toContain("a key's name must be 1 to 100 characters, not 101");
    expect(existsSync(keysPath(dir))).toBe(false);
    // Given empty or blank (an empty variable: --name "$APP"): said so, where it said "--name is required".
    const blank = await keyTool(dir, "create", "--name", "  ", "--account", "acme");
    expect({ code: blank.code, stdout: blank.stdout }).toEqual({ code: 2, stdout: "" });
    expect(blank.stderr).toStartWith(
      "keys create: --name is only blanks: give the key a name of 1 to 100 characters.\n",
    );
    const made = await madeByTool(dir, "--name", "x".repeat(100), "--account", "acme");
    expect(made.name).toBe("x".repeat(100));
    // Characters, not UTF-16 units: a name of 100 emoji or CJK Extension B ideographs (200 units) is as long, and was refused.
    const astral = "𠮷📚".repeat(50);
    expect((await madeByTool(dir, "--name", astral, "--account", "acme")).name).toBe(astral);
    const over = await keyTool(dir, "create", "--name", `${astral}📚`, "--account", "acme");
    expect(over.stderr).toContain("a key's name must be 1 to 100 characters, not 101");
  });

  test("--expires in the past, or today (00:00 UTC has passed), is refused; tomorrow is taken", async () => {
    const dir = tempDir("tome-data-");
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    for (const date of ["2020-01-01", day(0)]) {
      const r = await keyTool(dir, "create", "--name", "k", "--expires", date);
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
      expect(r.stderr).toContain(`--expires ${date} is not in the future`);
      expect(r.stderr).toContain("Give a later date");
    }
    expect(existsSync(keysPath(dir))).toBe(false);
    const made = await madeByTool(dir, "--name", "k", "--expires", day(1));
    expect(made.expires_at).toBe(`${day(1)}T00:00:00.000Z`);
  });

  test("scopes hold: a read key may do everything but render a PDF (403, saying why and what to do); a full key may", async () => {
    const dir = tempDir("tome-data-");
    const read = await keyMade(dir, { name: "r", scope: "read" });
    const full = await keyMade(dir, { name: "f", scope: "full" });
    const access = new Access({ dataDir: dir });
    const outcome = async (key: string, cost: number, needs: "read" | "full") => {
      const r = await access.admit(headersOf(key), cost, needs);
      if ("reason" in r) return r;
      access.settle(r, true);
      return "granted";
    };
    expect(await outcome(read.key, COST.request, NEEDS.request)).toBe("granted");
    expect(await outcome(full.key, COST.request, NEEDS.request)).toBe("granted");
    expect(await outcome(full.key, COST.pdf, NEEDS.pdf)).toBe("granted");
    expect(await outcome(read.key, COST.pdf, NEEDS.pdf)).toMatchObject({
      reason: "read scope",
      message: expect.stringContaining("This API key's scope is read, which does not allow this request"),
    });
    expect(((await outcome(read.key, COST.pdf, NEEDS.pdf)) as Json).message).toContain(
      "make one on the server's /dashboard, or ask its operator (bun run keys create --name NAME --account ACCOUNT --scope full)",
    );
    // A refusal costs nothing: the account spent 1 + 1 + 10.
    const known = await access.admit(headersOf(read.key), COST.request);
    expect("reason" in known ? known : access.quota(known.key).used).toBe(12 + 1);
    await access.stop();
  });

  test("over HTTP, a read key gets 403 forbidden for a PDF, in either path form, and its other routes; a full key gets the PDF", async () => {
    const dir = tempDir("tome-data-");
    const read = await keyMade(dir, { name: "r", scope: "read" });
    const full = await keyMade(dir, { name: "f", scope: "full" });
    const server = await startServer({
      ...NO_SEARCH_THREADS,
      TOME_SNAPSHOT: await snapshotFor({ dumps: [SQUAD] }),
      TOME_DATA: dir,
    });
    try {
      const get = (path: string, key: string) => fetch(server.url + path, { headers: { "X-API-Key": key } });
      for (const path of ["/v1/pdf/5000001", "/v1/pdf/5000001.pdf"]) {
        const refused = await get(path, read.key);
        expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([403, "forbidden"]);
      }
      expect((await get("/v1/chunk/5000001_0", read.key)).status).toBe(200);
      const pdf = await get("/v1/pdf/5000001", full.key);
      expect([pdf.status, pdf.headers.get("content-type")]).toEqual([200, "application/pdf"]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("a disk full at the lock or at keys.json: said naming the file, no empty lock left to wait on, the store as it was, the next command at once", () => {
    const dir = tempDir("tome-data-");
    updateKeyFile(dir, (file) => void createKey(file, { name: "first", account: "a", scope: "full", now: Date.now() }));
    const before = readdirSync(dir).sort();
    const stored = readFileSync(keysPath(dir), "utf8");
    // A full tmpfs still makes the empty file, then refuses its bytes: the first write is the lock's, the next keys.json's.
    for (const failing of [1, 2]) {
      let writes = 0;
      const write = fs.writeSync as (...a: unknown[]) => number;
      const full = spyOn(fs, "writeSync").mockImplementation(((...args: unknown[]) => {
        if (++writes === failing)
          throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        return write(...args);
      }) as typeof fs.writeSync);
      try {
        expect(() =>
          updateKeyFile(
            dir,
            (file) => void createKey(file, { name: "second", account: "a", scope: "full", now: Date.now() }),
          ),
        ).toThrow(`could not write ${failing === 1 ? `${keysPath(dir)}.lock` : keysPath(dir)}: ENOSPC`);
      } finally {
        full.mockRestore();
      }
      expect(readdirSync(dir).sort()).toEqual(before);
      expect(readFileSync(keysPath(dir), "utf8")).toBe(stored);
    }
    updateKeyFile(
      dir,
      (file) => void createKey(file, { name: "second", account: "a", scope: "full", now: Date.now() }),
    );
    expect(readKeyFile(keysPath(dir)).keys.map((k) => k.name)).toEqual(["first", "second"]);
  });

  test("a key command killed between writing keys.json's temporary file and renaming it: the next change removes that file, never a live writer's", async () => {
    const dir = tempDir("tome-data-");
    updateKeyFile(dir, (file) => void createKey(file, { name: "first", account: "a", scope: "full", now: Date.now() }));
    // A key command whose rename of .keys.json.<pid>.tmp never comes, killed there (kill -9).
    const { live, writing } = await killedMidWrite(
      dir,
      "keys.json",
      `import { spyOn } from "bun:test";
         import * as fs from "node:fs";
         import { createKey } from ${JSON.stringify(join(ROOT, "src/access/commands.ts"))};
         import { updateKeyFile } from ${JSON.stringify(join(ROOT, "src/access/store.ts"))};
         spyOn(fs, "renameSync").mockImplementation(() => Bun.sleepSync(60_000));
         updateKeyFile(${JSON.stringify(dir)}, (file) => void createKey(file, { name: "lost", account: "a", scope: "full", now: Date.now() }));`,
    );
    try {
      updateKeyFile(
        dir,
        (file) => void createKey(file, { name: "second", account: "a", scope: "full", now: Date.now() }),
      );
      expect(readdirSync(dir).sort()).toEqual([live, "keys.gen", "keys.json"]);
    } finally {
      writing.kill();
      await writing.exited;
    }
    expect(readKeyFile(keysPath(dir)).keys.map((k) => k.name)).toEqual(["first", "second"]);
  });

  test("updateKeyFile never writes over a damaged store", () => {
    const dir = tempDir("tome-data-");
    writeFileSync(keysPath(dir), "");
    expect(() => updateKeyFile(dir, () => undefined)).toThrow(`${keysPath(dir)} is empty`);
    expect(readFileSync(keysPath(dir), "utf8")).toBe("");
  });

  test("account create and account token: a sign-in token printed once, kept as its hash; the old one replaced; --help; clear refusals", async () => {
    const dir = tempDir("tome-data-");
    const made = await keyTool(dir, "account", "create", "--account", "acme", "--plan", "starter");
    expect(made.code).toBe(0);
    const token = made.stdout.trim();
    expect(token).toMatch(/^wd_[A-Za-z0-9]{32}\.acme$/);
    expect(made.stderr).toContain(
      `Created the account acme (starter plan) and its dashboard sign-in token, in ${keysPath(dir)}. It is shown only this once`,
    );
    const stored = JSON.parse(readFileSync(keysPath(dir), "utf8"));
    expect(stored.accounts.acme).toEqual({
      plan: "starter",
      dashboard_token: new Bun.CryptoHasher("sha256").update(token).digest("hex"),
    });
    expect(readFileSync(keysPath(dir), "utf8")).not.toContain(token);
    // A store whose only account has the dashboard serves (its holder makes the keys).
    expect(checkKeyStore(dir)).toBe("present");

    // An account with a token keeps it: "account token" replaces it, and only that.
    const again = await keyTool(dir, "account", "create", "--account", "acme");
    expect([again.code, again.stdout]).toEqual([1, ""]);
    expect(again.stderr).toContain(
      "account acme has a dashboard sign-in token already; nothing was changed. To replace it (the old one stops working): bun run keys account token --account acme",
    );
    const replaced = await keyTool(dir, "account", "token", "--account", "acme", "--json");
    expect(replaced.code).toBe(0);
    const json = JSON.parse(replaced.stdout);
    expect(json).toEqual({
      account: "acme",
      plan: "starter",
      dashboard_token: expect.stringMatching(/^wd_[A-Za-z0-9]{32}\.acme$/),
    });
    expect(json.dashboard_token).not.toBe(token);
    expect(JSON.parse(readFileSync(keysPath(dir), "utf8")).accounts.acme.dashboard_token).toBe(
      new Bun.CryptoHasher("sha256").update(json.dashboard_token).digest("hex"),
    );

    // An existing account (made with its first key) keeps its plan; --json has the three fields.
    await keyMade(dir, { name: "k", account: "globex", plan: "growth" });
    const existing = JSON.parse((await keyTool(dir, "account", "create", "--account", "globex", "--json")).stdout);
    expect(Object.keys(existing)).toEqual(["account", "plan", "dashboard_token"]);
    expect(existing.plan).toBe("growth");

    const refusals: [string[], string][] = [
      [
        ["account", "token", "--account", "nobody"],
        "there is no account nobody. Give it dashboard access with: bun run keys account create --account nobody --plan PLAN",
      ],
      [
        ["account", "create", "--account", "globex", "--plan", "free"],
        "account globex is on the growth plan. Change it with: bun run keys plan --account globex --plan free",
      ],
      [["account", "create", "--account", "bad name"], "--account must be 1 to 64 letters, digits"],
      [["account", "create"], "--account is required"],
      [
        ["account", "create", "--account", "x", "--plan", "gold"],
        "--plan must be one of free, starter, growth, business, enterprise",
      ],
      [["account", "token", "--account", "acme", "--plan", "free"], "--plan is for account create"],
      [["account", "rename"], 'keys account: takes create or token, not "rename"\n'],
    ];
    for (const [args, says] of refusals) {
      const r = await keyTool(dir, ...args);
      expect([r.code === 0, r.stdout]).toEqual([false, ""]);
      expect(r.stderr).toContain(says);
      expect(r.stderr).not.toContain("    at ");
    }
    for (const args of [
      ["account", "--help"],
      ["account", "create", "--help"],
      ["account", "token", "-h"],
    ]) {
      const help = await keyTool(dir, ...args);
      expect([help.code, help.stdout]).toEqual([
        0,
        expect.stringContaining("Usage: bun run keys account create --account NAME [--plan PLAN] [--json]"),
      ]);
    }
    expect((await keyTool(dir, "--help")).stdout).toContain(
      'account  give an account holder the dashboard (/dashboard): "account create", "account token"',
    );
  });

  test("create, revoke, plan and account name the store they wrote to, as a whole path: a key made from another folder than the server's is not silently in another store", async () => {
    const cwd = tempDir("tome-cwd-");
    // TOME_DATA unset: ./data of the folder the command runs in (it said nothing of which).
    const run = (...args: string[]) =>
      runToExit(["bun", join(ROOT, "src/cli/keys.ts"), ...args], { TOME_DATA: undefined }, cwd);
    const store = join(cwd, "data", "keys.json");
    const made = await run("create", "--name", "k", "--account", "acme");
    expect(made.code).toBe(0);
    expect(made.stderr).toContain(`(free plan, scope read) in ${store}. This is the only time the key is shown`);
    const id = /Created (key_\w+)/.exec(made.stderr)![1]!;
    const revoked = await run("revoke", id);
    expect(revoked.stderr).toStartWith(`Revoked ${id} ("k", account acme) at `);
    expect(revoked.stderr).toEndWith(`, in ${store}.\n`);
    expect((await run("plan", "--account", "acme", "--plan", "starter")).stderr).toContain(
      `50000 credits a month (in ${store}).`,
    );
    expect((await run("account", "token", "--account", "acme")).stderr).toContain(
      `(starter plan), in ${store}. It is shown`,
    );
  });

  test("keys plan --rate refused says the value it was given, as the other options' refusals do", async () => {
    const r = await keyTool(tempDir(), "plan", "--account", "acme", "--plan", "enterprise", "--rate", "0x10");
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([
      2,
      'keys plan: --rate must be a whole number of requests per second from 1 to 1000000, not "0x10"',
    ]);
  });

  test("keys and keys account without their command: a usage error (stderr, exit 2) as an unknown one is, where account said nothing was wrong (exit 0)", async () => {
    const dir = tempDir();
    for (const [args, says] of [
      [[], "Usage: bun run keys <command> [options]"],
      // The prefix once: it said "keys account: keys account takes create or token".
      [["account"], "keys account: create or token is required\n"],
    ] as const) {
      const r = await keyTool(dir, ...args);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr).toContain(says);
    }
  });
});

describe("the key tool on a Redis that takes the connection and answers nothing (D42)", () => {
  /** A TCP server on a free port that takes every connection; `hello` answers Bun's HELLO 3 (a Redis's greeting) and nothing after. */
  async function silentServer(hello: boolean): Promise<{ url: string; server: Server; heard: string[] }> {
    const heard: string[] = [];
    const server = createServer((socket) => {
      socket.on("data", (bytes) => {
        const text = String(bytes);
        heard.push(text);
        if (hello && text.includes("HELLO")) socket.write("%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n");
      });
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    const { port } = server.address() as { port: number };
    return { url: `redis://127.0.0.1:${port}`, server, heard };
  }

  test("keyTool runs the tool with an io of its own: while it waits on Redis, this process's console, process.exit and process.env are its own (a server in the test's process logged into the tool's output)", async () => {
    const { url, server, heard } = await silentServer(false);
    try {
      const own = { log: console.log, error: console.error, exit: process.exit, redis: process.env.TOME_REDIS_URL };
      const run = keyTool({ TOME_REDIS_URL: url, TOME_DATA: tempDir("tome-data-") }, "list");
      // The tool has connected and waits for an answer, as a server's handlers in this process would find it.
      while (!heard.length) await Bun.sleep(10);
      const now = { log: console.log, error: console.error, exit: process.exit, redis: process.env.TOME_REDIS_URL };
      const r = await run;
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("did not answer within 3 s");
      expect(Object.keys(now).filter((k) => now[k as keyof typeof now] !== own[k as keyof typeof own])).toEqual([]);
    } finally {
      server.close();
    }
  });

  test("list and create fail with a message saying Redis did not answer and what to check, exit 1, and show no key", async () => {
    // Silent from the start (another service on the port), and greeting then silent (a Redis stuck behind a proxy):
    // the first said "the connection closed (Connection closed)"; the second waited for good on its SCRIPT LOAD.
    for (const hello of [false, true]) {
      const { url, server, heard } = await silentServer(hello);
      try {
        for (const args of [["list"], ["create", "--name", "x", "--json"]]) {
          const r = await keyTool({ TOME_REDIS_URL: url, TOME_DATA: tempDir("tome-data-") }, ...args);
          expect({ hello, args, code: r.code, stdout: r.stdout }).toEqual({ hello, args, code: 1, stdout: "" });
          expect(r.stderr.trim()).toBe(
            `keys ${args[0]}: Redis at ${url} (TOME_REDIS_URL) did not answer within 3 s. Check that the address is Redis's (\`redis-cli -u URL ping\` answers PONG; not another service on that port), that Redis is not stuck or paused, that a proxy or tunnel in between reaches it, and that a Redis with TLS is given as rediss:// (and one without as redis://). Nothing was changed.`,
          );
        }
        // It was reached, and asked: nothing the tool changes was sent before it gave up.
        expect(heard.join("")).toContain("HELLO");
        expect(heard.join("")).not.toContain("EVALSHA");
      } finally {
        server.close();
      }
    }
  });
});
