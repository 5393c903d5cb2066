/** A thread's time waiting for a core (src/scheduling.ts coreWaitClock), and a search worker's charge without it (D144). */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EN_2006, EN_2016, ROOT, snapshotFor } from "./helpers";

setDefaultTimeout(60_000);

/** The first core this process may run on: the children and their rivals are pinned to it. */
const core = (readFileSync("/proc/self/status", "utf8").match(/^Cpus_allowed_list:\s*(\d+)/m) ?? [])[1] ?? "0";
const pinned = (argv: string[]) => ["taskset", "-c", core, ...argv];

/** Runs `script` (bun -e) pinned to `core` beside two busy processes pinned there too: it gets about a third of the core. */
async function besideTwoRivals(script: string, ...args: string[]): Promise<Record<string, number>> {
  const rivals = [0, 1].map(() => Bun.spawn(pinned(["bun", "-e", "while (true);"]), { stdout: "ignore" }));
  try {
    await Bun.sleep(200);
    const child = Bun.spawnSync(pinned(["bun", "-e", script, ...args]), { cwd: ROOT });
    expect(child.stderr.toString()).toBe("");
    expect(child.exitCode).toBe(0);
    return JSON.parse(child.stdout.toString()) as Record<string, number>;
  } finally {
    for (const rival of rivals) rival.kill();
    await Promise.all(rivals.map((rival) => rival.exited));
  }
}

const linux = process.platform === "linux" && Bun.which("taskset") !== null;

test.if(linux)(
  "a thread sharing its core with busy ones counts the time it waited: its wall time less the wait is its time on the core",
  async () => {
    const { wall, waited, cpuMs } = await besideTwoRivals(`
      import { coreWaitClock } from ${JSON.stringify(join(ROOT, "src/scheduling.ts"))};
      const clock = coreWaitClock();
      const waited = clock.read(), cpu = process.threadCpuUsage(), started = performance.now();
      while (performance.now() - started < 300);
      const used = process.threadCpuUsage(cpu);
      console.log(JSON.stringify({ wall: performance.now() - started, waited: clock.read() - waited, cpuMs: (used.user + used.system) / 1000 }));
    `);
    // About two thirds, or more if other work runs on that core (other test files' processes are not kept off it); a
    // clock of the thread's time on the core would read about a third.
    expect(waited!).toBeGreaterThan(0.5 * wall!);
    // What is charged (the wall time less the wait) is the time it ran, within the CPU clock's ticks (4 ms here).
    expect(Math.abs(wall! - waited! - cpuMs!)).toBeLessThan(0.1 * wall! + 10);
  },
);

test.if(linux)(
  "a search worker sharing its core with busy ones charges its searches' time on the core, not their wall time (D144)",
  async () => {
    const path = await snapshotFor({ dumps: [EN_2016, EN_2006] });
    const { charged, wall } = await besideTwoRivals(
      `
      import { SearchPool } from ${JSON.stringify(join(ROOT, "src/http/pool/pool.ts"))};
      import { open } from ${JSON.stringify(join(ROOT, "src/search/index.ts"))};
      const path = process.argv.at(-1);
      const pool = new SearchPool({ workers: 1, searchTimeoutMs: 60_000 });
      const generation = pool.generation(path, open(path).snapshot.meta.contentHash);
      await generation.ready;
      const args = { q: "history of the world war", limit: 50, offset: 0, crop_length: 200, highlight: true };
      const search = () => pool.run(generation.generation, "search", args);
      for (let i = 0; i < 10; i++) await search();
      let charged = 0;
      const started = performance.now();
      // One at a time: the worker's tasks fill nearly all of the wall time.
      for (let i = 0; i < 30; i++) charged += (await search()).ms;
      console.log(JSON.stringify({ charged, wall: performance.now() - started }));
      pool.stop();
      process.exit(0);
    `,
      path,
    );
    // The worker ran about a third of the time (wall time charged: nearly all of it).
    expect(charged!).toBeLessThan(0.6 * wall!);
    expect(charged!).toBeGreaterThan(0.1 * wall!);
  },
);

test.if(linux)(
  "the request thread sharing its core with busy ones charges a key its requests' time on the core, not their wall time (D25 amended)",
  async () => {
    const path = await snapshotFor({ dumps: [EN_2016, EN_2006] });
    const { charged, wall, cpuMs } = await besideTwoRivals(
      `
      import { mkdtempSync } from "node:fs";
      import { tmpdir } from "node:os";
      import { join } from "node:path";
      import { Access, createKey, updateKeyFile } from ${JSON.stringify(join(ROOT, "src/access/index.ts"))};
      import { createApp } from ${JSON.stringify(join(ROOT, "src/http/index.ts"))};
      import { open } from ${JSON.stringify(join(ROOT, "src/search/index.ts"))};
      const engine = open(process.argv.at(-1));
      const dir = mkdtempSync(join(tmpdir(), "tome-data-"));
      const key = updateKeyFile(dir, (f) =>
        createKey(f, { name: "k", account: "k", plan: "enterprise", scope: "read", now: Date.now() }),
      ).key;
      const access = new Access({ dataDir: dir });
      const app = createApp(engine, { access, pdf: { render: () => Promise.reject(new Error("no PDFs")), close() {} } });
      const pages = engine.snapshot.pages;
      let longest = 0;
      for (let i = 1; i < pages.length; i++) if (pages.chunkCounts[i] > pages.chunkCounts[longest]) longest = i;
      const url = "http://localhost/v1/page/" + pages.ids[longest] + "?format=concat";
      const ask = async () => (await app.handle(new Request(url, { headers: { "X-API-Key": key } }))).arrayBuffer();
      for (let i = 0; i < 10; i++) await ask();
      const before = access.workCharged().get("enterprise");
      const cpu = process.threadCpuUsage(), started = performance.now();
      // One at a time: the requests fill nearly all of the wall time.
      for (let i = 0; i < 30; i++) await ask();
      const wall = performance.now() - started, used = process.threadCpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000;
      console.log(JSON.stringify({ charged: access.workCharged().get("enterprise") - before, wall, cpuMs }));
      app.close();
      await access.stop();
      process.exit(0);
    `,
      path,
    );
    // The request thread ran about a third of the time, or less on a loaded machine (wall time charged: nearly all of
    // it; workCharged is in ms). What is charged is the thread's CPU time over the requests, within the CPU clock's
    // ticks and the time between requests, which is nobody's.
    expect(charged!).toBeLessThan(0.6 * wall!);
    expect(charged!).toBeGreaterThan(0.6 * cpuMs!);
    expect(charged!).toBeLessThan(1.3 * cpuMs!);
  },
);
