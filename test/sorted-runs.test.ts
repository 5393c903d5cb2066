/** SortedRuns (src/sorted-runs.ts): records spilled to disk in sorted runs and merged come back as one sort of them all would give them. */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync } from "node:fs";
import { SortedRuns } from "../src/sorted-runs";
import { EN_2016, ingested, tempDir } from "./helpers";

setDefaultTimeout(120_000);

describe("sorted runs", () => {
  test("records spilled in runs (each longer than the read buffer) come back sorted by key, equal keys as pushed", async () => {
    const { articles } = await ingested({ dumps: [EN_2016] });
    // Every chunk, keyed by its section number and its page's revision's last digit: many equal keys.
    const records = articles.flatMap((a) =>
      a.chunks.map((c, i) => ({
        key: [c.section, a.revId % 10],
        numbers: [c.section, a.revId % 10, a.pageId, i],
        strings: [c.text, a.title],
      })),
    );
    const expected = records
      .map((r, at) => ({ ...r, at }))
      .sort((x, y) => x.key[0]! - y.key[0]! || x.key[1]! - y.key[1]! || x.at - y.at);
    const drained = (budgetBytes: number) => {
      const dir = tempDir();
      const runs = new SortedRuns({ besides: dir, numbers: 4, strings: 2, keyFields: 2, budgetBytes });
      for (const r of records) runs.push(r.numbers, r.strings);
      const count = runs.runCount;
      const decoder = new TextDecoder();
      const got: { numbers: number[]; strings: string[] }[] = [];
      for (const r of runs.drain())
        got.push({ numbers: [...r.numbers], strings: [0, 1].map((k) => decoder.decode(r.string(k))) });
      expect(readdirSync(dir)).toEqual([]);
      return { count, got };
    };
    const want = expected.map((r) => ({ numbers: r.numbers, strings: r.strings }));
    const whole = drained(1e9);
    expect(whole.count).toBe(0);
    expect(whole.got).toEqual(want);
    // Runs of about 1.1 MB: each read through the 1 MB buffer in more than one refill.
    const spilled = drained(1.1e6);
    expect(spilled.count).toBeGreaterThan(1);
    expect(spilled.got).toEqual(want);
  });
});
