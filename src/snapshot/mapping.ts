/**
 * A snapshot file mapped read-only, and the read lease that lets its reader go first when
 * another process opens it to write (D84).
 *
 * The file is opened O_RDONLY and its sections mapped PROT_READ, MAP_SHARED through libc
 * (Bun.mmap opens the file O_RDWR and maps it PROT_WRITE, which a read lease refuses). A read
 * lease (fcntl F_SETLEASE, F_RDLCK, as Samba's kernel oplocks) makes the kernel hold any open of the
 * file for writing, `cp`'s open(O_TRUNC) among them, and signal the holder (SIGURG here, set with
 * F_SETSIG: Bun hands it to JavaScript, and it is ignored where nothing listens). The holder then
 * has /proc/sys/fs/lease-break-time (45 s by default) to let go: the owner of the mapping makes
 * sure nothing reads it any more, then every mapping is replaced in place (MAP_FIXED) by zero
 * pages that no file backs, and the lease released. A view read after that reads zeros, never
 * a page past the end of a file cut short: the SIGBUS that no handler can catch (D56). A mapping
 * is unmapped when its buffer is collected (munmap is the buffer's deallocator).
 */
import { FFIType, type Pointer, ptr, read, toArrayBuffer } from "bun:ffi";
import { firstLibrary, LIBC } from "../native";
import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { constants } from "node:os";
import { printableName } from "../printable";
import { SnapshotError } from "./format";

const PROT_READ = 1;
const MAP_SHARED = 0x01;
const MAP_PRIVATE = 0x02;
const MAP_FIXED = 0x10;
const MAP_ANONYMOUS = 0x20;
const MAP_NORESERVE = 0x4000;
const MADV_DONTNEED = 4;
/** Linux 5.14 and later: the pages are mapped in the process's page tables now, read from the file where not cached. */
const MADV_POPULATE_READ = 22;
const F_SETSIG = 10;
const F_SETLEASE = 1024;
const F_GETLEASE = 1025;
const F_RDLCK = 0;
const F_UNLCK = 2;
const PAGE = 4096;
/** How often, at most, a reader answering its lease at read asks whether a writer waits (answerWaitingWriter). */
const ASK_WRITER_MS = 100;
/** The signal a lease breaking sends: its default is to be ignored, and nothing else of Tome's uses it. */
const LEASE_SIGNAL = "SIGURG";

function loadLibc() {
  if (process.platform !== "linux") return undefined;
  return firstLibrary(LIBC, {
    mmap: {
      args: [FFIType.u64, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64],
      returns: FFIType.i64_fast,
    },
    munmap: { args: [FFIType.ptr, FFIType.u64], returns: FFIType.i32 },
    madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
    fcntl: { args: [FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.i32 },
    posix_fadvise: { args: [FFIType.i32, FFIType.i64, FFIType.i64, FFIType.i32], returns: FFIType.i32 },
    __errno_location: { args: [], returns: FFIType.ptr },
  });
}

type Libc = NonNullable<ReturnType<typeof loadLibc>>;
/** null: not looked for yet; undefined: not Linux with a libc to load (Bun.mmap maps, no lease). */
let libc: Libc | undefined | null = null;
const libcOf = (): Libc | undefined => (libc === null ? (libc = loadLibc()) : libc);

const errno = (lib: Libc): number => read.i32(lib.__errno_location()!, 0);

const POSIX_FADV_DONTNEED = 4;

/**
 * Drops a file's clean pages from the page cache (posix_fadvise POSIX_FADV_DONTNEED; flush it first), so that its
 * first reader reads it in by readahead (D206): a first search of the mapping then faults about once, where the pages
 * a write left took 10 to 12 faults. False where it cannot (not Linux); best effort, as the kernel keeps pages that
 * are dirty or mapped.
 */
export function dropFromPageCache(fd: number): boolean {
  const lib = libcOf();
  return lib ? lib.posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) === 0 : false;
}

