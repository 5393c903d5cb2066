/**
 * snapshot:update on the shared dumps: a base built from enwik8-head (2006) updated with
 * enwiki-2016-sample (newer revisions of the same pages) against a full build over both.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import * as fs from "node:fs";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { buildFromDumps } from "../src/build";
import { updateSnapshot } from "../src/build/update";
import { type Deletions, parseDeletions, readDeletions, unmatchedDeletions } from "../src/build/deletions";
import { runUpdate } from "../src/cli/snapshot-update";
import { followOnce } from "../src/cli/follow-run";
import { parseFollowArgs } from "../src/cli/snapshot-follow";
import type { App } from "../src/http";
import { openContainer, readSnapshotMeta, type SnapshotPage } from "../src/snapshot";
import { type Engine, open } from "../src/search";
import { indexKey } from "../src/search/text/analyze";
import { EN_2006, EN_2016, engineFor, ROOT, runToExit, snapshotFor, SQUAD, tempDir, TRUNCATED_XZ } from "./helpers";

setDefaultTimeout(120_000);

const dir = tempDir("tome-update-");
const BASE = join(dir, "base.tome");
const FULL = join(dir, "full.tome");
/** A day's status.txt in a mirror: "done" once its dump is written. */
const statusOf = (mirror: string, d: string) => join(mirror, "enwiki", d, "status.txt");
/** The dump of a day in a mirror (a link to the English sample unless `dumps` names another for the day). */
const dumpOf = (mirror: string, d: string) => join(mirror, "enwiki", d, `enwiki-${d}-pages-meta-hist-incr.xml.bz2`);

/** A mirror of these days (snapshot:follow --from): each a dump and a status.txt of the status given. */
function mirrorOf(days: Record<string, string>, dumps: Record<string, string> = {}): string {
  const mirror = tempDir("tome-incr-");
  for (const [d, status] of Object.entries(days)) {
    mkdirSync(join(mirror, "enwiki", d), { recursive: true });
    symlinkSync(dumps[d] ?? EN_2016, dumpOf(mirror, d));
    writeFileSync(statusOf(mirror, d), status);
  }
  return mirror;
}

/**
 * The update the tests read is snapshot:follow's first pass (in this process, from its command line's arguments) over
 * a copy of BASE (enwiki.tome) in FOLLOWED and a mirror of two days: 20160501 the 2016 dump, 20160502 still being
 * written (the SQuAD articles, enwiki). The tests of snapshot:follow go on from it.
 */
const FOLLOWED = tempDir("tome-follow-");
const MIRROR = mirrorOf({ "20160501": "done\n", "20160502": "in-progress\n" }, { "20160502": SQUAD });
const UPDATED = join(FOLLOWED, "enwiki-20160501.tome");
/** What that pass said, and the snapshot it returned. */
const followSaid: string[] = [];
let followMade: string | undefined;
const UPDATE = join(ROOT, "src/cli/snapshot-update.ts");
const FOLLOW = join(ROOT, "src/cli/snapshot-follow.ts");
const SINCE_2007 = Date.parse("2007-01-01T00:00:00Z") / 1000;
/** Lower-case words of a text. */
const wordsOf = (text: string): string[] => text.toLowerCase().match(/\p{L}+/gu) ?? [];

let base: Engine;
let full: Engine;
let updated: Engine;
/**
 * The 2016 dump's articles, read on their own (what the update should bring): the pages of its snapshot, which holds
 * every article, chunk and revision its ingest gave (test/snapshot.test.ts' round trip), shared by the test files.
 */
let articles2016: SnapshotPage[];
/** The stages the update of BASE to UPDATED reported (its progress), in order. */
const stages: [stage: string, done: number, total: number][] = [];
/** Whether the update read a dump (onProgress) before it reported any stage. */
let readingBeforeCheck = false;

beforeAll(async () => {
  // The base is the snapshot of the 2006 dump the test files share (built once per test run), copied: its pages come
  // in page id order, so its chunks are numbered as snapshot:build numbers them. Not the full build: over both dumps
  // the shared one numbers the chunks in page id order, snapshot:build (and the update) as the pages come.
  copyFileSync(await snapshotFor({ dumps: [EN_2006] }), BASE);
  copyFileSync(BASE, join(FOLLOWED, "enwiki.tome"));
  await buildFromDumps({ dumps: [EN_2006, EN_2016], workers: 2 }, { out: FULL, chunkWords: 300 });
  const args = parseFollowArgs(["--dir", FOLLOWED, "--from", MIRROR, "--memory", "20M", "--workers", "2"]);
  if (args === "help") throw new Error("snapshot:follow's arguments read as --help");
  followMade = await followOnce(args, (line) => followSaid.push(line), {
    reading: () => {
      readingBeforeCheck ||= stages.length === 0;
    },
    stage: (stage, done, total) => stages.push([stage, done, total]),
    stop: () => {},
  });
  articles2016 = (await engineFor({ dumps: [EN_2016] })).snapshot.pages.list();
  [base, full, updated] = [open(BASE), open(FULL), open(UPDATED)];
  // Longer than a test's: the shared snapshots may be another test file's to build, waited for (buildOnce).
}, 600_000);

/** A search's answer, as compared: each hit's page, chunk, score and shown text (no time budget: on a busy machine one ran out). */
const answer = (e: Engine, q: string) =>
  e.search(q, { limit: 10, budgetMs: Infinity }).hits.map((h) => [h.page.pageId, h.chunk, h.score, h.formatted.text]);

