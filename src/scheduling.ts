/**
 * A worker thread's scheduling. Its priority (D142, D143): each search worker and PDF renderer lowers its own thread's
 * by a few nice steps, so that when the cores are busy with their work the request thread (HTTP, keys, the cheap
 * routes, sending answers) is favoured. Its time waiting for a core (D144): what a search worker does not charge a key
 * for. Linux schedules each thread by its own nice and counts each thread's time on a core and waiting for one
 * (/proc/thread-self/schedstat); setpriority(PRIO_PROCESS, tid) sets one thread's nice, and /proc/thread-self names the
 * calling thread. Elsewhere nothing changes (there setpriority would lower the whole process) and no wait is counted.
 */
import { openSync, readdirSync, readlinkSync, readSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/**
 * The most threads one process searches a snapshot from (the server's search pool, D101: TOME_SEARCH_WORKERS and
 * createApp's searchWorkers): each opens it on its own heap, and past the cores more answer no faster. Here, beside the
 * threads' scheduling, rather than in search: the settings (src/cli/config.ts) say it without loading the engine.
 */
export const MAX_SEARCH_WORKERS = 64;

/**
 * The most parsing workers a build starts (D113): each holds about 17 MB idle, so 64 is about 1.1 GB, and past the
 * cores more parse no faster. TOME_BUILD_WORKERS and --workers above it are refused; one per core stops at it.
 */
export const MAX_BUILD_WORKERS = 64;

/** The highest nice Linux allows (the lowest priority): also the most steps a thread can be lowered by. */
export const LOWEST = 19;

/**
 * Lowers the calling thread's priority by `steps` nice steps (at most to 19: a process already at nice 12 gets 7);
 * where a thread's priority cannot be set, nothing.
 */
export function lowerThisThread(steps: number): void {
  if (process.platform !== "linux") return;
  try {
    // "PID/task/TID"
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    lowerTo(tid, Math.min(LOWEST, getPriority(tid) + steps));
  } catch {}
}

/** Sets thread `tid`'s nice to `nice` unless it is there or lower already; where it cannot be set, nothing. */
function lowerTo(tid: number, nice: number): void {
  try {
    if (getPriority(tid) < nice) setPriority(tid, nice);
  } catch {}
}

/**
 * Lowers every thread of this process by `steps` nice steps (at most to 19), and so what it starts after: Linux starts a
 * thread or a process at its creator's nice. Where priorities cannot be set, nothing. A build beside a server (D189).
 */
export function lowerThisProcess(steps: number): void {
  if (steps <= 0 || process.platform !== "linux") return;
  // One level for every thread, from the process's (its main thread's) own: a thread started during the first pass
  // by one already lowered starts there, and the second pass, for one started by a thread not yet lowered, leaves it.
  const nice = Math.min(LOWEST, getPriority(process.pid) + steps);
  for (let pass = 0; pass < 2; pass++) {
    let tids: string[];
    try {
      tids = readdirSync("/proc/self/task");
    } catch {
      return;
    }
    for (const tid of tids) lowerTo(Number(tid), nice);
  }
}

/** A clock of a thread's time waiting for a core (coreWaitClock), and the file it reads (closed by whoever ends the thread). */
export interface CoreWaitClock {
  /** Milliseconds waited so far; NaN where it cannot be read. */
  read: () => number;
  /** The descriptor of the thread's schedstat, or undefined. A thread that is terminated runs no cleanup. */
  file: number | undefined;
}

/**
 * A clock of the calling thread's time spent runnable but waiting for a core (preempted, or queued behind other
 * threads): the second field of its schedstat, read from a file opened once (about 0.7 µs a read in a worker:
 * bench/http/worker-cost.ts). Made in the thread it times (the file names the thread that opened it).
 */
export function coreWaitClock(): CoreWaitClock {
  let file: number;
  try {
    if (process.platform !== "linux") throw new Error("no schedstat");
    file = openSync("/proc/thread-self/schedstat", "r");
  } catch {
    return { read: () => Number.NaN, file: undefined };
  }
  const buffer = Buffer.alloc(96);
  const read = () => {
    try {
      const text = buffer.toString("latin1", 0, readSync(file, buffer, 0, buffer.length, 0));
      const first = text.indexOf(" ");
      const second = text.indexOf(" ", first + 1);
      return first > 0 && second > first ? Number(text.slice(first + 1, second)) / 1e6 : Number.NaN;
    } catch {
      return Number.NaN;
    }
  };
  return { read, file };
}
