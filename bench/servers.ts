/** What the HTTP benchmarks share: the snapshot they serve, a key, servers in their own processes, and the requests. */
import { readFileSync } from "node:fs";
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
 * The bench key's share of server time (D25), set out of the way as its rate is: so large
 * that it never refuses, while its bookkeeping still runs on every request.
 */
export const BENCH_WORK_SHARE = "1000000000";

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
