/**
 * Snapshot format 2: one file of named binary sections, written as a stream and mapped
 * read-only at boot (mapping.ts), so that serving a snapshot costs its pages in the page cache rather than
 * a heap of decoded objects.
 *
 * Layout (little-endian):
 *   "TOMESNAP" | u32 format 2 | u32 reserved | u64 table offset | u64 table length
 *   | sha256(table), 32 bytes | sections, each 8-byte aligned | table
 * The table (msgpackr) holds the metadata and, per section, its offset, length and sha256.
 *
 * Integrity: opening checks the header, the file's length and the table's hash (cheap:
 * truncation and a damaged table are refused at once). Sections are hashed by verify():
 * `bun run snapshot:verify`, and the server in the background after boot (one that does not
 * match gives way to the next snapshot, D85). Hashing 20 GB at every boot would cost minutes.
 */
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { Packr, Unpackr } from "msgpackr";
import { beginsAsSnapshot, SNAPSHOT_MAGIC, SnapshotError, SnapshotReplaced } from "./format";
import { sameBytes, sha256 } from "./hash";
import { dropFromPageCache, FileMapping, type LeaseRefused } from "./mapping";
import { commandLine } from "../invocation";
import { cannotRead, forgetScratch, trackScratchFile, writeFailed, writeFully } from "../files";
import { printableName, shellWord } from "../printable";

export const FORMAT_VERSION = 2;
const HEADER_BYTES = 64;
/** JavaScriptCore's largest ArrayBuffer is 4 GiB: sections stay below it. */
export const MAX_SECTION_BYTES = 2 ** 32 - 4096;

const packr = new Packr({ useRecords: false, moreTypes: false });
const unpackr = new Unpackr({ useRecords: false, moreTypes: false });

export interface SectionEntry {
  name: string;
  offset: number;
  length: number;
  sha256: string;
}

interface Table {
  meta: unknown;
  sections: SectionEntry[];
}

const rebuild = `Rebuild it with \`${commandLine("snapshot:build --dump <dump>")}\`.`;

/**
 * A snapshot whose header and table are whole (openContainer checked them) but whose sections do not hold together:
 * a SnapshotError saying how to find out whether the file is damaged. Its sections are hashed only by snapshot:verify,
 * a server's background check and the engine's verify() (D38, D119), not at open.
 */
export function damagedSections(path: string, what: string, cause?: unknown): SnapshotError {
  return Object.assign(
    new SnapshotError(
      `${printableName(path)} cannot be read (${what}): is it damaged? \`${commandLine(`snapshot:verify ${shellWord(path)}`)}\` checks every section against its hash; rebuild it with \`${commandLine("snapshot:build --dump <dump>")}\` if one does not match.`,
    ),
    cause === undefined ? {} : { cause },
  );
}

/** Writes a container as a stream of sections into a temporary file, renamed into place by finish(). */
export class ContainerWriter {
  private readonly fd: number;
  private readonly tmp: string;
  private at = HEADER_BYTES;
  private readonly sections: SectionEntry[] = [];
  private open: { name: string; offset: number; hasher: Bun.CryptoHasher } | undefined;
  private done = false;

  constructor(readonly path: string) {
    this.tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
    try {
      this.fd = openSync(this.tmp, "w", 0o644);
    } catch (err) {
      throw new SnapshotError(
        `cannot write the snapshot to ${printableName(path)}: ${printableName((err as Error).message)}`,
      );
    }
    trackScratchFile(this.tmp);
    writeFully(this.fd, new Uint8Array(HEADER_BYTES), this.path, 0);
  }

  /** Starts a section; write() its bytes, then end() it. */
  begin(name: string): void {
    if (this.open) throw new Error(`section ${this.open.name} is still open`);
    if (this.sections.some((s) => s.name === name)) throw new Error(`section ${name} written twice`);
    const pad = (8 - (this.at % 8)) % 8;
    if (pad) {
      writeFully(this.fd, new Uint8Array(pad), this.path, this.at);
      this.at += pad;
    }
    this.open = { name, offset: this.at, hasher: new Bun.CryptoHasher("sha256") };
  }

