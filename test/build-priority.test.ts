/**
 * A build lowers its own priority (D189): beside a serving Tome (the README builds into snapshots/ while it serves),
 * the build's threads and the decompressor it starts run TOME_BUILD_NICE steps (default 10) below where it was started,
 * so the server's searches get the cores when both want them.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { join } from "node:path";
import { threadsOf } from "../bench/servers";
import { EN_2016, tempDir } from "./helpers";

/** The nice of a process (its main thread's): the 19th field of its stat, the 17th after its name. */
const niceOf = (pid: number) => Number(threadsOf(pid).find((t) => t.tid === pid)?.fields[16]);

/** The processes a process started (its main thread's), as pids. */
const childrenOf = (pid: number): number[] => {
  const file = `/proc/${pid}/task/${pid}/children`;
  return existsSync(file) ? readFileSync(file, "utf8").split(" ").filter(Boolean).map(Number) : [];
};

/** The nice of every thread of a build (TOME_BUILD_NICE as given) and of its decompressor, once its parsing workers run. */
async function niceOfBuild(nice: string | undefined) {
  const proc = Bun.spawn(
    [
      "bun",
      join(import.meta.dir, "../src/cli/snapshot-build.ts"),
      "--dump",
      EN_2016,
      "--out",
      join(tempDir(), "en.tome"),
      "--workers",
      "2",
    ],
    // "" is unset: the default.
    { env: { ...process.env, TOME_BUILD_NICE: nice ?? "" }, stdout: "ignore", stderr: "pipe" },
  );
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`the build ended first: ${await new Response(proc.stderr).text()}`);
      const threads = threadsOf(proc.pid);
      const children = childrenOf(proc.pid);
      // Both parsing workers started, and the decompressor (bzip2, or lbzip2 where installed: D111).
      if (threads.filter((t) => t.name === "Worker").length === 2 && children.length > 0)
        return {
          threads: [...new Set(threads.map((t) => Number(t.fields[16])))],
          decompressor: children.map(niceOf),
        };
      await Bun.sleep(10);
    }
  } finally {
    proc.kill();
    await proc.exited;
  }
}

test.if(process.platform === "linux")(
  "a build's threads, its parsing workers and its decompressor run TOME_BUILD_NICE steps (default 10) below where it was started (D189)",
  async () => {
    const own = getPriority();
    // Capped at 19: started at nice 13 or more, this test could not tell 6 steps from fewer.
    expect(own).toBeLessThanOrEqual(19 - 10);
    expect(await niceOfBuild("6")).toEqual({ threads: [own + 6], decompressor: [own + 6] });
    expect(await niceOfBuild(undefined)).toEqual({ threads: [own + 10], decompressor: [own + 10] });
    expect(await niceOfBuild("0")).toEqual({ threads: [own], decompressor: [own] });
  },
  120_000,
);
