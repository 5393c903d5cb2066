/**
 * Where benchmark processes run on a two-core machine: servers on core 0, the load generator
 * (the calling bench process) on core 1, so that the load does not take the servers' CPU.
 * Without taskset or a second core, nothing is pinned.
 */
export const PINNED = navigator.hardwareConcurrency >= 2 && Bun.which("taskset") !== null;

/** Moves this process (all its threads) to core 1. */
export async function pinLoadGenerator(): Promise<void> {
  if (PINNED) await Bun.$`taskset -a -p -c 1 ${process.pid}`.quiet();
}

/** A server's command line, run on core 0. */
export function onServerCore(command: string[]): string[] {
  return PINNED ? ["taskset", "-c", "0", ...command] : command;
}
