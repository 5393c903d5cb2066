/**
 * bun bench/http/usage-save.ts --baseline DIR [--dir DIR] [--keys N] [--seconds S] [--rounds R]
 *
 * What the usage file's saves (usage.json, at most ten a second) cost the request thread (D130): this checkout's
 * UsageLedger against the one of the checkout at --baseline, in turns, in this process. A loop counts requests as the
 * keys step does (touch, hold, settle; N keys, their days' counters in the file) and lets the event loop turn between
 * two, as a server does between requests, for S seconds a round. For each ledger: requests a second, the request
 * thread's CPU a request (/proc/thread-self/schedstat), the time each request's counting held the thread (the p99 and
 * the max of all of them, and the median and max of those that saved), and the longest wait between two requests.
 * --dir: where the usage files go (default the system's temporary folder; a data folder's file system is the one to
 * try).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { median, quantile } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    baseline: { type: "string" },
    dir: { type: "string", default: tmpdir() },
    keys: { type: "string", default: "1000" },
    seconds: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help || !values.baseline) {
  process.stdout.write(
    "Usage: bun bench/http/usage-save.ts --baseline DIR (another checkout: its UsageLedger is the 'before')\n" +
      "       [--dir DIR (where the usage files go; default the system's temporary folder)] [--keys N (default 1000)]\n" +
      "       [--seconds S (a round, default 3)] [--rounds R (default 3)]\n",
  );
  process.exit(values.help ? 0 : 2);
}

type Ledger = import("../../src/access/usage").UsageLedger;
type LedgerClass = new (path: string) => Ledger;
const ledgers: Record<string, LedgerClass> = {
  after: (await import("../../src/access/usage")).UsageLedger,
  before: (await import(`${resolve(values.baseline)}/src/access/usage.ts`)).UsageLedger,
};

/** This thread's CPU time, µs (schedstat's nanoseconds: finer than stat's ticks). */
const threadUs = () => Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1000;
const turn = () => new Promise<void>((done) => setImmediate(done));

const keys = Array.from({ length: Number(values.keys) }, (_, i) => `key_${i.toString(36).padStart(6, "0")}`);
const month = new Date().toISOString().slice(0, 7);
const work = mkdtempSync(join(values.dir, "tome-usage-save-"));

interface Round {
  perSecond: number;
  cpuUs: number;
  p99: number;
  max: number;
  saves: number;
  saveMedian: number;
  saveMax: number;
  gapMax: number;
}

async function round(name: string, seconds: number): Promise<Round> {
  const path = join(work, `${name}.json`);
  rmSync(path, { force: true });
  const ledger = new ledgers[name]!(path);
  // Every key has used the server today: the file holds each one's counters, as a busy day's does.
  const now = Date.now();
  for (const key of keys) {
    ledger.touch(key, now);
    ledger.settle(ledger.hold("bench", month, 1, 1e12)!, 1, true, key, now);
  }
  await ledger.flush();
  // Which calls of flush() save (the ledger's own saves, when due): the request that made them is marked.
  let saved = false;
  const flush = ledger.flush.bind(ledger);
  const state = ledger as unknown as { dirty: boolean; saving?: Promise<void> };
  ledger.flush = () => {
    if (state.dirty && !state.saving) saved = true;
    return flush();
  };
  ledger.start();
  const held: number[] = [];
  const saving: number[] = [];
  let gapMax = 0;
  let n = 0;
  const cpu0 = threadUs();
  const start = performance.now();
  const until = start + seconds * 1000;
  let last = start;
  while (last < until) {
    const key = keys[n % keys.length]!;
    saved = false;
    const t0 = performance.now();
    gapMax = Math.max(gapMax, t0 - last);
    const at = Date.now();
    ledger.touch(key, at);
    ledger.settle(ledger.hold("bench", month, 1, 1e12)!, 1, true, key, at);
    const t1 = performance.now();
    held.push(t1 - t0);
    if (saved) saving.push(t1 - t0);
    n++;
    await turn();
    last = performance.now();
  }
  const cpuUs = (threadUs() - cpu0) / n;
  const elapsed = (performance.now() - start) / 1000;
  await ledger.stop();
  return {
    perSecond: n / elapsed,
    cpuUs,
    p99: quantile(held, 0.99) * 1000,
    max: held.reduce((a, b) => Math.max(a, b), 0) * 1000,
    saves: saving.length,
    saveMedian: saving.length ? median(saving) * 1000 : 0,
    saveMax: saving.reduce((a, b) => Math.max(a, b), 0) * 1000,
    gapMax: gapMax * 1000,
  };
}

const results: Record<string, Round[]> = { after: [], before: [] };
// A short round each first: the JIT's.
for (const name of ["after", "before"]) await round(name, 1);
for (let r = 0; r < Number(values.rounds); r++) {
  const order = r % 2 ? ["before", "after"] : ["after", "before"];
  for (const name of order) results[name]!.push(await round(name, Number(values.seconds)));
}
rmSync(work, { recursive: true, force: true });

const med = (name: string, k: keyof Round) => median(results[name]!.map((x) => x[k]));
const fmt = (x: number) => x.toLocaleString("en-US", { maximumFractionDigits: x < 10 ? 1 : 0 });
console.log(
  `${keys.length} keys, ${values.rounds} rounds of ${values.seconds} s, medians of the rounds; times in µs\n` +
    "| ledger | requests/s | CPU µs/request | held p99 | held max | saves | a saving request held: median / max | longest wait between two |\n" +
    "|---|---|---|---|---|---|---|---|",
);
for (const name of ["before", "after"])
  console.log(
    `| ${name} | ${fmt(med(name, "perSecond"))} | ${fmt(med(name, "cpuUs"))} | ${fmt(med(name, "p99"))} | ${fmt(med(name, "max"))} | ${fmt(med(name, "saves"))} | ${fmt(med(name, "saveMedian"))} / ${fmt(med(name, "saveMax"))} | ${fmt(med(name, "gapMax"))} |`,
  );
const ratio = (k: keyof Round) => median(results.after!.map((a, i) => a[k] / results.before![i]![k])).toFixed(2);
console.log(
  `after ÷ before (medians of the per-round ratios): a saving request held ${ratio("saveMedian")}×, the longest wait ${ratio("gapMax")}×, CPU a request ${ratio("cpuUs")}×`,
);
