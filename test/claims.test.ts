/**
 * The claims of an ingest held in bounded memory (src/ingest/claim-table.ts, claims.ts): their
 * titles spilled to disk in sorted runs and merged, by row and then by title, give what one
 * run held whole gives.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync } from "node:fs";
import { ClaimTable } from "../src/ingest/claim-table";
import { claimFor, newer, titleHolders } from "../src/ingest/claims";
import { toUnix } from "../src/ingest/article";
import { EN_2006, EN_2006_TRUNCATED, EN_2016, pagesOf, tempDir } from "./helpers";

setDefaultTimeout(120_000);

const decoder = new TextDecoder();

describe("claims", () => {
  test("spilled in several runs, by row and then by title, they resolve to the holders one run gives: each title's newest, in title order", async () => {
    // Two dumps of the same pages (each page claimed again) and a third wiki's worth of others.
    const pages = await pagesOf([EN_2006_TRUNCATED, EN_2006, EN_2016]);
    const resolve = (runBytes?: number) => {
      const dir = tempDir();
      const claims = new ClaimTable(dir, runBytes);
      for (const page of pages) {
        const claim = claimFor(page);
        const prior = claims.rowOf(page.pageId);
        if (prior >= 0 && !newer(claim, claims.version(prior))) continue;
        claims.set(page.pageId, claim);
        // Articles whose conversion failed claim no title: every third here.
        if (claim.kind === "article" && page.pageId % 3) claims.markConverted(claims.rowOf(page.pageId));
      }
      const runs = claims.runCount;
      const standing: string[] = [];
      // Each holder is valid until the next: read as it comes.
      const holders = [];
      for (const h of titleHolders(
        claims,
        dir,
        (c) => standing.push(`${c.pageId} ${decoder.decode(c.title)}`),
        runBytes,
      ))
        holders.push({ ...h, title: decoder.decode(h.title), target: decoder.decode(h.target) });
      expect(readdirSync(dir)).toEqual([]);
      return { runs, standing, holders };
    };
    const whole = resolve();
    const spilled = resolve(2000);
    expect(whole.runs).toBe(0);
    expect(spilled.runs).toBeGreaterThan(3);
    expect(spilled.standing).toEqual(whole.standing);
    expect(spilled.holders).toEqual(whole.holders);
    // The holders: one a title, in JS string order, each the newest claim of its title.
    const titles = whole.holders.map((h) => h.title);
    expect(titles).toEqual([...new Set(titles)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(whole.holders.length).toBeGreaterThan(300);
    const newest = new Map<string, { tsUnix: number; revId: number }>();
    for (const page of pages) {
      const c = claimFor(page);
      if (c.kind === "article" && !(page.pageId % 3)) continue;
      const held = newest.get(c.title);
      if (!held || newer(c, held)) newest.set(c.title, { tsUnix: c.tsUnix, revId: c.revId });
    }
    for (const h of whole.holders) expect({ tsUnix: h.tsUnix, revId: h.revId }).toEqual(newest.get(h.title)!);
  });
});

test("a time past 2106 is kept as the last second a u32 holds: the same revision read again is not newer than its claim", () => {
  expect(toUnix("9999-12-31T23:59:59Z")).toBe(0xffffffff);
  expect(toUnix("2001-01-15T12:00:00Z")).toBe(979560000);
  const table = new ClaimTable(tempDir());
  try {
    const page = {
      pageId: 7,
      ns: 0,
      title: "Far",
      revId: 3,
      timestamp: "9999-12-31T23:59:59Z",
      redirect: undefined,
      text: "",
    };
    table.set(page.pageId, claimFor(page));
    const row = table.rowOf(page.pageId);
    expect(newer(claimFor(page), table.version(row))).toBe(false);
    expect(newer(claimFor({ ...page, revId: 4 }), table.version(row))).toBe(true);
  } finally {
    table.close();
  }
});
