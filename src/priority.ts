/**
 * The workers' scheduling priority (D142, D143): each search worker and PDF renderer lowers its own thread's by a few
 * nice steps, so that when the cores are busy with their work the request thread (HTTP, keys, the cheap routes, sending
 * answers) is favoured.
 * Linux schedules each thread by its own nice; setpriority(PRIO_PROCESS, tid) sets one thread's, and
 * /proc/thread-self names the calling thread's id. Elsewhere nothing changes (there it would lower the whole process).
 */
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** The highest nice Linux allows (the lowest priority). */
const LOWEST = 19;

/**
 * Lowers the calling thread's priority by `steps` nice steps (at most to 19: a process already at nice 12 gets 7);
 * where a thread's priority cannot be set, nothing.
 */
export function lowerThisThread(steps: number): void {
  if (process.platform !== "linux") return;
  try {
    // "PID/task/TID"
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    setPriority(tid, Math.min(LOWEST, getPriority(tid) + steps));
  } catch {}
}