/** A few hundred queries: every title, two words of each page's first chunk, a prefix and a typo. */
function queries(e: Engine): string[] {
  const out = new Set<string>();
  for (let i = 0; i < e.snapshot.pages.length; i++) {
    const page = e.snapshot.pages.at(i);
    out.add(page.title);
    const words = wordsOf(page.chunks[0]?.text ?? "").filter((w) => w.length > 3);
    if (words.length > 8) out.add(`${words[3]} ${words[8]}`);
    if (words.length > 5) out.add(words[5]!.slice(0, 4));
  }
  out.add("anarchsm").add('"the first"').add("war of 1812");
  return [...out];
}

describe("snapshot:update (base 2006 + the 2016 dump)", () => {
  test("gives the snapshot a full build over both dumps gives: the same index bytes, pages, chunks, rankings and changes", () => {
    const a = openContainer(FULL);
    const b = openContainer(UPDATED);
    const hash = (c: typeof a, name: string) => c.sections.find((s) => s.name === name)?.sha256;
    // Text blocks and section tables are laid out differently (the update copies the base's blocks); everything else is the same bytes.
    const same = a.sections
      .map((s) => s.name)
      .filter((n) =>
        /^(index\.|titles\.|redirects|pages\.(id|rev|ts|firstDoc|chunkCount|title|titleEnd|sectionCount)$)/.test(n),
      );
    expect(same.length).toBeGreaterThan(20);
    for (const name of same) expect(`${name} ${hash(b, name)}`).toBe(`${name} ${hash(a, name)}`);

    expect(updated.snapshot.pages.length).toBe(full.snapshot.pages.length);
    for (let i = 0; i < full.snapshot.pages.length; i++)
      expect(JSON.parse(JSON.stringify(updated.snapshot.pages.at(i)))).toEqual(
        JSON.parse(JSON.stringify(full.snapshot.pages.at(i))),
      );
    expect(updated.snapshot.redirects).toEqual(full.snapshot.redirects);

    const qs = queries(full);
    expect(qs.length).toBeGreaterThan(300);
    let differing = 0;
    let answered = 0;
    for (const q of qs) {
      const x = answer(full, q);
      if (x.length) answered++;
      if (JSON.stringify(answer(updated, q)) !== JSON.stringify(x)) differing++;
    }
    expect(differing).toBe(0);
    expect(answered).toBeGreaterThan(300);

    const ids = (e: Engine) => e.changes(SINCE_2007, 0, 1000).pages.map((p) => [p.pageId, p.revId, p.tsUnix]);
    expect(ids(updated)).toEqual(ids(full));
  });

  test("the 2006 dump applied again changes nothing: a page the 2016 dump made a redirect stays one, by its revision", async () => {
    const again = join(dir, "again.tome");
    await updateSnapshot({ base: FULL, dumps: [EN_2006], out: again, workers: 2 });
    const a = openContainer(FULL);
    const b = openContainer(again);
    const hash = (c: typeof a, name: string) => c.sections.find((s) => s.name === name)?.sha256;
    const kept = a.sections.map((s) => s.name).filter((n) => /^(redirects|pages\.(id|rev|ts)$)/.test(n));
    expect(kept).toEqual(expect.arrayContaining(["redirects", "redirects.pageId", "redirects.rev", "redirects.ts"]));
    for (const name of kept) expect(`${name} ${hash(b, name)}`).toBe(`${name} ${hash(a, name)}`);
  });

  test("changes since 2007 lists exactly the pages the 2016 dump changed or added, oldest first, then by page id (D12)", () => {
    expect(base.changes(SINCE_2007, 0, 1000).total).toBe(0);
    const { pages, total } = updated.changes(SINCE_2007, 0, 1000);
    // Which 2016 pages hold their page id, from the full build (not from the snapshot under test).
    const expected = articles2016.filter((a) => full.page(a.pageId)?.revId === a.revId);
    // All but the pages whose title an older page kept: that is at most a few.
    expect(expected.length).toBeGreaterThan(articles2016.length - 5);
    expect(total).toBe(expected.length);
    expect(pages.map((p) => p.pageId).sort((x, y) => x - y)).toEqual(
      expected.map((a) => a.pageId).sort((x, y) => x - y),
    );
    const order = [...pages].sort((x, y) => x.tsUnix - y.tsUnix || x.pageId - y.pageId);
    expect(pages.map((p) => p.pageId)).toEqual(order.map((p) => p.pageId));
  });

  test("each page of the 2016 dump has its 2016 rev_id and timestamp, and search finds its 2016 text", () => {
    let found = 0;
    for (const a of articles2016) {
      const page = updated.page(a.pageId);
      if (!page) continue;
      expect([page.revId, page.timestamp]).toEqual([a.revId, a.timestamp]);
      expect(page.chunks.map((c) => c.text)).toEqual(a.chunks.map((c) => c.text));
      // A word of the 2016 text that the 2006 snapshot has nowhere.
      const word = wordsOf(a.chunks.map((c) => c.text).join(" ")).find(
        (w) => w.length > 6 && /^[a-z]+$/.test(w) && !base.text.has(indexKey(w)),
      );
      if (!word) continue;
      expect(updated.text.has(indexKey(word))).toBe(true);
      // The page is found; its hit may be a chunk holding another form of the word (D43).
      // No time limit (D91): on a busy machine a search ran out of its 100 ms and missed the page.
      expect(updated.search(word, { limit: 50, budgetMs: Infinity }).hits.some((h) => h.page.pageId === a.pageId)).toBe(
        true,
      );
      // Within the page alone (its chunks are numbered after the base's, out of page id order).
      const within = updated.search(word, { pageId: a.pageId, budgetMs: Infinity }).hits;
      expect(within.length).toBeGreaterThan(0);
      expect(within.every((h) => h.page.pageId === a.pageId)).toBe(true);
      expect(within.some((h) => h.page.chunks[h.chunk]!.text.toLowerCase().includes(word))).toBe(true);
      found++;
    }
    expect(found).toBeGreaterThan(50);
  });

  test("the base's pages and redirects sorted by title in several runs on disk give the same file as in one run", async () => {
    // On Linux, the update of the test of a file renamed onto its base below sorts them in several runs (titleRunBytes):
    // that one update is compared with this file's, not made twice (bounded by 240 s, twice the 120 s its process had).
    let spilled = join(dir, "spilled.tome");
    let at = dir;
    if (process.platform === "linux") {
      let said: string;
      ({ out: spilled, at, said } = await renamedMidUpdate());
      // Its update made the file (a failed one read below as "no such file out.tome").
      expect(said).toBe("updated, renamed: true");
    } else
      await updateSnapshot({
        base: BASE,
        dumps: [EN_2016],
        out: spilled,
        workers: 2,
        memoryBytes: 20e6,
        titleRunBytes: 2000,
        createdAt: new Date(readSnapshotMeta(UPDATED).createdAt),
      });
    const [a, b] = [openContainer(UPDATED), openContainer(spilled)];
    expect(b.sections.map((s) => `${s.name} ${s.sha256}`)).toEqual(a.sections.map((s) => `${s.name} ${s.sha256}`));
    expect(readdirSync(at).filter((f) => f.startsWith(".tome-"))).toEqual([]);
  }, 240_000);

  test("checking the base whole, before any dump is read, is a stage of its progress, in MB", () => {
    // The stages of the update made in beforeAll (BASE + the 2016 dump), not of a second one.
    const checking = stages.filter(([stage]) => stage === "checking enwiki.tome whole (MB)");
    expect(stages[0]![0]).toBe("checking enwiki.tome whole (MB)");
    expect(readingBeforeCheck).toBe(false);
    const [, done, total] = checking.at(-1)!;
    expect(done).toBe(total);
    expect(Math.abs(total - openContainer(BASE).bytes / 1e6)).toBeLessThan(1);
  });

  test("the metadata records the base's content hash and the dumps applied", () => {
    const meta = readSnapshotMeta(UPDATED);
    expect(meta.base).toBe(readSnapshotMeta(BASE).contentHash);
    expect(meta.updates).toHaveLength(1);
    expect(meta.updates![0]).toMatchObject({ base: meta.base, dumps: [dumpOf(MIRROR, "20160501")] });
    expect(meta.updates![0]!.changed + meta.updates![0]!.added).toBe(updated.changes(SINCE_2007, 0, 1000).total);
    expect(meta.contentHash).not.toBe(meta.base);
  });
});

