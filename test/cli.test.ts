import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { gunzipSync, zstdDecompressSync } from "node:zlib";
import { runExport } from "../src/cli/export-run";
import { openDump } from "../src/ingest/source";
import { open } from "../src/search";
import { openContainer, openSnapshot } from "../src/snapshot";
import {
  EN_2006_TRUNCATED,
  EN_2016,
  FORMAT1_META,
  format1Bytes,
  format1Page,
  launch,
  NO_SEARCH_THREADS,
  ROOT,
  runToExit,
  type ServerProcess,
  snapshotFor,
  spawnServer,
  SQUAD,
  START,
  startServer,
  startTool,
  tempDir,
  writeFormat1,
} from "./helpers";

// Per file (bun applies it to the current file only): these tests build snapshots from the real dumps.
setDefaultTimeout(120_000);

/** `bun run` with args until it exits; env.CWD, if set, is the directory it runs in. */
function run(args: string[], env: Record<string, string> = {}) {
  const { CWD, ...rest } = env;
  return runToExit(["bun", "run", ...args], rest, CWD ?? ROOT);
}

const BUILD = join(ROOT, "src/cli/snapshot-build.ts");

describe("bun run snapshot:build", () => {
  test("--help explains every option", async () => {
    const { stdout, code } = await run([BUILD, "--help"]);
    expect(code).toBe(0);
    for (const opt of ["--dump", "--out", "--limit", "--chunk-words", "--allow-truncated"])
      expect(stdout).toContain(opt);
  });

  test("builds a snapshot and reports what it wrote, on stdout: with --limit 10, 10 articles read and 10 pages written", async () => {
    const out = join(tempDir(), "squad.tome");
    const { stdout, stderr, code } = await run([BUILD, "--dump", SQUAD, "--out", out, "--limit", "10"]);
    expect(code).toBe(0);
    expect(stdout).toContain(`${SQUAD}: schema 0.10, 10 articles, 0 redirects\n`);
    expect(stdout).toContain(`wrote ${out}: 10 pages`);
    expect(stderr).toBe("");
    expect(openSnapshot(out).pages.length).toBe(10);
    // The search indexes are in the same file: nothing is built at boot, nothing kept beside it.
    expect(open(out).search("Super Bowl").hits.length).toBeGreaterThan(0);
    expect(readdirSync(dirname(out))).toEqual(["squad.tome"]);
  });

  test("on a terminal, its report is not printed in red (as console.error prints)", () => {
    const out = join(tempDir(), "squad.tome");
    // script(1) gives the build a terminal for stdout and stderr.
    const r = Bun.spawnSync(["script", "-qec", `bun ${BUILD} --dump ${SQUAD} --out ${out} --limit 3`, "/dev/null"], {
      cwd: ROOT,
    });
    const shown = r.stdout.toString();
    expect(r.exitCode).toBe(0);
    expect(shown).toContain(`wrote ${out}: 3 pages`);
    expect(shown).toContain("3 articles");
    expect(shown).not.toContain("\x1b[31m");
  });

  /**
   * The build of the truncated dump refused, its --out two folders down in a folder of its own, and what that folder
   * held when it ended: the two tests below assert of the same run (its message and nothing written; no folder it made
   * left, D171), which reads the whole dump to find the damage at its end (seconds of CPU). Made once, by whichever
   * runs first.
   */
  let truncatedRun: Promise<{ out: string; code: number; stderr: string; left: string[] }> | undefined;
  const refusedTruncated = () =>
    (truncatedRun ??= (async () => {
      const dir = tempDir();
      const out = join(dir, "a", "b", "t.tome");
      const { code, stderr } = await run([BUILD, "--dump", EN_2006_TRUNCATED, "--out", out]);
      return { out, code, stderr, left: readdirSync(dir) };
    })());

  test("a truncated dump fails with the place of the damage and writes nothing", async () => {
    const { out, stderr, code, left } = await refusedTruncated();
    expect(code).toBe(1);
    expect(stderr).toContain("truncated or corrupt at line");
    expect(stderr).toContain("No snapshot was written");
    expect(stderr).not.toContain("    at "); // no stack trace
    expect(left).toEqual([]);
    // Kept with --allow-truncated: the pages before the damage. Of the same dump's first 256 KiB, cut mid-page (the
    // claim is what the build does at a damage, not how many pages come before it): building the whole dump's pages
    // was most of this test's time.
    const source = await openDump(EN_2006_TRUNCATED);
    const reader = source.xml.getReader();
    const parts: Uint8Array[] = [];
    for (let got = 0; got < 256 * 1024; ) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      got += value.byteLength;
    }
    await reader.cancel();
    const head = Buffer.concat(parts).subarray(0, 256 * 1024);
    expect(head.toString("latin1")).not.toContain("</mediawiki>");
    const cut = join(tempDir(), "enwik8-head-cut.xml");
    writeFileSync(cut, head);
    const ok = await run([BUILD, "--dump", cut, "--out", out, "--allow-truncated"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("TRUNCATED");
    expect(openSnapshot(out).meta.truncated).toBe(true);
  });

  test("bad arguments get a usage error, exit 2", async () => {
    for (const args of [
      [],
      ["--dump", SQUAD, "--limit", "ten"],
      ["--dump", SQUAD, "--chunk-words", "0"],
      ["--bogus"],
    ]) {
      const { stderr, code } = await run([BUILD, ...args]);
      expect(code).toBe(2);
      expect(stderr).toContain("--help");
    }
  });

  test("--workers above 64 is refused at once, in one line naming the limit (D113), by build, update and follow", async () => {
    // Paths that are not there, in an empty folder: without the limit each fails on them at once, not after starting
    // 1000 threads.
    const dir = tempDir();
    for (const [script, args] of [
      [BUILD, ["--dump", "none.xml"]],
      [join(ROOT, "src/cli/snapshot-update.ts"), ["--base", "none.tome", "--dump", "none.xml", "--out", "y.tome"]],
      [join(ROOT, "src/cli/snapshot-follow.ts"), ["--snapshot", "none.tome"]],
    ] as const) {
      const { stderr, code } = await run([script, ...args, "--workers", "1000"], { CWD: dir });
      expect(code).toBe(2);
      expect(stderr).toContain("--workers takes at most 64 parsing threads");
      expect(stderr).not.toContain("    at ");
      expect(stderr).not.toContain("reading");
    }
  });

  test("a folder given for a file is said at once, in one line: --out before the build, a snapshot to read", async () => {
    const folder = tempDir();
    for (const out of [folder, `${folder}/`]) {
      const built = await run([BUILD, "--dump", SQUAD, "--out", out]);
      expect(built.code).toBe(2);
      expect(built.stderr).toContain(
        `--out names a folder (${out}): name the snapshot file, e.g. --out ${join(out, "en.tome")}`,
      );
      expect(built.stderr).not.toContain("reading");
    }
    const verified = await run([join(ROOT, "src/cli/snapshot-verify.ts"), folder]);
    expect(verified.stderr).toContain(`${folder} is a folder, not a snapshot file`);
    expect(verified.stderr).not.toContain("    at ");
  });

  test("an --out found wrong only at the end is refused before the work: empty, '-', under a file, a file it reads (which it replaced), in snapshots/ under a name start does not serve", async () => {
    const dir = tempDir();
    const dump = join(dir, "squad.xml.bz2");
    copyFileSync(SQUAD, dump);
    const list = join(dir, "deleted.txt");
    writeFileSync(list, "5000001\n");
    writeFileSync(join(dir, "file"), "");
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const UPDATE = join(ROOT, "src/cli/snapshot-update.ts");
    const EXPORT = join(ROOT, "src/cli/snapshot-export.ts");
    const refusals: [string[], string][] = [
      [[BUILD, "--dump", dump, "--out", ""], "snapshot:build: --out is empty: name the file to write."],
      [
        [UPDATE, "--base", snapshot, "--deleted", list, "--out", "-", "CWD"],
        "snapshot:update: --out - would be a file named '-': a snapshot cannot go to standard output. Name its file.",
      ],
      [
        [BUILD, "--dump", dump, "--out", join(dir, "file/x.tome")],
        `snapshot:build: --out ${join(dir, "file/x.tome")} is under ${join(dir, "file")}, which is a file, not a folder: write it elsewhere.`,
      ],
      [
        [BUILD, "--dump", dump, "--out", dump],
        `snapshot:build: --out ${dump} names a file this command reads: writing it would replace it. Name another file.`,
      ],
      [
        [UPDATE, "--base", snapshot, "--deleted", list, "--out", "deleted.txt", "CWD"],
        `snapshot:update: --out deleted.txt names a file this command reads (${list}): writing it would replace it. Name another file.`,
      ],
      [
        [EXPORT, "--snapshot", snapshot, "--out", snapshot],
        `snapshot:export: --out ${snapshot} names a file this command reads: writing it would replace it. Name another file.`,
      ],
      // In the folder start serves, a name it does not serve (built, then never read: start built the sample).
      [
        [BUILD, "--dump", dump, "--out", "snapshots/en", "CWD"],
        `snapshot:build: --out snapshots/en is in snapshots/, where start serves only files named *.tome not starting with ".": this one would never be served. Name it e.g. --out snapshots/en.tome, or write it outside snapshots/.`,
      ],
      [
        [UPDATE, "--base", snapshot, "--deleted", list, "--out", "./snapshots/.en.tome", "CWD"],
        `snapshot:update: --out ./snapshots/.en.tome is in snapshots/, where start serves only files named *.tome not starting with ".": this one would never be served. Name it e.g. --out snapshots/en.tome, or write it outside snapshots/.`,
      ],
      [
        [join(ROOT, "src/cli/snapshot-convert.ts"), snapshot, "--out", join(dir, "snapshots/en.tome.new"), "CWD"],
        `snapshot:convert: --out ${join(dir, "snapshots/en.tome.new")} is in snapshots/, where start serves only files named *.tome not starting with ".": this one would never be served. Name it e.g. --out ${join(dir, "snapshots/en.tome")}, or write it outside snapshots/.`,
      ],
    ];
    for (const [args, message] of refusals) {
      const inDir = args.at(-1) === "CWD";
      const { code, stderr } = await run(inDir ? args.slice(0, -1) : args, inDir ? { CWD: dir } : {});
      expect([code, stderr.split("\n")[0]]).toEqual([2, message]);
    }
    expect(readFileSync(dump).equals(readFileSync(SQUAD))).toBe(true);
    expect(readFileSync(list, "utf8")).toBe("5000001\n");
    expect(openSnapshot(snapshot).meta.indexedPages).toBeGreaterThan(0);
    expect(readdirSync(dir).sort()).toEqual(["deleted.txt", "file", "squad.xml.bz2"]);
  });

  test("a file system that refuses a write is said in one line, with what to do (ENOSPC, EROFS, EACCES)", async () => {
    const script = join(tempDir(), "full.ts");
    writeFileSync(
      script,
      `import { mainOf } from ${JSON.stringify(join(ROOT, "src/cli/main.ts"))};
await mainOf("snapshot:build", () => { throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }); });`,
    );
    const { code, stderr } = await run([script]);
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      "snapshot:build: ENOSPC: no space left on device, write: the disk is full: free space there, or write elsewhere (--out). Nothing it would have replaced was changed.",
    );
  });

  test("a build refused for a damaged dump leaves no folder it made for --out (D171)", async () => {
    const { code, left } = await refusedTruncated();
    expect(code).toBe(1);
    expect(left).toEqual([]);
  });

  test("two builds never write one --out: the second is refused while the first runs; a lock whose process is gone is taken over", async () => {
    const dir = tempDir();
    const out = join(dir, "x.tome");
    // This test's process stands for a build writing x.tome.
    writeFileSync(join(dir, ".x.tome.lock"), `${process.pid}\n`);
    const refused = await run([BUILD, "--dump", SQUAD, "--out", out, "--limit", "3"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`another build or update (process ${process.pid}) is writing ${out}`);
    expect(existsSync(out)).toBe(false);
    // A process id no process has: the lock of a build that was killed.
    writeFileSync(join(dir, ".x.tome.lock"), "4194303 1\n");
    const built = await run([BUILD, "--dump", SQUAD, "--out", out, "--limit", "3"]);
    expect(built.code).toBe(0);
    expect(readdirSync(dir)).toEqual(["x.tome"]);
  });

  test("two builds of one wiki without --out never both write snapshots/<dbname>.tome: the second is refused at its start (D116)", async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, "snapshots"));
    // This test's process stands for a build of enwiki (SQUAD's <dbname>) writing snapshots/enwiki.tome.
    writeFileSync(join(cwd, "snapshots", ".enwiki.tome.lock"), `${process.pid}\n`);
    const refused = await run([BUILD, "--dump", SQUAD, "--limit", "3", "--workers", "1"], { CWD: cwd });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `snapshot:build: another build or update (process ${process.pid}) is writing snapshots/enwiki.tome: wait for it, or write this one elsewhere with --out. If none is running, delete snapshots/.enwiki.tome.lock.`,
    );
    expect(readdirSync(join(cwd, "snapshots"))).toEqual([".enwiki.tome.lock"]);
  });

  test("the default name is a file in snapshots/ whatever <dbname> the dump gives: '../escaped' does not write outside it", async () => {
    const cwd = tempDir();
    const dump = join(cwd, "escaping.xml");
    writeFileSync(
      dump,
      `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en"><siteinfo><dbname>../escaped</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base></siteinfo>
<page><title>Alpha</title><ns>0</ns><id>1</id><revision><id>10</id><timestamp>2024-01-01T00:00:00Z</timestamp><text>Alpha is a word.</text></revision></page></mediawiki>`,
    );
    const { code, stdout } = await run([BUILD, "--dump", dump, "--workers", "1"], { CWD: cwd });
    expect(code).toBe(0);
    expect(stdout).toContain("wrote snapshots/_escaped.tome");
    expect(readdirSync(cwd).sort()).toEqual(["escaping.xml", "snapshots"]);
    expect(readdirSync(join(cwd, "snapshots"))).toEqual(["_escaped.tome"]);
  });

  test("a missing dump says so, exit 1; a folder is not said missing", async () => {
    const { stderr, code } = await run([BUILD, "--dump", "/nonexistent.xml.bz2", "--out", join(tempDir(), "x.tome")]);
    expect(code).toBe(1);
    expect(stderr).toContain("dump not found: /nonexistent.xml.bz2");
    const folder = tempDir();
    const given = await run([BUILD, "--dump", folder, "--out", join(tempDir(), "x.tome")]);
    expect([given.code, given.stderr.trim()]).toEqual([
      1,
      `snapshot:build: ${folder} is a folder, not a dump: name the dump file in it.`,
    ]);
  });
});

