/**
 * bun bench/code/function-sizes.ts <dir>… (TOP=n for more than 4)
 *
 * Per folder of src/: files, lines, and its largest functions with their length in lines, for
 * the before/after figures of a reshaping (issue 20). A function is a line that opens a block
 * and declares one (function, method, or an arrow assigned to a name); it runs to the first
 * later line of the same indent that starts with "}" or ")" (the code is formatted with
 * 2-space indents). The repository's TypeScript is the Go compiler, with no JS API to parse with.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
  });

const MODIFIERS = "(?:export |default |async |private |protected |public |static |readonly |get |set )*";
const START = new RegExp(
  `^(\\s*)(?:${MODIFIERS}function\\*?\\s*(\\w*)|(?:export )?(?:const|let) (\\w+)\\s*(?::[^=]+)?=\\s*(?:async\\s*)?(?:\\([^)]*\\)|\\w+)(?:\\s*:\\s*[^=]+)?\\s*=>|(?:${MODIFIERS}\\*?\\s*(\\w+)\\s*(?:<[^>]*>)?\\())`,
);
const KEYWORDS = new Set(["if", "for", "while", "switch", "catch", "return"]);
const top = Number(process.env.TOP ?? 4);

if (Bun.argv.length < 3 || Bun.argv.includes("--help")) {
  console.log("Usage: bun bench/code/function-sizes.ts <dir>… (TOP=n for more than 4)");
  process.exit(Bun.argv.length < 3 ? 2 : 0);
}
for (const dir of Bun.argv.slice(2)) {
  let lines = 0;
  const sizes: [number, string][] = [];
  const list = files(dir);
  for (const file of list) {
    const text = readFileSync(file, "utf8").split("\n");
    if (text.at(-1) === "") text.pop();
    lines += text.length;
    text.forEach((line, i) => {
      const m = START.exec(line);
      if (!m || !/[{(,]\s*$/.test(line)) return;
      const name = m[2] ?? m[3] ?? m[4];
      if (!name || KEYWORDS.has(name)) return;
      const indent = m[1]!.length;
      for (let j = i + 1; j < text.length; j++) {
        const later = text[j]!;
        if (!later.trim()) continue;
        const laterIndent = later.length - later.trimStart().length;
        if (laterIndent === indent && /^\s*[})]/.test(later)) {
          sizes.push([j - i + 1, `${file}:${i + 1} ${name}`]);
          return;
        }
        if (laterIndent < indent) return;
      }
    });
  }
  sizes.sort((a, b) => b[0] - a[0]);
  console.log(
    `${dir}: ${list.length} files, ${lines} lines; largest: ${sizes
      .slice(0, top)
      .map(([n, where]) => `${where} (${n})`)
      .join("; ")}`,
  );
}
