/**
 * bun bench/corpus/gen-corpus.ts --chunks 1000000 --out /tmp/synthetic.xml [--seed 1] [--compare]
 *
 * Writes a MediaWiki XML export (schema 0.10) of English-like synthetic pages that the real
 * snapshot:build reads, streamed page by page. Each page copies the shape of a real article of
 * the shared English dumps (sections, heading levels, paragraph lengths), so words per chunk,
 * chunks and sections per page follow them; its words follow bench/corpus/english-model.ts (real
 * English words at their real frequencies, then a Zipf tail of made-up words, so vocabulary
 * grows as Heaps' law says). Links and redirects come in the dumps' proportions.
 * --compare ingests the output and prints its statistics beside the dumps' (bench/corpus/corpus-stats.ts).
 * --mode mixed runs the old generator (every language's vocabulary): bench/corpus/gen-corpus-mixed.ts.
 */
import { SingleBar } from "cli-progress";
import { readArgs } from "../../src/cli/args";
import { ArgumentError } from "../../src/cli/main";
import { ingest } from "../../src/ingest";
import { corpusStats, sideBySide } from "./corpus-stats";
import { englishModel, ENGLISH_DUMPS, generateEnglish } from "./english-model";

const USAGE = `Usage: bun bench/corpus/gen-corpus.ts [--chunks N] [--out FILE] [--seed N] [--compare] [--mode english|mixed]
  --chunks N   chunks to aim for, as snapshot:build will cut them (default 1000000)
  --out FILE   the XML export to write (default /tmp/tome-synthetic.xml)
  --seed N     the same seed gives the same file (default 1)
  --compare    then ingest the file and print its statistics beside the shared English dumps'
  --mode       english (default) or mixed (the old generator, every language's vocabulary)`;

const fail = (message: string): never => {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
};
// Strict: an option mistyped (--chunk) was ignored, and a million chunks written to the default --out.
const { values } = (() => {
  try {
    return readArgs(Bun.argv.slice(2), {
      chunks: { type: "string", default: "1000000" },
      out: { type: "string", default: "/tmp/tome-synthetic.xml" },
      seed: { type: "string", default: "1" },
      mode: { type: "string", default: "english" },
      compare: { type: "boolean", default: false },
    });
  } catch (err) {
    if (err instanceof ArgumentError) return fail(err.message);
    throw err;
  }
})();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.mode === "mixed") {
  if (values.compare) fail("--compare is for --mode english (the mixed generator's corpus is not compared).");
  await import("./gen-corpus-mixed.ts");
  process.exit(0);
}
if (values.mode !== "english") fail(`--mode must be english or mixed, not ${values.mode}`);
const target = Number(values.chunks);
const seed = Number(values.seed);
if (!Number.isInteger(target) || target < 1) fail(`--chunks must be a positive whole number, not ${values.chunks}`);
if (!Number.isInteger(seed)) fail(`--seed must be a whole number, not ${values.seed}`);

console.error(`measuring ${ENGLISH_DUMPS.join(" + ")}…`);
const model = await englishModel();
console.error(
  `model: ${model.shapes.length} article shapes, ${model.vocabulary} real words (${model.headWords} of them at their measured frequency: ${(model.headShare * 100).toFixed(1)}% of tokens), Zipf tail s = ${model.zipfTail.toFixed(3)}, ` +
    `${model.redirectsPerArticle.toFixed(3)} redirects per article, ${(model.linksPerWord * 100).toFixed(2)} links per 100 words`,
);
const bar = process.stderr.isTTY
  ? new SingleBar({
      stream: process.stderr,
      format: " gen-corpus |{bar}| {percentage}% | {value}/{total} chunks | {eta_formatted} left",
      barsize: 24,
      hideCursor: true,
      clearOnComplete: false,
    })
  : undefined;
bar?.start(target, 0);
const started = performance.now();
let shown = 0;
const made = await generateEnglish(model, values.out as string, target, seed, (done) => {
  if (done - shown >= 1000) bar?.update(Math.min((shown = done), target));
});
bar?.update(target);
bar?.stop();
const seconds = (performance.now() - started) / 1000;
console.error(
  `wrote ${values.out}: ${made.pages} articles, ${made.redirects} redirects, ~${made.chunks} chunks in ${seconds.toFixed(1)} s ` +
    `(${Math.round(made.chunks / seconds)} chunks/s, ${(Bun.file(values.out as string).size / 1e6 / seconds).toFixed(1)} MB/s)`,
);
if (values.compare) {
  console.error("ingesting it through the real pipeline…");
  const synth = corpusStats([await ingest({ dumps: [values.out as string] })]);
  console.log(
    sideBySide(
      `shared English dumps (${ENGLISH_DUMPS.join(" + ")})`,
      model.realStats,
      `synthetic, --chunks ${target} --seed ${seed}`,
      synth,
    ),
  );
}
