/**
 * keys.gen: the counter that tells running servers keys.json changed (D18). The key tool
 * bumps it in place after each write; a server keeps it mapped in memory and reads it on
 * every request, for the price of a memory read. It holds nothing else: a damaged one can be
 * deleted and is made anew.
 */
import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync, writeFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { KeyStoreError } from "./errors";

/** The file's whole size; the counter is its first 4 bytes (little-endian). */
const GENERATION_BYTES = 8;

export function generationPath(dataDir: string): string {
  return join(dataDir, "keys.gen");
}

/** Refuses a keys.gen that Tome did not write (mapping one would crash the server); a missing one is fine. */
export function checkGeneration(path: string): void {
  const s = statSync(path, { throwIfNoEntry: false });
  if (!s) return;
  const what = !s.isFile() ? "is not a file" : s.size !== GENERATION_BYTES ? `holds ${s.size} bytes where Tome writes ${GENERATION_BYTES}` : undefined;
  if (what) {
    throw new KeyStoreError(
      `${path} is damaged: it ${what}. It only tells running servers that keys.json changed, so nothing is lost by ` +
        `deleting it: delete it and start again (it is made anew; keys.json is untouched).`,
    );
  }
}

/** The counter's value: 0 if keys.gen is missing (no key tool ever wrote the store). */
export function readGeneration(path: string): number {
  if (!existsSync(path)) return 0;
  checkGeneration(path);
  const fd = openSync(path, "r");
  try {
    const bytes = new Uint8Array(4);
    readSync(fd, bytes, 0, 4, 0);
    return new DataView(bytes.buffer).getUint32(0, true);
  } finally {
    closeSync(fd);
  }
}

/** Creates keys.gen (and its data directory) if it is missing (a zero counter); refuses a damaged one. */
function ensureGeneration(path: string): void {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, new Uint8Array(GENERATION_BYTES), { mode: 0o600, flag: "wx" });
  } else checkGeneration(path);
}

/** Tells running servers that keys.json changed: the counter in keys.gen, written in place. */
export function bumpGeneration(path: string): void {
  const next = (readGeneration(path) + 1) >>> 0;
  ensureGeneration(path);
  const fd = openSync(path, "r+");
  try {
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setUint32(0, next, true);
    writeSync(fd, bytes, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * keys.gen mapped in memory (made if missing), for a server to read the counter on every
 * request: `view.getUint32(0, true)`.
 */
export function mapGeneration(path: string): DataView {
  ensureGeneration(path);
  const mapped = Bun.mmap(path, { shared: true });
  return new DataView(mapped.buffer, mapped.byteOffset, GENERATION_BYTES);
}
