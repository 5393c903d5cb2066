/** An installed package's version, read by context.ts as a macro (at bundle time). */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** MiniSearch's exports hide its package.json from import: found by walking up from its entry. */
export function packageVersion(name: string): string {
  let dir = dirname(Bun.resolveSync(name, import.meta.dir));
  while (dir !== dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === name && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return "unknown";
}
