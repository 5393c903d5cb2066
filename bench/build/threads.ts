/**
 * bun bench/build/threads.ts [--workers N] [dump …]
 *
 * Where an ingest's CPU goes, by thread (issue 61: why two parsing workers are not twice one): every dump given
 * (default: every shared dump) ingested in turn in this process with a build's parsing workers, as
 * `ingest.ts --workers-only` does; after each, the CPU seconds each thread of the process spent on it
 * (/proc/self/task/<tid>/stat, by the thread's name: Worker, JITWorker, bun = the main thread, …), and at the end
 * the totals by name. The bzip2/xz decoders are processes of their own and not counted.
 */
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  allowPositionals: true,
  options: { workers: { type: "string", default: "2" }, help: { type: "boolean", short: "h" } },
});
if (values.help) {
  console.log("Usage: bun bench/build/threads.ts [--workers N] [dump …]   (default: 2 workers, every shared dump)");
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { buildParsingWorker } = await import("../../src/build");
const { ingest } = await import("../../src/ingest");
const { spentByName, threadSeconds } = await import("../servers");
const { dumpsOr } = await import("../support");

const workers = Number(values.workers);
const dumps = dumpsOr(positionals);

const nameOf = (key: string) => key.slice(key.indexOf(" ") + 1);
const byName: Record<string, number> = {};
let before = threadSeconds();
const t0 = performance.now();
console.log("| dump | wall s | CPU s by thread (over 0.05) |");
console.log("|---|---|---|");
for (const dump of dumps) {
  const d0 = performance.now();
  await ingest({
    dumps: [dump],
    allowTruncated: true,
    workers,
    parsingWorker: buildParsingWorker(),
    onArticle: () => {},
  });
  const now = threadSeconds();
  const spent: string[] = [];
  for (const [key, s] of now) {
    const d = s - (before.get(key) ?? 0);
    if (d > 0.05) spent.push(`${nameOf(key)} ${d.toFixed(2)}`);
  }
  spentByName(before, now, byName);
  before = now;
  console.log(`| ${dump.split("/").pop()} | ${((performance.now() - d0) / 1000).toFixed(2)} | ${spent.join(", ")} |`);
}
console.log(
  `\n${workers} worker(s), ${((performance.now() - t0) / 1000).toFixed(1)} s wall in all; CPU s by thread name:`,
);
for (const [name, s] of Object.entries(byName).sort((a, b) => b[1] - a[1]))
  if (s > 0.05) console.log(`- ${name}: ${s.toFixed(1)}`);
