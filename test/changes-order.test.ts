/**
 * /v1/changes' order (D12: by time of change, then page id), stored in the snapshot (pages.byTime) so that no request
 * sorts the pages: at English Wikipedia's 7M pages a comparator's sort held the request thread 15–23 s.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { open } from "../src/search";
import { ContainerWriter, openContainer, openSnapshot, timeOrder } from "../src/snapshot";
import { EN_2006, EN_2016, refused, snapshotFor, SQUAD, tempDir } from "./helpers";

setDefaultTimeout(120_000);

/** The order by a comparator: time, then index (the table's rows are in page id order). */
const reference = (times: ArrayLike<number>) =>
  Array.from({ length: times.length }, (_x, i) => i).sort((a, b) => times[a]! - times[b]! || a - b);

describe("timeOrder", () => {
  test("the real pages' times of two dumps, in page id order: the comparator's order", async () => {
    // The dumps other test files build too: their snapshot is built once for the whole run (snapshotFor).
    const { pages } = openSnapshot(await snapshotFor({ dumps: [EN_2016, EN_2006] }));
    // These 248 pages have 248 times: ties (kept in page id order) are the next test's synthetic cases.
    expect(pages.ts.length).toBeGreaterThan(200);
    expect(Array.from(timeOrder(new Float64Array(pages.ts)))).toEqual(reference(pages.ts));
  });

  test("whole seconds with ties, fractions, times before 1970 and a span too wide for one number: each the comparator's order", () => {
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const cases = {
      "whole seconds, many ties": Float64Array.from({ length: 5000 }, () => 1e9 + Math.floor(next() * 50)),
      fractions: Float64Array.from({ length: 3000 }, () => 1e9 + next() * 1e6),
      "before 1970": Float64Array.from({ length: 3000 }, () => Math.floor(-1e9 + next() * 2e9)),
      "a span times the count past 2^53": Float64Array.from({ length: 3000 }, (_x, i) =>
        i % 2 ? 8.64e12 - Math.floor(next() * 10) : -8.64e12 + Math.floor(next() * 10),
      ),
      "one page": new Float64Array([1.5e9]),
      "no page": new Float64Array(0),
    };
    for (const [name, times] of Object.entries(cases))
      expect({ name, order: Array.from(timeOrder(times)) }).toEqual({ name, order: reference(times) });
  });
});

describe("a snapshot's changes() order", () => {
  test("is stored in the snapshot (pages.byTime) and read from it: by time, then page id", async () => {
    const path = await snapshotFor({ dumps: [EN_2016, EN_2006] });
    const { pages, container } = openSnapshot(path);
    expect(container.has("pages.byTime")).toBe(true);
    const stored = Array.from(new Uint32Array(container.read("pages.byTime").slice().buffer));
    expect(stored).toEqual(reference(pages.ts));
    const tome = open(path);
    const every = tome.changes(0, 0, 100_000);
    expect(every.total).toBe(pages.length);
    expect(every.pages.map((p) => p.pageId)).toEqual(stored.map((i) => pages.ids[i]!));
    tome.close();
  });

  test("a snapshot written before the order was stored answers the same, the order made on its first call", async () => {
    const path = await snapshotFor({ dumps: [EN_2016, EN_2006] });
    const container = openContainer(path);
    const without = join(tempDir(), "without-order.tome");
    const out = new ContainerWriter(without);
    for (const s of container.sections) if (s.name !== "pages.byTime") out.section(s.name, container.read(s.name));
    out.finish(container.meta as object);
    const before = open(without);
    const now = open(path);
    expect(openContainer(without).has("pages.byTime")).toBe(false);
    // Pages compared by their ids and times (a page object holds its table: a deep comparison walks the mapping).
    const window = (tome: typeof now, since: number) => {
      const { pages, total } = tome.changes(since, 3, 40);
      return { total, pages: pages.map((p) => [p.pageId, p.tsUnix]) };
    };
    for (const since of [0, 1_400_000_000, 1_460_000_000]) {
      expect(window(now, since).pages.length).toBeGreaterThan(0);
      expect(window(before, since)).toEqual(window(now, since));
    }
    before.close();
    now.close();
  });

  test("damaged to name a page past the table, it is refused as a damaged section naming snapshot:verify, not read past its end", async () => {
    const path = await snapshotFor({ dumps: [SQUAD] });
    const container = openContainer(path);
    const section = container.sections.find((s) => s.name === "pages.byTime")!;
    const copy = Buffer.from(readFileSync(path));
    new Uint32Array(copy.buffer, copy.byteOffset + section.offset, section.length / 4)[5] = 1_000_000;
    const damaged = join(tempDir(), "damaged-order.tome");
    writeFileSync(damaged, copy);
    const tome = open(damaged);
    expect(refused(() => tome.changes(0, 0, 10))).toBe(
      `SnapshotError: ${damaged} cannot be read (pages.byTime does not list the ${tome.snapshot.pages.length} pages): is it damaged? \`bun run snapshot:verify ${damaged}\` checks every section against its hash; rebuild it with \`bun run snapshot:build --dump <dump>\` if one does not match.`,
    );
    tome.close();
  });
});