/** bun:ffi's toArrayBuffer with a deallocator, called with (address, context) once the buffer is collected: munmap(address, length). */
const mappedBuffer = toArrayBuffer as unknown as (
  address: number,
  offset: number,
  length: number,
  context: number,
  deallocator: Pointer,
) => ArrayBuffer;

/**
 * How long the owner may take to stop reading before the mappings are let go anyway: half the
 * time the kernel gives a lease holder (past it, the writer goes on and the file is cut under
 * the mapping), at most 5 s (a request in flight that long, a PDF being rendered, read its page before).
 */
function graceMs(): number {
  let seconds = 45;
  try {
    seconds = Number(readFileSync("/proc/sys/fs/lease-break-time", "utf8")) || seconds;
  } catch {}
  return Math.min(5000, (seconds * 1000) / 2);
}

/** Why no lease was taken: `writing` when the file is open for writing now (being written: try again later). */
export interface LeaseRefused {
  reason: string;
  writing: boolean;
}

/**
 * A mapping refused (mmap failed): a SnapshotError, not damage. ENOMEM: the process has no room for another mapping,
 * most often a program that open()s engines and never closes them (at about 1,400 of them at vm.max_map_count's 65,530:
 * an engine maps each of its file's sections), told what to do, where a plain Error said "(errno 12)" (D151).
 */
function mapFailed(what: string, code: number): SnapshotError {
  if (code !== constants.errno.ENOMEM) return new SnapshotError(`${what} (errno ${code}).`);
  return new SnapshotError(
    `${what}: this process has no room for another mapping (errno 12, ENOMEM: it holds as many as /proc/sys/vm/max_map_count allows, or its address space, ulimit -v, is full). An engine holds its file's mappings until it is closed: close() each engine once done with it, or open() a snapshot once and reuse its engine.`,
  );
}

/** Why a lease is refused, by errno, for the log. */
const LEASE_REFUSED = new Map<number, string>([
  [constants.errno.EAGAIN, "it is open for writing"],
  [constants.errno.EACCES, "this process neither owns the file nor may take leases (CAP_LEASE)"],
  [
    constants.errno.EINVAL,
    "its filesystem takes no leases (a network or FUSE one?), or leases are off (/proc/sys/fs/leases-enable)",
  ],
]);

/** The mappings holding a lease, by descriptor: looked at when the lease signal comes (held weakly: a mapping let go closes its file). */
const leased = new Map<number, WeakRef<FileMapping>>();
const closing = new FinalizationRegistry<number>((fd) => {
  leased.delete(fd);
  closeSync(fd);
});
let listening = false;

/** Which leases are being broken: the kernel reports a lease it is breaking as F_UNLCK (the signal's si_fd would say, but JavaScript does not see it). */
function leaseSignal(): void {
  const lib = libcOf()!;
  for (const [fd, ref] of leased) {
    const mapping = ref.deref();
    if (!mapping) leased.delete(fd);
    else if (lib.fcntl(fd, F_GETLEASE, 0) === F_UNLCK)
      mapping
        .writerCame()
        .catch((err: Error) => console.error(`${mapping.path}: letting go of it failed: ${err.message}`));
  }
}

/** One file, opened read-only: its ranges mapped, and perhaps a read lease on it. */
export class FileMapping {
  private readonly fd: number;
  /** Every range mapped (address, length), with its buffer held weakly: a collected one is unmapped already. */
  private readonly ranges: { address: number; length: number; buffer: WeakRef<ArrayBuffer> }[] = [];
  private leaseHeld = false;
  private onWriter: ((graceMs: number) => Promise<void> | void) | undefined;
  /** When answerWaitingWriter last asked the kernel whether a writer waits. */
  private writerAskedAt = Number.NEGATIVE_INFINITY;
  /** Set once every range reads zeros: nothing more is mapped from the file. */
  private dropped = false;

