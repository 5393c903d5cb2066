/**
 * bun bench/corpus/gen-corpus.ts --mode mixed --chunks 1000000 --out /tmp/synthetic.xml
 *
 * The old mode of bench/corpus/gen-corpus.ts (RESULTS-search-synthetic.md was measured with it). Writes a MediaWiki XML export (schema 0.10) of synthetic pages whose words are drawn from
 * the real dumps' vocabulary with Zipf frequencies (s = 1.0): titles, an intro, sections
 * with headings, paragraphs of sentences, a few links and bold words, so that the real
 * pipeline (snapshot:build) builds it. Japanese words come in at their real frequency.
 * About one chunk per section or intro: --chunks sets how many to aim for.
 */
import { createWriteStream } from "node:fs";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    chunks: { type: "string", default: "1000000" },
    out: { type: "string", default: "/tmp/tome-synthetic.xml" },
    seed: { type: "string", default: "1" },
    mode: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log("Usage: bun bench/corpus/gen-corpus.ts --mode mixed [--chunks N] [--out FILE] [--seed N]");
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { ingest } = await import("../../src/ingest");
const { dumpsDir } = await import("../support");

const SHARED = dumpsDir();
const target = Number(values.chunks);

// Vocabulary: every word of the shared dumps' chunks, ranked by frequency.
const counts = new Map<string, number>();
const WORD = /[\p{L}\p{N}]+/gu;
const JAPANESE = new Intl.Segmenter("ja", { granularity: "word" });
for (const file of readdirSync(SHARED).filter((f) => !f.includes("enwik8-head-truncated"))) {
  const r = await ingest({ dumps: [join(SHARED, file)], allowTruncated: true });
  for (const a of r.articles)
    for (const c of a.chunks) {
      const words =
        r.wiki.lang === "ja"
          ? [...JAPANESE.segment(c.text)].filter((s) => s.isWordLike).map((s) => s.segment)
          : (c.text.match(WORD) ?? []);
      for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  console.error(`vocabulary: read ${file}, ${counts.size} distinct words`);
}
const vocab = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([w]) => w);
// Zipf: P(rank r) ∝ 1/r; sample by inverting the cumulative distribution.
const cumulative = new Float64Array(vocab.length);
let sum = 0;
for (let r = 0; r < vocab.length; r++) cumulative[r] = sum += 1 / (r + 1);

let seed = Number(values.seed);
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
function word(): string {
  const x = random() * sum;
  let lo = 0;
  let hi = vocab.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return vocab[lo]!;
}
const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function sentence(): string {
  const n = int(6, 22);
  const ws: string[] = [];
  for (let i = 0; i < n; i++) {
    let w = word();
    const roll = random();
    if (roll < 0.03) w = `[[${w}]]`;
    else if (roll < 0.04) w = `'''${w}'''`;
    ws.push(w);
  }
  return `${cap(ws.join(" "))}.`;
}

function paragraph(words: number): string {
  const out: string[] = [];
  let n = 0;
  while (n < words) {
    const s = sentence();
    out.push(s);
    n += s.split(" ").length;
  }
  return out.join(" ");
}

/** A section of 1–3 paragraphs, 30–250 words: one chunk at 300 words per chunk. */
function sectionBody(): string {
  const paras = int(1, 3);
  const words = int(30, 250);
  return Array.from({ length: paras }, () => paragraph(Math.ceil(words / paras))).join("\n\n");
}

const out = createWriteStream(values.out!);
const write = (s: string) => new Promise<void>((res) => (out.write(s) ? res() : out.once("drain", () => res())));
await write(`<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Synthetic</sitename>
    <dbname>syntheticwiki</dbname>
    <base>https://synthetic.example.org/wiki/Main_Page</base>
    <namespaces><namespace key="0" /></namespaces>
  </siteinfo>
`);
let chunks = 0;
let pages = 0;
const titles = new Set<string>();
while (chunks < target) {
  let title = "";
  do title = cap([word(), word(), word()].slice(0, int(1, 3)).join(" ")).slice(0, 200);
  while (titles.has(title));
  titles.add(title);
  const sections = int(1, 6);
  let text = sectionBody();
  for (let s = 0; s < sections; s++) text += `\n\n== ${cap(word())} ${word()} ==\n${sectionBody()}`;
  chunks += sections + 1;
  pages++;
  const ts = new Date(Date.UTC(2020, 0, 1) + pages * 60_000).toISOString().replace(/\.000Z$/, "Z");
  await write(
    `  <page>\n    <title>${xml(title)}</title>\n    <ns>0</ns>\n    <id>${pages}</id>\n    <revision>\n      <id>${1_000_000 + pages}</id>\n      <timestamp>${ts}</timestamp>\n      <text xml:space="preserve">${xml(text)}</text>\n    </revision>\n  </page>\n`,
  );
  if (pages % 20000 === 0) console.error(`${pages} pages, ~${chunks} chunks`);
}
await write("</mediawiki>\n");
await new Promise<void>((res) => out.end(res));
console.error(`wrote ${values.out}: ${pages} pages, ~${chunks} chunks, vocabulary of ${vocab.length} words`);
