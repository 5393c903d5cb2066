/**
 * The allocator settings the long commands run with (D209): the server, the MCP server, the export and the builds.
 * Bun's allocator (its mimalloc) reads its MIMALLOC_* settings from the environment once, as the process starts, before any JavaScript runs; so a
 * command that wants them restarts itself in place with them added (execve(2): the same process id, descriptors and
 * arguments, before it has read or written anything), unless the environment names one of them already: the person's
 * own choice, or the restart done. Elsewhere than Linux, or where the restart fails, the command runs on as it is.
 */
import { FFIType, ptr } from "bun:ffi";
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { firstLibrary, LIBC } from "../native";

/**
 * By default Bun's mimalloc gives back to the kernel, each time a thread waits, the free runs inside pages still in use
 * (purge_holes), and whole free pages 100 ms after they empty (purge_delay): a parsing worker or a search worker waits
 * between every two messages, and each page given back costs a fault to take again (about 20 µs on a virtual machine
 * such as this project's). Off, and after 10 s: a pooled search and a build's parsing used about a fifth less CPU
 * (D209).
 */
export const ALLOCATOR_SETTINGS: Readonly<Record<string, string>> = {
  MIMALLOC_PURGE_HOLES: "0",
  MIMALLOC_PURGE_DELAY: "10000",
};

/**
 * The names mimalloc reads each setting by: it compares them without case, and still reads MIMALLOC_RESET_DELAY,
 * purge_delay's old name.
 */
const NAMES_READ = new Set(
  [...Object.keys(ALLOCATOR_SETTINGS), "MIMALLOC_RESET_DELAY"].map((name) => name.toUpperCase()),
);

/** Whether a restart would add the settings: not when the environment names one of them already, as mimalloc reads it. */
export function wantsAllocatorSettings(env: Record<string, string | undefined>): boolean {
  return !Object.keys(env).some((name) => env[name] !== undefined && NAMES_READ.has(name.toUpperCase()));
}

/** A /proc file of NUL-ended strings (cmdline, environ), each as its bytes with its NUL: exactly as the kernel holds them. */
function nulEnded(path: string): Buffer[] {
  const bytes = readFileSync(path);
  const strings: Buffer[] = [];
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(0, start);
    const stop = end < 0 ? bytes.length : end;
    strings.push(Buffer.concat([bytes.subarray(start, stop), Buffer.of(0)]));
    start = stop + 1;
  }
  return strings;
}

/** A NULL-ended array of pointers to the C strings `strings` (which the caller keeps alive until it is used). */
function pointerArray(strings: Buffer[]): BigUint64Array {
  const table = new BigUint64Array(strings.length + 1);
  strings.forEach((bytes, i) => {
    table[i] = BigInt(ptr(bytes));
  });
  return table;
}

/**
 * The file to start again, as the process was started: its first argument when that is a path, or the first file of
 * that name on its PATH that is this executable (so that `ps -C bun` and `pgrep -x bun` still name it as before: by
 * process.execPath, a link's target, an npm-installed Bun would be renamed bun.exe), else this executable itself.
 */
function startedAs(first: string, path: string | undefined): string {
  const self = realpathSync(process.execPath);
  const candidates = first.includes("/") ? [first] : (path ?? "").split(":").map((dir) => join(dir || ".", first));
  for (const candidate of candidates) {
    try {
      if (realpathSync(candidate) === self) return candidate;
    } catch {}
  }
  return process.execPath;
}

/**
 * Restarts this process with ALLOCATOR_SETTINGS added to its environment, unless its environment names one of them
 * already; returns only when it does not restart (not on Linux, no libc to call, or execve refused). Called first
 * thing by a command's entry, never by a library or a test. It reads the environment the process was started with
 * (/proc/self/environ), which is what the allocator read, not process.env (src/cli/config.ts reads Tome's settings).
 */
export function restartWithAllocatorSettings(): void {
  if (process.platform !== "linux") return;
  try {
    // The arguments and environment exactly as this process was given them (bun and its options, or the
    // executable's own), as bytes: a path in them need not be UTF-8.
    const args = nulEnded("/proc/self/cmdline");
    const given = nulEnded("/proc/self/environ");
    const named: Record<string, string> = {};
    for (const bytes of given) {
      const equals = bytes.indexOf(61);
      if (equals > 0) named[bytes.toString("utf8", 0, equals)] = bytes.toString("utf8", equals + 1, bytes.length - 1);
    }
    if (!wantsAllocatorSettings(named)) return;
    const execve = firstLibrary(LIBC, {
      execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    })?.execve;
    if (!execve || args.length === 0) return;
    const environment = [
      ...Object.entries(ALLOCATOR_SETTINGS).map(([name, value]) => Buffer.from(`${name}=${value}\0`)),
      ...given,
    ];
    const path = Buffer.from(`${startedAs(args[0]!.toString("utf8", 0, args[0]!.length - 1), named.PATH)}\0`);
    // The tables are held here while execve reads them (a pointer taken of a typed array does not keep it alive).
    const argv = pointerArray(args);
    const envp = pointerArray(environment);
    execve(path, argv, envp);
    // Only a failed execve returns: the command runs on with the allocator's defaults.
    void [path, args, environment, argv, envp];
  } catch {}
}
