/**
 * The snapshots the test files share (test/helpers.ts, buildOnce): built by one process while the others wait, and a
 * lock left by a killed build taken over, not waited on.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildOnce, ROOT, tempDir } from "./helpers";

setDefaultTimeout(60_000);

/** Until `path` exists. */
async function until(path: string): Promise<void> {
  while (!existsSync(path)) await Bun.sleep(20);
}

describe("buildOnce", () => {
  test("while another process builds the file, this one waits for it and builds nothing", async () => {
    const dir = tempDir();
    const shared = join(dir, "shared.tome");
    const [started, go] = [join(dir, "started"), join(dir, "go")];
    // The other test process: it holds the lock, building, until told to finish.
    const other = Bun.spawn(
      [
        "bun",
        "-e",
        `const { buildOnce } = await import(${JSON.stringify(join(ROOT, "test/helpers.ts"))});
        const { existsSync, writeFileSync } = await import("node:fs");
        await buildOnce(${JSON.stringify(shared)}, async (scratch) => {
          writeFileSync(${JSON.stringify(started)}, "");
          while (!existsSync(${JSON.stringify(go)})) await Bun.sleep(20);
          writeFileSync(scratch, "the other's");
        });`,
      ],
      { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
    );
    await until(started);
    let built = false;
    const mine = buildOnce(shared, (scratch) => {
      built = true;
      writeFileSync(scratch, "mine");
    });
    writeFileSync(go, "");
    await mine;
    expect(await other.exited).toBe(0);
    expect([built, readFileSync(shared, "utf8")]).toEqual([false, "the other's"]);
    expect(readdirSync(dir).sort()).toEqual(["go", "shared.tome", "started"]);
  });

  test("a lock and scratch file left by a build that was killed are taken over: the file is built", async () => {
    const dir = tempDir();
    const shared = join(dir, "shared.tome");
    const killed = Bun.spawn(["sleep", "60"]);
    // What a test process killed mid-build leaves: its lock (its process id, src/files.ts lockText) and scratch file.
    writeFileSync(`${shared}.lock`, `${killed.pid}\n`);
    writeFileSync(`${shared}.${killed.pid}.tmp`, "half");
    killed.kill();
    await killed.exited;
    await buildOnce(shared, (scratch) => writeFileSync(scratch, "whole"));
    expect(readFileSync(shared, "utf8")).toBe("whole");
    expect(readdirSync(dir)).toEqual(["shared.tome"]);
  });
});
