/**
 * bun run compile — writes dist/tome: one executable (bun build --compile) holding Bun, every
 * command (tome.ts), the workers, the fonts, Swagger UI's files, the stopword lists and the
 * sample dump, so that it runs where neither Bun nor node_modules is.
 */
import { checkOut } from "./out";
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeFailed } from "../files";
import { readOptions } from "./args";
import { mainAfterOptions, note } from "./main";

const ROOT = resolve(import.meta.dir, "../..");
/**
 * The workers, each started by its path under src/ inside the executable (workerUrl in
 * src/files.ts): entry points of their own, so that src/ is the root of the executable's files.
 */
const WORKERS = [
  "src/access/store-reader.ts",
  "src/build/parse-worker.ts",
  "src/pdf/worker.ts",
  "src/http/search-worker.ts",
  "src/ingest/worker.ts",
  "src/search/indexer/run-worker.ts",
  "src/snapshot/compress-worker.ts",
];

const HELP = `Usage: bun run compile [--out FILE]

Builds one executable holding Tome and the Bun runtime (bun build --compile), for this
machine's system and processor: \`tome --help\` lists its commands (start, snapshot:build,
snapshot:export, keys, mcp, ...), each the \`bun run\` script of the same name. It needs no
Bun and no node_modules where it runs; the bzip2, xz or gzip command still reads a
compressed dump, as with bun run.

Options:
  --out FILE   where to write it (default dist/tome)
  -h, --help   this text
`;

/** Compiles the executable to `out`; returns its size in bytes. */
export async function compile(out: string): Promise<number> {
  let result: Awaited<ReturnType<typeof Bun.build>>;
  try {
    result = await Bun.build({
      entrypoints: [join(ROOT, "src/cli/tome.ts"), ...WORKERS.map((w) => join(ROOT, w))],
      compile: { outfile: out },
      minify: true,
      sourcemap: "none",
    });
  } catch (err) {
    // Putting the executable in place is bun build's last step: a folder that takes no new file (/proc) made it throw an
    // AggregateError, uncaught, after the bundling (D184). Its message's errno makes it the file system's refusal, said
    // as every command's is (writeFailed, then mainOf: its fix if one is known); any other failure is ours.
    const messages = err instanceof AggregateError ? err.errors.map((e) => String((e as Error)?.message ?? e)) : [];
    for (const message of messages) {
      const refused = /^[Ff]ailed to (rename|write|open|create)\b.*\b(E[A-Z]+)\b/.exec(message);
      if (refused)
        throw writeFailed(
          out,
          Object.assign(new Error(message), { code: refused[2], syscall: refused[1]!.toLowerCase(), path: out }),
        );
    }
    throw err;
  }
  if (!result.success) throw new Error(`bun build --compile failed:\n${result.logs.join("\n")}`);
  return statSync(out).size;
}

/** The command, on its arguments. */
export async function main(argv: string[]): Promise<void> {
  await mainAfterOptions(
    "compile",
    () => readOptions(argv, { out: { type: "string" } }),
    HELP,
    async (values) => {
      // Found now, not by bun build after its bundling, as an uncaught error.
      if (values.out !== undefined) checkOut(values.out, [], { what: "executable", example: "tome" });
      const out = resolve(values.out ?? join(ROOT, "dist/tome"));
      const started = performance.now();
      const bytes = await compile(out);
      note(
        `compile: ${out}, ${(bytes / 1e6).toFixed(1)} MB, in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
      );
    },
  );
}

if (import.meta.main) await main(Bun.argv.slice(2));
