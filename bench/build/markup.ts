/**
 * bun bench/build/markup.ts [--runs N] [--title T] [dump]
 *
 * What unclosed markup costs the markup pass (stripMarkup, before wtf_wikipedia): a real page
 * (default Alkali metal, the 2016 dump's page of the most references) broken as a cut or hostile
 * revision is (bench/support.ts MARKUP_BREAKINGS: every </ref> cut; every closing tag cut; every '>' of a tag cut;
 * every link made a file link, with no ']]', tags nor blank lines: one paragraph), then 1, 2, 4 and 8 copies of it one after another. Linear work keeps the
 * milliseconds a MB flat as the copies grow; work that looks again to the end of the text from
 * every unclosed tag or link grows them with the copies. Medians over the runs, after a warm-up.
 */
import { parseArgs } from "node:util";
import { median } from "../stats";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    runs: { type: "string", default: "3" },
    title: { type: "string", default: "Alkali metal" },
    help: { type: "boolean", short: "h" },
  },
  allowPositionals: true,
});
if (values.help) {
  console.log(
    "Usage: bun bench/build/markup.ts [--runs N] [--title T] [dump]   (default: enwiki-2016-sample, Alkali metal)",
  );
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { stripMarkup } = await import("../../src/ingest/wikitext/markup");
const { dump, MARKUP_BREAKINGS, pagesOf } = await import("../support");

const spec = positionals[0] ?? dump("enwiki-2016-sample.xml.bz2");
const page = (await pagesOf([spec])).find((p) => p.title === values.title);
if (!page) {
  console.error(`no page "${values.title}" in ${spec}`);
  process.exit(2);
}
const runs = Number(values.runs);
console.log(`${page.title} (${spec}): ${(page.text.length / 1e6).toFixed(2)} M characters; median of ${runs} runs`);
console.log("| broken | copies | M characters | ms | ms a M characters |\n|---|---|---|---|---|");
for (const { what, breakIt, joint } of MARKUP_BREAKINGS) {
  // Warmed on the page as it is, so that the first figure is not the compiler's.
  stripMarkup(page.text);
  for (const copies of [1, 2, 4, 8]) {
    const text = Array(copies).fill(breakIt(page.text)).join(joint);
    const times: number[] = [];
    for (let r = 0; r < runs; r++) {
      const started = performance.now();
      stripMarkup(text);
      times.push(performance.now() - started);
    }
    const ms = median(times);
    const m = text.length / 1e6;
    console.log(`| ${what} | ${copies} | ${m.toFixed(2)} | ${ms.toFixed(0)} | ${(ms / m).toFixed(0)} |`);
  }
}
