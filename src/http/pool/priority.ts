/**
 * The search workers' scheduling priority (D142): each worker lowers its own thread's by a few nice steps, so that when
 * the cores are busy with searches the request thread (HTTP, keys, the cheap routes, sending answers) still runs at
 * once. Linux schedules each thread by its own nice; setpriority(PRIO_PROCESS, tid) sets one thread's. Elsewhere, or
 * without a libc to load, nothing changes.
 */
import { dlopen, FFIType } from "bun:ffi";
import { getPriority, setPriority } from "node:os";

/** The highest nice Linux allows (the lowest priority). */
const LOWEST = 19;

function threadId(): number | undefined {
  if (process.platform !== "linux") return undefined;
  for (const name of ["libc.so.6", "libc.so"]) {
    try {
      const { symbols, close } = dlopen(name, { gettid: { args: [], returns: FFIType.i32 } });
      const tid = symbols.gettid();
      close();
      return tid;
    } catch {}
  }
  return undefined;
}

/**
 * Lowers the calling thread's priority by `steps` nice steps (at most to 19); returns its nice after, or undefined
 * where a thread's priority cannot be set.
 */
export function lowerThisThread(steps: number): number | undefined {
  const tid = threadId();
  if (tid === undefined) return undefined;
  try {
    const nice = Math.min(LOWEST, getPriority(tid) + steps);
    setPriority(tid, nice);
    return getPriority(tid);
  } catch {
    return undefined;
  }
}
