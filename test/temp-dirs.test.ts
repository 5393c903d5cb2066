/** A test run leaves no temporary folder behind (test/preload.ts, bench/support.ts tempDir). */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { ROOT } from "./helpers";

test("the folders a test file makes with tempDir are gone once its process ends", () => {
  const run = Bun.spawnSync(["bun", "test", "./test/fixtures/temp-dir-probe.ts"], { cwd: ROOT, stderr: "pipe" });
  const output = run.stdout.toString() + run.stderr.toString();
  expect(run.exitCode).toBe(0);
  const made = output.match(/made (\S+)/)?.[1];
  expect(made).toStartWith("/");
  expect(existsSync(made!)).toBe(false);
});
