/**
 * The index of docs/decisions/ (README.md there), made from the files themselves so that a
 * decision added as a file only needs `bun docs/decisions/index.ts --write`;
 * test/decisions.test.ts fails while the index and the files disagree.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const DIR = import.meta.dir;
const FILE = /^D(\d+)-[a-z0-9-]+\.md$/;

export interface Decision {
  id: number;
  file: string;
  title: string;
  status: string;
  area: string;
}

/** Every decision file, in id order: `# DNN Title`, then a `Status:` line and an optional `Area:` line. */
export function decisions(dir = DIR): Decision[] {
  return readdirSync(dir)
    .filter((name) => FILE.test(name))
    .map((file) => {
      const text = readFileSync(join(dir, file), "utf8");
      const id = Number(FILE.exec(file)![1]);
      const heading = /^# D(\d+) (.+)$/m.exec(text);
      if (!heading || Number(heading[1]) !== id) throw new Error(`${file}: its first line must be "# D${id} Title"`);
      const status = /^Status: *(.+)$/m.exec(text)?.[1]?.trim();
      if (!status) throw new Error(`${file}: no "Status:" line`);
      return { id, file, title: heading[2]!.trim(), status, area: /^Area: *(.+)$/m.exec(text)?.[1]?.trim() ?? "" };
    })
    .sort((a, b) => a.id - b.id);
}

/** docs/decisions/README.md as it should read. */
export function indexText(list = decisions()): string {
  const rows = list.map(
    (d) => `| [D${d.id}](${d.file}) | ${d.title.replaceAll("|", "\\|")} | ${d.status} | ${d.area} |`,
  );
  return [
    "# Decisions",
    "",
    "One file per decision: what was decided, why, and the measurements that decided it, with the command that",
    "reproduces them. D1–D22 decide what the API spec leaves open; the later ones follow on from them. Code and tests",
    "cite them by id (`D48`). A new decision is a new file `DNN-short-name.md` (first line `# DNN Title`, then",
    "`Status: accepted` and, optionally, `Area: …`); then `bun docs/decisions/index.ts --write` remakes this table",
    "(test/decisions.test.ts checks it).",
    "",
    "| id | title | status | area |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

if (import.meta.main) {
  if (process.argv.includes("--help")) {
    console.log(
      "bun docs/decisions/index.ts [--write]: print (or write to docs/decisions/README.md) the index of the decision files",
    );
  } else if (process.argv.includes("--write")) writeFileSync(join(DIR, "README.md"), indexText());
  else process.stdout.write(indexText());
}