/** The snapshot the deletion list of the tests of deletions leaves of UPDATED. */
const DELETED = join(dir, "deleted.tome");
/**
 * The deletions applied to the updated snapshot: a second update, of deletions alone (as snapshot:update runs it; its
 * command line's --deleted is test/cli.test.ts'). Its list names a page of the 2016 dump (so in changes) by its id and a
 * 2006 page by its title, then two lines that name nothing (D45): an id no page has, a title no page holds. Made once
 * for the tests of deletions and of a list that names nothing, which read what it removed and what it said.
 */
const deletedFromUpdated = (() => {
  let made:
    | Promise<{
        victim: { pageId: number; title: string; word: string };
        byTitle: { pageId: number; title: string };
        list: string;
        lines: string[];
      }>
    | undefined;
  return () =>
    (made ??= (async () => {
      const a = articles2016.find((x) => updated.page(x.pageId) && x.chunks.length > 2)!;
      const victim = { pageId: a.pageId, title: a.title, word: wordsOf(a.chunks[1]!.text).find((w) => w.length > 6)! };
      const old = updated.snapshot.pages.list().find((p) => p.tsUnix < SINCE_2007 && p.chunks.length)!;
      const byTitle = { pageId: old.pageId, title: old.title };
      const list = join(dir, "deleted.txt");
      writeFileSync(
        list,
        `# removed\n${victim.pageId}\ntitle:${byTitle.title.replace(/ /g, "_")}\n__proto__\n999999999\n`,
      );
      const lines: string[] = [];
      await runUpdate({ base: UPDATED, dumps: [], deleted: list, out: DELETED, workers: 2 }, (l) => lines.push(l));
      return { victim, byTitle, list, lines };
    })());
})();

