/** What the HTTP benchmarks share: the snapshot they serve, a key, servers in their own processes, and the requests. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { openSnapshot, type Snapshot } from "../src/snapshot";
import { buildSnapshot, dump, ROOT, spawnServer as spawn, type SpawnedServer } from "./support";
import { pagesWithText } from "./queries";

export { ROOT } from "./support";

/** The given snapshot, or one built into dir from the shared English dumps (enwiki-2016-sample + enwik8-head). */
export async function benchSnapshot(
  given: string | undefined,
  dir: string,
): Promise<{ path: string; snapshot: Snapshot }> {
  if (given) return { path: given, snapshot: openSnapshot(given) };
  console.error("building a snapshot of enwiki-2016-sample + enwik8-head…");
  const path = join(dir, "shared.tome");
  await buildSnapshot({ dumps: [dump("enwiki-2016-sample.xml.bz2"), dump("enwik8-head.xml.bz2")] }, path);
  return { path, snapshot: openSnapshot(path) };
}

/**
 * The bench key's share of server time (D25), set out of the way as its rate is: the most the server takes (a second
 * of every thread it can have), which never refuses, while its bookkeeping still runs on every request.
 */
export const BENCH_WORK_SHARE = "65000";

/**
 * benchKey in this process, for the in-process benchmarks: the key and the Access that reads it, its rate and work
 * share out of the way. `tools` is the access module of the checkout measured (another root's, for an A/B).
 */
export function inProcessBenchKey(
  tools: typeof import("../src/access"),
  dataDir: string,
): { key: string; access: InstanceType<typeof tools.Access> } {
  const key = tools.updateKeyFile(dataDir, (f) =>
    tools.createKey(f, { name: "bench", account: "bench", plan: "enterprise", scope: "read", now: Date.now() }),
  ).key;
  tools.updateKeyFile(dataDir, (f) => {
    f.accounts.bench!.rate = 1e9;
  });
  return { key, access: new tools.Access({ dataDir, keyMsPerSecond: Number(BENCH_WORK_SHARE) }) };
}

/** A key in dataDir for an enterprise account whose rate limit is out of the way (made with the key tool of root). */
export async function benchKey(dataDir: string, root = ROOT): Promise<string> {
  const tool = join(root, "src/cli/keys.ts");
  const env = { ...process.env, TOME_DATA: dataDir };
  const made = JSON.parse(
    await Bun.$`bun ${tool} create --name bench --account bench --plan enterprise --json`.env(env).text(),
  );
  await Bun.$`bun ${tool} plan --account bench --plan enterprise --rate 1000000`.env(env).quiet();
  return made.key;
}

/** A server a benchmark started. */
export type BenchServer = SpawnedServer;

/**
 * Runs command (a server: src/cli/start.ts, perhaps behind taskset or valgrind) and waits until
 * it says where it serves, as the tests start theirs (bench/support.ts), but in the current
 * directory, with its request log (stdout) dropped and up to 10 minutes to start (valgrind).
 */
export function spawnServer(
  command: string[],
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): Promise<BenchServer> {
  return spawn(command, env, { cwd, ignoreStdout: true, timeoutMs: 600_000 });
}

/** CPU milliseconds a process has used (all its threads), from /proc. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * CPU ms of a process's threads (this one by default), by kind: the request (main) thread, the search workers (Bun
 * names their threads "Worker"), and the rest (JIT, GC, Bun's own, and threads that have ended); `compilers` holds
 * each live optimizing-compiler thread's ms by thread id ("JITWorker": every heap, the main thread's and each
 * worker's, compiles its hot code for itself), for compilerMs().
 */
export function threadCpu(pid: number | "self" = "self"): {
  main: number;
  workers: number;
  other: number;
  compilers: Map<number, number>;
} {
  const cpu = { main: 0, workers: 0, other: 0, compilers: new Map<number, number>() };
  const main = pid === "self" ? process.pid : pid;
  for (const { tid, name, fields } of threadsOf(pid)) {
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    if (tid === main) cpu.main += ms;
    else if (name === "Worker") cpu.workers += ms;
    else if (name === "JITWorker") cpu.compilers.set(tid, ms);
  }
  // The rest from the process's total, which keeps the time of threads that have ended (JIT threads come and go).
  cpu.other = cpuMs(main) - cpu.main - cpu.workers;
  return cpu;
}

/**
 * The optimizing compilers' ms between two readings of threadCpu(), thread by thread (a thread started meanwhile from
 * 0). A compiler thread that ended meanwhile is not there to read: its time stays in `other` only.
 */
export function compilerMs(before: ReturnType<typeof threadCpu>, after: ReturnType<typeof threadCpu>): number {
  let ms = 0;
  for (const [tid, now] of after.compilers) ms += Math.max(0, now - (before.compilers.get(tid) ?? 0));
  return ms;
}

/**
 * Each thread of a process (this one by default), from /proc/PID/task/TID/stat: its id, its name (cut to 15
 * characters) and the fields after the name (`fields[0]` is the state, the 3rd field: utime is `fields[11]`, nice
 * `fields[16]`). A thread that ends meanwhile is left out; a process that has ended has none.
 */
export function threadsOf(pid: number | "self" = "self"): { tid: number; name: string; fields: string[] }[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      return [{ tid: Number(tid), name, fields: stat.slice(stat.lastIndexOf(")") + 2).split(" ") }];
    } catch {
      return [];
    }
  });
}

/** CPU seconds each thread of this process has spent so far, keyed "tid name" (to tell threads of one name apart). */
export const threadSeconds = (): Map<string, number> =>
  new Map(
    threadsOf().map(({ tid, name, fields }) => [`${tid} ${name}`, (Number(fields[11]) + Number(fields[12])) / 100]),
  );

/** What each thread name spent between two readings of threadSeconds(), added into `into`. */
export function spentByName(
  before: Map<string, number>,
  after: Map<string, number>,
  into: Record<string, number> = {},
): Record<string, number> {
  for (const [key, s] of after) {
    const name = key.slice(key.indexOf(" ") + 1);
    into[name] = (into[name] ?? 0) + s - (before.get(key) ?? 0);
  }
  return into;
}

/** count chunk ids of the snapshot, drawn at random with a fixed seed. */
export function randomChunkIds(snapshot: Snapshot, count = 1000): string[] {
  const table = snapshot.pages;
  const withText = pagesWithText(snapshot);
  let seed = 11;
  const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
  return Array.from({ length: count }, () => {
    const i = withText[Math.floor(random() * withText.length)]!;
    return `${table.ids[i]}_${Math.floor(random() * table.chunkCounts[i]!)}`;
  });
}
