/**
 * bun bench/http/request-profile.ts [--snapshot FILE] [--seconds S] [--class NAME]
 *
 * Where a search request's time goes in the server's thread (issue 43), in this process, one
 * core: each stage of answering one query class (bench/queries.ts) is added on top of the one
 * before, and the searches a second of each are timed in turns (rounds interleave the stages;
 * medians). Stages: the engine's search; the answer's body (hits as resources, attribution);
 * its JSON; the app's routes alone (Elysia: routing, the strict reader, the response); the
 * whole pipeline without keys; the whole pipeline with a key (src/access on a temporary store).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const HELP = `Usage: bun bench/http/request-profile.ts [options]

  --snapshot FILE   this snapshot (default: one built from the shared English dumps)
  --seconds S       seconds per stage and round (default 1)
  --rounds R        rounds (default 3)
  --class NAME      the query class of bench/queries.ts (default "single word")
`;
const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    seconds: { type: "string", default: "1" },
    rounds: { type: "string", default: "3" },
    class: { type: "string", default: "single word" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const tools = await import("../../src/access");
const { apiContext, createApp } = await import("../../src/http");
const { DEFAULTS, open } = await import("../../src/search");
const { mixClass, queryMix, REQUEST_DEFAULTS } = await import("../queries");
const { benchSnapshot, inProcessBenchKey } = await import("../servers");

const seconds = Number(values.seconds);
const work = mkdtempSync(join(tmpdir(), "tome-request-profile-"));
const { path, snapshot } = await benchSnapshot(values.snapshot, work);
const engine = open(path);
const make = mixClass(queryMix(snapshot), values.class!);
const queries = Array.from({ length: 100 }, make).filter((q) => q.replace(/"/g, "").trim());
const urls = queries.map((q) => `http://localhost/v1/search?q=${encodeURIComponent(q)}`);

const ctx = apiContext(engine);
const noPdf = { render: () => Promise.reject(new Error("no PDFs here")), close() {} };
const open_ = createApp(engine, { pdf: noPdf as never });
const { key, access } = inProcessBenchKey(tools, join(work, "data"));
const keyed = createApp(engine, { pdf: noPdf as never, access });

type Stage = (i: number) => unknown;
const STAGES: Record<string, Stage> = {
  "engine.search": (i) => engine.search(queries[i % queries.length]!, DEFAULTS),
  "+ answer body": (i) => ctx.answers.search({ q: queries[i % queries.length]!, ...REQUEST_DEFAULTS }),
  "+ JSON": (i) => JSON.stringify(ctx.answers.search({ q: queries[i % queries.length]!, ...REQUEST_DEFAULTS })),
  "routes (Elysia) alone": (i) => open_.routes.handle(new Request(urls[i % urls.length]!)).then((r) => r.arrayBuffer()),
  "pipeline, no keys": (i) =>
    Promise.resolve(open_.handle(new Request(urls[i % urls.length]!))).then((r) => r.arrayBuffer()),
  "pipeline, with a key": (i) =>
    Promise.resolve(keyed.handle(new Request(urls[i % urls.length]!, { headers: { "x-api-key": key } }))).then((r) =>
      r.arrayBuffer(),
    ),
};

async function rate(stage: Stage): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    const r = stage(n++);
    if (r instanceof Promise) await r;
  }
  return n / seconds;
}

const rates = new Map(Object.keys(STAGES).map((name) => [name, [] as number[]]));
for (const stage of Object.values(STAGES)) for (let i = 0; i < 200; i++) await stage(i);
for (let r = 0; r < Number(values.rounds); r++)
  for (const [name, stage] of Object.entries(STAGES)) rates.get(name)!.push(await rate(stage));
access.stop();

console.log(`${values.class}: ${queries.length} queries, medians of ${values.rounds} rounds of ${seconds} s`);
console.log("| stage | per second | µs each | µs over the stage before |");
console.log("|---|---|---|---|");
let before = 0;
for (const [name, list] of rates) {
  const us = 1e6 / median(list);
  console.log(
    `| ${name} | ${median(list).toFixed(0)} | ${us.toFixed(1)} | ${before ? (us - before).toFixed(1) : ""} |`,
  );
  before = us;
}
