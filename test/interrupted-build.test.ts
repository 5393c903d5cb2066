import { describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import type { Subprocess } from "bun";
import * as fs from "node:fs";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claimOutput } from "../src/cli/snapshot-build";
import {
  clearDeadWrites,
  clearLeftovers,
  clearStaleScratch,
  makeScratch,
  removeScratch,
  STOPPED_EXIT_CODE,
  takeLock,
} from "../src/files";
import { EN_2006, EN_2016, exportXml, snapshotFor, tempDir } from "./helpers";

setDefaultTimeout(120_000);

const scratchIn = (dir: string) => readdirSync(dir).filter((f) => f.startsWith("."));
/**
 * The parsing workers of the builds stopped once their scratch folders are made: one. The index's folder comes with
 * the first page parsed, after every worker has started (about a CPU-second each); the folders, the lock and the stop
 * are the main thread's, whatever their number.
 */
const WORKERS = ["--workers", "1"];

/** A build of a fixture dump into `dir`, in a process of its own: by default small runs, so that its scratch folders appear at once. */
function startBuild(dir: string, memory = "2M", ...more: string[]) {
  return Bun.spawn(
    [
      "bun",
      join(import.meta.dir, "../src/cli/snapshot-build.ts"),
      "--dump",
      EN_2016,
      "--out",
      join(dir, "en.tome"),
      "--memory",
      memory,
      ...WORKERS,
      ...more,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
}

/** Whether a spawned process has ended. */
const ended = (proc: Subprocess) => proc.exitCode !== null || proc.signalCode !== null;

/**
 * Waits until the build `proc` has made its scratch folders in `dir`, the ingest's and the index's (it is reading the
 * dump then); a build that ends first fails the wait. No fixed deadline: on a machine busy with other test files, a
 * build took more than the minute it had to start (the test's own timeout bounds the wait).
 */
async function untilScratch(dir: string, proc: Subprocess): Promise<void> {
  const made = (kind: string) => scratchIn(dir).some((f) => f.startsWith(`.tome-${kind}-`));
  while (!made("runs") || !made("sorted")) {
    if (ended(proc))
      throw new Error(`the build ended (${proc.exitCode ?? proc.signalCode}) before its scratch folders`);
    await Bun.sleep(10);
  }
}

describe("a build's scratch folders", () => {
  test("a build stopped by SIGTERM mid-work leaves no scratch folder and no snapshot", async () => {
    const dir = tempDir();
    const proc = startBuild(dir);
    await untilScratch(dir, proc);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(130);
    expect(readdirSync(dir)).toEqual([]);
    // Its log says so: it ended with the last progress line before, as if it still ran.
    expect(await new Response(proc.stdout).text()).toContain(
      `stopped before its end: ${join(dir, "en.tome")} was not written, and the temporary files were removed.`,
    );
  });

  /** A build of the dump `fifo` into `dir`, once it has begun writing its snapshot (its temporary file is there). */
  async function buildBegun(fifo: string, dir: string) {
    const proc = Bun.spawn(
      ["bun", join(import.meta.dir, "../src/cli/snapshot-build.ts"), "--dump", fifo, "--out", join(dir, "en.tome")],
      { stdout: "pipe", stderr: "pipe" },
    );
    while (!scratchIn(dir).some((f) => f.endsWith(".tmp"))) {
      if (ended(proc)) throw new Error(`the build ended (${proc.exitCode ?? proc.signalCode}) before its snapshot`);
      await Bun.sleep(10);
    }
    return proc;
  }

  test("a build stuck at no safe point (its dump a FIFO that brings one page's text a word at a time) stopped by a second SIGTERM leaves nothing: not its snapshot's temporary file", async () => {
    const dir = tempDir();
    const fifo = join(tempDir(), "dump.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const writer = fs.openSync(fifo, "r+");
    const xml = exportXml([{ title: "Albedo", text: "TEXT" }]);
    fs.writeSync(writer, xml.slice(0, xml.indexOf("TEXT")));
    // Bytes keep coming inside the page's text: no read waits long enough to be abandoned (D176), and no page ends.
    const dripping = setInterval(() => fs.writeSync(writer, "word "), 200);
    try {
      const proc = await buildBegun(fifo, dir);
      proc.kill("SIGTERM");
      // Again past the echo of the first (SIGNAL_ECHO_MS, counted from when the build took it): that one stops at once.
      // Sent again each 1.1 s until it ends: on a busy machine the first was taken late, and the second, sent 1.1 s
      // after it, came within its echo and was let go (the test hung).
      while ((await Promise.race([proc.exited, Bun.sleep(1100).then(() => "running")])) === "running")
        proc.kill("SIGTERM");
      expect(await proc.exited).toBe(130);
      // Left `.en.tome.<pid>.tmp` (removeAllScratch knew the scratch folders, not the snapshot being written).
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      clearInterval(dripping);
      fs.closeSync(writer);
    }
  });

  test("a build whose dump stalls (a FIFO held open, no byte written) stops on ONE SIGTERM, as timeout(1), systemd and Docker send, and leaves nothing", async () => {
    const dir = tempDir();
    const fifo = join(tempDir(), "dump.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    // Read and write: the open waits for no reader, and the build's read waits on a writer that never writes.
    const writer = fs.openSync(fifo, "r+");
    try {
      const proc = await buildBegun(fifo, dir);
      proc.kill("SIGTERM");
      // Only to see the hang (it waited for a second signal): an ended build ends this race at once.
      const hung = Bun.sleep(20_000).then(() => "still running 20 s after one SIGTERM");
      const ended = await Promise.race([proc.exited, hung]);
      if (typeof ended === "string") proc.kill("SIGKILL");
      expect(ended).toBe(STOPPED_EXIT_CODE);
      expect(readdirSync(dir)).toEqual([]);
      expect(await new Response(proc.stdout).text()).toContain(
        `stopped before its end: ${join(dir, "en.tome")} was not written, and the temporary files were removed.`,
      );
    } finally {
      fs.closeSync(writer);
    }
  });

  test("a build whose limit is reached before a stalled dump (a FIFO held open, no byte written), whose <siteinfo> is still read (D186), stops on ONE SIGTERM and leaves nothing", async () => {
    const dir = tempDir();
    const fifo = join(tempDir(), "dump.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const out = join(dir, "en.tome");
    const proc = Bun.spawn(
      [
        "bun",
        join(import.meta.dir, "../src/cli/snapshot-build.ts"),
        "--dump",
        EN_2016,
        "--dump",
        fifo,
        "--limit",
        "5",
        "--out",
        out,
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    // Opened for writing once the build opens it to read its head, after the limit: it then waits on a byte never written.
    const writer = await Promise.race([fs.promises.open(fifo, "w"), proc.exited.then(() => null)]);
    try {
      expect(writer).not.toBeNull();
      proc.kill("SIGTERM");
      // Only to see the hang: the head of the dump after the limit was read without the build's signal.
      const hung = Bun.sleep(20_000).then(() => "still running 20 s after one SIGTERM");
      const ended = await Promise.race([proc.exited, hung]);
      if (typeof ended === "string") proc.kill("SIGKILL");
      expect(ended).toBe(STOPPED_EXIT_CODE);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      await writer?.close();
    }
  });

  test("Ctrl-C on a terminal: the bar's line is ended and the cursor it hid shown again, then the stop is said", async () => {
    const dir = tempDir();
    const pidFile = join(dir, "pid");
    // script(1) gives the build a terminal; the shell it starts writes its id and becomes the build (exec).
    const build = `echo $$ > ${pidFile}; exec bun ${join(import.meta.dir, "../src/cli/snapshot-build.ts")} --dump ${EN_2016} --out ${join(dir, "en.tome")} --memory 2M ${WORKERS.join(" ")}`;
    const proc = Bun.spawn(["script", "-qfec", build, "/dev/null"], { stdout: "pipe", stderr: "pipe" });
    // Stopped once its bar shows (it hides the cursor) and its scratch folders are made.
    const reader = proc.stdout.getReader();
    let screen = "";
    while (!screen.includes("\x1b[?25l")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the build ended before its bar showed:\n${screen}`);
      screen += new TextDecoder().decode(value);
    }
    await untilScratch(dir, proc);
    process.kill(Number(readFileSync(pidFile, "utf8")), "SIGINT");
    for (let r = await reader.read(); !r.done; r = await reader.read()) screen += new TextDecoder().decode(r.value);
    expect(await proc.exited).toBe(130);
    const shownAgain = screen.lastIndexOf("\x1b[?25h");
    expect(shownAgain).toBeGreaterThan(screen.lastIndexOf("\x1b[?25l"));
    expect(screen.slice(shownAgain)).toMatch(/\n\s*stopped before its end: /);
    expect(readdirSync(dir)).toEqual(["pid"]);
  });

  test("a build killed outright leaves its folders; the next build removes them, says so, and succeeds", async () => {
    const dir = tempDir();
    const killed = startBuild(dir);
    await untilScratch(dir, killed);
    killed.kill("SIGKILL");
    await killed.exited;
    // Its lock on en.tome is left too, named by no process that runs: the next build takes it over (claimOutput).
    expect(scratchIn(dir)).toContain(".en.tome.lock");
    const left = scratchIn(dir).filter((f) => f !== ".en.tome.lock");
    expect(left).toContain(`.en.tome.${killed.pid}.tmp`);
    expect(left.filter((f) => f.startsWith(`.tome-runs-${killed.pid}-`))).toHaveLength(1);

    // Its first 5 articles: what it removes, says and writes is the same for any number.
    const next = startBuild(dir, "500M", "--limit", "5");
    const [out, code] = [await new Response(next.stdout).text(), await next.exited];
    expect(code).toBe(0);
    expect(out).toContain(
      `removed ${left.length} temporary file(s) in ${dir} left by a build or update that was killed`,
    );
    for (const f of left) expect(out).toContain(f);
    expect(readdirSync(dir)).toEqual(["en.tome"]);
  });

  test("only the leftovers of processes that are gone are cleared: a running one's, this process's and unnamed ones stay", async () => {
    const dir = tempDir();
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    const stale = join(dir, `.tome-runs-${gone.pid}-abcdef`);
    const running = join(dir, `.tome-pages-${process.ppid}-abcdef`);
    const unnamed = join(dir, ".tome-sorted-Xy12ab");
    for (const d of [stale, running, unnamed]) mkdirSync(d);
    const halfWritten = join(dir, `.en.tome.${gone.pid}.tmp`);
    const writing = join(dir, `.en.tome.${process.ppid}.tmp`);
    for (const f of [halfWritten, writing]) writeFileSync(f, "");
    const mine = makeScratch(dir, "sorted");
    expect(clearStaleScratch(dir).sort()).toEqual([`.en.tome.${gone.pid}.tmp`, `.tome-runs-${gone.pid}-abcdef`]);
    expect([stale, running, unnamed, halfWritten, writing, mine].map((d) => existsSync(d))).toEqual([
      false,
      true,
      true,
      false,
      true,
      true,
    ]);
    removeScratch(mine);
    expect(existsSync(mine)).toBe(false);
  });

  test("a dead write's part (.NAME.<pid>.tmp) is removed; one whose id a fresh lock of another pid space names is kept (D175)", async () => {
    const dir = tempDir();
    const gone = [Bun.spawn(["true"]), Bun.spawn(["true"])];
    await Promise.all(gone.map((p) => p.exited));
    const [dead, elsewhere] = gone.map((p) => `.chunks.jsonl.${p.pid}.tmp`) as [string, string];
    for (const name of [dead, elsewhere]) writeFileSync(join(dir, name), "part");
    // An export in another container writes there: its lock, renewed just now, names its id there (none here).
    writeFileSync(
      join(dir, ".chunks.jsonl.lock"),
      `${gone[1]!.pid} 1 00000000-0000-0000-0000-000000000000/4026531836\n`,
    );
    expect(clearDeadWrites(join(dir, "chunks.jsonl"))).toEqual([dead]);
    expect(readdirSync(dir).sort()).toEqual([elsewhere, ".chunks.jsonl.lock"].sort());
  });

  test("what cannot be removed (snapshots/ mounted read-only for a server) is left and said, the rest of the start going on (D196)", async () => {
    const dir = tempDir();
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    const left = [`.tome-runs-${gone.pid}-abcdef`, ".enwiki.tome.lock"];
    mkdirSync(join(dir, left[0]!));
    writeFileSync(join(dir, left[1]!), `${gone.pid} 12345\n`);
    // The tests run as root, whom no mode refuses: the folder's refusals are the calls', as a read-only mount gives them.
    const readOnly = (path: unknown) => {
      if (String(path).startsWith(dir))
        throw Object.assign(new Error(`EROFS: read-only file system, ${path}`), { code: "EROFS" });
    };
    const rm = spyOn(fs, "rmSync").mockImplementation(readOnly as typeof fs.rmSync);
    // A read-only mount refuses an open for writing, not one for reading (a lock is read through an fd, f33ffcb).
    const realOpen = fs.openSync;
    const writes = (flags: unknown) =>
      typeof flags === "number"
        ? (flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR)) !== 0
        : flags !== undefined && flags !== "r";
    const open = spyOn(fs, "openSync").mockImplementation(((path: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
      if (writes(flags)) readOnly(path);
      return realOpen(path, flags ?? "r", mode);
    }) as typeof fs.openSync);
    const lines: string[] = [];
    try {
      clearLeftovers(dir, (line) => lines.push(line));
    } finally {
      rm.mockRestore();
      open.mockRestore();
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(
      `could not remove 2 temporary file(s) in ${dir} left by a build or update that was killed (its process is gone): `,
    );
    for (const name of left) expect(lines[0]).toContain(`${name} (EROFS: read-only file system`);
    expect(readdirSync(dir).sort()).toEqual([".enwiki.tome.lock", left[0]!]);
  });

  test("the locks of builds and followers whose holder is gone go with their leftovers; a live holder's and other programs' stay (D196)", async () => {
    const dir = tempDir();
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    // Killed (kill -9) builds and a follower, as takeLock wrote their locks (id and start time); a build that runs (the
    // process that started these tests, process.ppid, alive while they run, its id alone: this process's own id would
    // be spared as the cleaner's own, not as a live holder's); another program's lock, and an empty lock being made (a taker's first instant).
    const locks: [string, string][] = [
      [".enwiki.tome.lock", `${gone.pid} 12345\n`],
      [".follow.lock", `${gone.pid} 12345\n`],
      [".simplewiki.tome.lock", `${process.ppid}\n`],
      [".other.lock", `${gone.pid}\n`],
      [".dewiki.tome.lock", ""],
    ];
    for (const [name, text] of locks) writeFileSync(join(dir, name), text);
    expect(clearStaleScratch(dir).sort()).toEqual([".enwiki.tome.lock", ".follow.lock"]);
    expect(readdirSync(dir).sort()).toEqual([".dewiki.tome.lock", ".other.lock", ".simplewiki.tome.lock"]);
  });
});

describe("a build or update stopped before its end", () => {
  /** What claimOutput logs for `out` when the process exits as stopped (its exit listener, called as the exit would). */
  function stoppedLine(out: string): string[] {
    const lines: string[] = [];
    const before = process.listeners("exit");
    const release = claimOutput(out, (l) => lines.push(l));
    try {
      const added = process.listeners("exit").filter((l) => !before.includes(l));
      expect(added).toHaveLength(1);
      for (const l of added) (l as (code: number) => void)(STOPPED_EXIT_CODE);
    } finally {
      release();
    }
    return lines;
  }

  test("says an --out already there (an update's own --base) is as it was, where it said it 'was not written'", () => {
    const dir = tempDir();
    const base = join(dir, "en.tome");
    writeFileSync(base, "the base");
    expect(stoppedLine(base)).toEqual([
      `stopped before its end: ${base} is as it was (nothing was written over it), and the temporary files were removed. Run it again to write it.`,
    ]);
    expect(readFileSync(base, "utf8")).toBe("the base");
    expect(stoppedLine(join(dir, "new.tome"))).toEqual([
      `stopped before its end: ${join(dir, "new.tome")} was not written, and the temporary files were removed. Run it again to write it.`,
    ]);
  });

  test("names an --out holding terminal escapes and a line break with them written \\u…, where they went to the terminal raw", () => {
    const dir = tempDir();
    expect(stoppedLine(join(dir, "a\x1b[31mred\nline.tome"))).toEqual([
      `stopped before its end: ${join(dir, "a\\u001b[31mred\\u000aline.tome")} was not written, and the temporary files were removed. Run it again to write it.`,
    ]);
  });
});

describe("a build's lock file", () => {
  test("a disk too full for the lock's text leaves no empty lock file beside the snapshot", () => {
    const dir = tempDir();
    const lock = join(dir, ".en.tome.lock");
    const full = spyOn(fs, "writeSync").mockImplementation(() => {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    });
    try {
      expect(() => takeLock(lock, { held: () => new Error("held"), unwritable: (err) => err })).toThrow("ENOSPC");
    } finally {
      full.mockRestore();
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("snapshot:follow stopped while it waits for its next look", () => {
  test("SIGINT (Ctrl-C) as SIGTERM: it exits 0 and lets its lock go (SIGINT killed it, the lock left behind)", async () => {
    const base = await snapshotFor({ dumps: [EN_2006] });
    const ends: Record<string, unknown> = {};
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const dir = tempDir();
      const mirror = tempDir();
      mkdirSync(join(mirror, "enwiki"));
      copyFileSync(base, join(dir, "enwiki.tome"));
      const proc = Bun.spawn(
        [
          "bun",
          join(import.meta.dir, "../src/cli/snapshot-follow.ts"),
          "--dir",
          dir,
          "--from",
          mirror,
          "--every",
          "24",
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      const reader = proc.stderr.getReader();
      let said = "";
      while (!said.includes("next look in 24 h")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`snapshot:follow ended before it waited:\n${said}`);
        said += new TextDecoder().decode(value);
      }
      proc.kill(signal);
      await proc.exited;
      ends[signal] = { code: proc.exitCode, killedBy: proc.signalCode, files: readdirSync(dir) };
    }
    const stopped = { code: 0, killedBy: null, files: ["enwiki.tome"] };
    expect(ends).toEqual({ SIGINT: stopped, SIGTERM: stopped });
  });
});