  write(bytes: Uint8Array | ArrayBufferView): void {
    const open = this.open!;
    const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.at - open.offset + view.byteLength > MAX_SECTION_BYTES) {
      throw new SnapshotError(`section ${open.name} would pass 4 GiB; split it (a bug in the snapshot builder).`);
    }
    open.hasher.update(view);
    writeFully(this.fd, view, this.path, this.at);
    this.at += view.byteLength;
  }

  end(): void {
    const open = this.open!;
    this.sections.push({
      name: open.name,
      offset: open.offset,
      length: this.at - open.offset,
      sha256: open.hasher.digest("hex"),
    });
    this.open = undefined;
  }

  /** A whole section at once. */
  section(name: string, bytes: Uint8Array | ArrayBufferView): void {
    this.begin(name);
    this.write(bytes);
    this.end();
  }

  /** The sections written so far. */
  get written(): readonly SectionEntry[] {
    return this.sections;
  }

  /**
   * Writes the table and the header, so that the file opens as it is, at the temporary path
   * returned; sections may still follow (over the table: finish() writes it again after them).
   */
  seal(meta: unknown): string {
    this.writeTable(meta);
    return this.tmp;
  }

  /** Writes the table and the header, flushes, and renames the file into place. Returns its size. */
  finish(meta: unknown): number {
    const size = this.writeTable(meta);
    try {
      // A file system may take the bytes and refuse them only at the flush (NFS, a quota).
      fsyncSync(this.fd);
      // Read in again by its first reader, by readahead: a first search faults about a tenth as often (D206).
      dropFromPageCache(this.fd);
      closeSync(this.fd);
      renameSync(this.tmp, this.path);
    } catch (err) {
      throw writeFailed(this.path, err);
    }
    forgetScratch(this.tmp);
    this.done = true;
    try {
      const dfd = openSync(dirname(this.path), "r");
      fsyncSync(dfd);
      closeSync(dfd);
    } catch {
      // Some filesystems cannot fsync a directory; the rename itself is atomic.
    }
    return size;
  }

  /** The table at the end of the sections, and the header pointing at it; the file cut after it. Returns the file's size. */
  private writeTable(meta: unknown): number {
    const table = packr.pack({ meta, sections: this.sections } satisfies Table);
    const tableOffset = this.at;
    writeFully(this.fd, table, this.path, tableOffset);
    try {
      ftruncateSync(this.fd, tableOffset + table.byteLength);
    } catch (err) {
      throw writeFailed(this.path, err);
    }
    const header = new Uint8Array(HEADER_BYTES);
    const view = new DataView(header.buffer);
    header.set(new TextEncoder().encode(SNAPSHOT_MAGIC), 0);
    view.setUint32(8, FORMAT_VERSION, true);
    view.setBigUint64(16, BigInt(tableOffset), true);
    view.setBigUint64(24, BigInt(table.byteLength), true);
    header.set(sha256(table), 32);
    writeFully(this.fd, header, this.path, 0);
    return tableOffset + table.byteLength;
  }

  /** Removes the temporary file (after a failure or an interruption). */
  abandon(): void {
    if (this.done) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    rmSync(this.tmp, { force: true });
    forgetScratch(this.tmp);
    this.done = true;
  }
}

/** Bytes read through between two dropResident() of a reader going through a file once. */
const READ_ONCE_BYTES = 64 << 20;

/** Hashing time between two turns of the event loop while verifying. */
const VERIFY_TURN_MS = 10;

/** An opened container: its metadata, and its sections mapped on demand. */
export class Container {
  private readonly mapped = new Map<string, Uint8Array>();
  /** The file, opened read-only for its mappings (undefined: not yet; null: mapped by Bun.mmap, where libc's mmap is not at hand). */
  private file: FileMapping | null | undefined;
  /** Set when the file is being written over in place: nothing more may be read from its mapping (D56). */
  private stopped: string | undefined;
  /** Set once every section has been read through the mapping and kept there (verify(), populate()): D207. */
  private wholeMapped = false;
  /** The sections by name (entryOf), made at the first lookup. */
  private entries: Map<string, SectionEntry> | undefined;
  constructor(
    readonly path: string,
    readonly meta: unknown,
    readonly sections: SectionEntry[],
    readonly bytes: number,
    /**
     * The file whose header was read, as no other file is: device, inode, size, modification and change times, and
     * its table's checksum. A write to it, or a file renamed over it, gives another (openSnapshot's `checked`).
     */
    readonly identity: string,
    /** The device and inode of that file (in `identity` too): every later open of the path must find them (fileOpened). */
    private readonly opened: { readonly dev: number; readonly ino: number },
  ) {}

