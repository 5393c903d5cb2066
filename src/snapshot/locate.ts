import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { SNAPSHOT_EXTENSION } from "./format";

/** The most recently modified snapshot file in a folder, if any. */
export function latestSnapshot(dir: string): string | undefined {
  let best: { path: string; mtime: number } | undefined;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  for (const name of names) {
    if (!name.endsWith(SNAPSHOT_EXTENSION) || name.startsWith(".")) continue;
    const path = join(dir, name);
    const mtime = statSync(path).mtimeMs;
    if (!best || mtime > best.mtime) best = { path, mtime };
  }
  return best?.path;
}
