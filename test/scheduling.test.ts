/** A thread's time waiting for a core (src/scheduling.ts coreWaitClock, D144). */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "./helpers";

/** A child pinned to core 0 spins for `ms` of wall time and says how long it waited for the core, and its CPU time. */
const SPIN = `
import { coreWaitClock } from ${JSON.stringify(join(ROOT, "src/scheduling.ts"))};
const clock = coreWaitClock();
const waited = clock(), cpu = process.threadCpuUsage(), started = performance.now();
while (performance.now() - started < 300);
const used = process.threadCpuUsage(cpu);
console.log(JSON.stringify({ wall: performance.now() - started, waited: clock() - waited, cpuMs: (used.user + used.system) / 1000 }));
`;

test.if(process.platform === "linux" && Bun.which("taskset") !== null)(
  "a thread sharing its core with another busy one counts the time it waited: its wall time less the wait is its time on the core",
  async () => {
    // Two competitors on the same core, at the same priority: the scheduler gives each about a third of it, so the
    // child waits about twice as long as it runs (a clock of its time on the core would read half what it waited).
    const rivals = [0, 1].map(() =>
      Bun.spawn(["taskset", "-c", "0", "bun", "-e", "while (true);"], { stdout: "ignore" }),
    );
    try {
      await Bun.sleep(200);
      const child = Bun.spawnSync(["taskset", "-c", "0", "bun", "-e", SPIN], { cwd: ROOT });
      expect(child.exitCode).toBe(0);
      const { wall, waited, cpuMs } = JSON.parse(child.stdout.toString()) as {
        wall: number;
        waited: number;
        cpuMs: number;
      };
      // About two thirds, whatever else runs on core 0 (other test files' processes are not pinned away from it).
      expect(waited).toBeGreaterThan(0.5 * wall);
      expect(waited).toBeLessThan(wall);
      // What is charged (the wall time less the wait) is the time it ran, within the CPU clock's ticks (4 ms here).
      expect(Math.abs(wall - waited - cpuMs)).toBeLessThan(0.1 * wall + 10);
    } finally {
      for (const rival of rivals) rival.kill();
      await Promise.all(rivals.map((rival) => rival.exited));
    }
  },
);