describe("deletions", () => {
  /** The routes over the snapshot the deletions left, as `bun run start` serves them with TOME_AUTH=off (no key). */
  let app: App;
  let victim: { pageId: number; title: string; word: string };
  let byTitle: { pageId: number; title: string };
  let engine: Engine;

  beforeAll(async () => {
    let lines: string[];
    ({ victim, byTitle, lines } = await deletedFromUpdated());
    expect(lines.join("\n")).toMatch(/0 pages changed, 0 added, 2 removed \(2 by .*deleted\.txt\)/);
    engine = open(DELETED);
    const { createApp } = await import("../src/http");
    app = createApp(engine);
  });
  afterAll(() => {
    app?.close();
  });

  test("a second update records its base and both updates", () => {
    const meta = readSnapshotMeta(DELETED);
    expect(meta.base).toBe(readSnapshotMeta(UPDATED).contentHash);
    expect(meta.updates!.map((u) => [u.dumps, u.deleted?.pages])).toEqual([
      [[dumpOf(MIRROR, "20160501")], undefined],
      [[], 2],
    ]);
    expect(meta.indexedPages).toBe(updated.snapshot.pages.length - 2);
  });

  test("the list's format: ids, titles, explicit prefixes, comments", () => {
    const d = parseDeletions("# c\n\n12\nid:13\nalbert_einstein\ntitle:1984\n", "f");
    expect([...d.ids.keys()]).toEqual([12, 13]);
    expect([...d.titles.keys()]).toEqual(["Albert einstein", "1984"]);
    expect(() => parseDeletions("id:x12\n", "f")).toThrow(/line 1/);
    // A list not there, or a folder, said as a dump's is (it said "…: ENOENT." and "…: EISDIR.").
    const folder = tempDir("tome-deletions-");
    expect(() => readDeletions(join(folder, "gone.txt"))).toThrow(
      `deletion list not found: ${join(folder, "gone.txt")}. Give the file of pages to remove, one a line.`,
    );
    expect(() => readDeletions(folder)).toThrow(`${folder} is a folder, not a deletion list: name the file in it.`);
    // One this user may not read, said as a dump's and a snapshot's are (it said "…: EACCES."); root reads every file.
    const list = join(folder, "deleted.txt");
    const refused = spyOn(fs, "openSync").mockImplementation(() => {
      throw Object.assign(new Error(`EACCES: permission denied, open '${list}'`), { code: "EACCES" });
    });
    try {
      expect(() => readDeletions(list)).toThrow(
        `the deletion list ${list} cannot be read by this user (EACCES): make it readable to this user, or run as a user who may read it.`,
      );
    } finally {
      refused.mockRestore();
    }
  });

  test("a deleted id is gone from page, chunk, search, lucky and changes (404 where the route answers one)", async () => {
    expect(updated.page(victim.pageId)).toBeDefined();
    expect(engine.page(victim.pageId)).toBeUndefined();
    expect(engine.pageByTitle(victim.title)).toBeUndefined();
    expect(
      updated.search(victim.word, { limit: 50, budgetMs: Infinity }).hits.some((h) => h.page.pageId === victim.pageId),
    ).toBe(true);
    expect(
      engine.search(victim.word, { limit: 50, budgetMs: Infinity }).hits.some((h) => h.page.pageId === victim.pageId),
    ).toBe(false);
    expect(
      engine.search(victim.title, { limit: 50, budgetMs: Infinity }).hits.some((h) => h.page.pageId === victim.pageId),
    ).toBe(false);
    expect(engine.lucky(victim.title)?.page.pageId).not.toBe(victim.pageId);
    expect(engine.changes(0, 0, 10_000).pages.some((p) => p.pageId === victim.pageId)).toBe(false);
    expect(engine.page(byTitle.pageId)).toBeUndefined();

    const get = (path: string) => app.handle(new Request(`http://localhost${path}`));
    expect((await get(`/v1/page/${victim.pageId}`)).status).toBe(404);
    expect((await get(`/v1/chunk/${victim.pageId}_0`)).status).toBe(404);
    expect((await get(`/v1/page/${byTitle.pageId}`)).status).toBe(404);
    const search = (await (await get(`/v1/search?q=${encodeURIComponent(victim.word)}&limit=50`)).json()) as {
      hits: { page_id: string | number }[];
    };
    expect(search.hits.length).toBeGreaterThan(0);
    expect(search.hits.some((h) => Number(h.page_id) === victim.pageId)).toBe(false);
    const lucky = await get(`/v1/lucky?q=${encodeURIComponent(victim.title)}`);
    if (lucky.status === 200)
      expect(Number(((await lucky.json()) as { page: { page_id: string } }).page.page_id)).not.toBe(victim.pageId);
    else expect(lucky.status).toBe(404);
    const changes = (await (await get(`/v1/changes?since=2007-01-01T00:00:00Z&limit=1000`)).json()) as {
      results: { page_id: string | number }[];
      total: number;
    };
    expect(changes.total).toBe(updated.changes(SINCE_2007, 0, 1000).total - 1);
    expect(changes.results.some((p) => Number(p.page_id) === victim.pageId)).toBe(false);
  });
});

describe("deletions counted by what they removed", () => {
  test("pages and redirects apart, a page the dumps changed included: the line adds up, as the metadata does (D46)", async () => {
    // Of the 2006 base: Anarchism (12), which the 2016 dump changes; AccessibleComputing (10) and AfghanistanHistory,
    // redirects in both dumps, the second named by its title.
    const list = join(dir, "deleted-redirects.txt");
    writeFileSync(list, "12\n10\ntitle:AfghanistanHistory\n");
    expect(base.page(12)?.title).toBe("Anarchism");
    const out = join(dir, "deleted-redirects.tome");
    const lines: string[] = [];
    await runUpdate({ base: BASE, dumps: [EN_2016], deleted: list, out, workers: 2 }, (l) => lines.push(l));
    const meta = readSnapshotMeta(out);
    const before = readSnapshotMeta(UPDATED);
    const applied = before.updates![0]!;
    expect(meta.updates![0]!.deleted).toEqual({ file: list, pages: 1, redirects: 2 });
    expect(meta.indexedPages).toBe(before.indexedPages - 1);
    expect(meta.skippedRedirects).toBe(before.skippedRedirects - 2);
    expect(lines.at(-1)).toContain(
      `${applied.changed - 1} pages changed, ${applied.added} added, ${applied.removed + 1} removed (1 by ${list}), 2 redirect(s) removed by ${list};`,
    );
  });
});