  /** Opens the file; undefined where mappings are Bun.mmap's (not Linux, no libc). */
  static open(path: string): FileMapping | undefined {
    return libcOf() ? new FileMapping(path) : undefined;
  }

  private constructor(readonly path: string) {
    this.fd = openSync(path, "r");
    closing.register(this, this.fd, this);
  }

  /** The file opened, looked at (its device and inode): the path may name another file since (one renamed onto it). */
  stat(): { dev: number; ino: number } {
    return fstatSync(this.fd);
  }

  /** `length` bytes from `offset`, mapped read-only (not copied). */
  map(offset: number, length: number): Uint8Array {
    if (this.dropped) throw new Error(`${this.path} is let go: it is being written over in place`);
    const lib = libcOf()!;
    const skip = offset % PAGE;
    const size = length + skip;
    const address = Number(lib.mmap(0, size, PROT_READ, MAP_SHARED, this.fd, offset - skip));
    if (address === -1) throw mapFailed(`${printableName(this.path)} cannot be mapped`, errno(lib));
    const buffer = mappedBuffer(address, 0, size, size, (lib.munmap as unknown as { ptr: Pointer }).ptr);
    this.ranges.push({ address, length: size, buffer: new WeakRef(buffer) });
    return new Uint8Array(buffer, skip, length);
  }

  /**
   * `into.byteLength` bytes of the file from `offset`, read by pread(2) into `into` (not mapped); undefined once the file
   * is let go (its descriptor closed). A read of pages this process has not mapped costs no page fault: about 20 µs
   * less than a first read through the mapping on this project's machines (D207). A file that ends before them was cut
   * short since it was opened (the caller checked they lie within it), and a read the kernel fails: a SnapshotError
   * saying so, where the same read through the mapping would have killed the process (SIGBUS).
   */
  readAt(offset: number, into: Uint8Array): Uint8Array | undefined {
    if (this.dropped) return undefined;
    let read: number;
    try {
      read = readSync(this.fd, into, 0, into.byteLength, offset);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new SnapshotError(
        `${printableName(this.path)} cannot be read (${code}): check the disk, then start again.`,
      );
    }
    if (read !== into.byteLength)
      throw new SnapshotError(
        `${printableName(this.path)} was cut short since it was opened (written over in place?): nothing more is read from it. Put a whole snapshot in its place by renaming a new file onto it.`,
      );
    return into;
  }

  /**
   * Lets go of the pages read so far from this process's resident memory (madvise
   * MADV_DONTNEED): they stay in the page cache, and a later read maps them again from the
   * file, the same bytes. For a reader going through a file once (an update reads its base
   * whole): every page it has touched would otherwise count in its resident set until unmapped.
   */
  dropResident(): void {
    if (this.dropped) return;
    const lib = libcOf()!;
    for (const range of this.ranges) if (range.buffer.deref()) lib.madvise(range.address, range.length, MADV_DONTNEED);
  }

  /**
   * Maps the pages under `view` (a part of a range this mapping made) into this process's page tables now (madvise
   * MADV_POPULATE_READ), so that a read of them later takes no page fault (about 26 µs each on this project's virtual
   * machines; D204 measured what it saves a search). False where the kernel cannot (before Linux 5.14) or the file is
   * let go.
   */
  populate(view: Uint8Array): boolean {
    if (this.dropped || !view.byteLength) return !this.dropped;
    const start = ptr(view);
    const skip = start % PAGE;
    return libcOf()!.madvise(start - skip, view.byteLength + skip, MADV_POPULATE_READ) === 0;
  }