describe("bun run start", () => {
  test("removes what a build killed outright left in snapshots/, its process gone, and says so; a running one's stays (D196)", async () => {
    const cwd = tempDir();
    const folder = join(cwd, "snapshots");
    mkdirSync(folder);
    copyFileSync(await snapshotFor({ dumps: [SQUAD], limit: 10 }), join(folder, "enwiki.tome"));
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    // A build of simplewiki killed with kill -9: its sorted runs, its snapshot half written, its lock.
    const left = [`.tome-sorted-${gone.pid}-abcdef`, `.simplewiki.tome.${gone.pid}.tmp`, ".simplewiki.tome.lock"];
    mkdirSync(join(folder, left[0]!));
    writeFileSync(join(folder, left[0]!, "run-0"), "claims");
    writeFileSync(join(folder, left[1]!), "TOMESNAP");
    writeFileSync(join(folder, left[2]!), `${gone.pid} 12345\n`);
    // A build still running beside it: this test's own process stands in (alive, and not the server's).
    const running = `.tome-pages-${process.pid}-abcdef`;
    mkdirSync(join(folder, running));
    const server = await startServer({ ...NO_SEARCH_THREADS, CWD: cwd, TOME_SNAPSHOT: "", TOME_AUTH: "off" });
    try {
      const said = server
        .stderr()
        .split("\n")
        .find((line) => line.startsWith("start: removed 3 temporary file(s)"));
      expect(said).toStartWith(
        "start: removed 3 temporary file(s) in snapshots left by a build or update that was killed (its process is gone): ",
      );
      for (const name of left) expect(said).toContain(name);
      expect(readdirSync(folder).sort()).toEqual([running, "enwiki.tome"]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("builds a snapshot from TOME_DUMP when there is none, then serves it", async () => {
    const cwd = tempDir();
    // It builds before it serves: spawnServer's 60 s was passed here at load 38 on 2 cores (the build done, "Loaded" the
    // next line). The test's own limit (120 s) less its checks.
    const server = await startServer({ ...NO_SEARCH_THREADS, CWD: cwd, TOME_DUMP: SQUAD, TOME_SNAPSHOT: "" }, 100_000);
    try {
      expect(server.stderr()).toContain(`No snapshot in snapshots/: building one from ${SQUAD}`);
      expect(existsSync(join(cwd, "snapshots", "enwiki.tome"))).toBe(true);
      expect(server.stderr()).toContain("Loaded snapshots/enwiki.tome: en.wikipedia.org, 48 pages");
      // Its first start also made the first key, and printed it.
      expect(server.key).toMatch(/^wk_/);
      const meta = (await (await fetch(`${server.url}/v1/meta`, { headers: { "X-API-Key": server.key! } })).json()) as {
        dataset: { indexed_pages: number };
      };
      expect(meta.dataset.indexed_pages).toBe(48);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("an unreachable default dump gives a clear message", async () => {
    const cwd = tempDir();
    const { stderr, code } = await run([join(ROOT, "src/cli/start.ts")], {
      CWD: cwd,
      TOME_DUMP: "http://127.0.0.1:9/x.xml.bz2",
      TOME_SNAPSHOT: "",
    });
    expect(code).toBe(1);
    expect(stderr).toContain("cannot reach http://127.0.0.1:9/x.xml.bz2");
  });
});

/** Starts start.ts and waits for it to exit, or to serve (then stops it): its exit code is null when it served. */
async function startOnce(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const run = launch(["bun", START], { TOME_DATA: tempDir("tome-data-"), ...env });
  const served = (await run.serving()) !== undefined || run.proc.exitCode === null;
  if (served) run.proc.kill("SIGTERM");
  const code = await run.exited();
  return { code: served ? null : code, stderr: run.stderr() };
}

describe("start: where it listens", () => {
  /**
   * A server started without HOST (every interface), started once for the two tests that need one: the port the
   * second server is refused, and the interfaces it listens on. Stopped, exit 0, after them.
   */
  let withoutHost: Promise<ServerProcess> | undefined;
  const serverWithoutHost = async () =>
    (withoutHost ??= snapshotFor({ dumps: [SQUAD], limit: 10 }).then((snapshot) =>
      startServer({ ...NO_SEARCH_THREADS, TOME_SNAPSHOT: snapshot, TOME_AUTH: "off" }),
    ));
  afterAll(async () => {
    if (withoutHost) expect(await (await withoutHost).stop()).toBe(0);
  });

  test("a second server on a busy port is refused, saying which port and what to do", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD], limit: 10 });
    const first = await serverWithoutHost();
    const port = new URL(first.url).port;
    // In this process (startTool): the port is held by the server's process all the same.
    const second = await startTool({ TOME_DATA: tempDir("tome-data-"), TOME_SNAPSHOT: snapshot, PORT: port });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`port ${port} is already in use`);
    expect(second.stderr).toContain("PORT=");
    expect(second.stderr).not.toContain("    at ");
    // The first one still has the port to itself.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  });

  test("a port another program holds is refused the same way, without a stack trace", async () => {
    const other = Bun.listen({ hostname: "0.0.0.0", port: 0, socket: { data() {} } });
    try {
      const { code, stderr } = await startOnce({
        TOME_SNAPSHOT: await snapshotFor({ dumps: [SQUAD], limit: 10 }),
        PORT: String(other.port),
      });
      expect(code).toBe(1);
      expect(stderr).toContain(`port ${other.port} is already in use`);
      expect(stderr).not.toContain("    at ");
    } finally {
      other.stop(true);
    }
  });

  test("HOST is the address it listens on, and the banner says so", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD], limit: 10 });
    const server = await startServer({
      ...NO_SEARCH_THREADS,
      TOME_SNAPSHOT: snapshot,
      HOST: "127.0.0.1",
      TOME_AUTH: "off",
    });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.stderr()).toContain("listening on 127.0.0.1 only");
      const port = new URL(server.url).port;
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      // Not on the IPv6 loopback: only where HOST says.
      expect(
        await fetch(`http://[::1]:${port}/healthz`).then(
          () => "answered",
          () => "refused",
        ),
      ).toBe("refused");
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const v6 = await startServer({ ...NO_SEARCH_THREADS, TOME_SNAPSHOT: snapshot, HOST: "::1", TOME_AUTH: "off" });
    try {
      expect(v6.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      expect((await fetch(`${v6.url}/healthz`)).status).toBe(200);
    } finally {
      expect(await v6.stop()).toBe(0);
    }
  });

  test("without HOST it listens on every interface, and says which URL to use", async () => {
    const server = await serverWithoutHost();
    expect(server.url).toMatch(/^http:\/\/localhost:\d+$/);
    expect(server.stderr()).toContain("listening on every interface");
    const port = new URL(server.url).port;
    for (const address of ["127.0.0.1", "[::1]"])
      expect((await fetch(`http://${address}:${port}/healthz`)).status).toBe(200);
  });

  test("a HOST that is not an address of this machine is refused, exit 2", async () => {
    for (const host of ["no such host", "192.0.2.1"]) {
      // In this process (startTool): HOST is read and refused before anything is opened or listened on.
      const { code, stderr } = await startTool({
        TOME_DATA: tempDir("tome-data-"),
        TOME_SNAPSHOT: await snapshotFor({ dumps: [SQUAD], limit: 10 }),
        HOST: host,
        PORT: "0",
      });
      expect(code).toBe(2);
      expect(stderr).toContain(`HOST "${host}"`);
      expect(stderr).not.toContain("    at ");
    }
  });
});

