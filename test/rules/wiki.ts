/**
 * Small wikis written inline, for the rule tests: pages as wikitext → a MediaWiki export →
 * the real pipeline (ingest, snapshot build, search engine), the way a dump becomes a snapshot.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { writeIngested } from "../../src/build";
import { ingest, type Article } from "../../src/ingest";
import { open, type Engine } from "../../src/search";

/** A fresh directory; not test/helpers.ts's, which needs the shared dumps that these tests do without. */
const tempDir = () => mkdtempSync(join(tmpdir(), "tome-rules-"));

export interface InlinePage {
  title: string;
  /** Wikitext; for a redirect, its target's title. */
  text: string;
  redirect?: boolean;
}

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** An English MediaWiki export (schema 0.10) of the pages, page ids 1, 2, 3… in order. */
function exportXml(pages: InlinePage[]): string {
  const namespaces = [
    [6, "File"],
    [10, "Template"],
    [14, "Category"],
  ]
    .map(([key, name]) => `<namespace key="${key}" case="first-letter">${name}</namespace>`)
    .join("");
  const body = pages
    .map((p, i) => {
      const text = p.redirect ? `#REDIRECT [[${p.text}]]` : p.text;
      const redirect = p.redirect ? `<redirect title="${escapeXml(p.text)}" />` : "";
      return `<page><title>${escapeXml(p.title)}</title><ns>0</ns><id>${i + 1}</id>${redirect}<revision><id>${100 + i}</id><timestamp>2024-01-01T00:00:00Z</timestamp><text xml:space="preserve">${escapeXml(text)}</text></revision></page>`;
    })
    .join("\n");
  return `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
<siteinfo><sitename>Wikipedia</sitename><dbname>enwiki</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base><namespaces><namespace key="0" case="first-letter" />${namespaces}</namespaces></siteinfo>
${body}
</mediawiki>`;
}

/** The export written to a fresh directory; its path. */
function writeExport(pages: InlinePage[]): string {
  const path = join(tempDir(), "pages.xml");
  writeFileSync(path, exportXml(pages));
  return path;
}

/** The pages ingested: articles (redirects left out), in page order. */
export async function articlesOf(pages: InlinePage[]): Promise<Article[]> {
  return (await ingest({ dumps: [writeExport(pages)], workers: 1 })).articles;
}

/** A search engine over the pages, built as `snapshot:build` builds one (300-word chunks). */
export async function wikiOf(pages: InlinePage[]): Promise<Engine> {
  const xml = writeExport(pages);
  const out = join(dirname(xml), "pages.tome");
  writeIngested(await ingest({ dumps: [xml], workers: 1 }), out, 300);
  return open(out);
}
