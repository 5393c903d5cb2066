/**
 * bun bench/build/phases.ts [dump …]   (default: every shared dump)
 *
 * Where the CPU of `ingest.ts`'s pipeline goes (issue 61: pipeline ÷ wtf_wikipedia alone), by phase and by thread:
 * each dump in a fresh process, as ingest.ts's per-dump table runs it (ingest() with its default workers, then
 * the snapshot written on this thread), and after each phase the CPU seconds of every thread of the process by its
 * name as Bun and JavaScriptCore give it (/proc/self/task/<tid>/stat: Worker = the parsing workers, JITWorker =
 * JavaScriptCore's compiler threads, bun = the main thread, mi-scavenger = mimalloc's, Bun's allocator; JSCWarmUp,
 * HeapHelper and the rest: the engine's own, not told apart here), and the main thread's own full collections (Bun.gc(true): how many, and their CPU on that thread).
 * The bzip2/xz decoders are processes of their own and not counted. One run a dump: read the medians of ingest.ts
 * for rates; this says what a run's CPU is made of.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ingest } from "../../src/ingest";
import { spentByName, threadSeconds } from "../servers";
import { dumpsOr, inChild, writeSnapshot } from "../support";

type ByName = Record<string, number>;

interface Phases {
  dump: string;
  ingest: ByName;
  write: ByName;
  collections: number;
  collectionsCpu: number;
}

const mainThreadSeconds = () => {
  const u = process.threadCpuUsage();
  return (u.user + u.system) / 1e6;
};

async function child(dump: string): Promise<Phases> {
  const gc = Bun.gc.bind(Bun);
  let collections = 0;
  let collectionsCpu = 0;
  Bun.gc = (full?: boolean) => {
    if (!full) return gc(full);
    const c0 = mainThreadSeconds();
    const heap = gc(true);
    collectionsCpu += mainThreadSeconds() - c0;
    collections++;
    return heap;
  };
  const options = { dumps: [dump], allowTruncated: true };
  const t0 = threadSeconds();
  const result = await ingest(options);
  const t1 = threadSeconds();
  const out = join(tmpdir(), `tome-bench-phases-${process.pid}.tome`);
  writeSnapshot(result, out, options);
  const t2 = threadSeconds();
  await Bun.file(out).delete();
  return {
    dump: dump.split("/").pop()!,
    ingest: spentByName(t0, t1),
    write: spentByName(t1, t2),
    collections,
    collectionsCpu,
  };
}

const COLUMNS = ["Worker", "JITWorker", "bun", "mi-scavenger", "JSCWarmUp", "HeapHelper"];
const sum = (by: ByName) => Object.values(by).reduce((n, s) => n + s, 0);

function row(name: string, by: ByName): string {
  const rest = sum(by) - COLUMNS.reduce((n, c) => n + (by[c] ?? 0), 0);
  const jit = (by.JITWorker ?? 0) / sum(by);
  return `| ${name} | ${sum(by).toFixed(2)} | ${COLUMNS.map((c) => (by[c] ?? 0).toFixed(2)).join(" | ")} | ${rest.toFixed(2)} | ${(100 * jit).toFixed(0)}% |`;
}

async function main() {
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    allowPositionals: true,
    options: { child: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log("Usage: bun bench/build/phases.ts [dump …]   (default: every shared dump)");
    return;
  }
  if (values.child) {
    console.log(JSON.stringify(await child(values.child)));
    return;
  }
  const dumps = dumpsOr(positionals);
  const all: Phases[] = [];
  console.log(
    `| dump, phase | CPU s | ${COLUMNS.join(" | ")} | other threads | compiler threads' share |\n|---|---|${"---|".repeat(COLUMNS.length + 2)}`,
  );
  for (const dump of dumps) {
    const p = await inChild<Phases>(import.meta.path, ["--child", dump]);
    all.push(p);
    console.log(row(`${p.dump}, ingest`, p.ingest));
    console.log(
      `${row(`${p.dump}, write`, p.write)} (${p.collections} full collections: ${p.collectionsCpu.toFixed(2)} s of the main thread)`,
    );
  }
  const sumOf = (bys: ByName[]): ByName => {
    const out: ByName = {};
    for (const by of bys) for (const [k, s] of Object.entries(by)) out[k] = (out[k] ?? 0) + s;
    return out;
  };
  console.log(row("**all, ingest**", sumOf(all.map((p) => p.ingest))));
  console.log(row("**all, write**", sumOf(all.map((p) => p.write))));
  console.log(row("**all**", sumOf(all.flatMap((p) => [p.ingest, p.write]))));
  const full = all.reduce((n, p) => n + p.collections, 0);
  const fullCpu = all.reduce((n, p) => n + p.collectionsCpu, 0);
  console.log(`\nThe main thread's full collections: ${full} in all, ${fullCpu.toFixed(2)} CPU-s.`);
}

await main();
