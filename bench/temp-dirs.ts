/**
 * Temporary folders for tests and benchmarks, removed when the process is done with them: a test run or a benchmark
 * leaves none behind (a whole test run left about 1.5 GB: clones, executables, snapshots). Its own module, so that
 * test/preload.ts, loaded before every test file, loads nothing else.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The folders tempDir made, to remove. */
const madeDirs: string[] = [];
let removedOnExit = false;

/** Removes the folders tempDir made; `bun test` does not emit the process's exit, so test/preload.ts calls this after a file's tests. */
export function removeMadeDirs(): void {
  for (const dir of madeDirs.splice(0))
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {}
}

/** A new folder in the system's temporary folder, removed when this process exits. */
export function tempDir(prefix = "tome-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (!removedOnExit) process.on("exit", removeMadeDirs);
  removedOnExit = true;
  madeDirs.push(dir);
  return dir;
}
