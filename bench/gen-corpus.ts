/**
 * bun bench/gen-corpus.ts --chunks 1000000 --out /tmp/synthetic.xml [--seed 1] [--compare]
 *
 * Writes a MediaWiki XML export (schema 0.10) of English-like synthetic pages that the real
 * snapshot:build reads, streamed page by page. Each page copies the shape of a real article of
 * the shared English dumps (sections, heading levels, paragraph lengths), so words per chunk,
 * chunks and sections per page follow them; its words follow bench/english-model.ts (real
 * English words at their real frequencies, then a Zipf tail of made-up words, so vocabulary
 * grows as Heaps' law says). Links and redirects come in the dumps' proportions.
 * --compare ingests the output and prints its statistics beside the dumps' (bench/corpus-stats.ts).
 * --mode mixed runs the old generator (every language's vocabulary): bench/gen-corpus-mixed.ts.
 */
import { createWriteStream } from "node:fs";
import { parseArgs } from "node:util";
import { SingleBar } from "cli-progress";
import { ingest } from "../src/ingest";
import { corpusStats, sideBySide } from "./corpus-stats";
import { englishModel, ENGLISH_DUMPS, prng, type EnglishModel, type PageShape } from "./english-model";

const USAGE = `Usage: bun bench/gen-corpus.ts [--chunks N] [--out FILE] [--seed N] [--compare] [--mode english|mixed]
  --chunks N   chunks to aim for, as snapshot:build will cut them (default 1000000)
  --out FILE   the XML export to write (default /tmp/tome-synthetic.xml)
  --seed N     the same seed gives the same file (default 1)
  --compare    then ingest the file and print its statistics beside the shared English dumps'
  --mode       english (default) or mixed (the old generator, every language's vocabulary)`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    chunks: { type: "string", default: "1000000" },
    out: { type: "string", default: "/tmp/tome-synthetic.xml" },
    seed: { type: "string", default: "1" },
    mode: { type: "string", default: "english" },
    compare: { type: "boolean", default: false },
    help: { type: "boolean", short: "h" },
  },
  strict: false,
});
const fail = (message: string): never => {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
};
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.mode === "mixed") {
  await import("./gen-corpus-mixed.ts");
  process.exit(0);
}
if (values.mode !== "english") fail(`--mode must be english or mixed, not ${values.mode}`);
const target = Number(values.chunks);
const seed = Number(values.seed);
if (!Number.isInteger(target) || target < 1) fail(`--chunks must be a positive whole number, not ${values.chunks}`);
if (!Number.isInteger(seed)) fail(`--seed must be a whole number, not ${values.seed}`);

/** Writes `chunks` English-like chunks (about) to out; returns pages, redirects and chunks written. */
export async function generateEnglish(model: EnglishModel, out: string, chunks: number, seed: number, onProgress?: (chunks: number) => void) {
  const random = prng(seed);
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  // A CV syllable per digit in base 85: distinct numbers give distinct names, with no memory of the titles given.
  const syllables = [..."bcdfghjklmnprstvz"].flatMap((c) => [..."aeiou"].map((v) => c + v));
  const name = (n: number) => {
    let s = "";
    for (let x = n + syllables.length; x > 0; x = Math.floor(x / syllables.length)) s = syllables[x % syllables.length] + s;
    return cap(s);
  };
  /** The title of page number n, a pure function of n: links and redirects name earlier pages with it. */
  const titleOf = (n: number) => {
    const r = prng(seed ^ Math.imul(n, 0x9e3779b1));
    const words = Math.floor(r() * 3);
    const prefix = Array.from({ length: words }, () => cap(model.word(0.6 + 0.4 * r())));
    return [...prefix, name(n)].join(" ").replace(/[[\]|{}#<>]/g, "");
  };
  const sentence = (n: number, pageNo: number) => {
    const ws: string[] = [];
    for (let i = 0; i < n; i++) {
      const w = model.word(random());
      ws.push(random() < model.linksPerWord && pageNo > 1 ? `[[${titleOf(1 + Math.floor(random() * (pageNo - 1)))}|${w}]]` : w);
    }
    return `${ws.join(" ")}.`;
  };
  const paragraph = (words: number, pageNo: number) => {
    const out: string[] = [];
    for (let left = words; left > 0; ) {
      const n = Math.min(left, 8 + Math.floor(random() * 28));
      out.push(sentence(n, pageNo));
      left -= n;
    }
    return out.join(" ");
  };
  const wikitext = (shape: PageShape, pageNo: number) => {
    const parts: string[] = [];
    shape.sections.forEach((s, i) => {
      if (i > 0) {
        const eq = "=".repeat(Math.max(2, s.level));
        parts.push(`${eq} ${cap(Array.from({ length: s.headingWords }, () => model.word(random())).join(" "))} ${eq}`);
      }
      for (const words of s.blocks) parts.push(paragraph(words, pageNo));
    });
    return parts.join("\n\n");
  };
  const chunksOf = model.shapes.map((s) => s.chunks);

  const file = createWriteStream(out);
  const write = (s: string) => new Promise<void>((res) => (file.write(s) ? res() : file.once("drain", () => res())));
  await write(`<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Synthetic English</sitename>
    <dbname>enwiki</dbname>
    <base>https://synthetic.example.org/wiki/Main_Page</base>
    <namespaces><namespace key="0" /></namespaces>
  </siteinfo>
`);
  const page = (n: number, title: string, text: string) => {
    const ts = new Date(Date.UTC(2020, 0, 1) + n * 60_000).toISOString().replace(/\.000Z$/, "Z");
    return `  <page>\n    <title>${xml(title)}</title>\n    <ns>0</ns>\n    <id>${n}</id>\n    <revision>\n      <id>${1_000_000 + n}</id>\n      <timestamp>${ts}</timestamp>\n      <text xml:space="preserve">${xml(text)}</text>\n    </revision>\n  </page>\n`;
  };
  let written = 0;
  let pages = 0;
  let redirects = 0;
  let n = 0;
  while (written < chunks) {
    const i = Math.floor(random() * model.shapes.length);
    const title = titleOf(++n);
    await write(page(n, title, wikitext(model.shapes[i]!, n)));
    pages++;
    written += chunksOf[i]!;
    // Redirects to this page, as many per article on average as in the dumps.
    for (let r = model.redirectsPerArticle; r > 0 && random() < r; r--) {
      ++n;
      await write(page(n, titleOf(n), `#REDIRECT [[${title}]]`));
      redirects++;
    }
    onProgress?.(written);
  }
  await write("</mediawiki>\n");
  await new Promise<void>((res) => file.end(res));
  return { pages, redirects, chunks: written };
}

console.error(`measuring ${ENGLISH_DUMPS.join(" + ")}…`);
const model = await englishModel();
console.error(
  `model: ${model.shapes.length} article shapes, ${model.vocabulary} real words, Zipf tail s = ${model.zipfTail.toFixed(3)}, ` +
    `${model.redirectsPerArticle.toFixed(3)} redirects per article, ${(model.linksPerWord * 100).toFixed(2)} links per 100 words`,
);
const bar = process.stderr.isTTY
  ? new SingleBar({ stream: process.stderr, format: " gen-corpus |{bar}| {percentage}% | {value}/{total} chunks | {eta_formatted} left", barsize: 24, hideCursor: true, clearOnComplete: false })
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
  console.log(sideBySide(`shared English dumps (${ENGLISH_DUMPS.join(" + ")})`, model.realStats, `synthetic, --chunks ${target} --seed ${seed}`, synth));
}
