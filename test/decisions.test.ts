/**
 * docs/decisions/ holds every decision that code, tests and benches cite, and its index
 * (README.md there) lists every decision file with its title and status.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
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
