/**
 * Where the shared real data is (MediaWiki dumps, the SQuAD questions): the tests, `bun run
 * leaks` and the benchmarks read it. In order: TOME_SHARED_DATA; ../shared/data beside the
 * checkout; ../shared/data beside the repository this one was cloned from (a clone made
 * elsewhere, e.g. `git clone . /tmp/x`, still finds it).
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

function originDir(): string | undefined {
  const r = Bun.spawnSync(["git", "-C", ROOT, "config", "--get", "remote.origin.url"], { stderr: "ignore" });
  const url = r.success
    ? r.stdout
        .toString()
        .trim()
        .replace(/^file:\/\//, "")
    : "";
  return url && isAbsolute(url) ? resolve(url) : undefined;
}

let found: string | undefined;

/** The shared data directory (holding dumps/ and eval/), or an error saying where it was looked for. */
export function sharedData(): string {
  if (found) return found;
  const origin = originDir();
  const candidates = [process.env.TOME_SHARED_DATA, join(dirname(ROOT), "shared/data"), origin && join(dirname(origin), "shared/data")].filter((p): p is string => !!p);
  found = candidates.find((p) => existsSync(join(p, "dumps")));
  if (!found) {
    throw new Error(`the shared data (dumps/, eval/) is not in ${candidates.join(" or ")}: set TOME_SHARED_DATA to its directory.`);
  }
  return found;
}

export const sharedDumps = () => join(sharedData(), "dumps");
