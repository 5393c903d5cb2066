/**
 * bench/ can be rerun from the repository: its Markdown cites no path outside it and no script
 * that is not in it, each topic has its README and one RESULTS.md, every bench script answers
 * --help, and no bench imports from test/.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "./helpers";

setDefaultTimeout(120_000);
const BENCH = join(ROOT, "bench");

function filesIn(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesIn(path, ext) : path.endsWith(ext) ? [path] : [];
  });
}

const markdown = filesIn(BENCH, ".md");
const scripts = filesIn(BENCH, ".ts");
/** Modules the scripts share, not run on their own. */
const MODULES = new Set([
  "support.ts",
  "temp-dirs.ts",
  "redis-server.ts",
  "servers.ts",
  "queries.ts",
  "cores.ts",
  "stats.ts",
  "search/radix-tree.ts",
  "search/pairing.ts",
  "search/flat-shard.ts",
  "search/block-bounds.ts",
  "corpus/english-model.ts",
  "corpus/corpus-stats.ts",
  "relevance/question-sets.ts",
]);

describe("bench/", () => {
  test("no bench/**/*.md cites a path outside the repository", () => {
    const outside = markdown.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) =>
          [...line.matchAll(/(?:^|[\s`(])((?:\/tmp|\/work|\/home|~|\.\.\/shared)\/[^\s`)]*)/g)].length
            ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim().slice(0, 120)}`]
            : [],
        ),
    );
    expect(outside).toEqual([]);
  });

  test("every bench/… file a bench/**/*.md names exists (or is named as removed)", () => {
    const missing = markdown.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/\bbench\/[\w./-]+\.(?:ts|md|json)\b(?!`? \(removed\b)/g)]
        .map((m) => m[0])
        .filter((path) => !existsSync(join(ROOT, path)))
        .map((path) => `${relative(ROOT, file)}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  test("each topic has a README.md and at most one RESULTS.md; no RESULTS file is left at the top", () => {
    const topics = readdirSync(BENCH).filter((name) => statSync(join(BENCH, name)).isDirectory());
    expect(topics.filter((t) => !existsSync(join(BENCH, t, "README.md")))).toEqual([]);
    expect(
      markdown.filter((f) => /RESULTS/.test(f) && !f.endsWith("/RESULTS.md")).map((f) => relative(ROOT, f)),
    ).toEqual([]);
    expect(readdirSync(BENCH).filter((name) => name.startsWith("RESULTS"))).toEqual([]);
  });

  test("no bench imports from test/", () => {
    const importers = scripts
      .filter((file) => /(?:from\s+|import\(\s*)["'](?:\.\.\/)+test\//.test(readFileSync(file, "utf8")))
      .map((f) => relative(ROOT, f));
    expect(importers).toEqual([]);
  });

  test("every bench script answers --help", async () => {
    const silent: string[] = [];
    for (const file of scripts) {
      if (MODULES.has(relative(BENCH, file))) continue;
      const run = Bun.spawn(["bun", file, "--help"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([
        new Response(run.stdout).text(),
        new Response(run.stderr).text(),
        run.exited,
      ]);
      if (code !== 0 || !/usage/i.test(out + err)) silent.push(`${relative(ROOT, file)}: exit ${code}`);
    }
    expect(silent).toEqual([]);
  });

  test("bench/build/projection.ts refuses an unknown option or a --runs, --repeat, --index-limit or --cores that is no whole number, exit 2, before measuring, with no stack trace", async () => {
    for (const [args, said] of [
      [["--bogus"], "unknown option --bogus"],
      [["--runs", "x"], '--runs takes a whole number from 1 to 9007199254740991, not "x".'],
      [["--repeat", "0"], '--repeat takes a whole number from 1 to 9007199254740991, not "0".'],
      [["--index-limit", "many"], '--index-limit takes a whole number from 1 to 9007199254740991, not "many".'],
      [["--cores", "2,x"], '--cores takes whole numbers ≥ 1 separated by commas (2,8,16), not "2,x".'],
    ] as const) {
      const run = Bun.spawnSync(["bun", join(BENCH, "build/projection.ts"), ...args], { cwd: ROOT });
      const err = run.stderr.toString();
      expect({ args, code: run.exitCode, said: err.split("\n")[0] }).toEqual({
        args,
        code: 2,
        said: expect.stringContaining(said),
      });
      expect(err).not.toContain("    at ");
      expect(run.stdout.toString()).toBe("");
    }
  });
});
