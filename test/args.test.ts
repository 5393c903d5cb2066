/**
 * Every command that reads options with parseArgs, given one it does not take: exit 2 and a
 * message naming the options it does take, never node:util's hint to pass `-- "--bogus"` (none
 * of these commands takes an argument starting with "-"), with the way to its --help after it.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, runToExit, tempDir } from "./helpers";

const COMMANDS: [file: string, args: string[], takes: string][] = [
  ["keys.ts", ["create"], "the options --name, --account, --plan, --scope, --expires, --json and -h/--help"],
  ["keys.ts", ["list"], "the options --json and -h/--help"],
  ["keys.ts", ["revoke"], "one argument and no option but -h/--help"],
  ["keys.ts", ["plan"], "the options --account, --plan, --rate and -h/--help"],
  ["keys.ts", ["account", "create"], "the options --account, --plan, --json and -h/--help"],
  ["keys.ts", ["import"], "no option but -h/--help"],
  [
    "snapshot-build.ts",
    [],
    "the options --dump, --out, --limit, --chunk-words, --allow-truncated, --workers, --memory",
  ],
  ["snapshot-update.ts", [], "the options --base, --dump, --deleted, --out, --memory, --workers and -h/--help"],
  ["snapshot-follow.ts", [], "the options --dir, --snapshot, --from, --url"],
  ["snapshot-export.ts", [], "the options --snapshot, --out, --since and -h/--help"],
  ["snapshot-convert.ts", [], "one argument and the options --out and -h/--help"],
  ["compile.ts", [], "the options --out and -h/--help"],
  ["leaks.ts", [], "the options --dump and -h/--help"],
];

describe("an option a command does not take", () => {
  for (const [file, args, takes] of COMMANDS) {
    test(`${file} ${args.join(" ")} --bogus says which options it takes`, async () => {
      const r = await runToExit(["bun", join(ROOT, "src/cli", file), ...args, "--bogus"], {
        TOME_DATA: tempDir("tome-args-"),
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`unknown option --bogus: the command takes ${takes}`);
      expect(r.stderr).toContain("--help");
      expect(r.stderr).not.toContain("positional");
    });
  }
});
