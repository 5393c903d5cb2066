/** Files that must never be left half-written. */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export interface AtomicWriteOptions {
  /** Permission bits of the file (default 0o644). */
  mode?: number;
  /**
   * Flush to disk before and after the rename (default true). Without it the write still
   * survives a killed process (the kernel has it), though not a power cut.
   */
  durable?: boolean;
}

/**
 * Writes to a temporary file beside the target, then renames it into place: a crash at any
 * moment leaves either the old file or the new one, never a broken one.
 */
export function atomicWrite(path: string, bytes: Uint8Array | string, options: AtomicWriteOptions = {}): void {
  const { mode = 0o644, durable = true } = options;
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.tmp`);
  try {
    let fd: number;
    try {
      fd = openSync(tmp, "w", mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      mkdirSync(dir, { recursive: true });
      fd = openSync(tmp, "w", mode);
    }
    try {
      let off = 0;
      while (off < data.byteLength) off += writeSync(fd, data, off);
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  if (!durable) return;
  try {
    const dfd = openSync(dir, "r");
    fsyncSync(dfd);
    closeSync(dfd);
  } catch {
    // Some filesystems cannot fsync a directory; the rename itself is still atomic.
  }
}

/**
 * The URL to start a worker from: its module beside the caller's, or, inside the executable
 * `bun run compile` writes (src/cli/compile.ts), the worker's entry point at its path under
 * src/: there every bundled module shares the executable's import.meta.url, so a URL relative
 * to it would name no file.
 */
export function workerUrl(beside: URL, underSrc: string): string {
  return beside.href.startsWith("file:///$bunfs/") ? `/$bunfs/root/${underSrc}` : beside.href;
}
