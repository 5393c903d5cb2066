/**
 * keys.gen: the counter that tells running servers keys.json changed (D18). The key tool
 * bumps it in place after each write (4 bytes, one write); a server keeps it open and reads it
 * on every request (one pread: bench/http/keyed-pipeline.ts served as many keyed requests a second
 * with it as with a read at most once a millisecond). It is read, not mapped: a mapped file cut
 * short by a write in place (`cp` over it) would kill the server with SIGBUS (D56). It holds
 * nothing else: a damaged one can be deleted and is made anew.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { writeFailed } from "../files";
import { KeyStoreError } from "./errors";
import { printableName } from "../printable";

/** The file's whole size; the counter is its first 4 bytes (little-endian). */
const GENERATION_BYTES = 8;

export function generationPath(dataDir: string): string {
  return join(dataDir, "keys.gen");
}

/** Refuses a keys.gen that Tome did not write; a missing one is fine. */
export function checkGeneration(path: string): void {
  const s = statSync(path, { throwIfNoEntry: false });
  if (!s) return;
  const what = !s.isFile()
    ? "is not a file"
    : s.size !== GENERATION_BYTES
      ? `holds ${s.size} bytes where Tome writes ${GENERATION_BYTES}`
      : undefined;
  if (what) {
    throw new KeyStoreError(
      `${printableName(path)} is damaged: it ${what}. It only tells running servers that keys.json changed, so nothing is lost by ` +
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
  if (existsSync(path)) {
    checkGeneration(path);
    return;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // Made whole beside it, then linked into place (never over one made meanwhile): a full disk, which takes the
  // file and refuses its bytes, leaves no empty keys.gen for every later start to refuse as damaged.
  const tmp = join(dirname(path), `.keys.gen.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, new Uint8Array(GENERATION_BYTES), { mode: 0o600 });
    linkSync(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST" || !existsSync(path)) throw writeFailed(path, err);
    checkGeneration(path);
  } finally {
    try {
      rmSync(tmp, { force: true });
    } catch {}
  }
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
 * keys.gen held open (made if missing), for a server to read the counter on every request. A
 * file cut short reads as the counter last read; one replaced (renamed over, or deleted and
 * made anew) is opened again by follow(), which the server calls about once a second.
 */
export class GenerationCounter {
  private fd: number;
  private ino: number;
  private last = 0;
  private readonly bytes = new Uint8Array(4);
  private readonly view = new DataView(this.bytes.buffer);

  constructor(private readonly path: string) {
    ensureGeneration(path);
    this.fd = openSync(path, "r");
    this.ino = fstatSync(this.fd).ino;
  }

  read(): number {
    if (readSync(this.fd, this.bytes, 0, 4, 0) === 4) this.last = this.view.getUint32(0, true);
    return this.last;
  }

  /** Opens the file again if the name now holds another one. */
  follow(): void {
    const s = statSync(this.path, { throwIfNoEntry: false });
    if (!s || s.ino === this.ino || !s.isFile()) return;
    try {
      const fd = openSync(this.path, "r");
      closeSync(this.fd);
      this.fd = fd;
      this.ino = fstatSync(fd).ino;
    } catch {
      // Gone again or unreadable: the file open now keeps answering.
    }
  }
}
