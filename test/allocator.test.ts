/** The server, the MCP server, the export and the builds run with the allocator's settings (D209): restarted in place with them, unless told otherwise. */
import { expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { ALLOCATOR_SETTINGS, wantsAllocatorSettings } from "../src/cli/allocator";
import { EN_2006, ROOT, snapshotFor, startServer } from "./helpers";

setDefaultTimeout(60_000);

const linux = process.platform === "linux";

/** The environment of this test's process without any of the settings (as a person's shell would have it). */
function withoutSettings(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("MIMALLOC_")) env[name] = value;
  }
  return { ...env, ...extra };
}

/** A command run with mimalloc saying its options as it starts (MIMALLOC_VERBOSE): each start's values of `option`. */
function optionAtEachStart(args: string[], env: Record<string, string>, option: string) {
  const run = Bun.spawnSync(["bun", ...args], { cwd: ROOT, env: { ...env, MIMALLOC_VERBOSE: "1" } });
  const said = [...run.stderr.toString().matchAll(new RegExp(`option '${option}': (-?\\d+)`, "g"))].map((m) => m[1]);
  return { said, stdout: run.stdout.toString(), stderr: run.stderr.toString(), exitCode: run.exitCode };
}

test("the settings are wanted unless the environment names one of them", () => {
  expect(wantsAllocatorSettings({})).toBe(true);
  expect(wantsAllocatorSettings({ MIMALLOC_PURGE_HOLES: "1" })).toBe(false);
  expect(wantsAllocatorSettings({ MIMALLOC_PURGE_DELAY: "100" })).toBe(false);
  // An empty value is a value the person set.
  expect(wantsAllocatorSettings({ MIMALLOC_PURGE_DELAY: "" })).toBe(false);
  // As mimalloc reads them: without case, and purge_delay by its old name too.
  expect(wantsAllocatorSettings({ mimalloc_purge_holes: "1" })).toBe(false);
  expect(wantsAllocatorSettings({ MIMALLOC_RESET_DELAY: "100" })).toBe(false);
  expect(wantsAllocatorSettings({ MIMALLOC_VERBOSE: "1", PATH: "/usr/bin" })).toBe(true);
});

test.if(linux)(
  "an export starts again with the allocator's settings, which its allocator then holds, and runs once",
  () => {
    const { said, stdout, exitCode } = optionAtEachStart(
      [join(ROOT, "src/cli/snapshot-export.ts"), "--help"],
      withoutSettings(),
      "purge_holes",
    );
    expect(exitCode).toBe(0);
    // The first start with the allocator's default, the second with the setting: the command ran in the second only.
    expect(said).toEqual(["1", ALLOCATOR_SETTINGS.MIMALLOC_PURGE_HOLES]);
    expect(stdout.match(/^Usage:/gm)).toHaveLength(1);
    const delay = optionAtEachStart(
      [join(ROOT, "src/cli/snapshot-export.ts"), "--help"],
      withoutSettings(),
      "purge_delay",
    );
    expect(delay.said.at(-1)).toBe(ALLOCATOR_SETTINGS.MIMALLOC_PURGE_DELAY);
  },
);

test.if(linux)("a setting the person gives is kept, and the command is not started again", () => {
  const { said } = optionAtEachStart(
    [join(ROOT, "src/cli/snapshot-export.ts"), "--help"],
    withoutSettings({ MIMALLOC_PURGE_HOLES: "1" }),
    "purge_delay",
  );
  expect(said).toEqual(["100"]);
});

test.if(linux)("the arguments survive the restart byte for byte, spaces and non-ASCII in a path", () => {
  const missing = "/nonexistent/snapshots/Zürich snapshot — 1.tome";
  const { said, stderr, exitCode } = optionAtEachStart(
    [join(ROOT, "src/cli/snapshot-export.ts"), "--snapshot", missing, "--out", "/nonexistent/out.jsonl"],
    withoutSettings(),
    "purge_holes",
  );
  expect(said).toHaveLength(2);
  expect(exitCode).not.toBe(0);
  expect(stderr).toContain(missing);
  expect(stderr).not.toMatch(/\n\s+at /);
});

test.if(linux)("the server restarts in place: the process started is the one serving, with the settings", async () => {
  const server = await startServer({
    ...withoutSettings(),
    TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2006] }),
    TOME_SEARCH_WORKERS: "0",
  });
  try {
    const environ = (await Bun.file(`/proc/${server.pid}/environ`).text()).split("\0");
    for (const [name, value] of Object.entries(ALLOCATOR_SETTINGS)) expect(environ).toContain(`${name}=${value}`);
    // Named as it was started (ps -C bun, pgrep -x bun), not after the file a link to Bun leads to (bun.exe from npm).
    expect((await Bun.file(`/proc/${server.pid}/comm`).text()).trim()).toBe("bun");
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  } finally {
    await server.stop();
  }
});

test.if(linux)("the builds are restarted with the settings too: build, update and follow (D209)", () => {
  for (const script of ["snapshot-build.ts", "snapshot-update.ts", "snapshot-follow.ts"]) {
    const { said, stdout } = optionAtEachStart(
      [join(ROOT, "src/cli", script), "--help"],
      withoutSettings(),
      "purge_holes",
    );
    expect(said).toEqual(["1", ALLOCATOR_SETTINGS.MIMALLOC_PURGE_HOLES]);
    expect(stdout.match(/^Usage:/gm)).toHaveLength(1);
  }
});

test.if(linux)("the executable's commands are restarted as the scripts are: the long ones, not the short", () => {
  const tome = join(ROOT, "src/cli/tome.ts");
  for (const command of ["snapshot:export", "snapshot:build", "snapshot:update", "snapshot:follow"]) {
    expect(optionAtEachStart([tome, command, "--help"], withoutSettings(), "purge_holes").said).toEqual([
      "1",
      ALLOCATOR_SETTINGS.MIMALLOC_PURGE_HOLES,
    ]);
  }
  expect(optionAtEachStart([tome, "snapshot:verify", "--help"], withoutSettings(), "purge_holes").said).toEqual(["1"]);
});

test.if(linux)(
  "what a client wrote to mcp's stdin before its restart is read after it: the message is answered",
  async () => {
    const proc = Bun.spawn(["bun", join(ROOT, "src/cli/mcp.ts")], {
      cwd: ROOT,
      env: { ...withoutSettings({ TOME_SNAPSHOT: await snapshotFor({ dumps: [EN_2006] }) }), MIMALLOC_VERBOSE: "1" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      // Written at once, while the first start is still loading: it waits in the pipe the restart keeps.
      proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" })}\n`);
      await proc.stdin.flush();
      const reader = proc.stdout.getReader();
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      expect(JSON.parse(out.split("\n")[0]!)).toEqual({ jsonrpc: "2.0", id: 7, result: {} });
    } finally {
      proc.kill();
    }
    const starts = (await new Response(proc.stderr).text()).match(/option 'purge_holes': \d/g);
    expect(starts).toEqual([
      "option 'purge_holes': 1",
      `option 'purge_holes': ${ALLOCATOR_SETTINGS.MIMALLOC_PURGE_HOLES}`,
    ]);
  },
);
