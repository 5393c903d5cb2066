/**
 * bun bench/build/convert.ts [--rounds N] [dump …]
 *
 * What the ingest adds around wtf_wikipedia per article, in one thread and one process, on the
 * same pages held in memory (every namespace-0 article of the dumps; default every shared dump):
 * Tome's whole conversion of a page (markup and TeX prepared, wtf_wikipedia's parse, sections, text
 * blocks, chunks: articleBuilder, what a parsing worker runs) against wtf_wikipedia alone
 * (`wtf(text).text()`, as bench/build/ingest.ts times it), and the steps of the conversion
 * apart. The two alternate round by round, after a first round that warms both, so that a change
 * in the machine's load falls on both; medians over the rounds.
 */
import { parseArgs } from "node:util";
import wtf from "wtf_wikipedia";
import { articleBuilder } from "../../src/ingest/article";
import { chunkSections } from "../../src/ingest/chunk";
import { readExport } from "../../src/ingest/mediawiki";
import type { RawPage } from "../../src/ingest/raw-page";
import { openDump } from "../../src/ingest/source";
import { makeConverter } from "../../src/ingest/wikitext";
import { dumpsOr } from "../support";
import { median } from "../stats";

type Step = (page: RawPage) => unknown;

async function articlesOf(dump: string): Promise<{ pages: RawPage[]; steps: Record<string, Step> }> {
  const source = await openDump(dump, true);
  const pages: RawPage[] = [];
  let site: { lang: string; namespaces: Map<string, number> } | undefined;
  try {
    for await (const item of readExport(source.xml, dump)) {
      if (item.kind === "site") site = item.site;
      else if (item.kind === "page" && item.page.ns === 0 && item.page.redirect === undefined) pages.push(item.page);
    }
  } catch {
    // a damaged dump: the pages before the damage
  }
  source.cancel();
  const wiki = { lang: site?.lang || "en", namespaces: site?.namespaces ?? new Map() };
  const build = articleBuilder(wiki, 300);
  const convert = makeConverter(wiki);
  return {
    pages,
    steps: {
      "wtf_wikipedia alone": (p) => wtf(p.text).text(),
      "Tome's conversion": (p) => build(p),
      "  of which sections (markup, TeX, lists, wtf_wikipedia, text blocks)": (p) => convert(p.text),
    },
  };
}

async function main() {
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    options: { rounds: { type: "string", default: "5" }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
  });
  if (values.help) {
    console.log("Usage: bun bench/build/convert.ts [--rounds N] [dump …]   (default: every shared dump)");
    return;
  }
  const dumps = dumpsOr(positionals);
  const sets = await Promise.all(dumps.map(articlesOf));
  const names = Object.keys(sets[0]!.steps);
  const seconds = new Map(names.map((n) => [n, [] as number[]]));
  const rounds = Number(values.rounds);
  for (let round = 0; round <= rounds; round++) {
    for (const name of names) {
      const t0 = performance.now();
      for (const { pages, steps } of sets) for (const page of pages) steps[name]!(page);
      if (round > 0) seconds.get(name)!.push((performance.now() - t0) / 1000);
    }
  }
  // Chunking alone, on the sections made once.
  const chunking: number[] = [];
  const sections = sets.map(({ pages, steps }) => pages.map((p) => steps[names[2]!]!(p)));
  for (let round = 0; round <= rounds; round++) {
    const t0 = performance.now();
    for (const list of sections) for (const s of list) chunkSections(s as Parameters<typeof chunkSections>[0], 300);
    if (round > 0) chunking.push((performance.now() - t0) / 1000);
  }
  const articles = sets.reduce((n, s) => n + s.pages.length, 0);
  const mb = sets.reduce((n, s) => n + s.pages.reduce((m, p) => m + Buffer.byteLength(p.text), 0), 0) / 1e6;
  const parser = median(seconds.get(names[0]!)!);
  console.log(
    `${articles} articles, ${mb.toFixed(1)} MB of wikitext, ${dumps.length} dumps; medians of ${rounds} rounds.`,
  );
  console.log("| step | seconds | MB/s | ÷ wtf_wikipedia alone |");
  console.log("|---|---|---|---|");
  const row = (name: string, s: number) =>
    console.log(`| ${name} | ${s.toFixed(2)} | ${(mb / s).toFixed(2)} | ${(s / parser).toFixed(2)} |`);
  for (const name of names) row(name, median(seconds.get(name)!));
  row("  of which chunks (chunkSections)", median(chunking));
}

await main();