  has(name: string): boolean {
    return this.entryOf(name) !== undefined;
  }

  /** A section's bytes, mapped read-only from the file (not copied). */
  section(name: string): Uint8Array {
    let bytes = this.mapped.get(name);
    if (!bytes) {
      const entry = this.entryOf(name);
      if (!entry) throw new SnapshotError(`${printableName(this.path)} has no section "${name}". ${rebuild}`);
      if (this.stopped) throw new SnapshotError(this.stopped);
      if (this.file === undefined) {
        const file = this.openAgain(() => FileMapping.open(this.path));
        if (file && !this.fileOpened(file.stat())) {
          file.letGo();
          throw this.replaced();
        }
        this.file = file ?? null;
      }
      if (!entry.length) bytes = new Uint8Array(0);
      else if (this.file) bytes = this.file.map(entry.offset, entry.length);
      else {
        // Mapped by path, each section on its own: the file mapped must still be the one whose header was read. Looked
        // at before, so that another file already there is refused with nothing of it mapped (a mapping of Bun.mmap's
        // is released only by a collection); and after, for one renamed onto the path in between.
        const stillSameFile = () => this.checkSameFile(this.openAgain(() => statSync(this.path)));
        stillSameFile();
        bytes = Bun.mmap(this.path, { offset: entry.offset, size: entry.length, shared: true } as Parameters<
          typeof Bun.mmap
        >[1]);
        stillSameFile();
      }
      this.mapped.set(name, bytes);
    }
    return bytes;
  }

  /**
   * Maps every section and takes a read lease on the file (D84): when another process opens it
   * to write it (`cp` over it), reading stops, `onWriter` is called with the time it has to make
   * sure nothing reads the sections any more, and then they read zeros (no file behind them) and
   * the writer goes on. Returns why no lease could be taken (the file is then mapped unguarded), or undefined.
   */
  lease(onWriter: (graceMs: number) => Promise<void> | void): LeaseRefused | undefined {
    this.mapAll();
    if (!this.file) return { reason: "leases are taken on Linux only", writing: false };
    return this.file.lease((graceMs) => {
      this.stopReading(`${printableName(this.path)} is being written over in place: it is let go`);
      return onWriter(graceMs);
    });
  }

  /**
   * lease() for a reader of the file through once (snapshot:export, a check of its hashes): a writer's open waits while
   * the reader lets go, and its next read (checkReadable, verify's next slice) throws a SnapshotError saying why, where
   * reading the file cut short killed the process (SIGBUS). A file open for writing now (being copied) is refused;
   * where no lease can be taken it is read unguarded, as before (D84). `atRead`: the lease is answered at read too
   * (leaseAnsweredAtRead), for a reader whose reads run for long without a turn of the event loop (an update's base).
   */
  leaseForReading(atRead = false): void {
    const path = printableName(this.path);
    const onWriter = () =>
      this.stopReading(
        `${path} was opened for writing by another process (a copy over it?) while it was read: it was let go, as reading a file cut short would crash the process (D84). Run it again once the file is whole; replace a snapshot by renaming a new file onto it.`,
      );
    const refused = atRead ? this.leaseAnsweredAtRead(onWriter) : this.lease(onWriter);
    if (refused?.writing) throw openForWriting(path, "run it again");
  }

  /**
   * Whether `found` (a stat of the file opened again) is the file whose header and table openContainer read. Every later
   * open of the path for this container (the mapping's, read()'s, Bun.mmap's) must find the same file: one renamed onto
   * the path in between (a new snapshot put in place, a build's rename) is another, whose sections do not lie where this
   * table says (D84).
   */
  private fileOpened(found: { dev: number; ino: number }): boolean {
    return found.dev === this.opened.dev && found.ino === this.opened.ino;
  }

  /** Throws replaced() unless `opened` (a stat of the file this container opened again) is the file it opened first. */
  private checkSameFile(opened: { dev: number; ino: number }): void {
    if (!this.fileOpened(opened)) throw this.replaced();
  }

  /** The path names another file than the one opened first: nothing is read from a mix of two files. */
  private replaced(): SnapshotReplaced {
    return new SnapshotReplaced(
      `${printableName(this.path)} was replaced by another file (one renamed onto it?) while it was being opened: nothing was read from it. Try again.`,
    );
  }

