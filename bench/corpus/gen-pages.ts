/**
 * bun bench/corpus/gen-pages.ts --articles 400000 --words /tmp/hb/c200k.xml --out /tmp/p400k.xml
 *
 * A dump of many short articles (three sections, about 70 words) with 1.6 redirects each, as
 * English Wikipedia has (about 7M articles, 11M redirects): for measuring what a build holds
 * per page, which gen-corpus.ts (17 chunks a page) hardly shows. Titles are three words drawn
 * from the first 4 MB of --words (any text); the same arguments give the same file.
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";

const USAGE = `Usage: bun bench/corpus/gen-pages.ts --articles N --words FILE --out FILE

  --articles N   articles to write, each with 1.6 redirects on average
  --words FILE   any text to draw the titles' and articles' words from (its first 4 MB)
  --out FILE     the XML export to write
  -h, --help     this help`;
const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    articles: { type: "string" },
    words: { type: "string" },
    out: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  strict: true,
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { SYNTHETIC_DUMP_HEAD } = await import("./english-model");

const n = Number(values.articles);
if (!Number.isInteger(n) || n < 1 || !values.words || !values.out) {
  console.error(USAGE);
  process.exit(2);
}
const words = (await Bun.file(values.words).slice(0, 4_000_000).text())
  .split(/[^A-Za-z]+/)
  .filter((w) => w.length > 2)
  .slice(0, 50_000);
let seed = 1;
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const word = () => words[Math.floor(random() * words.length)]!;
const escapeXml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const capital = (s: string) => s[0]!.toUpperCase() + s.slice(1);
const sentence = (k: number) => `${Array.from({ length: k }, word).join(" ")}.`;

rmSync(values.out, { force: true });
const sink = Bun.file(values.out).writer();
sink.write(SYNTHETIC_DUMP_HEAD);
let id = 1;
const page = (title: string, text: string, redirect?: string) => {
  const pageId = id++;
  const redirectTag = redirect ? `    <redirect title="${escapeXml(redirect)}" />\n` : "";
  sink.write(
    `  <page>\n    <title>${escapeXml(title)}</title>\n    <ns>0</ns>\n    <id>${pageId}</id>\n${redirectTag}    <revision>\n      <id>${1_000_000 + pageId}</id>\n      <timestamp>2020-01-01T00:01:00Z</timestamp>\n      <text xml:space="preserve">${escapeXml(text)}</text>\n    </revision>\n  </page>\n`,
  );
};
for (let i = 0; i < n; i++) {
  const title = `${capital(word())} ${word()} ${word()}`;
  page(
    title,
    `${sentence(25)}\n\n== ${capital(word())} ${word()} ==\n\n${sentence(25)}\n\n== ${capital(word())} of ${word()} ==\n\n${sentence(20)}`,
  );
  const redirects = random() < 0.6 ? 2 : 1;
  for (let r = 0; r < redirects; r++) page(`${capital(word())} ${word()} ${word()}`, `#REDIRECT [[${title}]]`, title);
}
sink.write("</mediawiki>\n");
await sink.end();
console.log(`wrote ${values.out}: ${n} articles, ${id - 1 - n} redirects`);