describe("a deletion list that names nothing (D45)", () => {
  test("lines that match no page or redirect are counted in a warning naming the first, where the update said only '0 removed'", async () => {
    // The list of the tests of deletions: a page by its id and one by its title, both in the base; then the lines 4
    // and 5 name nothing.
    const { list, lines } = await deletedFromUpdated();
    expect(lines.at(-2)).toContain("2 removed (2 by");
    expect(lines.at(-1)).toBe(
      `  warning: 2 lines of ${list} matched no page or redirect of the base or the dumps, the first line 4: "__proto__". Check that it is the list meant, page ids or titles one a line (D45).`,
    );
  });

  test("a list built by hand, not read from a file, is said too: its ids and titles hold each one's line", () => {
    // Its lines were a third field, optional: a Deletions built without it never warned.
    const byHand: Deletions = {
      file: "by hand",
      ids: new Map([[999999999, { line: 2, text: "999999999" }]]),
      titles: new Map([["Anarchism", { line: 1, text: "anarchism" }]]),
    };
    expect(unmatchedDeletions(byHand, new Set(), new Set(["Anarchism"]))).toEqual({
      count: 1,
      first: { line: 2, text: "999999999" },
    });
  });

  test("a file that is not text (a dump given for the list) is refused before anything is read, naming its line", () => {
    expect(() => readDeletions(EN_2016)).toThrow(
      `${EN_2016} is not a text file (line 1 holds bytes that are not text): a deletion list holds page ids or titles, one a line (D45). Give the list, as text; nothing was written.`,
    );
    const nul = join(dir, "deleted-nul.txt");
    writeFileSync(nul, "12\n1\u00003\n");
    expect(() => readDeletions(nul)).toThrow(`${nul} is not a text file (line 2 holds bytes that are not text)`);
  });

  test("a wrong file is refused by its first 64 KiB, not read whole; a list past them is read whole, a character cut there taken", () => {
    const read = spyOn(fs, "readFileSync");
    try {
      expect(() => readDeletions(EN_2016)).toThrow(`${EN_2016} is not a text file (line 1`);
      // The 1.7 MB dump was read whole before its first line was refused.
      expect(read).not.toHaveBeenCalled();
    } finally {
      read.mockRestore();
    }
    // "é" (two bytes) across byte 65,536: the first 64 KiB end within it.
    const long = `12\n${"a".repeat(65_536 - 4)}é\nid:13\n`;
    expect(Buffer.from(long).indexOf("é")).toBe(65_535);
    const list = join(dir, "deleted-long.txt");
    writeFileSync(list, long);
    const d = readDeletions(list);
    expect([...d.ids.keys()]).toEqual([12, 13]);
    expect([...d.titles.values()]).toEqual([{ line: 2, text: `${"a".repeat(65_532)}é` }]);
    writeFileSync(list, Buffer.concat([Buffer.from(long), Buffer.from([0xff, 10])]));
    expect(() => readDeletions(list)).toThrow(`${list} is not a text file (line 4 holds bytes that are not text)`);
  });
});

describe("refusals: nothing is written, one line says what to do", () => {
  async function update(...args: string[]): Promise<{ code: number; stderr: string; out: string }> {
    const out = join(tempDir("tome-refused-"), "out.tome");
    const { code, stderr } = await runToExit(["bun", UPDATE, ...args, "--out", out, "--workers", "2"], {});
    return { code, stderr, out };
  }
  function refused(r: { code: number; stderr: string; out: string }, says: RegExp): void {
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(says);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(r.out)).toBe(false);
    expect(readdirSync(join(r.out, ".."))).toEqual([]);
  }

  test("a dump of another wiki", async () => {
    refused(
      await update("--base", BASE, "--dump", TRUNCATED_XZ.find((d) => d.includes("viwiki"))!),
      /viwiki.*is a dump of vi\.wikipedia\.org, but .* is of en\.wikipedia\.org: nothing was written/,
    );
  });

  test("a truncated dump", async () => {
    const cut = join(dir, "cut.xml.bz2");
    writeFileSync(cut, readFileSync(EN_2016).subarray(0, 300_000));
    refused(
      await update("--base", BASE, "--dump", cut),
      /cut\.xml\.bz2: the bzip2 stream is damaged \(Compressed file ends unexpectedly\)\. Nothing was written: fetch the dump again/,
    );
  });

  test("a corrupt base (a damaged section) and a truncated one", async () => {
    const bad = join(dir, "bad.tome");
    const bytes = readFileSync(BASE);
    const at = openContainer(BASE).sections.find((s) => s.name === "index.text.postings.0")!.offset + 100;
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(bad, bytes);
    refused(
      await update("--base", bad, "--dump", EN_2016),
      /bad\.tome is corrupt \(section\(s\) index\.text\.postings\.0 do not match their hash\): nothing was written/,
    );
    writeFileSync(bad, bytes.subarray(0, 100_000));
    refused(await update("--base", bad, "--dump", EN_2016), /bad\.tome is truncated/);
  });
});

describe("the base let go on every path: nothing of it stays mapped once an update is refused or stopped", () => {
  /**
   * Updates a base holding `bytes` (a copy of BASE unless given) with `options`: the update throws `says`, writes
   * nothing, and nothing of the base stays mapped in this process (a file let go reads zeros from no file, D84).
   */
  async function refusedLettingGo(
    options: Omit<Parameters<typeof updateSnapshot>[0], "base" | "out">,
    says: string,
    bytes: Uint8Array = readFileSync(BASE),
  ): Promise<void> {
    const base = join(tempDir("tome-let-go-"), "base.tome");
    writeFileSync(base, bytes);
    const out = join(tempDir("tome-refused-"), "out.tome");
    await expect(updateSnapshot({ ...options, base, out, workers: 2 })).rejects.toThrow(says);
    expect(readFileSync("/proc/self/maps", "utf8").includes(base)).toBe(false);
    expect(existsSync(out)).toBe(false);
  }

  test("a damaged base, refused after its check, is not left mapped (it stayed until collected)", async () => {
    const bytes = readFileSync(BASE);
    const at = openContainer(BASE).sections.find((s) => s.name === "text.blocks.0")!.offset + 100;
    bytes[at] = bytes[at]! ^ 0xff;
    await refusedLettingGo({ dumps: [EN_2016] }, "base.tome is corrupt (", bytes);
  });

  test("an update refused after its check (a dump of another wiki) lets the base go", async () => {
    const vi = TRUNCATED_XZ.find((d) => d.includes("viwiki"))!;
    await refusedLettingGo({ dumps: [vi] }, "is a dump of vi.wikipedia.org");
  });

  test("an update stopped (its signal) while it checks its base lets the base go", async () => {
    const stop = new AbortController();
    const progress = (stage: string) => {
      if (stage.startsWith("checking")) stop.abort(new Error("stopped"));
    };
    await refusedLettingGo({ dumps: [EN_2016], signal: stop.signal, progress }, "stopped");
  });
});

