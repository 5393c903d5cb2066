/**
 * The layers of src/ import one way: dump → ingest → snapshot → search → http (data flows that
 * way; a layer may import those before it, never one after it), with build joining ingest,
 * snapshot and search, access and pdf beside them, and cli on top. And a folder is used
 * through its index.ts: another folder's internals are not imported. Parsed from the source:
 * every static import and export-from, and dynamic import() of a literal.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../src");

/** What each part of src/ may import (a part is a folder, or a file at the top of src/). */
const MAY_IMPORT: Record<string, string[]> = {
  /** A file's name in its messages is printable (printable.ts, itself importing nothing). */
  "files.ts": ["printable.ts"],
  "scripts.ts": [],
  "errors.ts": [],
  "columns.ts": ["files.ts"],
  "sorted-runs.ts": ["columns.ts", "files.ts"],
  "invocation.ts": [],
  /** Text from outside escaped for a terminal (key names, a store edited by hand, a command's arguments). */
  "printable.ts": [],
  /** The bounds on a request's time the server enforces and the quota's holds outlast (D181), a key's share of it (D25). */
  "request-time.ts": [],
  /** What a build may take and uses when not told (memory, chunk words, the daily dumps), which the commands state without loading the layers. */
  "build-defaults.ts": [],
  /** A worker thread's scheduling: its priority (D142, D143) and its time waiting for a core (D144). */
  "scheduling.ts": [],
  /** A system library through Bun's FFI (libc, libzstd): the first of its names that loads. */
  "native.ts": [],
  /** What each plan allows, which the key tool's --help states without loading access. */
  "plans.ts": [],
  /** Declarations only: files imported `with { type: "file" }` are their paths. */
  "assets.d.ts": [],
  /** The most parsing workers (scheduling.ts), which the settings say without loading ingest. */
  ingest: [
    "errors.ts",
    "files.ts",
    "scripts.ts",
    "columns.ts",
    "sorted-runs.ts",
    "printable.ts",
    "scheduling.ts",
    "build-defaults.ts",
  ],
  snapshot: ["errors.ts", "invocation.ts", "files.ts", "columns.ts", "sorted-runs.ts", "printable.ts", "native.ts"],
  /** The default time a search may work (request-time.ts), which the settings say without loading search. */
  search: [
    "errors.ts",
    "invocation.ts",
    "snapshot",
    "files.ts",
    "scripts.ts",
    "printable.ts",
    "request-time.ts",
    "build-defaults.ts",
  ],
  build: [
    "errors.ts",
    "invocation.ts",
    "ingest",
    "snapshot",
    "search",
    "files.ts",
    "sorted-runs.ts",
    "printable.ts",
    "build-defaults.ts",
  ],
  /** A key's name is bounded in characters as q is (scripts.ts' codePoints). */
  access: ["errors.ts", "invocation.ts", "files.ts", "printable.ts", "request-time.ts", "plans.ts", "scripts.ts"],
  pdf: ["errors.ts", "files.ts", "scripts.ts", "scheduling.ts"],
  http: [
    "errors.ts",
    "invocation.ts",
    "snapshot",
    "search",
    "access",
    "pdf",
    "files.ts",
    "scripts.ts",
    "scheduling.ts",
    "request-time.ts",
    "printable.ts",
  ],
  cli: [
    "request-time.ts",
    "errors.ts",
    "invocation.ts",
    "ingest",
    "snapshot",
    "search",
    "build",
    "access",
    "pdf",
    "http",
    "files.ts",
    "scripts.ts",
    "printable.ts",
    // TOME_SEARCH_WORKER_NICE's bound, the highest nice (LOWEST).
    "scheduling.ts",
    "build-defaults.ts",
    "plans.ts",
    // The allocator's restart calls execve (D209).
    "native.ts",
  ],
};

/**
 * Imports allowed to break the rules, each with what fixing it needs: none today. The test
 * fails on any other, and on an entry here that no longer occurs (so the list only shrinks).
 */
const KNOWN: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^"';]*?\bfrom\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** The module files a source file imports from src/ (relative imports only; packages are not layers). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3]!;
    if (!spec.startsWith(".")) continue;
    const target = resolve(dirname(file), spec);
    const module = [target, `${target}.ts`, join(target, "index.ts")].find(
      (p) => existsSync(p) && statSync(p).isFile(),
    );
    if (!module) throw new Error(`${relative(SRC, file)} imports ${spec}, which is not a file`);
    if (module.startsWith(`${SRC}/`)) found.push(module);
  }
  return found;
}