  /** `open()`, an open of the path again: the file gone since the header's read (removed) is said so, not as ENOENT. */
  private openAgain<T>(open: () => T): T {
    try {
      return open();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      throw new SnapshotReplaced(
        `${printableName(this.path)} was removed while it was being opened: nothing was read from it.`,
      );
    }
  }

  /** A section's bytes read from the file (a copy, nothing mapped): for a look at a file not served. */
  read(name: string): Uint8Array {
    const entry = this.entryOf(name);
    if (!entry) throw new SnapshotError(`${printableName(this.path)} has no section "${name}". ${rebuild}`);
    const bytes = new Uint8Array(entry.length);
    const fd = this.openAgain(() => openSync(this.path, "r"));
    try {
      this.checkSameFile(fstatSync(fd));
      if (readSync(fd, bytes, 0, entry.length, entry.offset) !== entry.length)
        throw new SnapshotError(`${printableName(this.path)} is truncated: section ${name} is cut short. ${rebuild}`);
    } finally {
      closeSync(fd);
    }
    return bytes;
  }

  /**
   * `into.byteLength` bytes of section `name` from `at`, read from the file by pread(2) into `into`, not through the
   * mapping (D207): undefined where the section is not mapped by this container's own file descriptor (Bun.mmap's
   * mappings), once the file is let go, where the bytes lie outside the section, or once every page is in this
   * process's page tables (wholeMapped: a read through the mapping then costs no fault, and less than pread); the
   * caller then reads the mapping. A file cut short since it was opened, or one the kernel cannot read, is a
   * SnapshotError (FileMapping.readAt).
   */
  readFromFile(name: string, at: number, into: Uint8Array): Uint8Array | undefined {
    if (!this.file || this.stopped || this.wholeMapped) return undefined;
    const entry = this.entryOf(name);
    if (!entry || at < 0 || at + into.byteLength > entry.length) return undefined;
    return this.file.readAt(entry.offset + at, into);
  }

  /** A section's entry in the table, by name. */
  private entryOf(name: string): SectionEntry | undefined {
    if (!this.entries) {
      // The first of a name, as a search of the table finds it.
      this.entries = new Map();
      for (const s of this.sections) if (!this.entries.has(s.name)) this.entries.set(s.name, s);
    }
    return this.entries.get(name);
  }

  /**
   * Maps every section now, not when first read: a file renamed over this path later (a newer
   * snapshot under the same name) can then never be read through this container.
   */
  mapAll(): void {
    for (const entry of this.sections) this.section(entry.name);
  }

  /** The pages read so far leave the resident set (FileMapping.dropResident); the sections read the same after. */
  dropResident(): void {
    this.wholeMapped = false;
    this.file?.dropResident();
  }

  /**
   * Maps every section's pages into this process's page tables (FileMapping.populate), a slice at a time, turning the
   * event loop every VERIFY_TURN_MS as verify() does: searches then take no page fault on their first reads of the
   * file (Engine.populate, D204). Resolves to whether every page was populated: false where the kernel cannot (the
   * pages are then mapped at their first read), Bun.mmap maps (not Linux), or the file was let go.
   */
  async populate(): Promise<boolean> {
    this.mapAll();
    if (!this.file) return false;
    const slice = 16 << 20;
    let resumed = performance.now();
    for (const entry of this.sections) {
      const bytes = this.section(entry.name);
      for (let at = 0; at < bytes.byteLength; at += slice) {
        if (this.stopped || !this.file.populate(bytes.subarray(at, at + slice))) return false;
        if (performance.now() - resumed >= VERIFY_TURN_MS) {
          await new Promise((r) => setImmediate(r));
          resumed = performance.now();
        }
      }
    }
    if (!this.stopped) this.wholeMapped = true;
    return !this.stopped;
  }

  /** Nothing will read this container again: its file is let go now (every section reads zeros from now on); `why` is what a later read throws. */
  letGo(why = `${printableName(this.path)} is let go`): void {
    this.stopReading(why);
    this.file?.letGo();
  }

  /** Whether it is still read: false once its file is let go (a copy over it broke its lease, D84), as checkReadable throws then. */
  get readable(): boolean {
    return !this.stopped;
  }

