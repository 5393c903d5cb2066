import { describe, expect, test } from "bun:test";
import { duration, eta, readingLine } from "../src/cli/progress";

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
});
