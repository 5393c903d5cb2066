/** The exact-title lookup's entries (src/search/text/title-keys.ts) go to files as they are made, not held while the title index is built. */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { ContainerWriter, openContainer, redirectListOf } from "../src/snapshot";
import { TitleLookup, writeTitleLookup } from "../src/search/postings/titles";
import { resolveTitles } from "../src/search/text/title-keys";
import { titleKey } from "../src/search/text/query";
import { EN_2016, ingested, tempDir } from "./helpers";

setDefaultTimeout(120_000);

describe("the title lookup", () => {
  test("its entries are in files before they are copied into the snapshot, and resolve every title and redirect", async () => {
    const { articles, redirects } = await ingested({ dumps: [EN_2016] });
    const dir = tempDir();
    const { lookup } = resolveTitles(
      articles.map((a) => a.chunks.length),
      redirectListOf(redirects),
      { length: articles.length, at: (i) => articles[i]?.title },
      dir,
    );
    const entries = articles.length + redirects.length;
    expect(lookup.page.length).toBeGreaterThan(entries / 2);
    // Appended to files through a small buffer (of 64K entries: this dump's fit in it).
    expect(readdirSync(dir).sort()).toEqual(["titles.key", "titles.keyEnd", "titles.page"]);
    const path = join(dir, "lookup.tome");
    const out = new ContainerWriter(path);
    writeTitleLookup(out, lookup);
    out.finish({});
    expect(readdirSync(dir)).toEqual(["lookup.tome"]);
    const titles = new TitleLookup(openContainer(path), articles.length);
    for (const [i, a] of articles.entries()) if (a.chunks.length) expect(titles.get(titleKey(a.title))).toBe(i);
    const byTitle = new Map(articles.map((a, i) => [a.title, i]));
    for (const r of redirects)
      if (byTitle.has(r.target) && articles[byTitle.get(r.target)!]!.chunks.length)
        expect(titles.get(titleKey(r.title))).toBe(byTitle.get(r.target)!);
  });
});
