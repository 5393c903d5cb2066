/**
 * Every lock file of Tome's is taken by one routine (src/files.ts lockSteps): the server's, a build's or a follower's
 * (takeLock, refusing a live holder at once) and keys.json's (updateKeyFile on its thread, updateKeyFileAsync for the
 * dashboard, both waiting their turn). The same rules for all: a lock whose holder is gone is broken; an empty one is
 * its maker's until EMPTY_LOCK_GRACE_MS have passed, and broken after.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { keysPath, readKeyFile, updateKeyFile, updateKeyFileAsync } from "../src/access/store";
import { createKey } from "../src/access/commands";
import { Access } from "../src/access";
import { claimOutput } from "../src/cli/snapshot-build";
import { dataFolderHeld, lockDataFolder } from "../src/access/server-lock";
import { EMPTY_LOCK_GRACE_MS, LOCK_RENEW_MS, LOCK_STALE_MS, takeLock } from "../src/files";
import { ROOT, tempDir } from "./helpers";

class Held extends Error {}

/** Runs a command as pid 1 of a pid namespace of its own, as a container's entry point runs (util-linux's unshare). */
const IN_OWN_PID_SPACE = ["unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc"];
/** Why the tests needing a pid namespace of their own cannot run here ("" if they can): said in their names and logged. */
const noOwnPidSpaces = (() => {
  try {
    const tried = Bun.spawnSync([...IN_OWN_PID_SPACE, "true"], { stderr: "pipe" });
    if (tried.exitCode === 0) return "";
    return `unshare cannot make a user and pid namespace here (${tried.stderr.toString().trim().split("\n")[0] || `exit ${tried.exitCode}`})`;
  } catch (err) {
    return `unshare cannot be run here (${(err as Error).message})`;
  }
})();
if (noOwnPidSpaces)
  console.warn(`locks.test.ts: the tests held from another pid namespace are skipped: ${noOwnPidSpaces}`);

/** Each way a lock is taken, on a data folder: resolves to how it went, "taken" or the holder's process id. */
const TAKERS: Record<
  string,
  { waits: boolean; lock: (dir: string) => string; take: (dir: string) => Promise<"taken" | number> }
> = {
  "takeLock (server, build, follow)": {
    waits: false,
    lock: (dir) => join(dir, "server.lock"),
    take: async (dir) => {
      try {
        takeLock(join(dir, "server.lock"), {
          held: (pid) => Object.assign(new Held(), { pid }),
          unwritable: (e) => e,
        })();
        return "taken";
      } catch (err) {
        if (err instanceof Held) return (err as Held & { pid: number }).pid;
        throw err;
      }
    },
  },
  "updateKeyFile (the key tool)": {
    waits: true,
    lock: (dir) => `${keysPath(dir)}.lock`,
    take: async (dir) => {
      updateKeyFile(dir, (file) => void createKey(file, { name: "k", account: "a", scope: "read", now: Date.now() }));
      return "taken";
    },
  },
  "updateKeyFileAsync (the dashboard)": {
    waits: true,
    lock: (dir) => `${keysPath(dir)}.lock`,
    take: async (dir) => {
      await updateKeyFileAsync(
        dir,
        (file) => void createKey(file, { name: "k", account: "a", scope: "read", now: Date.now() }),
      );
      return "taken";
    },
  },
};

