/**
 * A synthetic "adds-changes" dump for snapshot:update figures: a share of the pages of a
 * generated corpus (bench/corpus/gen-corpus.ts output, one page element after another), each with a
 * newer revision (id bumped, timestamp on --day, after every page of the corpus) and altered text (paragraphs reordered, one
 * dropped when there are several, a new one added with a word no page had before).
 *
 *   bun bench/update/incr-dump.ts --in /tmp/hb/c1m.xml --share 0.01 --out /tmp/hb/incr1m/enwiki-20210101-pages-meta-hist-incr.xml
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";

const { values: v } = parseArgs({
  options: {
    help: { type: "boolean" },
    in: { type: "string" },
    out: { type: "string" },
    share: { type: "string", default: "0.01" },
    day: { type: "string", default: "2021-01-01" },
  },
});
if (v.help) {
  console.log(
    "Usage: bun bench/update/incr-dump.ts --in <corpus.xml> --out <dump.xml> [--share 0.01] [--day YYYY-MM-DD]",
  );
  process.exit(0);
}
if (!v.in || !v.out)
  throw new Error(
    "usage: bun bench/update/incr-dump.ts --in <corpus.xml> --out <dump.xml> [--share 0.01] [--day YYYY-MM-DD]",
  );
const every = Math.round(1 / Number(v.share));
mkdirSync(dirname(v.out), { recursive: true });
const out = Bun.file(v.out).writer();
const decoder = new TextDecoder();
let buffer = "";
let header = true;
let pages = 0;
let changed = 0;
let redirects = 0;
const started = performance.now();
const stamp = Date.parse(`${v.day}T00:00:00Z`);

function alter(page: string, n: number): string {
  const withRev = page
    .replace(/(<revision>\s*<id>)(\d+)(<\/id>)/, (_m, a, id, b) => `${a}${Number(id) + 500_000_000}${b}`)
    .replace(
      /<timestamp>[^<]*<\/timestamp>/,
      `<timestamp>${new Date(stamp + n * 1000).toISOString().replace(/\.000Z$/, "Z")}</timestamp>`,
    );
  if (/<redirect\b/.test(page) || /<text[^>]*>#REDIRECT/i.test(page)) {
    redirects++;
    return withRev;
  }
  return withRev.replace(/(<text[^>]*>)([\s\S]*?)(<\/text>)/, (_m, open, text: string, close) => {
    const paragraphs = text.split("\n\n");
    if (paragraphs.length > 2) paragraphs.splice(1, 1);
    paragraphs.reverse();
    paragraphs.push(
      `Revised in 2020 with the word zqrevised${n.toString(36)} and more text about the revision of this article.`,
    );
    return open + paragraphs.join("\n\n") + close;
  });
}

for await (const part of Bun.file(v.in).stream()) {
  buffer += decoder.decode(part, { stream: true });
  if (header) {
    const at = buffer.indexOf("<page>");
    if (at < 0) continue;
    out.write(buffer.slice(0, at).replace(/^(\s*)$/, "$1"));
    buffer = buffer.slice(at);
    header = false;
  }
  let end: number;
  let from = 0;
  while ((end = buffer.indexOf("</page>", from)) >= 0) {
    const start = buffer.indexOf("<page>", from);
    const page = buffer.slice(start, end + 7);
    from = end + 7;
    if (pages++ % every === every - 1) {
      out.write(`  ${alter(page, changed)}\n`);
      changed++;
    }
  }
  buffer = buffer.slice(from);
}
out.write("</mediawiki>\n");
await out.end();
console.error(
  `${v.out}: ${changed} of ${pages} pages (${redirects} redirects) with a newer revision, in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
