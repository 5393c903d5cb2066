/**
 * bun bench/http/answer-json.ts [--snapshot FILE] [--rounds R]
 *
 * What the JSON of a search's answer costs the thread that makes it (issue 60: the request thread's time
 * for the cheapest query), and two ways round it:
 *
 * 1. JSON.stringify of a 9 KB object of five strings that need no escape, against the same with a newline
 *    and a quote in each: JavaScriptCore copies the first in one pass and writes the second character by
 *    character. Every chunk's text holds newlines.
 * 2. For real answers (answers.search with the API's defaults, as a request without options gets them):
 *    JSON.stringify as the server calls it, against the texts escaped first by a regular expression and
 *    handed to JSON.rawJSON (which parses what it is given, to check that it is one JSON value).
 * 3. A fresh answer's JSON.stringify against a second stringify of the same object, and after its strings were
 *    flattened (ropes resolved) first: µs per call, the median of 5,000 answers each timed alone.
 * µs per call, medians of R rounds of 5,000 calls (1. 20,000).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "../stats";

const HELP = `Usage: bun bench/http/answer-json.ts [options]

  --snapshot FILE   this snapshot (default: one built from the shared English dumps)
  --rounds R        rounds (default 5)
`;
const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    snapshot: { type: "string" },
    rounds: { type: "string", default: "5" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { apiContext } = await import("../../src/http");
const { open } = await import("../../src/search");
const { REQUEST_DEFAULTS } = await import("../queries");
const { benchSnapshot } = await import("../servers");

const rounds = Number(values.rounds);

/** µs per call of `f`, the median of the rounds. */
function timed(f: () => unknown, calls: number): number {
  const each: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    for (let i = 0; i < calls; i++) f();
    each.push(((performance.now() - t) / calls) * 1000);
  }
  return median(each);
}

const plain = "x".repeat(1800);
const escaped = `${"x".repeat(1800)}\n"abc"`;
const fiveOf = (s: string) => ({ a: s, b: s, c: s, d: s, e: s });
for (const o of [fiveOf(plain), fiveOf(escaped)]) timed(() => JSON.stringify(o), 20_000);
console.log("| five strings of 1.8 KB | µs a JSON.stringify |");
console.log("|---|---|");
console.log(`| no escape | ${timed(() => JSON.stringify(fiveOf(plain)), 20_000).toFixed(2)} |`);
console.log(`| a newline and a quote each | ${timed(() => JSON.stringify(fiveOf(escaped)), 20_000).toFixed(2)} |`);

const work = mkdtempSync(join(tmpdir(), "tome-answer-json-"));
const { path } = await benchSnapshot(values.snapshot, work);
const answers = apiContext(open(path)).answers;
const SPECIAL = /["\\\u0000-\u001f\u2028\u2029]/g;
const ESCAPES: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const escapeOne = (c: string) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
/** JSON.rawJSON (Stage 3, in JavaScriptCore; not yet in TypeScript's lib). */
const { rawJSON } = JSON as unknown as { rawJSON(text: string): unknown };
const raw = (s: string) => rawJSON(`"${s.replace(SPECIAL, escapeOne)}"`);
type Hit = { text: string; _formatted?: { text: string } };

console.log("\n| query | answer bytes | JSON.stringify µs | texts escaped + rawJSON µs | ratio |");
console.log("|---|---|---|---|---|");
for (const q of ["albedo", "Albert Einstein", "who invented the telephone", '"theory of relativity"']) {
  const answer = answers.search({ q, ...REQUEST_DEFAULTS }) as unknown as { hits: Hit[] };
  const json = JSON.stringify(answer);
  const viaRaw = () =>
    JSON.stringify({
      ...answer,
      hits: answer.hits.map((h) => ({
        ...h,
        text: raw(h.text),
        _formatted: h._formatted && { ...h._formatted, text: raw(h._formatted.text) },
      })),
    });
  if (viaRaw() !== json) throw new Error(`the two ways disagree on ${q}`);
  const a = timed(() => JSON.stringify(answer), 5_000);
  const b = timed(viaRaw, 5_000);
  console.log(`| ${q} | ${Buffer.byteLength(json)} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)} |`);
}

console.log(
  "\n| query | fresh answer: stringify µs | the same object again µs | strings flattened first: flattening µs, then stringify µs |",
);
console.log("|---|---|---|---|");
const flatten = (o: unknown): void => {
  if (typeof o !== "object" || o === null) return;
  for (const v of Object.values(o)) typeof v === "string" ? v.indexOf("\u0001") : flatten(v);
};
const timedOnce = (f: () => unknown) => {
  const t = performance.now();
  f();
  return (performance.now() - t) * 1000;
};
for (const q of ["albedo", "Albert Einstein"]) {
  const first: number[] = [];
  const second: number[] = [];
  const flattening: number[] = [];
  const afterFlattening: number[] = [];
  for (let i = 0; i < 6_000; i++) {
    const answer = answers.search({ q, ...REQUEST_DEFAULTS });
    const a = timedOnce(() => JSON.stringify(answer));
    const b = timedOnce(() => JSON.stringify(answer));
    const other = answers.search({ q, ...REQUEST_DEFAULTS });
    const c = timedOnce(() => flatten(other));
    const d = timedOnce(() => JSON.stringify(other));
    // The first thousand warm the code up.
    if (i >= 1_000)
      for (const [list, us] of [
        [first, a],
        [second, b],
        [flattening, c],
        [afterFlattening, d],
      ] as const)
        list.push(us);
  }
  const m = (x: number[]) => median(x).toFixed(1);
  console.log(`| ${q} | ${m(first)} | ${m(second)} | ${m(flattening)}, ${m(afterFlattening)} |`);
}