describe("start: keys and dumps", () => {
  test("arguments are refused: its settings are environment variables", async () => {
    const { stderr, code } = await run([START, "--port", "8081"], {
      CWD: tempDir(),
      TOME_DUMP: "/nonexistent/dump.xml.bz2",
      TOME_SNAPSHOT: "",
    });
    expect(code).toBe(2);
    expect(stderr).toContain("takes no arguments");
    expect(stderr).toContain("PORT=");
  });

  test("a missing TOME_DUMP names TOME_DUMP, not a --dump flag start does not have", async () => {
    const { code, stderr } = await startOnce({
      CWD: tempDir(),
      TOME_DUMP: "/nonexistent/dump.xml.bz2",
      TOME_SNAPSHOT: "",
    });
    expect(code).toBe(1);
    expect(stderr).toContain("TOME_DUMP");
    expect(stderr).toContain("/nonexistent/dump.xml.bz2");
    expect(stderr).not.toContain("--dump");
  });

  test("a start that fails makes no key; the start that serves makes it, and later starts say how to make another", async () => {
    const data = tempDir("tome-data-");
    const failed = await startOnce({ TOME_DATA: data, TOME_DUMP: "/nonexistent/dump.xml.bz2", TOME_SNAPSHOT: "" });
    expect(failed.code).toBe(1);
    expect(failed.stderr).not.toMatch(/wk_[A-Za-z0-9]{32}/);
    const snapshot = await snapshotFor({ dumps: [SQUAD], limit: 10 });
    const first = await startServer({ ...NO_SEARCH_THREADS, TOME_DATA: data, TOME_SNAPSHOT: snapshot });
    try {
      expect(first.key).toMatch(/^wk_/);
      expect((await fetch(`${first.url}/v1/meta`, { headers: { "X-API-Key": first.key! } })).status).toBe(200);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const again = await startServer({ ...NO_SEARCH_THREADS, TOME_DATA: data, TOME_SNAPSHOT: snapshot });
    try {
      expect(again.key).toBeUndefined();
      const hint = /bun run keys create --name \S+ --plan enterprise --scope full/.exec(again.stderr())?.[0];
      expect(hint).toBeDefined();
      // The command it names works, and its key is accepted by the running server.
      const made = Bun.spawnSync(["bash", "-c", hint!.replace(/--name \S+/, "--name ops")], {
        cwd: ROOT,
        env: { ...process.env, TOME_DATA: data },
      });
      expect(made.exitCode).toBe(0);
      const key = /wk_[A-Za-z0-9]{32}/.exec(made.stdout.toString())?.[0];
      expect((await fetch(`${again.url}/v1/meta`, { headers: { "X-API-Key": key! } })).status).toBe(200);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});

const RUN = join(ROOT, "src/cli/run.sh");
/** The Bun run.sh installs when there is none. */
const BUN_PACKAGE = /^BUN_PACKAGE=(\S+)$/m.exec(readFileSync(RUN, "utf8"))![1]!;

describe("npm start / npm test (src/cli/run.sh)", () => {
  test("--help says what it installs and what it runs", async () => {
    const help = Bun.spawnSync(["bash", RUN, "--help"]);
    expect(help.exitCode).toBe(0);
    for (const word of [
      "npm start",
      "npm test",
      "npm install -g bun",
      "bun install --frozen-lockfile",
      "poppler-utils",
    ])
      expect(help.stdout.toString()).toContain(word);
  });

  test("setup with an argument (setup --dry-run) is refused before it installs anything, exit 2: it ran every install", () => {
    // A copy of run.sh in an empty checkout: had it gone on, its bun install there would fail, touching nothing real.
    const clone = tempDir();
    mkdirSync(join(clone, "src/cli"), { recursive: true });
    copyFileSync(RUN, join(clone, "src/cli/run.sh"));
    const r = Bun.spawnSync(["bash", join(clone, "src/cli/run.sh"), "setup", "--dry-run"], { cwd: clone });
    expect({ code: r.exitCode, stderr: r.stderr.toString() }).toEqual({
      code: 2,
      stderr: "run.sh: setup takes no arguments, not: --dry-run. It installs what is missing (see --help).\n",
    });
    expect(readdirSync(clone)).toEqual(["src"]);
  });

  test("npm start and bun run start reach the server (its --help), which names itself as it was run (D86)", async () => {
    for (const [argv, usage] of [
      [["npm", "start", "--", "--help"], "\nUsage: npm start     (npm start also installs"],
      [["bun", "run", "start", "--help"], "Usage: bun run start     (npm start also installs"],
    ] as const) {
      const r = Bun.spawnSync([...argv], { cwd: ROOT });
      expect(r.exitCode).toBe(0);
      expect(r.stdout.toString()).toContain("HOST");
      expect(r.stdout.toString()).toContain(usage);
    }
  });

  test("on a machine without Bun, npm start -- --help installs it and prints the server's settings after the installer's usage", () => {
    // A PATH with only what run.sh needs besides Bun, and an npm whose global install of Bun links the real one.
    const bin = tempDir("tome-bin-");
    const prefix = tempDir("tome-prefix-");
    for (const tool of ["bash", "dirname", "cat", "sed", "id"]) symlinkSync(Bun.which(tool)!, join(bin, tool));
    // An npm with allow-scripts (npm 11): Bun's own install script is allowed by name, so npm does not warn of it.
    const installed = join(prefix, "npm-install-args");
    const npm = `#!/bin/sh\ncase "$1 $2" in\n  "config ls") echo 'allow-scripts = [""]' ;;\n  "prefix -g") echo "${prefix}" ;;\n  "install -g") echo "$@" > "${installed}" && /bin/mkdir -p "${prefix}/bin" && /bin/ln -s "${process.execPath}" "${prefix}/bin/bun" ;;\nesac\n`;
    writeFileSync(join(bin, "npm"), npm);
    chmodSync(join(bin, "npm"), 0o755);
    const r = Bun.spawnSync([join(bin, "bash"), RUN, "start", "--help"], {
      cwd: tempDir(),
      env: { PATH: bin, HOME: tempDir() },
    });
    const [stdout, stderr] = [r.stdout.toString(), r.stderr.toString()];
    expect({ code: r.exitCode, stderr }).toEqual({
      code: 0,
      stderr: expect.stringContaining("run.sh: Bun is not installed: npm install -g bun@"),
    });
    expect(existsSync(join(prefix, "bin", "bun"))).toBe(true);
    expect(readFileSync(installed, "utf8").trim()).toBe(`install -g --allow-scripts=bun ${BUN_PACKAGE}`);
    expect(stdout).toStartWith("Usage: npm start");
    for (const setting of [
      "TOME_SNAPSHOT",
      "TOME_DUMP",
      "HOST",
      "PORT",
      "TOME_DATA",
      "TOME_REDIS_URL",
      "TOME_KEY_MS_PER_SECOND",
    ])
      expect(stdout).toContain(`\n  ${setting}`);
  });

  test("npm start installs what the server needs only, and no install script is blocked; setup installs everything (D86)", async () => {
    // A clone, installed from Bun's cache (which the set-up that runs the tests has filled).
    const clone = join(tempDir("tome-clone-"), "tome");
    expect(Bun.spawnSync(["git", "clone", "--quiet", ROOT, clone]).exitCode).toBe(0);
    const r = Bun.spawnSync(["bash", join(clone, "src/cli/run.sh"), "start", "--help"], { cwd: clone });
    const stderr = r.stderr.toString();
    expect({ code: r.exitCode, stdout: r.stdout.toString() }).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("TOME_SNAPSHOT"),
    });
    expect(stderr).toContain("bun install --production --frozen-lockfile --filter tome");
    expect(stderr).not.toContain("Blocked");
    const installed = readdirSync(join(clone, "node_modules"));
    for (const serverNeeds of ["elysia", "msgpackr", "swagger-ui-dist", "@modelcontextprotocol"])
      expect({ serverNeeds, there: installed.includes(serverNeeds) }).toEqual({ serverNeeds, there: true });
    // Nor the examples' packages (LanceDB, LangChain), nor the tools (Biome, knip, the browser tests' driver).
    for (const notForServing of ["@lancedb", "@langchain", "onnxruntime-node", "@biomejs", "knip", "puppeteer-core"])
      expect({ notForServing, there: installed.includes(notForServing) }).toEqual({ notForServing, there: false });
    // Setup (CI, and npm test) adds everything else.
    const setup = Bun.spawnSync(["bash", join(clone, "src/cli/run.sh"), "setup"], { cwd: clone });
    expect({ code: setup.exitCode, stderr: setup.stderr.toString() }).toMatchObject({ code: 0 });
    const all = readdirSync(join(clone, "node_modules"));
    for (const name of ["@lancedb", "@langchain", "@biomejs", "typescript", "knip"])
      expect({ name, there: all.includes(name) }).toEqual({ name, there: true });
  });

  test("SIGTERM to npm start reaches the server, which stops gracefully", async () => {
    const server = await spawnServer(
      ["npm", "start"],
      { HOST: "127.0.0.1", TOME_AUTH: "off", TOME_SNAPSHOT: await snapshotFor({ dumps: [SQUAD], limit: 10 }) },
      { ignoreStdout: true },
    );
    const { url } = server;
    // stop() waits for npm only, not for the end of its output: a server npm left behind would keep the pipe open.
    await server.stop();
    for (const deadline = Date.now() + 5_000; !server.stderr().includes("Stopped:") && Date.now() < deadline; )
      await Bun.sleep(20);
    expect(server.stderr()).toContain("Stopped: 0 request(s) answered after SIGTERM.");
    expect(
      await fetch(`${url}/healthz`).then(
        () => "answered",
        () => "refused",
      ),
    ).toBe("refused");
  });

  test("with everything installed, it installs nothing and needs no network", async () => {
    // npm and apt-get that only record being called, and registries that cannot be reached.
    const bin = tempDir("tome-bin-");
    const calls = join(bin, "calls");
    writeFileSync(calls, "");
    for (const tool of ["npm", "apt-get"]) {
      writeFileSync(join(bin, tool), `#!/bin/sh\necho "${tool} $*" >> ${calls}\nexit 1\n`);
      chmodSync(join(bin, tool), 0o755);
    }
    const r = Bun.spawnSync(["bash", RUN, "setup"], {
      cwd: tempDir(),
      env: {
        ...process.env,
        PATH: `${bin}:${process.env.PATH}`,
        NPM_CONFIG_REGISTRY: "http://127.0.0.1:9/",
        BUN_CONFIG_REGISTRY: "http://127.0.0.1:9/",
      },
    });
    const stderr = r.stderr.toString();
    expect(r.exitCode).toBe(0);
    expect(stderr).toContain(`bun ${Bun.version}`);
    expect(stderr).toContain("already installed");
    expect(readFileSync(calls, "utf8")).toBe("");
  });
});

describe("bun run snapshot:verify and snapshot:convert", () => {
  const VERIFY = join(ROOT, "src/cli/snapshot-verify.ts");
  const CONVERT = join(ROOT, "src/cli/snapshot-convert.ts");

  // Files this user may not read: run as nobody, which root can do (CI runs as root).
  const asNobody = process.getuid?.() === 0 && Bun.which("setpriv") !== null;
  test.skipIf(!asNobody)(
    "a snapshot, or snapshot:follow's --from folder, this user may not read: said so with what to do, where it was '(EACCES).' or a write refused with --dir to change",
    async () => {
      const dir = tempDir();
      chmodSync(dir, 0o777);
      const secret = join(dir, "secret.tome");
      copyFileSync(await snapshotFor({ dumps: [SQUAD] }), secret);
      chmodSync(secret, 0o600);
      const readable = join(dir, "readable.tome");
      copyFileSync(secret, readable);
      chmodSync(readable, 0o644);
      const incr = join(dir, "incr");
      mkdirSync(join(incr, "enwiki"), { recursive: true });
      chmodSync(incr, 0o700);
      const nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bun"];
      const fix = "make it readable to this user, or run as a user who may read it.";
      for (const [args, said] of [
        [[VERIFY, secret], `snapshot:verify: ${secret} cannot be read by this user (EACCES): ${fix}`],
        [[CONVERT, secret], `snapshot:convert: ${secret} cannot be read by this user (EACCES): ${fix}`],
        [
          [join(ROOT, "src/cli/snapshot-follow.ts"), "--snapshot", readable, "--dir", dir, "--from", incr],
          `snapshot:follow: ${incr} cannot be read by this user (EACCES): ${fix}`,
        ],
      ] as const) {
        const r = await runToExit([...nobody, ...args], { HOME: dir }, dir);
        expect({ args, code: r.code, said: r.stderr.trim() }).toEqual({ args, code: 1, said });
      }
    },
  );

  test("verify passes a whole snapshot and names the damaged section of an altered one", async () => {
    expect((await run([VERIFY, "--help"])).stdout).toContain("Usage: bun run snapshot:verify");
    expect((await run([VERIFY])).code).toBe(2);
    const path = join(tempDir(), "v.tome");
    writeFileSync(path, readFileSync(await snapshotFor({ dumps: [SQUAD] })));
    const whole = await run([VERIFY, path]);
    expect([whole.code, whole.stderr]).toEqual([0, expect.stringContaining("whole")]);
    const section = openSnapshot(path).container.sections.find((s) => s.name === "index.text.postings.0")!;
    const bytes = readFileSync(path);
    bytes[section.offset + 3]! ^= 0x10;
    writeFileSync(path, bytes);
    const damaged = await run([VERIFY, path]);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toContain("index.text.postings.0 do not match their hash");
    expect(damaged.stderr).not.toContain("    at ");
  });

  test("verify names a damaged page table by its hash, where it refused the file as unreadable and told to run snapshot:verify", async () => {
    const path = join(tempDir(), "pages.tome");
    writeFileSync(path, readFileSync(await snapshotFor({ dumps: [SQUAD] })));
    const section = openContainer(path).sections.find((s) => s.name === "pages.chunkCount")!;
    const bytes = readFileSync(path);
    // The first page's count of chunks, made past the chunks there are: opening the snapshot refuses it (PageTable).
    bytes[section.offset + 3]! ^= 0x40;
    writeFileSync(path, bytes);
    const damaged = await run([VERIFY, path]);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toBe(
      `snapshot:verify: ${path} is damaged: section(s) pages.chunkCount do not match their hash. Rebuild it with \`bun run snapshot:build\`, or copy it again.\n`,
    );
  });

  test("convert turns a format-1 file into format 2 with the same pages, and serving a format-1 file says how", async () => {
    const source = openSnapshot(await snapshotFor({ dumps: [SQUAD] }));
    const pages = source.pages.list();
    const old = join(tempDir(), "old.tome");
    writeFormat1(old, source);
    expect(() => open(old)).toThrow(/format 1.*bun run snapshot:convert/);
    const converted = await run([CONVERT, old]);
    expect(converted.code).toBe(0);
    const back = openSnapshot(old);
    expect(back.meta.formatVersion).toBe(2);
    expect(back.pages.list().map((p) => [p.pageId, p.title, p.chunks.map((c) => c.text)])).toEqual(
      pages.map((p) => [p.pageId, p.title, p.chunks.map((c) => c.text)]),
    );
    expect(open(old).search("Super Bowl 50").hits[0]!.page.title).toBe("Super Bowl 50");
  });

  test("convert: a missing file, a folder, a format-2 snapshot are one line each, no stack trace; an --out folder is refused first", async () => {
    const dir = tempDir();
    const current = await snapshotFor({ dumps: [SQUAD] });
    const old = join(dir, "old.tome");
    writeFormat1(old, openSnapshot(current));
    for (const [args, code, said] of [
      [
        [join(dir, "none.tome")],
        1,
        `snapshot:convert: no file ${join(dir, "none.tome")}: name the format-1 snapshot to convert.`,
      ],
      [[dir], 1, `snapshot:convert: ${dir} is a folder, not a snapshot file: name a .tome file in it.`],
      [
        [current],
        1,
        `snapshot:convert: ${current} has snapshot format 2 already: there is nothing to convert; serve it as it is.`,
      ],
      [
        [old, "--out", dir],
        2,
        `snapshot:convert: --out names a folder (${dir}): name the snapshot file, e.g. --out ${join(dir, "en.tome")}.`,
      ],
    ] as const) {
      const r = await run([CONVERT, ...args]);
      expect({ args, code: r.code, said: r.stderr.split("\n")[0] }).toEqual({ args, code, said });
      expect(r.stderr).not.toContain("    at ");
    }
    expect(readdirSync(dir)).toEqual(["old.tome"]);
  });

  test("convert refuses a format-1 file whose checksum holds but whose pages are not pages, in one line, and writes nothing", async () => {
    const page = format1Page(1, "Alpha");
    const dir = tempDir();
    for (const [name, chunk, why] of [
      ["text", { section: 0, text: null }, "its page 1 has a chunk without text or section"],
      ["section", { section: 5, text: "Alpha is a word." }, "its page 1 has a chunk without text or section"],
    ] as const) {
      const old = join(dir, `${name}.tome`);
      writeFileSync(old, format1Bytes(FORMAT1_META, { pages: [{ ...page, chunks: [chunk] }], redirects: [] }));
      const out = join(dir, `${name}-2.tome`);
      const { code, stderr } = await run([CONVERT, old, "--out", out]);
      expect({ name, code, stderr: stderr.trim() }).toEqual({
        name,
        code: 1,
        stderr: `snapshot:convert: ${old} is corrupt: ${why}; rebuild it from its dump instead.`,
      });
      expect(existsSync(out)).toBe(false);
    }
  });
});

describe("bun run snapshot:export", () => {
  const EXPORT = join(ROOT, "src/cli/snapshot-export.ts");

  test("--out a link is written through, never renamed over (a device or pipe is not replaced by a file)", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const dir = tempDir();
    const target = join(dir, "target.jsonl");
    writeFileSync(target, "");
    const link = join(dir, "link.jsonl");
    symlinkSync(target, link);
    const { code } = await run([EXPORT, "--snapshot", snapshot, "--out", link]);
    expect(code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, "utf8").split("\n").filter(Boolean)).toHaveLength(
      openSnapshot(snapshot).meta.indexedChunks,
    );
    // A mistake in the command's arguments: exit 2, as snapshot:build's --out of a folder is, where export said 1.
    const folder = await run([EXPORT, "--snapshot", snapshot, "--out", dir]);
    expect([folder.code, folder.stderr.split("\n")[0]]).toEqual([
      2,
      `snapshot:export: --out names a folder (${dir}): name the file to write, e.g. ${join(dir, "chunks.jsonl.zst")}.`,
    ]);
  });

  /**
   * An export to `out` held mid-work: a shell makes a pipe where the export writes its part (.<name>.<pid>.tmp, the pid
   * the shell's, which exec keeps) and execs it; the pipe, read a little then no more, holds the export's writes until
   * the test stops it. Resolves once the export has written its first line there.
   */
  async function heldExport(snapshot: string, out: string) {
    const part = (pid: number) => join(dirname(out), `.${basename(out)}.${pid}.tmp`);
    const proc = Bun.spawn(
      ["bash", "-c", 'mkfifo "$0.$$.tmp" && exec "$@"', join(dirname(out), `.${basename(out)}`)].concat([
        "bun",
        EXPORT,
        "--snapshot",
        snapshot,
        "--out",
        out,
      ]),
      { stdout: "pipe", stderr: "pipe" },
    );
    const first = Buffer.alloc(64);
    let fd: number | undefined;
    for (const deadline = performance.now() + 30_000; ; await Bun.sleep(10)) {
      if (performance.now() > deadline) throw new Error(`the export wrote nothing to ${part(proc.pid)} in 30 s`);
      try {
        fd ??= openSync(part(proc.pid), constants.O_RDONLY | constants.O_NONBLOCK);
        if (readSync(fd, first) > 0) break;
      } catch (err) {
        if (!["EAGAIN", "ENOENT"].includes((err as NodeJS.ErrnoException).code!)) throw err;
      }
    }
    expect(first.toString()).toStartWith('{"id":');
    return { proc, part: part(proc.pid), release: () => closeSync(fd!) };
  }

  test("stopped mid-work (SIGTERM, Ctrl-C), it removes the part it wrote beside --out and says so, exit 130; an --out already there is said as it was", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const dir = tempDir();
      // Ctrl-C's round writes over an export already there: it is untouched, and said so, not "was not written".
      const before = signal === "SIGINT" ? "an earlier export\n" : undefined;
      if (before) writeFileSync(join(dir, "chunks.jsonl"), before);
      const { proc, release } = await heldExport(snapshot, join(dir, "chunks.jsonl"));
      proc.kill(signal);
      const code = await proc.exited;
      release();
      expect({ signal, code }).toEqual({ signal, code: 130 });
      expect(await new Response(proc.stderr).text()).toContain(
        `snapshot:export: stopped before its end: ${join(dir, "chunks.jsonl")} ${before ? "is as it was (nothing was written over it)" : "was not written"}.`,
      );
      expect(readdirSync(dir)).toEqual(before ? ["chunks.jsonl"] : []);
      if (before) expect(readFileSync(join(dir, "chunks.jsonl"), "utf8")).toBe(before);
    }
  });

  test("killed outright mid-work (kill -9), its part stays hidden beside --out, never in its place; the next export removes it, says so, and is whole", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const dir = tempDir();
    const out = join(dir, "chunks.jsonl");
    const { proc, part, release } = await heldExport(snapshot, out);
    proc.kill("SIGKILL");
    await proc.exited;
    release();
    // The part is the test's own pipe, there whatever the export did: what matters is that --out is not written, and the
    // export's lock is left by its killed holder (which the next export breaks, its process gone).
    expect(existsSync(out)).toBe(false);
    expect(readFileSync(join(dir, ".chunks.jsonl.lock"), "utf8")).toStartWith(`${proc.pid} `);
    // The part of a killed export (named .chunks.jsonl.partial, for every export) stayed until an export to the same
    // name wrote over it: of an export of English Wikipedia, tens of GB hidden beside --out.
    const again = await run([EXPORT, "--snapshot", snapshot, "--out", out]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(
      `snapshot:export: removed 1 part(s) of ${out} left by an export that was killed (its process is gone): ${basename(part)}.`,
    );
    expect(readdirSync(dir)).toEqual(["chunks.jsonl"]);
    expect(readFileSync(out, "utf8").split("\n").filter(Boolean)).toHaveLength(
      openSnapshot(snapshot).meta.indexedChunks,
    );
  });

  test("the part of an export running in another container on a shared folder (its lock fresh, of another pid space) is kept, and a second export to that name refused (D196)", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD], limit: 10 });
    const dir = tempDir();
    const out = join(dir, "chunks.jsonl");
    // Its id names no process here (a gone one's): clearDeadWrites removed its part, and that export failed at its rename.
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    const part = join(dir, `.chunks.jsonl.${gone.pid}.tmp`);
    writeFileSync(part, '{"id":');
    // As takeLock writes it in another container (another boot and pid namespace), renewed just now.
    const lock = join(dir, ".chunks.jsonl.lock");
    writeFileSync(lock, `${gone.pid} 1 00000000-0000-0000-0000-000000000000/4026531836\n`);
    const refused = await runExport({ snapshot, out, since: 0 }).then(
      () => "written",
      (e: Error) => e.message,
    );
    expect(refused).toBe(
      `another export in another container or machine (process ${gone.pid} there) is writing ${out}: wait for it, or write this one elsewhere with --out. Do not delete ${lock}: its lock frees itself 30 s after that process stops.`,
    );
    expect(readdirSync(dir).sort()).toEqual([basename(part), basename(lock)].sort());
  });

  test("the part an earlier Tome's export left (.NAME.partial, no process named) is left, and the export to that name says so and how to remove it (D196)", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD], limit: 10 });
    const dir = tempDir();
    const out = join(dir, "chunks.jsonl");
    // Exports before 080e1022 wrote .NAME.partial, one name for every export, and held no lock.
    const part = join(dir, ".chunks.jsonl.partial");
    // Under half a megabyte, said "(0 MB)".
    writeFileSync(part, Buffer.alloc(300_000));
    const done = await run([EXPORT, "--snapshot", snapshot, "--out", out]);
    expect(done.code).toBe(0);
    expect(done.stderr).toContain(
      `snapshot:export: left ${part} (300.0 kB), the part of an export by a Tome from before 2 December 2026, whose parts named no process: whether that export still runs (here or in another container) cannot be told. Once none runs, delete it: rm ${part}`,
    );
    expect(readdirSync(dir).sort()).toEqual([".chunks.jsonl.partial", "chunks.jsonl"]);
  });

  test("an --out that is a snapshot, or named as one (.tome), is refused, the snapshot untouched; through a link too", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const dir = tempDir();
    // snapshot:export --out snapshots/enwiki-2016-sample.tome wrote JSON Lines over the snapshot start serves.
    const served = join(dir, "en.tome");
    copyFileSync(snapshot, served);
    const bytes = readFileSync(served);
    const link = join(dir, "link.jsonl");
    symlinkSync(served, link);
    const refusal = (out: string) =>
      runExport({ snapshot, out, since: 0 }).then(
        () => "written",
        (e: Error) => e.message,
      );
    expect(await refusal(served)).toBe(
      `--out ${served} is a snapshot: writing the export would replace it. Name another file.`,
    );
    expect(await refusal(link)).toBe(
      `--out ${link} is a snapshot: writing the export would replace it. Name another file.`,
    );
    expect(readFileSync(served).equals(bytes)).toBe(true);
    expect(await refusal(join(dir, "new.tome"))).toStartWith(
      `--out ${join(dir, "new.tome")} ends in .tome, a snapshot's name`,
    );
    expect(readdirSync(dir).sort()).toEqual(["en.tome", "link.jsonl"]);
  });

  test("a disk full under the export (/dev/full refuses every write) is said naming the file, with its code", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const err = await runExport({ snapshot, out: "/dev/full", since: 0 }).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.message).toStartWith("could not write /dev/full: ENOSPC");
    expect(err?.code).toBe("ENOSPC");
  });

  test("a file system refusal no fix is known for (/proc takes no new file) is its message on one line, no stack trace (D184)", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const { code, stderr } = await run([
      join(ROOT, "src/cli/snapshot-export.ts"),
      "--snapshot",
      snapshot,
      "--out",
      "/proc/version",
    ]);
    expect(code).toBe(1);
    expect(stderr.trim()).toMatch(
      /^snapshot:export: could not write \/proc\/version: ENOENT: no such file or directory, open '\/proc\/\.version\.lock'$/,
    );
  });

  test("a name ending in .gz or .zst is compressed however its ending is spelt (.GZ, .Zst)", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const dir = tempDir();
    const write = async (name: string) => {
      await runExport({ snapshot, out: join(dir, name), since: 0 });
      return readFileSync(join(dir, name));
    };
    const plain = (await write("chunks.jsonl")).toString();
    expect(plain.split("\n").filter(Boolean)).toHaveLength(openSnapshot(snapshot).meta.indexedChunks);
    for (const name of ["chunks.JSONL.ZST", "chunks.jsonl.Zst"])
      expect(Buffer.from(zstdDecompressSync(await write(name))).toString()).toBe(plain);
    for (const name of ["chunks.JSONL.GZ", "chunks.jsonl.Gz"])
      expect(Buffer.from(gunzipSync(await write(name))).toString()).toBe(plain);
  });

  test("a name ending in another compressor's ending (.bz2, .xz) is refused, nothing written: it would hold plain JSON Lines", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const dir = tempDir();
    for (const name of ["chunks.jsonl.bz2", "chunks.jsonl.XZ"]) {
      const out = join(dir, name);
      const { code, stderr } = await run([EXPORT, "--snapshot", snapshot, "--out", out]);
      expect({ name, code }).toEqual({ name, code: 2 });
      expect(stderr).toContain(`--out ${out}: snapshot:export compresses to .gz or .zst only`);
      expect(stderr).not.toContain("    at ");
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  /** A copy of the SQuAD snapshot with one bit flipped 300 bytes into `section`. */
  const squadWithFlippedByte = async (section: string): Promise<string> => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const damaged = join(tempDir(), "damaged.tome");
    const bytes = readFileSync(snapshot);
    const { offset } = openContainer(snapshot).sections.find((s) => s.name === section)!;
    bytes[offset + 300] = bytes[offset + 300]! ^ 0x01;
    writeFileSync(damaged, bytes);
    return damaged;
  };

  test("a snapshot whose damage decodes into other text (one flipped byte in a text block) writes no export (D66)", async () => {
    // A byte of the block's literal text: zstd's decoder decodes it (it changes one character of a chunk's text).
    const damaged = await squadWithFlippedByte("text.blocks.0");
    const out = join(dirname(damaged), "out.jsonl");
    const { code, stderr } = await run([EXPORT, "--snapshot", damaged, "--out", out]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `snapshot:export: ${damaged}: section(s) text.blocks.0 do not match their hash, so its text may be altered. Nothing was written`,
    );
    expect(existsSync(out)).toBe(false);
  });

  test("an export refused for damage lets its snapshot go: nothing of it stays mapped (D66)", async () => {
    const damaged = await squadWithFlippedByte("text.blocks.0");
    const out = join(dirname(damaged), "out.jsonl");
    await expect(runExport({ snapshot: damaged, out, since: 0 })).rejects.toThrow(
      `${damaged}: section(s) text.blocks.0 do not match their hash, so its text may be altered. Nothing was written`,
    );
    // It stayed mapped (its page table and text store) until collected.
    expect(readFileSync("/proc/self/maps", "utf8").includes(damaged)).toBe(false);
    expect(existsSync(out)).toBe(false);
  });

  test("damage in a section the export does not read (the search index) does not refuse its export (D66)", async () => {
    const damaged = await squadWithFlippedByte("index.text.postings.0");
    const out = join(dirname(damaged), "out.jsonl");
    const exported = join(dirname(damaged), "whole.jsonl");
    expect((await run([EXPORT, "--snapshot", damaged, "--out", out])).code).toBe(0);
    expect((await run([EXPORT, "--snapshot", await snapshotFor({ dumps: [SQUAD] }), "--out", exported])).code).toBe(0);
    expect(readFileSync(out).equals(readFileSync(exported))).toBe(true);
  });

  test.if(process.platform === "linux")(
    "a copy over the snapshot mid-export waits while the export lets go, and the export stops saying why, where it was killed reading the file cut short (SIGBUS)",
    async () => {
      const dir = tempDir();
      const snapshot = join(dir, "served.tome");
      copyFileSync(await snapshotFor({ dumps: [EN_2016] }), snapshot);
      // Written to a pipe read a little, then no more until the copy is done: the export is held mid-work (its writes
      // wait for the reader), about 7 MB of lines still to come.
      const fifo = join(dir, "chunks.jsonl");
      Bun.spawnSync(["mkfifo", fifo]);
      const proc = Bun.spawn(["bun", EXPORT, "--snapshot", snapshot, "--out", fifo], {
        stdout: "pipe",
        stderr: "pipe",
      });
      const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      let stderr: string;
      const chunks: Buffer[] = [];
      try {
        /** What the pipe holds now: undefined while the export writes nothing, empty when no writer is there. */
        const readSome = () => {
          const bytes = Buffer.alloc(1 << 16);
          try {
            return bytes.subarray(0, readSync(fd, bytes));
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
            return undefined;
          }
        };
        for (const deadline = performance.now() + 60_000; !chunks.length; await Bun.sleep(10)) {
          if (performance.now() > deadline) throw new Error("the export wrote nothing in a minute");
          const read = readSome();
          if (read?.length) chunks.push(read);
        }
        expect(await Bun.spawn(["cp", SQUAD, snapshot]).exited).toBe(0);
        for (const deadline = performance.now() + 60_000; ; ) {
          if (performance.now() > deadline)
            throw new Error("the export neither wrote nor exited in a minute after the copy");
          const read = readSome();
          if (read?.length) chunks.push(read);
          else if (read && (proc.exitCode !== null || proc.signalCode)) break;
          else await Bun.sleep(5);
        }
        stderr = await new Response(proc.stderr).text();
        await proc.exited;
      } finally {
        // A failure above (a deadline passed) leaves no export running, nor the pipe open.
        if (proc.exitCode === null && !proc.signalCode) proc.kill("SIGKILL");
        closeSync(fd);
      }
      expect({ code: proc.exitCode, signal: proc.signalCode ?? null, said: stderr.split("\n")[0] }).toEqual({
        code: 1,
        signal: null,
        said: `snapshot:export: ${snapshot} was opened for writing by another process (a copy over it?) while it was read: it was let go, as reading a file cut short would crash the process (D84). Run it again once the file is whole; replace a snapshot by renaming a new file onto it. The export stops there.`,
      });
      // What it wrote before is whole lines of the snapshot, none read from the zeros it let go to.
      const lines = Buffer.concat(chunks).toString("utf8").split("\n");
      expect(lines.pop()).toBe("");
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect((JSON.parse(line) as { title: string }).title).not.toBe("");
    },
  );

  test("a damaged text block is one line saying what to do, to a file or to standard output", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const damaged = join(tempDir(), "damaged.tome");
    const bytes = readFileSync(snapshot);
    const block = openContainer(snapshot).sections.find((s) => s.name === "text.blocks.0")!;
    // A run of bytes in the middle of the first text block: zstd's decoder finds it (one flipped byte may decode).
    bytes.fill(0xff, block.offset + Math.floor(block.length / 2), block.offset + Math.floor(block.length / 2) + 256);
    writeFileSync(damaged, bytes);
    for (const out of [join(dirname(damaged), "out.jsonl"), "-"]) {
      const { code, stderr } = await run([EXPORT, "--snapshot", damaged, "--out", out]);
      expect({ out, code }).toEqual({ out, code: 1 });
      // Found by the hash check before a line is written (D66), not by the decoder at its block.
      expect(stderr).toContain(`snapshot:export: ${damaged}: section(s) text.blocks.0 do not match their hash`);
      expect(stderr).toContain(`check it with bun run snapshot:verify ${damaged}`);
      expect(stderr).not.toContain("    at ");
    }
    expect(existsSync(join(dirname(damaged), "out.jsonl"))).toBe(false);
  });
});
