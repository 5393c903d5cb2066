/** Shared fixtures: the real dumps in ../shared/data/dumps, converted once per test run. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ingest, type IngestOptions, type IngestResult } from "../src/ingest";

export const DUMPS = resolve(import.meta.dir, "../../shared/data/dumps");
export const dump = (name: string) => join(DUMPS, name);

export const EN_2016 = dump("enwiki-2016-sample.xml.bz2");
export const EN_2006 = dump("enwik8-head.xml.bz2");
export const EN_2006_TRUNCATED = dump("enwik8-head-truncated.xml.bz2");
export const SQUAD = dump("squad-dev-articles.xml.bz2");
export const TRUNCATED_XZ = ["bn", "el", "hy", "ja", "mr", "uk", "vi"].map((l) => dump(`${l}wiki-head-truncated.xml.xz`));
export const ALL_DUMPS = [EN_2016, EN_2006, EN_2006_TRUNCATED, SQUAD, ...TRUNCATED_XZ];

const cache = new Map<string, Promise<IngestResult>>();

/** Ingests once per distinct set of options, for the whole test run. */
export function ingested(options: IngestOptions): Promise<IngestResult> {
  const key = JSON.stringify(options);
  let p = cache.get(key);
  if (!p) {
    p = ingest(options);
    cache.set(key, p);
  }
  return p;
}

export function tempDir(prefix = "tome-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

import { open as openEngine, type Engine } from "../src/search";
import { fromIngest, writeSnapshot } from "../src/snapshot";

const engines = new Map<string, Promise<Engine>>();

/** A search engine over a snapshot built from the given dumps (built once per test run). */
export function engineFor(options: IngestOptions): Promise<Engine> {
  const key = JSON.stringify(options);
  let p = engines.get(key);
  if (!p) {
    p = (async () => {
      const path = join(tempDir(), "test.tome");
      writeSnapshot(path, fromIngest(await ingested(options), options.chunkWords ?? 300));
      return openEngine(path);
    })();
    engines.set(key, p);
  }
  return p;
}
