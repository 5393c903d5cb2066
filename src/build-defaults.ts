/**
 * What a build may take, and what it uses when not told (D161, D115): the memory bound, the default memory budget, the
 * words of a chunk, where the daily dumps are. A leaf module, below ingest, search and build, which use them: the
 * commands state them in their --help and check their options against them without loading those layers
 * (test/layers.test.ts: what a command loads).
 */
import { totalmem } from "node:os";

/**
 * The memory a build may take (D161): the machine's, or its container's limit when that is less, for the kernel kills
 * a process past its cgroup's limit however much the machine holds. `constrained` is process.constrainedMemory(),
 * which in Bun reads the process's cgroup (v2 memory.max and memory.high, the lowest of its own and every parent's up
 * to /sys/fs/cgroup; v1 memory.limit_in_bytes and memory.soft_limit_in_bytes, its own only, else the root's) and says
 * the machine's memory when there is no limit; Node says 0, or 2⁶⁴ − 1, and a runtime without it undefined.
 */
export function memoryBound(total: number, constrained: number | undefined): { bytes: number; limited: boolean } {
  return constrained !== undefined && constrained > 0 && constrained < total
    ? { bytes: constrained, limited: true }
    : { bytes: total, limited: false };
}

/** The bound this process is under (D161). */
export const MEMORY_BOUND = memoryBound(totalmem(), process.constrainedMemory?.());

/** The most memory budget taken (D161): one above the bound swaps, or is killed, hours into a build. */
export const MOST_MEMORY_BYTES = MEMORY_BOUND.bytes;

/** The default memory budget: a quarter of the bound (so a small container's too), at most 2 GB. */
export const DEFAULT_MEMORY_BYTES = Math.min(2e9, Math.floor(MOST_MEMORY_BYTES / 4));

/** The most words of a chunk when not told (--chunk-words). */
export const DEFAULT_CHUNK_WORDS = 300;

/** Where Wikimedia publishes the daily incremental dumps (snapshot:follow's --url when not told). */
export const WIKIMEDIA_INCR = "https://dumps.wikimedia.org/other/incr";
