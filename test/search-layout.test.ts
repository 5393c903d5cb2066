/**
 * src/search laid out by what each part is (issue 44): text/ (analysis, stems, query parsing,
 * highlighting), postings/ (the index format and its readers), indexer/ (building it), ranking/
 * (rules, strategies, orders) and stages/ (the search's named stages), with the engine, its
 * options and the package's index.ts on top. No file longer than 400 lines, and no import
 * loop among its files, type-only imports counted too (dpdm reads the imports as TypeScript
 * parses them, so a loop through `import type` is one as well).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseCircular, parseDependencyTree } from "dpdm";

const ROOT = resolve(import.meta.dir, "..");
const SEARCH = join(ROOT, "src/search");
const MAX_LINES = 400;
const PARTS = ["indexer", "plans", "postings", "ranking", "stages", "text"];
const TOP_FILES = ["engine.ts", "index.ts", "options.ts"];

const files = (readdirSync(SEARCH, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).sort();

describe("src/search's layout", () => {
  test("its files are in the named parts, with only the engine, its options and index.ts on top", () => {
    const top = readdirSync(SEARCH).sort();
    expect(top.filter((f) => statSync(join(SEARCH, f)).isDirectory())).toEqual(PARTS);
    expect(top.filter((f) => statSync(join(SEARCH, f)).isFile())).toEqual(TOP_FILES);
  });

  test(`no file is longer than ${MAX_LINES} lines`, () => {
    const long = files
      .map((f) => ({ file: f, lines: readFileSync(join(SEARCH, f), "utf8").split("\n").length - 1 }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  test("no import loop among its files, type-only imports included", async () => {
    const tree = await parseDependencyTree(["src/search/**/*.ts"], {
      context: ROOT,
      extensions: [".ts"],
      js: [".ts"],
      include: /src\/search\//,
      exclude: /node_modules/,
      tsconfig: join(ROOT, "tsconfig.json"),
      transform: false,
      skipDynamicImports: false,
    });
    // Every file was read: a loop cannot hide in files the walk never reached.
    expect(Object.keys(tree).filter((f) => f.startsWith("src/search/")).length).toBe(files.length);
    const loops = parseCircular(tree).map((loop) => loop.map((f) => relative("src/search", f)).join(" → "));
    expect(loops).toEqual([]);
    // Parsing every file takes seconds on a loaded machine.
  }, 60_000);
});
