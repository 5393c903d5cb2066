/** What memory a build may take (D161), and the rule a memory budget is checked by (D115). */
import { totalmem } from "node:os";
import type { OptionRule } from "../../errors";

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

/** A memory budget's rule (D115): the build's, the update's and the index builder's. */
export const MEMORY_RULE: OptionRule = [
  (v) => typeof v === "number" && v > 0 && v <= MOST_MEMORY_BYTES,
  `a number of bytes above 0, at most ${MEMORY_BOUND.limited ? "this container's memory limit" : "this machine's memory"} (${MOST_MEMORY_BYTES.toLocaleString("en-US")})`,
];
