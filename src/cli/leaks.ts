/** bun run leaks — counts markup that leaked into chunks, per dump. Exits 1 if any did. */
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { countLeaks, DumpError, ingest } from "../ingest";

const SHARED_DUMPS = resolve(import.meta.dir, "../../../shared/data/dumps");

const HELP = `Usage: bun run leaks [--dump <path|url> …]

Converts each dump (damaged ones up to the damage) and counts, per leak pattern, the chunks
that still contain wiki markup: {{ }} [[ ]] <ref </ {| |} ''' &nbsp; &amp; and "()".
Without --dump it checks every dump in ${SHARED_DUMPS}.
Exits 1 when any chunk leaks.
`;

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { dump: { type: "string", multiple: true }, help: { type: "boolean", short: "h" } },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const dumps =
  values.dump ?? (existsSync(SHARED_DUMPS) ? readdirSync(SHARED_DUMPS).sort().map((f) => join(SHARED_DUMPS, f)) : []);
if (!dumps.length) {
  console.error(`leaks: no dumps found in ${SHARED_DUMPS}; pass --dump <path|url>.`);
  process.exit(2);
}

let total = 0;
for (const dump of dumps) {
  try {
    const result = await ingest({ dumps: [dump], allowTruncated: true });
    const texts = result.articles.flatMap((a) => [...a.chunks.map((c) => c.text), ...a.sections.map((s) => s.heading)]);
    const counts = countLeaks(texts);
    const leaked = Object.values(counts).reduce((a, b) => a + b, 0);
    total += leaked;
    const detail = Object.entries(counts)
      .filter(([, n]) => n)
      .map(([p, n]) => `${p}×${n}`)
      .join(" ");
    console.log(
      `${dump.split("/").pop()}: ${result.articles.length} articles, ${texts.length} chunks and headings, ${leaked} leaks${detail ? ` (${detail})` : ""}`,
    );
  } catch (err) {
    if (!(err instanceof DumpError)) throw err;
    console.error(`leaks: ${err.message}`);
    process.exit(1);
  }
}
console.log(`total leaks: ${total}`);
process.exit(total ? 1 : 0);