  /** Throws why once the file is let go: what is read from a section after that is zeros, not the snapshot. */
  checkReadable(): void {
    this.answerWriter();
    if (this.stopped) throw new SnapshotError(this.stopped);
  }

  /** Lets a writer waiting on a lease answered at read (leaseAnsweredAtRead) in now; nothing for any other. */
  answerWriter(): void {
    if (this.answersAtRead && !this.stopped) this.file?.answerWaitingWriter();
  }

  /** Set by leaseAnsweredAtRead: every checkReadable asks whether a writer waits on the lease. */
  private answersAtRead = false;

  /**
   * lease() for an owner reading from synchronous calls (a library engine, D151): its every read (checkReadable) also
   * asks whether a writer waits, and lets go at once, where the lease signal waited for a turn of the event loop that
   * a loop of searches never gave, and the kernel, past the lease-break time, let the writer cut the file under it.
   * `onWriter` must stop the reading before it returns.
   */
  leaseAnsweredAtRead(onWriter: () => void): LeaseRefused | undefined {
    const refused = this.lease(onWriter);
    this.answersAtRead = refused === undefined;
    return refused;
  }

  /** Stops a verify() under way, at its next turn: the file is being written over in place, and reading its mapping could kill the process (D56). */
  stopReading(why: string): void {
    this.stopped = why;
  }

  /**
   * Checks every section's hash; resolves to the names of the damaged ones (none: the file is whole).
   * `readOnce`: the pages hashed leave the resident set as it goes (dropResident, every 64 MB, and at the end),
   * for a caller that reads the file through once (an update's base), not a server's mapping. `signal`: aborted,
   * the hashing stops at its next turn and throws the signal's reason (an update stopped, D160). `only`: the sections
   * hashed, by name (all when absent), for a caller that reads some of them only (an export: its text, not its index).
   */
  async verify(
    progress: (done: number, total: number) => void = () => {},
    {
      readOnce = false,
      signal,
      only = () => true,
    }: { readOnce?: boolean; signal?: AbortSignal | undefined; only?: ((name: string) => boolean) | undefined } = {},
  ): Promise<string[]> {
    const damaged: string[] = [];
    const hashed = this.sections.filter((s) => only(s.name));
    const total = hashed.reduce((n, s) => n + s.length, 0);
    let done = 0;
    let dropped = 0;
    const slice = 4 << 20;
    let resumed = performance.now();
    for (const entry of hashed) {
      const bytes = this.section(entry.name);
      const hasher = new Bun.CryptoHasher("sha256");
      for (let at = 0; at < bytes.byteLength; at += slice) {
        if (this.stopped) throw new SnapshotError(this.stopped);
        hasher.update(bytes.subarray(at, Math.min(bytes.byteLength, at + slice)));
        done += Math.min(slice, bytes.byteLength - at);
        if (readOnce && done - dropped >= READ_ONCE_BYTES) {
          this.dropResident();
          dropped = done;
        }
        progress(done, total);
        // Let a server answer every 10 ms of hashing: not after every slice or section, since under load
        // each turn of the event loop waits for every ready request (7.6 s for 4 MB at 200 connections).
        if (performance.now() - resumed >= VERIFY_TURN_MS) {
          await new Promise((r) => setImmediate(r));
          signal?.throwIfAborted();
          resumed = performance.now();
        }
      }
      if (hasher.digest("hex") !== entry.sha256) damaged.push(entry.name);
    }
    if (readOnce) this.dropResident();
    else if (hashed.length === this.sections.length) this.wholeMapped = true;
    return damaged;
  }
}

/** A snapshot file that cannot be opened (other than missing): why, and for a refusal, what to do. */
export function unreadable(path: string, err: unknown): SnapshotError {
  return new SnapshotError(cannotRead(printableName(path), err));
}

/** A folder named where a snapshot file goes. */
export function aFolder(path: string): SnapshotError {
  return new SnapshotError(`${printableName(path)} is a folder, not a snapshot file: name a .tome file in it.`);
}

