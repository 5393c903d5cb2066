/**
 * Where the real data is (MediaWiki dumps, the SQuAD questions, the dev qrels): the tests, `bun
 * run leaks`, the benchmarks and the first `npm start` read it. In order: TOME_SHARED_DATA;
 * ../shared/data beside the checkout; else the copy the repository carries,
 * test/fixtures/data, so that a clone needs nothing beside it (test/fixtures/NOTICE.md).
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { readConfig } from "./config";

const ROOT = resolve(import.meta.dir, "../..");
/** The data the repository carries: dumps/, eval/ (and ../spec beside them, as in ../shared). */
export const FIXTURES_DATA = join(ROOT, "test/fixtures/data");

/** Where the data is looked for, first found wins: an override, else the fixtures. */
function dataCandidates(): string[] {
  return [readConfig().sharedData, join(dirname(ROOT), "shared/data"), FIXTURES_DATA].filter((p): p is string => !!p);
}

let found: string | undefined;

/** The data directory (holding dumps/ and eval/), or an error saying where it was looked for. */
export function sharedData(): string {
  if (found) return found;
  const candidates = dataCandidates();
  found = candidates.find((p) => existsSync(join(p, "dumps")));
  if (!found) {
    throw new Error(
      `the data (dumps/, eval/) is not in ${candidates.join(" or ")}: set TOME_SHARED_DATA to its directory.`,
    );
  }
  return found;
}

export const sharedDumps = () => join(sharedData(), "dumps");

if (import.meta.main) console.log(sharedData());