describe("a copy over the base mid-update (D84)", () => {
  // The update reads its base with no turn of the event loop from the dumps read to its index merged: its rows copied
  // (read through the base's own mapping) and its text index merged (through another). `phase`: what the update says
  // (TOME_DEBUG_MEM's log) just before it reads them.
  test.if(process.platform === "linux").each([
    ["its rows are copied", "update: text copied"],
    ["its text index is merged", "merge: start"],
  ])("stops the update saying why, while %s, where the process was killed (SIGBUS); nothing is written", (_, phase) => {
    const at = tempDir("tome-update-copied-");
    const base = join(at, "base.tome");
    const out = join(at, "out.tome");
    copyFileSync(BASE, base);
    // In a process of its own, which a read of the file cut short kills. At `phase`, a writer opens the base
    // (`truncate` opens it without waiting: refused while a lease is held, the holder told all the same); the
    // update then reads on, asking the kernel again at most every 100 ms: the 150 ms slept make its next read ask.
    // The dump is the SQuAD articles (enwiki, a quarter of the 2016 sample's size): what is cut short is the base's rows
    // and index, read whatever the dump brings (here every base row is kept, its index merged with the new pages').
    const script = `import { updateSnapshot } from ${JSON.stringify(join(ROOT, "src/build/update.ts"))};
        import { setMemoryLog } from ${JSON.stringify(join(ROOT, "src/search/indexer/memory-log.ts"))};
        setMemoryLog("on");
        let cut = false;
        const write = process.stderr.write.bind(process.stderr);
        process.stderr.write = (line, ...rest) => {
          if (!cut && String(line).includes(${JSON.stringify(`] ${phase}:`)})) {
            cut = true;
            Bun.spawnSync(["truncate", "-s", "0", ${JSON.stringify(base)}]);
            Bun.sleepSync(150);
          }
          return write(line, ...rest);
        };
        try {
          await updateSnapshot({ base: ${JSON.stringify(base)}, dumps: [${JSON.stringify(SQUAD)}], out: ${JSON.stringify(out)}, workers: 2 });
          console.log("updated, cut: " + cut);
        } catch (e) { console.log(e.name + ": " + e.message); }`;
    const updating = Bun.spawnSync(["bun", "-e", script], { timeout: 120_000, stderr: "pipe" });
    expect({ said: updating.stdout.toString().trim(), signal: updating.signalCode ?? null }).toEqual({
      said: `SnapshotError: ${base} was opened for writing by another process (a copy over it?) while it was read: it was let go, as reading a file cut short would crash the process (D84). Run it again once the file is whole; replace a snapshot by renaming a new file onto it.`,
      signal: null,
    });
    expect(existsSync(out)).toBe(false);
    // The writer was refused, the base left whole.
    expect(readFileSync(base).equals(readFileSync(BASE))).toBe(true);
  });
});

/**
 * An update of a copy of BASE with the 2016 dump, in a process of its own, onto whose base another snapshot (FULL) is
 * renamed once the dumps are read (TOME_DEBUG_MEM's log), as a new snapshot is put in place; its pages and redirects
 * sorted by title in runs of 2,000 bytes (several on disk). Run once for the two tests that read it: the folder it
 * wrote in, its file, and what it said.
 */
const renamedMidUpdate = (() => {
  let made: Promise<{ at: string; out: string; said: string }> | undefined;
  return () =>
    (made ??= (async () => {
      const at = tempDir("tome-update-renamed-");
      const base = join(at, "base.tome");
      const other = join(at, "other.tome");
      const out = join(at, "out.tome");
      copyFileSync(BASE, base);
      copyFileSync(FULL, other);
      const script = `import { renameSync } from "node:fs";
        import { updateSnapshot } from ${JSON.stringify(join(ROOT, "src/build/update.ts"))};
        import { setMemoryLog } from ${JSON.stringify(join(ROOT, "src/search/indexer/memory-log.ts"))};
        setMemoryLog("on");
        let renamed = false;
        const write = process.stderr.write.bind(process.stderr);
        process.stderr.write = (line, ...rest) => {
          if (!renamed && String(line).includes("] update: dumps read:")) {
            renamed = true;
            renameSync(${JSON.stringify(other)}, ${JSON.stringify(base)});
          }
          return write(line, ...rest);
        };
        try {
          await updateSnapshot({ base: ${JSON.stringify(base)}, dumps: [${JSON.stringify(EN_2016)}], out: ${JSON.stringify(out)}, workers: 2, memoryBytes: 20e6, titleRunBytes: 2000 });
          console.log("updated, renamed: " + renamed);
        } catch (e) { console.log(e.name + ": " + e.message); }`;
      // Killed past 120 s (a hang, or a machine too loaded), not left running after the test: an orphan.
      const updating = Bun.spawn(["bun", "-e", script], { stdout: "pipe", stderr: "pipe", timeout: 120_000 });
      const [said] = await Promise.all([new Response(updating.stdout).text(), new Response(updating.stderr).text()]);
      await updating.exited;
      const killed = updating.signalCode ? ` (killed by ${updating.signalCode} past 120 s)` : "";
      return { at, out, said: `${said.trim()}${killed}` };
    })());
})();