/** Opens a container: checks its header, length and table; refuses a format-1 file with what to do. */
export function openContainer(path: string): Container {
  let fd: number;
  try {
    // Refused by its stat, not opened: opened to read, a FIFO (a shell's <(…), /dev/stdin) waits for a writer, forever
    // if none comes; a snapshot is mapped, so it can only be a file.
    const stat = statSync(path);
    if (stat.isDirectory()) throw aFolder(path);
    if (!stat.isFile())
      throw new SnapshotError(
        `${printableName(path)} is not a file (a FIFO or a device?): a snapshot is a .tome file, mapped to be read.`,
      );
    fd = openSync(path, "r");
  } catch (err) {
    if (err instanceof SnapshotError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") throw unreadable(path, err);
    throw new SnapshotError(
      `snapshot not found: ${printableName(path)}. Build one with \`${commandLine("snapshot:build --dump <path|url>")}\`.`,
      { missing: path },
    );
  }
  try {
    const stat = fstatSync(fd);
    const size = stat.size;
    const header = new Uint8Array(HEADER_BYTES);
    const read = readSync(fd, header, 0, HEADER_BYTES, 0);
    if (read < 12 || !beginsAsSnapshot(header)) {
      throw new SnapshotError(
        `${printableName(path)} is not a Tome snapshot (no ${SNAPSHOT_MAGIC} header). ${rebuild}`,
      );
    }
    const view = new DataView(header.buffer);
    const version = view.getUint32(8, true);
    if (version === 1) {
      throw new SnapshotError(
        `${printableName(path)} has snapshot format 1, which this Tome no longer reads (format 2 is mapped, not decoded). ` +
          `Convert it with \`${commandLine(`snapshot:convert ${shellWord(path)}`)}\`, or rebuild it with \`${commandLine("snapshot:build --dump <dump>")}\`.`,
      );
    }
    if (version !== FORMAT_VERSION)
      throw new SnapshotError(
        `${printableName(path)} has snapshot format ${version}; this Tome reads format ${FORMAT_VERSION}. ${rebuild}`,
      );
    if (read < HEADER_BYTES)
      throw new SnapshotError(
        `${printableName(path)} is truncated: ${size} bytes, shorter than its header. ${rebuild}`,
      );
    const tableOffset = Number(view.getBigUint64(16, true));
    const tableLength = Number(view.getBigUint64(24, true));
    const expected = tableOffset + tableLength;
    // Past 2^53 bytes, or a table inside the header: numbers no file has, said to be a file "truncated: expected 13021231110855195000".
    if (tableOffset < HEADER_BYTES || tableLength === 0 || !Number.isSafeInteger(expected))
      throw new SnapshotError(
        `${printableName(path)} is corrupt: its header does not say where its table of contents is. ${rebuild}`,
      );
    if (size !== expected) {
      throw new SnapshotError(
        `${printableName(path)} is ${size < expected ? "truncated" : "longer than its header says"}: ${size} bytes, expected ${expected}. ${rebuild}`,
      );
    }
    const table = new Uint8Array(tableLength);
    readSync(fd, table, 0, tableLength, tableOffset);
    if (!sameBytes(sha256(table), header.subarray(32, 64)))
      throw new SnapshotError(
        `${printableName(path)} is corrupt: its table of contents does not match its checksum. ${rebuild}`,
      );
    let parsed: Table;
    try {
      parsed = unpackr.unpack(table) as Table;
    } catch (err) {
      throw new SnapshotError(`${printableName(path)} cannot be decoded (${(err as Error).message}). ${rebuild}`);
    }
    for (const s of parsed.sections) {
      if (s.offset < HEADER_BYTES || s.offset + s.length > tableOffset)
        throw new SnapshotError(
          `${printableName(path)} is corrupt: section ${s.name} lies outside the file. ${rebuild}`,
        );
    }
    const identity = `${stat.dev}:${stat.ino}:${size}:${stat.mtimeMs}:${stat.ctimeMs}:${Buffer.from(header.subarray(32, 64)).toString("hex")}`;
    return new Container(path, parsed.meta, parsed.sections, size, identity, { dev: stat.dev, ino: stat.ino });
  } finally {
    closeSync(fd);
  }
}

/**
 * Why a snapshot is not read: open for writing now (being copied?), so that no lease can be had on it (D84), and what to
 * do (`then`: "run it again", "open() it") once it is whole. `shown`: the path as the caller shows it.
 */
export function openForWriting(shown: string, then: string): SnapshotError {
  return new SnapshotError(`${shown} is open for writing (being copied?): ${then} once it is whole and closed.`);
}
