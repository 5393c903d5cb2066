/**
 * docs/decisions/ holds every decision that code, tests and benches cite, and its index
 * (README.md there) lists every decision file with its title and status; and every path of the
 * repository that the code, docs, decisions, READMEs, benches and tests cite is there.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { decisions, indexText } from "../docs/decisions/index.ts";

const ROOT = resolve(import.meta.dir, "..");

test("the index lists every decision file, with its title and status (bun docs/decisions/index.ts --write remakes it)", () => {
  expect(readFileSync(join(ROOT, "docs/decisions/README.md"), "utf8")).toBe(indexText());
});

test("decision ids are unique", () => {
  const ids = decisions().map((d) => d.id);
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
});

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "fixtures") return [];
    return statSync(path).isDirectory() ? files(path) : /\.(ts|md|sh)$/.test(name) ? [path] : [];
  });
}

test("every decision cited in src/, test/, bench/ and docs/ exists", () => {
  const known = new Set(decisions().map((d) => d.id));
  const missing: string[] = [];
  for (const file of ["src", "test", "bench", "docs"].flatMap((dir) => files(join(ROOT, dir)))) {
    for (const m of readFileSync(file, "utf8").matchAll(/(?<![%\w])D(\d{1,3})\b/g)) {
      if (!known.has(Number(m[1]))) missing.push(`${relative(ROOT, file)}: D${m[1]}`);
    }
  }
  expect(missing).toEqual([]);
});

/** The files whose text may cite a path: the README and every source, doc and script (not the fixtures' data or the spec copied in). */
function citing(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (
      name === "node_modules" ||
      name.startsWith(".") ||
      ["test/fixtures/data", "test/fixtures/spec"].includes(relative(ROOT, path))
    )
      return [];
    return statSync(path).isDirectory() ? citing(path) : /\.(ts|md|sh|py|ya?ml)$/.test(name) ? [path] : [];
  });
}

/** A path from the repository's root, as text cites one (src/cli/start.ts, bench/http/, docs/api.md). */
const CITED_PATH = /(?<![\w./$~-])((?:src|test|bench|docs|examples|deploy|scripts)\/[\w./@+-]*[\w/])/g;
/** A path named as history, "`old.ts`, now `new.ts`", "…, since D78 `new.ts`" or "`old.ts` (removed by D90)": it was there then. */
const FORMER = /^`?,? (?:now|since)\b|^`? \(removed\b/;

test("every path of the repository cited in src/, test/, bench/, docs/, examples/, deploy/, scripts/ and the README exists", () => {
  const missing = new Map<string, string>();
  for (const file of [
    join(ROOT, "README.md"),
    ...["src", "test", "bench", "docs", "examples", "deploy", "scripts"].flatMap((d) => citing(join(ROOT, d))),
  ]) {
    const text = readFileSync(file, "utf8");
    // A superseded decision tells what was: the files it names were there then.
    if (/^Status: superseded\b/m.test(text)) continue;
    for (const m of text.matchAll(CITED_PATH)) {
      const path = m[1]!;
      if (existsSync(join(ROOT, path)) || FORMER.test(text.slice(m.index! + path.length, m.index! + path.length + 12)))
        continue;
      missing.set(`${relative(ROOT, file)}: ${path}`, path);
    }
    // Markdown links, relative to the file.
    if (file.endsWith(".md"))
      for (const m of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target) || existsSync(join(dirname(file), target))) continue;
        missing.set(`${relative(ROOT, file)}: (${target})`, relative(ROOT, join(dirname(file), target)));
      }
  }
  // What is made at run time (deploy/run/) is git-ignored, and cited before it exists.
  const paths = [...new Set(missing.values())];
  const ignored = new Set(
    Bun.spawnSync(["git", "check-ignore", "--no-index", ...paths, ...paths.map((p) => `${p}/`)], { cwd: ROOT })
      .stdout.toString()
      .split("\n")
      .map((p) => p.replace(/\/$/, "")),
  );
  expect([...missing].filter(([, path]) => !ignored.has(path)).map(([where]) => where)).toEqual([]);
});

test("the cited-path check sees the paths it checks", () => {
  // A file known to cite paths: if the pattern stopped matching, the test above would pass vacuously.
  const cited = [...readFileSync(join(ROOT, "README.md"), "utf8").matchAll(CITED_PATH)].map((m) => m[1]);
  expect(cited).toContain("src/cli/config.ts");
  expect(cited).toContain("docs/decisions/");
  expect(FORMER.test("`, now `lookup-lists.ts`")).toBe(true);
  expect(FORMER.test("` (removed by D90)")).toBe(true);
});
