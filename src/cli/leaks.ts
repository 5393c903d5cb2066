/** bun run leaks — counts markup and "undefined"/"NaN" renderings that leaked into chunks, per dump. Exits 1 if any did. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors";
import { readOptions } from "./args";
import { mainAfterOptions } from "./main";
import { sharedDumps } from "./shared-data";

const HELP = `Usage: bun run leaks [--dump <path|url> …]

Converts each dump (damaged ones up to the damage) and counts, per leak pattern, the chunks
and headings that still contain wiki markup: {{ }} [[ ]] <ref </ {| |} ''' &nbsp; &amp; and "()",
or what a template rendered from a missing value: undefined, NaN (as a word) and [object.
Those words count only beyond the times the page's own wikitext holds them.
Without --dump it checks every dump in test/fixtures/data/dumps (or in TOME_SHARED_DATA/dumps,
or ../shared/data/dumps, when there).
Exits 1 when any chunk leaks.
`;

/** The command, on its arguments. */
export async function main(argv: string[]): Promise<void> {
  await mainAfterOptions(
    "leaks",
    () => readOptions(argv, { dump: { type: "string", multiple: true } }),
    HELP,
    async (values) => {
      let dumps = values.dump ?? [];
      if (!dumps.length) {
        try {
          const dir = sharedDumps();
          dumps = readdirSync(dir)
            .sort()
            .map((f) => join(dir, f));
        } catch (err) {
          throw new UserError(`${(err as Error).message} Or pass --dump <path|url>.`, { exitCode: 2 });
        }
      }

      // Loaded once the arguments are read: --help and a wrong argument load no engine.
      const { dumpLeaks } = await import("../ingest");
      let total = 0;
      // A DumpError is a UserError: mainOf prints it and exits 1.
      for (const dump of dumps) {
        // A damaged dump's pages before the damage are checked too (the shared dumps hold damaged ones).
        const { articles, texts, counts } = await dumpLeaks(dump, true);
        const leaked = Object.values(counts).reduce((a, b) => a + b, 0);
        total += leaked;
        const detail = Object.entries(counts)
          .filter(([, n]) => n)
          .map(([p, n]) => `${p}×${n}`)
          .join(" ");
        console.log(
          `${dump.split("/").pop()}: ${articles} articles, ${texts} chunks and headings, ${leaked} leaks${detail ? ` (${detail})` : ""}`,
        );
      }
      console.log(`total leaks: ${total}`);
      process.exit(total ? 1 : 0);
    },
  );
}

if (import.meta.main) await main(Bun.argv.slice(2));
