import { describe, expect, spyOn, test } from "bun:test";
import { buildProgress, duration, eta, readingLine } from "../src/cli/progress";

describe("a long build's progress, as a person reads it", () => {
  test("durations: seconds, then minutes, then hours and minutes", () => {
    expect(duration(45)).toBe("45 s");
    expect(duration(720)).toBe("12 min");
    expect(duration(3 * 3600 + 5 * 60)).toBe("3 h 05 min");
  });

  test("the time left is the rest at the rate so far; unknown without a total or a rate", () => {
    // A quarter read in 20 minutes: an hour left.
    expect(eta(250, 1000, 1200)).toBe("60 min");
    expect(eta(250, undefined, 1200)).toBe("?");
    expect(eta(0, 1000, 10)).toBe("?");
  });

  test("a dump being read: MB of the dump read, articles a second, the time left", () => {
    const line = readingLine(
      {
        dump: "dumps/enwiki-latest-pages-articles.xml.bz2",
        dumpIndex: 0,
        dumpCount: 2,
        bytesRead: 5_000e6,
        totalBytes: 22_000e6,
        articles: 1_620_000,
        redirects: 2_400_000,
      },
      3600,
    );
    expect(line).toBe(
      "reading [1/2] enwiki-latest-pages-articles.xml.bz2: 5000.0 of 22000.0 MB (22%), 1,620,000 articles, 2,400,000 redirects, 450 articles/s, 3 h 24 min left\n",
    );
  });

  test("off a terminal, a stage's line a minute names it as its bar does: the base's check of an update, an index stage", () => {
    // The display's clock, moved by the test alone: its lines come a minute apart.
    let clock = 1e9;
    const now = spyOn(performance, "now").mockImplementation(() => clock);
    const lines: string[] = [];
    const stream = { isTTY: false, write: (line: string) => lines.push(line) > 0 } as unknown as NodeJS.WriteStream;
    try {
      const progress = buildProgress(stream);
      progress.stage("checking en.tome whole (MB)", 0, 2000);
      clock += 60_000;
      progress.stage("checking en.tome whole (MB)", 500, 2000);
      progress.stage("merging the text index (terms)", 0, 0);
      clock += 60_000;
      progress.stage("merging the text index (terms)", 120_000, 120_000);
      progress.stop();
    } finally {
      now.mockRestore();
    }
    expect(lines).toEqual([
      "checking en.tome whole (MB): 500 of 2,000 (25%), 8 a second, 3 min left\n",
      "merging the text index (terms): 120,000 of 120,000 (100%), 2,000 a second, 0 s left\n",
    ]);
  });
});
