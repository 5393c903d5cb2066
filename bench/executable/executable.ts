/**
 * bun bench/executable/executable.ts [--rounds 7]
 *
 * The executable of `bun run compile` (issue 45): its size, and its start time against the
 * checkout's: from spawning the process to its first answered search, on the same snapshot
 * (the sample dump's, built once), the median of `--rounds` starts of each, alternated:
 *   dist/tome start               the executable
 *   bun run start                 package.json's script (src/cli/run.sh: checks Bun and the
 *                                 dependencies with bun install --frozen-lockfile, then bun src/cli/start.ts)
 *   bun src/cli/start.ts          the server alone, what bun run start ends in
 */
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const USAGE = `Usage: bun bench/executable/executable.ts [--rounds N]
  --rounds N   starts of each kind; the median is reported (default 7)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { rounds: { type: "string", default: "7" }, help: { type: "boolean", short: "h" } },
  strict: true,
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { compile } = await import("../../src/cli/compile");
const { buildSnapshot } = await import("../../src/cli/snapshot-build");
const { DEFAULT_CHUNK_WORDS } = await import("../../src/ingest");
const { dump, launch, ROOT, START, tempDir } = await import("../support");

const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`--rounds takes a whole number ≥ 1.\n${USAGE}`);
  process.exit(2);
}

const dir = tempDir("tome-executable-bench-");
const exe = join(dir, "tome");
const compileStarted = performance.now();
const bytes = await compile(exe);
const compileSeconds = (performance.now() - compileStarted) / 1000;
const snapshot = await buildSnapshot(
  {
    dumps: [dump("enwiki-2016-sample.xml.bz2")],
    out: join(dir, "sample.tome"),
    chunkWords: DEFAULT_CHUNK_WORDS,
    allowTruncated: false,
  },
  () => {},
);

const KINDS: Record<string, string[]> = {
  "dist/tome start": [exe, "start"],
  "bun run start": ["bun", "run", "start"],
  "bun src/cli/start.ts": ["bun", START],
};

/** Seconds from spawn to the first answered search. */
async function startOnce(command: string[]): Promise<number> {
  const t0 = performance.now();
  const run = launch(
    command,
    {
      TOME_SNAPSHOT: snapshot,
      TOME_AUTH: "off",
      TOME_DATA: tempDir("tome-data-"),
      HOST: "127.0.0.1",
      TOME_SNAPSHOT_WATCH: "off",
    },
    { cwd: ROOT, ignoreStdout: true },
  );
  const url = await run.serving(60_000);
  if (!url) throw new Error(`${command.join(" ")} did not start:\n${run.stderr()}`);
  const res = await fetch(`${url}/v1/search?q=anarchism`);
  if (res.status !== 200) throw new Error(`${command.join(" ")}: search answered ${res.status}`);
  await res.arrayBuffer();
  const seconds = (performance.now() - t0) / 1000;
  run.proc.kill("SIGTERM");
  await run.exited();
  return seconds;
}

const times: Record<string, number[]> = Object.fromEntries(Object.keys(KINDS).map((k) => [k, []]));
for (let r = 0; r < rounds; r++)
  for (const [kind, command] of Object.entries(KINDS)) times[kind]!.push(await startOnce(command));

const base = median(times["bun run start"]!);
console.log(
  `dist/tome: ${(bytes / 1e6).toFixed(1)} MB (compiled in ${compileSeconds.toFixed(1)} s; bun ${Bun.version}, ${process.platform}-${process.arch})`,
);
console.log(
  `spawn to first answered search, on the sample snapshot (${(statSync(snapshot).size / 1e6).toFixed(1)} MB), median of ${rounds}:`,
);
for (const [kind, list] of Object.entries(times)) {
  const m = median(list);
  console.log(
    `  ${kind.padEnd(22)} ${(m * 1000).toFixed(0)} ms (${(m / base).toFixed(2)}× bun run start; runs ${list.map((s) => (s * 1000).toFixed(0)).join(", ")} ms)`,
  );
}
rmSync(dir, { recursive: true, force: true });