function dataDir(): string {
  const dir = tempDir("tome-locks-");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** What the taker left: the lock gone, and (for keys.json's) the change made. */
function expectTaken(dir: string, lock: string): void {
  expect(existsSync(lock)).toBe(false);
  if (lock.startsWith(keysPath(dir))) expect(readKeyFile(keysPath(dir)).keys.map((k) => k.name)).toEqual(["k"]);
}

describe.each(Object.entries(TAKERS))("%s", (_, { waits, lock: lockOf, take }) => {
  test("an empty lock older than EMPTY_LOCK_GRACE_MS (its maker killed before writing its text) is broken", async () => {
    const dir = dataDir();
    const lock = lockOf(dir);
    writeFileSync(lock, "");
    const made = (Date.now() - EMPTY_LOCK_GRACE_MS - 1_000) / 1000;
    utimesSync(lock, made, made);
    expect(await take(dir)).toBe("taken");
    expectTaken(dir, lock);
  });

  test("an empty lock whose maker writes its text late (paused between making and writing it) is not broken: its maker stays the holder", async () => {
    const dir = dataDir();
    const lock = lockOf(dir);
    // The maker: makes the lock empty, writes its text 1 s later (takeLock broke it after 200 ms), holds it 0.5 s and
    // lets it go, exiting 0 only if its lock was its own throughout.
    const maker = Bun.spawn(
      [
        process.execPath,
        "-e",
        `import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
         import { lockText } from ${JSON.stringify(join(ROOT, "src/files.ts"))};
         const lock = ${JSON.stringify(lock)};
         const fd = openSync(lock, "wx", 0o600);
         Bun.sleepSync(1000);
         const mine = lockText() + "\\n";
         writeSync(fd, mine);
         closeSync(fd);
         Bun.sleepSync(500);
         const still = readFileSync(lock, "utf8") === mine;
         rmSync(lock, { force: true });
         process.exit(still ? 0 : 1);`,
      ],
      { stdout: "inherit", stderr: "inherit" },
    );
    while (!existsSync(lock)) await Bun.sleep(5);
    const took = await take(dir);
    expect(await maker.exited).toBe(0);
    // takeLock refuses a live holder; keys.json's takers wait their turn.
    expect(took).toBe(waits ? "taken" : maker.pid);
    if (waits) expectTaken(dir, lock);
  }, 30_000);

  test("a lock whose holder's process is gone is broken", async () => {
    const dir = dataDir();
    const lock = lockOf(dir);
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    writeFileSync(lock, `${gone.pid}\n`);
    expect(await take(dir)).toBe("taken");
    expectTaken(dir, lock);
  });

  test("a live holder's lock is never broken: waited for until it goes (keys.json's) or refused (takeLock)", async () => {
    const dir = dataDir();
    const lock = lockOf(dir);
    const holder = Bun.spawn(["sleep", "60"]);
    writeFileSync(lock, `${holder.pid}\n`);
    const remover = Bun.spawn(["sh", "-c", `sleep 0.5; rm "${lock}"`]);
    try {
      const took = await take(dir);
      expect(took).toBe(waits ? "taken" : holder.pid);
      if (waits) expectTaken(dir, lock);
      else expect(readFileSync(lock, "utf8")).toBe(`${holder.pid}\n`);
    } finally {
      holder.kill();
      await holder.exited;
      await remover.exited;
    }
    expect(readdirSync(dir).filter((f) => f.endsWith(".lock") || f.endsWith(".break"))).toEqual([]);
  });

  test.skipIf(noOwnPidSpaces !== "")(
    `a lock held from another pid namespace (another container on the same volume, its holder pid 1 there) is its holder's: refused (takeLock) or waited for, never broken${noOwnPidSpaces && ` [skipped: ${noOwnPidSpaces}]`}`,
    async () => {
      const dir = dataDir();
      const lock = lockOf(dir);
      // The holder: takes the lock as a server or key command does, holds it 1.5 s and lets it go, exiting 0 only if
      // it was its own throughout. Its id means nothing here: pid 1 is another process, and its own start time differs.
      const holder = Bun.spawn(
        [
          ...IN_OWN_PID_SPACE,
          process.execPath,
          "-e",
          `import { readFileSync } from "node:fs";
           import { takeLock } from ${JSON.stringify(join(ROOT, "src/files.ts"))};
           const lock = ${JSON.stringify(lock)};
           const release = takeLock(lock, { held: () => new Error("held"), unwritable: (e) => e });
           const mine = readFileSync(lock, "utf8");
           Bun.sleepSync(1500);
           const still = readFileSync(lock, "utf8") === mine;
           release();
           process.exit(still ? 0 : 1);`,
        ],
        { stdout: "inherit", stderr: "inherit" },
      );
      while (!existsSync(lock) || !readFileSync(lock, "utf8").trim()) await Bun.sleep(5);
      const took = await take(dir);
      expect(await holder.exited).toBe(0);
      expect(took).toBe(waits ? "taken" : 1);
      if (waits) expectTaken(dir, lock);
    },
    30_000,
  );
});

describe("a lock of another pid namespace or machine (its text names another boot or namespace)", () => {
  const take = TAKERS["takeLock (server, build, follow)"]!.take;
  /** What such a holder writes: pid 1 (alive here, started at another time), and a pid space that is not this one's. */
  const elsewhere = "1 1 00000000-0000-0000-0000-000000000000/4026531836\n";

  test("renewed within LOCK_STALE_MS, it is held: its id is not looked for here", async () => {
    const dir = dataDir();
    writeFileSync(join(dir, "server.lock"), elsewhere);
    expect(await take(dir)).toBe(1);
    expect(readFileSync(join(dir, "server.lock"), "utf8")).toBe(elsewhere);
  });

  test("not renewed for LOCK_STALE_MS (its holder gone: a container killed, a machine stopped), it is broken", async () => {
    const dir = dataDir();
    const lock = join(dir, "server.lock");
    writeFileSync(lock, elsewhere);
    const renewed = (Date.now() - LOCK_STALE_MS - 1_000) / 1000;
    utimesSync(lock, renewed, renewed);
    expect(await take(dir)).toBe("taken");
  }, 15_000); // broken once no renewal came in RENEWAL_LOOK_MS (5 s, D175)

  test("a second server told at one look (dataFolderHeld, a busy port): one not renewed lately is said may be stale, not a live server's never to delete", () => {
    const dir = dataDir();
    const lock = join(dir, "server.lock");
    writeFileSync(lock, elsewhere);
    const renewed = (Date.now() - LOCK_STALE_MS - 1_000) / 1000;
    utimesSync(lock, renewed, renewed);
    const message = dataFolderHeld(dir)?.message ?? "";
    // Before: "another Tome server … Do not delete server.lock", its server dead.
    expect(message).toContain(`not renewed for ${LOCK_STALE_MS / 1000} s: that server has most likely stopped`);
    expect(message).not.toContain("Do not delete");
  });

  test("a lock's holder renews it every LOCK_RENEW_MS, so that a taker elsewhere sees it live", async () => {
    const dir = dataDir();
    const lock = join(dir, "server.lock");
    const release = takeLock(lock, { held: () => new Held(), unwritable: (e) => e });
    try {
      const long = (Date.now() - LOCK_STALE_MS) / 1000;
      utimesSync(lock, long, long);
      await Bun.sleep(LOCK_RENEW_MS + 1_000);
      expect(Date.now() - statSync(lock).mtimeMs).toBeLessThan(LOCK_STALE_MS / 2);
    } finally {
      release();
    }
  });
  test("a released lock is renewed no more: another holder's lock at its path keeps the mtime it has", async () => {
    const dir = dataDir();
    const lock = join(dir, "server.lock");
    let losses = 0;
    takeLock(lock, { held: () => new Held(), unwritable: (e) => e, lost: () => losses++ })();
    writeFileSync(lock, elsewhere);
    const long = (Date.now() - LOCK_STALE_MS) / 1000;
    utimesSync(lock, long, long);
    const before = statSync(lock).mtimeMs;
    await Bun.sleep(LOCK_RENEW_MS + 1_000);
    expect(statSync(lock).mtimeMs).toBe(before);
    expect(losses).toBe(0);
  });

  test("a held lock broken and taken by another holder is renewed no more, and its holder is told it lost it", async () => {
    const dir = dataDir();
    const lock = join(dir, "server.lock");
    let losses = 0;
    const release = takeLock(lock, { held: () => new Held(), unwritable: (e) => e, lost: () => losses++ });
    try {
      // As a taker elsewhere does once this holder stood still past LOCK_STALE_MS: its lock replaced by its own.
      writeFileSync(lock, elsewhere);
      const long = (Date.now() - LOCK_STALE_MS) / 1000;
      utimesSync(lock, long, long);
      const before = statSync(lock).mtimeMs;
      await Bun.sleep(2 * LOCK_RENEW_MS + 1_000);
      expect(statSync(lock).mtimeMs).toBe(before);
      expect(losses).toBe(1);
    } finally {
      release();
    }
    expect(readFileSync(lock, "utf8")).toBe(elsewhere);
  }, 15_000);

  test("D190: a server whose server.lock was deleted makes it again and says so: a second server is still refused", async () => {
    const dir = dataDir();
    const lines: string[] = [];
    const access = new Access({ dataDir: dir, log: (line) => lines.push(line) });
    access.claim();
    try {
      const lock = join(dir, "server.lock");
      const mine = readFileSync(lock, "utf8");
      // By hand ("if no server is running, delete it", with one running).
      rmSync(lock);
      await Bun.sleep(LOCK_RENEW_MS + 1_000);
      // Left gone, and "no longer this server's" said: a second server started on the folder was let in.
      expect(lines).toEqual([expect.stringContaining(`${lock} was deleted while this server runs: made again`)]);
      expect(readFileSync(lock, "utf8")).toBe(mine);
      // What a second server is refused by (one in this process would take it again: lockDataFolder, its own).
      expect(dataFolderHeld(dir)?.message).toStartWith("another Tome server");
    } finally {
      await access.stop();
    }
    expect(existsSync(join(dir, "server.lock"))).toBe(false);
  }, 15_000);

  test("a server whose server.lock was taken by another says so in its log, and on /healthz (D190)", async () => {
    const dir = dataDir();
    const lines: string[] = [];
    const access = new Access({ dataDir: dir, log: (line) => lines.push(line) });
    access.claim();
    try {
      expect(access.health()).toEqual({ ok: true, problems: [] });
      writeFileSync(join(dir, "server.lock"), elsewhere);
      await Bun.sleep(LOCK_RENEW_MS + 1_000);
      expect(lines.filter((line) => line.includes("server.lock is no longer this server's")).length).toBe(1);
      // Said ok: an operator watching /healthz did not learn that another server may write over these counts.
      const health = access.health();
      expect(health).toEqual({
        ok: false,
        problems: [expect.stringContaining("the data folder's lock is another process's since")],
      });
      expect(health.problems[0]).not.toContain(dir);
    } finally {
      await access.stop();
    }
  }, 15_000);
});

describe("server.lock deleted and not made again", () => {
  test("D190: a server whose deleted server.lock cannot be made again says so as itself, in its log and on /healthz, not as another process's lock", async () => {
    const dir = dataDir();
    const lines: string[] = [];
    const access = new Access({ dataDir: dir, log: (line) => lines.push(line) });
    access.claim();
    try {
      // Its folder removed with it: the lock's making again fails with ENOENT (as with ENOSPC or EROFS), and no process holds it.
      rmSync(dir, { recursive: true });
      await Bun.sleep(LOCK_RENEW_MS + 1_000);
      // Before: "no longer this server's (deleted, or taken by another process…)", and /healthz said another process's lock.
      expect(lines).toEqual([
        expect.stringContaining("server.lock was deleted while this server runs and cannot be made again ("),
      ]);
      const health = access.health();
      expect(health).toEqual({
        ok: false,
        problems: [expect.stringContaining("the data folder's lock was deleted and cannot be made again since")],
      });
      expect(health.problems[0]).toContain("(ENOENT)");
      // The folder back: made again at the next renewal, and /healthz ok.
      mkdirSync(dir);
      await Bun.sleep(LOCK_RENEW_MS + 1_000);
      expect(lines[1]).toContain("server.lock was deleted while this server runs: made again");
      expect(access.health()).toEqual({ ok: true, problems: [] });
    } finally {
      await access.stop();
    }
  }, 15_000);
});

describe("a build's leftovers beside a lock held from another pid namespace", () => {
  /** A build of enwiki in another container writing into the same snapshots/ folder: its lock, its scratch folder and its snapshot being written. */
  function otherBuild(renewedAgoMs: number): { dir: string; leftovers: string[] } {
    const dir = dataDir();
    const lock = join(dir, ".enwiki.tome.lock");
    writeFileSync(lock, "4000000 1 00000000-0000-0000-0000-000000000000/4026531836\n");
    const renewed = (Date.now() - renewedAgoMs) / 1000;
    utimesSync(lock, renewed, renewed);
    mkdirSync(join(dir, ".tome-sorted-4000000-abc"));
    writeFileSync(join(dir, ".enwiki.tome.4000000.tmp"), "TOMESNAP");
    return { dir, leftovers: [".tome-sorted-4000000-abc", ".enwiki.tome.4000000.tmp"] };
  }

  test("are that build's work, left while its lock is renewed: another build's claimOutput beside it removes none", () => {
    const { dir, leftovers } = otherBuild(0);
    const lines: string[] = [];
    claimOutput(join(dir, "simplewiki.tome"), (line) => lines.push(line))();
    expect(leftovers.filter((name) => existsSync(join(dir, name)))).toEqual(leftovers);
    expect(lines).toEqual([]);
  });

  test("are removed once its lock is no longer renewed (that build gone)", () => {
    const { dir, leftovers } = otherBuild(LOCK_STALE_MS + 1_000);
    claimOutput(join(dir, "simplewiki.tome"), () => {})();
    expect(leftovers.filter((name) => existsSync(join(dir, name)))).toEqual([]);
  }, 15_000); // once no renewal came in RENEWAL_LOOK_MS (5 s, D175)
});

test("a build whose lock cannot be taken leaves no folder it made for its --out (D171)", () => {
  const dir = tempDir();
  // A name of 250 bytes is a file name; its lock's, `.<name>.lock`, is past the 255 a file name may hold.
  const out = join(dir, "a", "b", `${"x".repeat(245)}.tome`);
  expect(() => claimOutput(out, () => {})).toThrow("cannot write beside");
  expect(readdirSync(dir)).toEqual([]);
});

describe("a lock held from another container or machine, as its taker is told", () => {
  const elsewhere = "1 1 00000000-0000-0000-0000-000000000000/4026531836\n";
  /** The message of each taker that refuses a live holder, on a data or snapshots folder holding such a lock. */
  const REFUSALS: Record<string, (dir: string) => unknown> = {
    "a second server (server.lock)": (dir) => {
      writeFileSync(join(dir, "server.lock"), elsewhere);
      return lockDataFolder(dir);
    },
    "a build (.<name>.lock)": (dir) => {
      writeFileSync(join(dir, ".simplewiki.tome.lock"), elsewhere);
      return claimOutput(join(dir, "simplewiki.tome"), () => {});
    },
    "the key tool (keys.json.lock, after its 10 s wait)": (dir) => {
      writeFileSync(`${keysPath(dir)}.lock`, elsewhere);
      return updateKeyFile(dir, () => {});
    },
  };

  test.each(Object.keys(REFUSALS))(
    "%s: the holder is in another container or machine, its id there; its lock frees itself, never to be deleted",
    (name) => {
      const dir = dataDir();
      let message = "";
      try {
        REFUSALS[name]!(dir);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toContain("in another container or machine (process 1 there)");
      expect(message).toContain(`frees itself ${LOCK_STALE_MS / 1000} s after`);
      expect(message).not.toMatch(/If no .* running, delete/);
    },
    20_000,
  );
});