describe("a file renamed onto the base mid-update", () => {
  // The update opens its base once: its rows, its text and its text index are read through that file. Its text copy and
  // its index merge opened the base's path again, and read whatever had been renamed onto it since.
  test.if(process.platform === "linux")(
    "is not read: the update reads the base it opened, and makes what it makes of it untouched",
    async () => {
      const { out, said } = await renamedMidUpdate();
      expect(said).toBe("updated, renamed: true");
      const sections = (p: string) => openContainer(p).sections.map((s) => `${s.name} ${s.sha256}`);
      expect(sections(out)).toEqual(sections(UPDATED));
    },
    240_000,
  );

  test("between reading its header and mapping it, is refused: the container maps only the file it read", () => {
    const at = tempDir("tome-update-renamed-");
    const base = join(at, "base.tome");
    copyFileSync(BASE, base);
    const same = openContainer(base);
    same.mapAll();
    same.letGo();
    const opened = openContainer(base);
    copyFileSync(FULL, join(at, "other.tome"));
    fs.renameSync(join(at, "other.tome"), base);
    expect(() => opened.mapAll()).toThrow(
      `${base} was replaced by another file (one renamed onto it?) while it was being opened: nothing was read from it. Try again.`,
    );
  });
});

describe("snapshot:follow --from a local mirror", () => {
  /** A snapshots' folder holding the base as enwiki.tome, and a mirror of these days (mirrorOf). */
  function withMirror(
    days: Record<string, string>,
    dumps: Record<string, string> = {},
  ): { snapshots: string; mirror: string } {
    const snapshots = tempDir("tome-follow-");
    writeFileSync(join(snapshots, "enwiki.tome"), readFileSync(BASE));
    return { snapshots, mirror: mirrorOf(days, dumps) };
  }

  const follow = (...args: string[]) => runToExit(["bun", FOLLOW, ...args, "--workers", "2"], {});

  test("applies the days published since the snapshot's newest page, remembers them, and leaves the result in the snapshots' folder", async () => {
    // The first pass is the set-up's, its snapshot UPDATED: the same index, pages and rankings as a full build over
    // both dumps (the first test), and what the tests of snapshot:update read. The second day is the SQuAD articles
    // (enwiki, a quarter of the 2016 sample's size): what is claimed of it is that it is applied and recorded after
    // the first, which no page of it changes (its pages are all new).
    const [snapshots, mirror] = [FOLLOWED, MIRROR];
    expect(followSaid.join("\n")).toMatch(/applying 1 day\(s\) 20160501 to enwiki\.tome/);
    expect(followMade).toBe(UPDATED);
    expect(readdirSync(snapshots).sort()).toEqual(["enwiki-20160501.tome", "enwiki.tome"]);
    const meta = readSnapshotMeta(UPDATED);
    expect(meta.updates!.map((u) => u.days)).toEqual([["20160501"]]);
    expect(meta.base).toBe(readSnapshotMeta(BASE).contentHash);

    // The day being written is not taken; nothing new: nothing written.
    const second = await follow("--dir", snapshots, "--from", mirror);
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/enwiki-20160501\.tome is up to date.*last applied: 20160501/);
    expect(readdirSync(snapshots)).toHaveLength(2);

    writeFileSync(statusOf(mirror, "20160502"), "done\n");
    const third = await follow("--dir", snapshots, "--from", mirror);
    expect(third.code).toBe(0);
    const after = readSnapshotMeta(join(snapshots, "enwiki-20160502.tome"));
    expect(after.updates!.map((u) => [u.days, u.changed])).toEqual([
      [["20160501"], meta.updates![0]!.changed],
      [["20160502"], 0],
    ]);
    expect(after.updates![1]!.added).toBeGreaterThan(0);
  });

  test("a day still being written holds back the days after it; --dir however spelt, --keep never removes what it wrote", async () => {
    // Both days are the SQuAD articles (enwiki, a quarter of the 2016 sample's size): the claim is which days are
    // applied and which files are kept, not what the dumps hold.
    const { snapshots, mirror } = withMirror(
      { "20160501": "in-progress\n", "20160502": "done\n" },
      { "20160501": SQUAD, "20160502": SQUAD },
    );
    const held = await follow("--dir", `${snapshots}/`, "--from", mirror, "--keep", "1");
    expect(held.code).toBe(0);
    expect(held.stderr).toContain("20160501 is not finished yet");
    expect(readdirSync(snapshots)).toEqual(["enwiki.tome"]);
    writeFileSync(statusOf(mirror, "20160501"), "done\n");
    const both = await follow("--dir", `${snapshots}/`, "--from", mirror, "--keep", "1");
    expect(both.code).toBe(0);
    expect(both.stderr).toMatch(/applying 2 day\(s\) 20160501…20160502 to enwiki\.tome/);
    expect(readdirSync(snapshots).sort()).toEqual(["enwiki-20160502.tome", "enwiki.tome"]);
    // A lock a live process holds refuses a second follower; --from a file is one line.
    writeFileSync(join(snapshots, ".follow.lock"), `${process.pid}\n`);
    const locked = await follow("--dir", snapshots, "--from", mirror);
    expect([locked.code, locked.stderr]).toEqual([
      1,
      expect.stringContaining(`another snapshot:follow (process ${process.pid})`),
    ]);
    rmSync(join(snapshots, ".follow.lock"));
    const file = await follow("--dir", snapshots, "--from", statusOf(mirror, "20160501"));
    expect(file.code).toBe(1);
    expect(file.stderr).toContain("is a file: give the folder holding the incremental dumps");
    expect(file.stderr).not.toContain("    at ");
  });

  test("a snapshot whose dump named its database 'e.*' is refused: --keep deleted enwiki's snapshots, which that pattern matched", async () => {
    const snapshots = tempDir("tome-follow-");
    const mirror = tempDir("tome-incr-");
    const xml = (text: string, day: string) =>
      `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en"><siteinfo><dbname>e.*</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base></siteinfo>
<page><title>Alpha</title><ns>0</ns><id>1</id><revision><id>${day}</id><timestamp>2024-01-${day}T00:00:00Z</timestamp><text>${text}</text></revision></page></mediawiki>`;
    const dump = join(mirror, "base.xml");
    writeFileSync(dump, xml("Alpha is a word.", "01"));
    await buildFromDumps({ dumps: [dump], workers: 1 }, { out: join(snapshots, "e.tome"), chunkWords: 300 });
    rmSync(dump);
    writeFileSync(join(mirror, "e.*-20240102-pages-meta-hist-incr.xml.bz2"), xml("Alpha is a new word.", "02"));
    for (const d of ["20230101", "20230102"]) writeFileSync(join(snapshots, `enwiki-${d}.tome`), "another wiki's");
    const r = await follow(
      "--dir",
      snapshots,
      "--snapshot",
      join(snapshots, "e.tome"),
      "--from",
      mirror,
      "--keep",
      "1",
    );
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining(`"e.*" is not a wiki's database name`)]);
    expect(readdirSync(snapshots).sort()).toEqual(["e.tome", "enwiki-20230101.tome", "enwiki-20230102.tome"]);
  });

  test("a page dated after the snapshot was built (a wrong clock) does not hold the days back: they count from its newest page before, and it is said", async () => {
    const snapshots = tempDir("tome-follow-");
    const mirror = tempDir("tome-incr-");
    const page = (id: number, title: string, text: string, when: string) =>
      `<page><title>${title}</title><ns>0</ns><id>${id}</id><revision><id>${id}${when.slice(0, 4)}</id><timestamp>${when}</timestamp><text>${text}</text></revision></page>`;
    const xml = (...pages: string[]) =>
      `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en"><siteinfo><dbname>enwiki</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base></siteinfo>
${pages.join("\n")}</mediawiki>`;
    const dump = join(mirror, "base.xml");
    writeFileSync(
      dump,
      xml(
        page(1, "Alpha", "Alpha is a word.", "2024-01-01T00:00:00Z"),
        page(2, "Beta", "Beta is a letter.", "2099-06-01T00:00:00Z"),
      ),
    );
    await buildFromDumps({ dumps: [dump], workers: 1 }, { out: join(snapshots, "enwiki.tome"), chunkWords: 300 });
    rmSync(dump);
    writeFileSync(
      join(mirror, "enwiki-20240102-pages-meta-hist-incr.xml.bz2"),
      xml(page(1, "Alpha", "Alpha is a new word.", "2024-01-02T00:00:00Z")),
    );
    const r = await follow("--dir", snapshots, "--from", mirror);
    // It was "enwiki.tome is up to date: no enwiki incremental dump from 20990601 on", at every run until 2099.
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "enwiki.tome has 1 page dated after it was built (the latest 2099-06-01T00:00:00Z): a clock was wrong; its days are counted from its newest page before that (20240101).",
    );
    expect(r.stderr).toMatch(/applying 1 day\(s\) 20240102 to enwiki\.tome/);
    expect(readSnapshotMeta(join(snapshots, "enwiki-20240102.tome")).updates!.map((u) => u.days)).toEqual([
      ["20240102"],
    ]);
  });

  test("--wiki picks its wiki's newest snapshot of the folder: another wiki's snapshot dropped in with newer data is not taken and refused", async () => {
    const snapshots = tempDir("tome-follow-");
    const mirror = tempDir("tome-incr-");
    const xml = (lang: string, text: string, when: string) =>
      `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="${lang}"><siteinfo><dbname>${lang}wiki</dbname><base>https://${lang}.wikipedia.org/wiki/Main_Page</base></siteinfo>
<page><title>Alpha</title><ns>0</ns><id>1</id><revision><id>${when.slice(0, 4)}</id><timestamp>${when}</timestamp><text>${text}</text></revision></page></mediawiki>`;
    const build = async (name: string, lang: string, when: string) => {
      const dump = join(mirror, "base.xml");
      writeFileSync(dump, xml(lang, "Alpha is a word.", when));
      await buildFromDumps({ dumps: [dump], workers: 1 }, { out: join(snapshots, name), chunkWords: 300 });
      rmSync(dump);
    };
    await build("enwiki.tome", "en", "2024-01-01T00:00:00Z");
    // Another wiki's, its data newer: first in the folder's order.
    await build("frwiki.tome", "fr", "2025-01-01T00:00:00Z");
    writeFileSync(
      join(mirror, "enwiki-20240102-pages-meta-hist-incr.xml.bz2"),
      xml("en", "Alpha is a new word.", "2024-01-02T00:00:00Z"),
    );
    const r = await follow("--dir", snapshots, "--from", mirror, "--wiki", "enwiki");
    // It was 2: "frwiki.tome is a snapshot of frwiki (fr.wikipedia.org), not enwiki", at every run while it was there.
    expect([r.code, r.stderr]).toEqual([0, expect.stringMatching(/applying 1 day\(s\) 20240102 to enwiki\.tome/)]);
    expect(readdirSync(snapshots).sort()).toEqual(["enwiki-20240102.tome", "enwiki.tome", "frwiki.tome"]);
  });

  test("--help documents cron use", async () => {
    const { code, stdout: help } = await runToExit(["bun", FOLLOW, "--help"], {});
    expect(code).toBe(0);
    expect(help).toMatch(/^\s*0 14 \* \* \*\s+cd .* bun run snapshot:follow/m);
    expect(help).toContain("pages-meta-hist-incr.xml.bz2");
  });
});
