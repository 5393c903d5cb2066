/**
 * The modifications served are what the build of the snapshot did to the text, as its meta
 * records it, not what today's ingest would say; a format-1 file, which recorded nothing, is
 * given the list of format 1's builds, and its conversion records that list.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { buildFromPages, updateSnapshot } from "../src/build";
import { createApp } from "../src/http";
import { modifications } from "../src/ingest";
import { format1Modifications, openSnapshot, readFormat1 } from "../src/snapshot";
import { open } from "../src/search";
import { ingested, snapshotFor, SQUAD, tempDir, writeFormat1 } from "./helpers";

setDefaultTimeout(120_000);

/** What GET /v1/license says was changed, and what a page's attribution lists, served in-process. */
async function served(path: string): Promise<{ license: string[]; page: string[] }> {
  const app = createApp(open(path));
  const license = (await (await app.handle(new Request("http://tome.test/v1/license"))).json()) as {
    modifications: { changes_made: string[] };
  };
  const { pages } = openSnapshot(path);
  const page = (await (await app.handle(new Request(`http://tome.test/v1/page/${pages.ids[0]}`))).json()) as {
    attribution: { modifications: string[] };
  };
  return { license: license.modifications.changes_made, page: page.attribution.modifications };
}

describe("modifications recorded by the build", () => {
  test("a snapshot serves the list its build recorded, even when today's ingest would say another", async () => {
    const result = await ingested({ dumps: [SQUAD] });
    const recorded = [
      "Converted from wikitext markup to plain text (as an older build said it)",
      "Cut into passages (chunks) of at most 300 words",
    ];
    const path = join(tempDir(), "older.tome");
    const report = buildFromPages(
      result.articles.slice(0, 5),
      [],
      { ...result, modifications: recorded },
      { out: path, chunkWords: 300 },
    );
    expect(report.meta.modifications).toEqual(recorded);
    expect(await served(path)).toEqual({ license: recorded, page: recorded });
  });

  test("snapshot:build records what ingest does, and serves that", async () => {
    const path = await snapshotFor({ dumps: [SQUAD] });
    expect(openSnapshot(path).meta.modifications).toEqual(modifications(300));
    expect(await served(path)).toEqual({ license: modifications(300), page: modifications(300) });
  });

  test("snapshot:update keeps its base's record, adding only what its own conversion did beyond it", async () => {
    const result = await ingested({ dumps: [SQUAD] });
    const recorded = [modifications(300)[0]!, "An older step no build does today"];
    const dir = tempDir();
    const base = join(dir, "base.tome");
    buildFromPages(
      result.articles.slice(0, 5),
      [],
      { ...result, modifications: recorded },
      { out: base, chunkWords: 300 },
    );
    const deletions = join(dir, "none.tome");
    const onlyDeleted = await updateSnapshot({
      base,
      dumps: [],
      deleted: { file: "none", ids: new Map(), titles: new Map() },
      out: deletions,
      workers: 2,
    });
    expect(onlyDeleted.meta.modifications).toEqual(recorded);
    const updated = await updateSnapshot({ base, dumps: [SQUAD], out: join(dir, "updated.tome"), workers: 2 });
    expect(updated.meta.modifications).toEqual([...recorded, ...modifications(300).slice(1)]);
    expect((await served(join(dir, "updated.tome"))).license).toEqual(updated.meta.modifications);
  });

  test("a format-1 file, which recorded none, reads with format 1's list, and its conversion records it", async () => {
    const source = openSnapshot(await snapshotFor({ dumps: [SQUAD], chunkWords: 120 }));
    const old = join(tempDir(), "format1.tome");
    writeFormat1(old, source);
    const read = readFormat1(old);
    expect(read.meta.modifications).toEqual(format1Modifications(120));
    expect(read.meta.modifications.at(-1)).toBe("Cut into passages (chunks) of at most 120 words");
    const converted = join(tempDir(), "converted.tome");
    buildFromPages(read.pages, read.redirects, read.meta, { out: converted, chunkWords: read.meta.chunkWords });
    expect(openSnapshot(converted).meta.modifications).toEqual(format1Modifications(120));
    expect((await served(converted)).license).toEqual(format1Modifications(120));
  });
});
