/**
 * The allocator settings the server, the MCP server and the export run with (D209). Bun's allocator (its mimalloc)
 * reads its MIMALLOC_* settings from the environment once, as the process starts, before any JavaScript runs; so a
 * command that wants them restarts itself in place with them added (execve(2): the same process id, descriptors and
 * arguments, before it has read or written anything), unless the environment names one of them already: the person's
 * own choice, or the restart done. Elsewhere than Linux, or where the restart fails, the command runs on as it is.
 * The builds keep the allocator's defaults: with these settings a build of many small pages peaked higher (D209).
 */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { readFileSync } from "node:fs";

/**
 * By default Bun's mimalloc gives back to the kernel, each time a thread waits, the free runs inside pages still in use
 * (purge_holes), and whole free pages 100 ms after they empty (purge_delay): a parsing worker or a search worker waits
 * between every two messages, and each page given back costs a fault to take again (about 20 µs on a virtual machine
 * such as this project's). Off, and after 10 s: a pooled search used about a fifth less CPU (D209's figures).
 */
export const ALLOCATOR_SETTINGS: Readonly<Record<string, string>> = {
  MIMALLOC_PURGE_HOLES: "0",
  MIMALLOC_PURGE_DELAY: "10000",
};

/** Whether a restart would add the settings: not when the environment names one of them already. */
export function wantsAllocatorSettings(env: Record<string, string | undefined>): boolean {
  return !Object.keys(ALLOCATOR_SETTINGS).some((name) => env[name] !== undefined);
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
 * Restarts this process with ALLOCATOR_SETTINGS added to its environment, unless its environment names one of them
 * already; returns only when it does not restart. Called first thing by a command's entry, never by a library or a
 * test. It reads the environment the process was started with (/proc/self/environ), as the allocator did, not
 * process.env (src/cli/config.ts reads Tome's settings).
 */
export function restartWithAllocatorSettings(): void {
  if (process.platform !== "linux") return;
  try {
    // The arguments and environment exactly as this process was given them (bun and its options, or the
    // executable's own), as bytes: a path in them need not be UTF-8.
    const args = nulEnded("/proc/self/cmdline");
    const given = nulEnded("/proc/self/environ");
    const named = Object.fromEntries(
      given.map((bytes) => [bytes.toString("latin1", 0, Math.max(0, bytes.indexOf(61))), ""] as const),
    );
    if (!wantsAllocatorSettings(named)) return;
    const environment = [
      ...given,
      ...Object.entries(ALLOCATOR_SETTINGS).map(([name, value]) => Buffer.from(`${name}=${value}\0`)),
    ];
    const { execve } = dlopen("libc.so.6", {
      execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
    }).symbols;
    // The executable by its own path, not /proc/self/exe, whose name the process would then bear (ps, pgrep bun).
    const path = Buffer.from(`${process.execPath}\0`);
    execve(ptr(path), ptr(pointerArray(args)), ptr(pointerArray(environment)));
    // Only a failed execve returns: the command runs on with the allocator's defaults.
    void [path, args, environment];
  } catch {}
}