  /**
   * Takes a read lease: when another process opens the file to write it, `onWriter` is called
   * with the time it has, and once what it returns settles (or that time passes) the mappings read zeros and the
   * lease is let go (the writer goes on). Returns why no lease could be taken (the file then
   * stays mapped as it is, unguarded), or undefined.
   */
  lease(onWriter: (graceMs: number) => Promise<void> | void): LeaseRefused | undefined {
    const lib = libcOf()!;
    if (!listening) {
      process.on(LEASE_SIGNAL, leaseSignal);
      listening = true;
    }
    if (
      lib.fcntl(this.fd, F_SETSIG, constants.signals[LEASE_SIGNAL]) === -1 ||
      lib.fcntl(this.fd, F_SETLEASE, F_RDLCK) === -1
    ) {
      const code = errno(lib);
      return {
        reason: LEASE_REFUSED.get(code) ?? `fcntl F_SETLEASE failed with errno ${code}`,
        writing: code === constants.errno.EAGAIN,
      };
    }
    this.onWriter = onWriter;
    this.leaseHeld = true;
    leased.set(this.fd, new WeakRef(this));
    return undefined;
  }

  /**
   * writerCame() now, asked by an owner reading from synchronous calls (a program's loop of searches), which may not
   * turn the event loop for the whole lease-break time: the signal waits for a turn, and past that time the kernel
   * lets the writer cut the file under the mapping (SIGBUS at the next read). When a writer waits on the lease
   * (F_GETLEASE reads F_UNLCK), the owner's onWriter, which must stop its reading before it returns, then every range
   * reads zeros and the lease is let go. Asked of the kernel at most every ASK_WRITER_MS (an fcntl through bun:ffi
   * tripled the time of a page() read), well within the lease-break time.
   */
  answerWaitingWriter(): void {
    if (!this.leaseHeld) return;
    const now = performance.now();
    if (now - this.writerAskedAt < ASK_WRITER_MS) return;
    this.writerAskedAt = now;
    if (libcOf()!.fcntl(this.fd, F_GETLEASE, 0) !== F_UNLCK) return;
    this.leaseHeld = false;
    void this.onWriter?.(0);
    this.drop();
  }

  /** Called when the lease is being broken: lets the owner stop reading, then lets go of the file. */
  async writerCame(): Promise<void> {
    if (!this.leaseHeld) return;
    this.leaseHeld = false;
    const grace = graceMs();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([this.onWriter?.(grace), new Promise((r) => (timer = setTimeout(r, grace)))]);
    } finally {
      clearTimeout(timer);
      this.drop();
    }
  }

  /**
   * Lets the file go now, not when the buffers are collected: every range reads zeros from now
   * on, and the file is closed. For an owner that will not read it again (a search worker once a
   * snapshot is swapped out, D101): a buffer a collector still finds named somewhere would keep the file mapped.
   */
  letGo(): void {
    if (!this.dropped) this.drop();
  }

  /** Every range read zeros from now on (the same addresses, no file behind them); the lease and the file are let go. */
  private drop(): void {
    const lib = libcOf()!;
    for (const range of this.ranges) {
      // A buffer collected is unmapped already, and its addresses may hold something else now.
      const buffer = range.buffer.deref();
      if (!buffer) continue;
      const flags = MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS | MAP_NORESERVE;
      if (Number(lib.mmap(range.address, range.length, PROT_READ, flags, -1, 0)) !== range.address)
        throw mapFailed(`${printableName(this.path)}: its mapping could not be let go`, errno(lib));
    }
    this.dropped = true;
    leased.delete(this.fd);
    lib.fcntl(this.fd, F_SETLEASE, F_UNLCK);
    closing.unregister(this);
    closeSync(this.fd);
  }
}

/**
 * Whether another process holds the file open for writing now (being copied): a read lease on it is refused so. False
 * where that cannot be told (not Linux, no such file, leases refused for another reason).
 */
export function beingWritten(path: string): boolean {
  let mapping: FileMapping | undefined;
  try {
    mapping = FileMapping.open(path);
  } catch {
    return false;
  }
  if (!mapping) return false;
  try {
    return mapping.lease(() => {})?.writing === true;
  } finally {
    mapping.letGo();
  }
}
