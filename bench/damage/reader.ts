/**
 * bun bench/damage/reader.ts <snapshot> [--heavy]: fuzz.ts's child. Opens the snapshot as a library, searches it,
 * reads every page (its chunks' text, its sections) and lists changes; prints the errors met as a JSON list of
 * "call: Name: message". --heavy: every page's title and its first four letters searched too.
 */
import { open, type Engine } from "../../src/search";

if (process.argv.includes("--help") || process.argv.includes("-h") || !process.argv[2]) {
  console.log(
    "Usage: bun bench/damage/reader.ts <snapshot> [--heavy]   (fuzz.ts's child: prints the errors met as JSON)",
  );
  process.exit(process.argv[2] ? 0 : 2);
}
const [path, heavy] = [process.argv[2]!, process.argv.includes("--heavy")];
const errors: string[] = [];
const note = (call: string, run: () => unknown) => {
  try {
    run();
  } catch (e) {
    errors.push(`${call}: ${(e as Error)?.name}: ${String((e as Error)?.message).slice(0, 160)}`);
  }
};
let tome: Engine | undefined;
note("open", () => (tome = open(path)));
if (tome) {
  const engine = tome;
  let titles: string[] = [];
  note("changes", () => (titles = engine.changes(0, 0, 1_000_000).pages.map((p) => p.title)));
  const queries = ["snow", "albedo of snow", "the", '"black-sky albedo"', "einstien", "Alaska", "photovolt"];
  queries.push("a b c d e f g h", "zzz", "Albert Einstein", '"the united states"', "achilles hed");
  if (heavy) queries.push(...titles, ...titles.map((t) => t.slice(0, 4)));
  for (const q of queries) {
    note(`search ${q}`, () => {
      for (const h of engine.search(q, { limit: 20 }).hits) JSON.stringify(h);
    });
    note(`lucky ${q}`, () => engine.lucky(q));
  }
  note("pages", () => {
    for (const p of engine.changes(0, 0, 1_000_000).pages) {
      JSON.stringify(p);
      engine.page(p.pageId);
      engine.pageByTitle(p.title);
    }
  });
  engine.close();
}
console.log(JSON.stringify(errors));