/** The part of src/ a file belongs to: its top folder, or itself at the top. */
const partOf = (file: string) => relative(SRC, file).split("/")[0]!;

/** A part's public face: a folder's index.ts, or a top file itself. */
const isFaceOf = (file: string, part: string) =>
  relative(SRC, file) === (part.endsWith(".ts") ? part : `${part}/index.ts`);

/** Every import from one part of src/ into another that breaks a rule, as "from → to" with the rule. */
function violations(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of sourceFiles(SRC)) {
    const from = partOf(file);
    for (const target of importsOf(file)) {
      const to = partOf(target);
      if (to === from) continue;
      const edge = `${relative(SRC, file)} → ${relative(SRC, target)}`;
      const allowed = MAY_IMPORT[from];
      if (!allowed) found.set(edge, `${from} is not in MAY_IMPORT`);
      else if (!allowed.includes(to)) found.set(edge, `${from} may not import ${to}`);
      else if (!isFaceOf(target, to)) found.set(edge, `${to} is used through ${to}/index.ts`);
    }
  }
  return found;
}

describe("layers of src/", () => {
  const found = violations();

  test("every part of src/ has its rules", () => {
    const parts = new Set(
      readdirSync(SRC).filter((name) => name.endsWith(".ts") || statSync(join(SRC, name)).isDirectory()),
    );
    expect([...parts].filter((p) => !MAY_IMPORT[p])).toEqual([]);
  });

  test("nothing imports backwards or into another folder's internals, beyond the known list", () => {
    const unknown = [...found].filter(([edge]) => !KNOWN[edge]).map(([edge, rule]) => `${edge} (${rule})`);
    expect(unknown).toEqual([]);
  });

  test("the known list holds only imports that still break a rule", () => {
    expect(Object.keys(KNOWN).filter((edge) => !found.has(edge))).toEqual([]);
  });

  test("the parser sees the imports it checks", () => {
    // A file known to import across layers: if the pattern stopped matching, every test above would pass vacuously.
    const ingested = importsOf(join(SRC, "build/full.ts")).map((f) => relative(SRC, f));
    expect(ingested).toContain("ingest/index.ts");
    expect(ingested).toContain("snapshot/index.ts");
  });
});

describe("what the server's thread loads", () => {
  test("no PDF library: pdf-lib, fontkit and the fonts are the render workers' (0.5 CPU-s at every start and test file, when src/pdf's face exported renderPdf)", async () => {
    const script = `await import(${JSON.stringify(join(SRC, "http/index.ts"))});
      const loaded = Object.keys(require.cache);
      console.log(JSON.stringify({ all: loaded.length, pdf: loaded.filter((m) => /pdf-lib|fontkit/.test(m)) }));`;
    const proc = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "inherit" });
    const loaded = JSON.parse(await new Response(proc.stdout).text());
    expect(await proc.exited).toBe(0);
    expect(loaded.all).toBeGreaterThan(100); // the list is seen: Elysia, TypeBox, the MCP SDK, ours
    expect(loaded.pdf).toEqual([]);
  }, 60_000); // a bun process loading src/http: past bun test's 5 s on a loaded machine
});

