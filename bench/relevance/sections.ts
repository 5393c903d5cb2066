/**
 * bun bench/relevance/sections.ts [--snapshot PATH] [--questions FILE] [--json]
 *
 * Whether a natural question's top hit is the section that answers it: each question of
 * sections.json (a question, the page's title and the heading of the section answering it, ""
 * for the lead) is searched over one snapshot of enwiki-2016-sample, enwik8-head and the SQuAD
 * articles, and counts when the top hit is that page and its chunk stands in that section.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { open } from "../../src/search";
import { buildSnapshot, dump } from "../support";

const USAGE = `Usage: bun bench/relevance/sections.ts [--snapshot PATH] [--questions FILE] [--json]
  --snapshot PATH   search this snapshot instead of building one of the three dumps (a minute)
  --questions FILE  the questions (default: bench/relevance/sections.json)
  --json            print the result as JSON`;

interface Question {
  question: string;
  title: string;
  /** The heading of the section that answers it; "" for the lead. */
  section: string;
}

const DUMPS = ["enwiki-2016-sample.xml.bz2", "enwik8-head.xml.bz2", "squad-dev-articles.xml.bz2"];

function parse() {
  try {
    const { values } = parseArgs({
      args: Bun.argv.slice(2),
      options: {
        snapshot: { type: "string" },
        questions: { type: "string", default: join(import.meta.dir, "sections.json") },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    return values;
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

const args = parse();
const questions = JSON.parse(readFileSync(args.questions!, "utf8")) as Question[];
const dir = args.snapshot ? undefined : mkdtempSync(join(tmpdir(), "tome-sections-"));
try {
  const path = args.snapshot ?? join(dir!, "sections.tome");
  if (!args.snapshot) await buildSnapshot({ dumps: DUMPS.map(dump) }, path);
  const tome = open(path);
  const rows = questions.map((q) => {
    const [top] = tome.search(q.question, { limit: 1, highlight: false, budgetMs: Number.POSITIVE_INFINITY }).hits;
    const found = { title: top?.page.title ?? "", section: top?.section ?? "" };
    return { ...q, found, right: found.title === q.title && found.section === q.section };
  });
  const right = rows.filter((r) => r.right).length;
  if (args.json) console.log(JSON.stringify({ right, questions: rows.length, rows }, null, 2));
  else {
    const shown = (s: string) => s || "(lead)";
    for (const r of rows)
      console.log(
        `${r.right ? "ok  " : "MISS"}  ${r.question}  →  ${r.found.title} / ${shown(r.found.section)}${r.right ? "" : `  (wanted ${r.title} / ${shown(r.section)})`}`,
      );
    console.log(`\n${right} of ${rows.length} questions: the top hit is the section that answers them`);
  }
} finally {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