describe("what a command loads to answer --help or refuse an unknown option", () => {
  /** The package.json scripts that run a command of src/cli, as file names (start through run.sh). */
  const scripts = Object.values(
    (JSON.parse(readFileSync(join(SRC, "../package.json"), "utf8")) as { scripts: Record<string, string> }).scripts,
  ).flatMap((script) => {
    const file = /src\/cli\/([\w-]+)\.ts/.exec(script)?.[1] ?? (/run\.sh start/.test(script) ? "start" : undefined);
    return file ? [file] : [];
  });
  /**
   * The engine and the server: a command loads them once its arguments are read, never for its --help (0.3 to 0.7 CPU-s
   * each). And the key store (access: 26 modules with its Redis client; while src/cli/config.ts
   * imported two constants from it, every --help loaded them: 0.13 CPU-s a snapshot:verify --help, 0.115 without).
   */
  const HEAVY = /\/src\/(ingest|snapshot|search|build|http|pdf|access)\//;
  /**
   * Commands that still load some of them, each with what fixing it needs: none today. The test fails on any other,
   * and on an entry here that no longer loads them (so the list only shrinks).
   */
  const KNOWN: Record<string, string> = {};
  // A module loaded by the process, as a preloaded file finds them when the command exits.
  const probe = join(mkdtempSync(join(tmpdir(), "tome-probe-")), "probe.ts");
  writeFileSync(
    probe,
    `process.on("exit", () => require("node:fs").writeSync(2, "\\nLOADED " + JSON.stringify(Object.keys(require.cache)) + "\\n"));`,
  );

  /**
   * The settings that have applyConfig load a layer to tell it (src/cli/config.ts), each other than its default: set
   * whatever the caller's environment holds, so that a command reading its options after applying them is seen.
   */
  const TOLD = { TOME_ZSTD: "node", TOME_DEBUG_MEM: "on", TOME_BUILD_WORKERS: "2" };

  async function loads(
    file: string,
    args: string[],
    env: Record<string, string> = {},
  ): Promise<{ code: number; heavy: string[] }> {
    const proc = Bun.spawn(["bun", "--preload", probe, join(SRC, `cli/${file}.ts`), ...args], {
      env: { ...process.env, ...TOLD, ...env },
      stdout: "ignore",
      stderr: "pipe",
      stdin: "ignore",
    });
    const stderr = await new Response(proc.stderr).text();
    const loaded = JSON.parse(/\nLOADED (.*)\n/.exec(stderr)?.[1] ?? "null") as string[];
    expect(loaded.length).toBeGreaterThan(3); // the list is seen: the command's own modules
    return { code: await proc.exited, heavy: loaded.filter((m) => HEAVY.test(m)).map((m) => relative(SRC, m)) };
  }

  test("the scripts are found", () => {
    expect(scripts).toContain("start");
    expect(scripts).toContain("snapshot-build");
    expect(scripts.length).toBeGreaterThan(8);
  });

  for (const [arg, exit, what] of [
    ["--help", 0, "--help"],
    ["--no-such-option", 2, "an unknown option"],
  ] as const)
    test(`${what}: exit ${exit}, none of the engine or the server loaded`, async () => {
      const found: Record<string, string[]> = {};
      for (const file of scripts) {
        const { code, heavy } = await loads(file, [arg]);
        expect({ file, code }).toEqual({ file, code: exit });
        if (heavy.length) found[file] = heavy;
      }
      expect(Object.keys(found).filter((file) => !KNOWN[file])).toEqual([]);
      expect(Object.keys(KNOWN).filter((file) => !found[file])).toEqual([]);
    }, 120_000); // a bun process per command, on a loaded machine

  test("the executable's tome <command> --help loads no more than the command's own --help (tome read and applied the settings first)", async () => {
    expect(await loads("tome", ["snapshot:build", "--help"])).toEqual({ code: 0, heavy: [] });
  }, 30_000);

  test("a keys command's --help or mistaken option loads no access layer (keys-run.ts imported it before reading them)", async () => {
    const found: Record<string, unknown> = {};
    for (const args of [
      ["create", "--help"],
      ["create", "--no-such-option"],
      ["account", "create", "--help"],
      ["account", "--help"],
      ["revoke", "--help"],
    ])
      found[args.join(" ")] = await loads("keys", [...args]);
    expect(found).toEqual({
      "create --help": { code: 0, heavy: [] },
      "create --no-such-option": { code: 2, heavy: [] },
      "account create --help": { code: 0, heavy: [] },
      "account --help": { code: 0, heavy: [] },
      "revoke --help": { code: 0, heavy: [] },
    });
  }, 60_000);

  test("a keys command run loads access, none of snapshot, search or ingest, whatever TOME_ZSTD, TOME_DEBUG_MEM or TOME_BUILD_WORKERS say", async () => {
    const data = mkdtempSync(join(tmpdir(), "tome-probe-data-"));
    const { code, heavy } = await loads("keys", ["list"], { TOME_DATA: data });
    expect(code).toBe(0);
    expect(heavy.some((m) => m.startsWith("access/"))).toBe(true); // the list is seen
    expect(heavy.filter((m) => !m.startsWith("access/"))).toEqual([]);
  }, 30_000);
});
