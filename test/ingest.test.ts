import { afterEach, describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import * as fs from "node:fs";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildFromDumps, writeIngested } from "../src/build";
import { DEFAULT_CHUNK_WORDS } from "../src/build-defaults";
import { exportedRows } from "../src/cli/export-run";
import { DumpError, endResting, ingest, type RawPage, wordCount } from "../src/ingest";
import { logSources } from "../src/cli/snapshot-build";
import { dumpLeaks } from "../src/ingest/leaks";
import { restingWorkers } from "../src/ingest/pool";
import { decoderFor } from "../src/ingest/source";
import { LineBreaker } from "../src/pdf/linebreak";
import { openSnapshot } from "../src/snapshot";
import {
  ALL_DUMPS,
  dump,
  EN_2006,
  EN_2006_TRUNCATED,
  EN_2016,
  ingested,
  ROOT,
  SQUAD,
  snapshotFor,
  tempDir,
  TRUNCATED_XZ,
  wikiOf,
  writeExport,
} from "./helpers";

// Per file (bun applies it to the current file only): these tests build snapshots from the real dumps.
setDefaultTimeout(120_000);

const byTitle = (r: Awaited<ReturnType<typeof ingest>>, title: string) => r.articles.find((a) => a.title === title)!;

/** The shared dumps that are damaged: converted with allowTruncated (up to the damage); the others without it. */
const DAMAGED = new Set([EN_2006_TRUNCATED, ...TRUNCATED_XZ]);

/**
 * Each dump converted once with its leaks counted: a healthy one the default way (no allowTruncated, as
 * ingested({ dumps: [path] }) converts it), a damaged one up to its damage, as --allow-truncated does. The tests that
 * read a dump so converted read it here.
 */
const scans = new Map<string, ReturnType<typeof dumpLeaks>>();
const scanned = (path: string) => {
  let scan = scans.get(path);
  if (!scan) scans.set(path, (scan = dumpLeaks(path, DAMAGED.has(path))));
  return scan;
};

/**
 * A healthy dump's conversion the default way, as ingested({ dumps: [path] }) makes it: the leaks scan's (its onPage
 * only reads the pages), so that each shared dump is converted once in this file.
 */
const converted = (path: string) => {
  if (DAMAGED.has(path)) throw new Error(`${path} is damaged: read its scan (scanned), converted with allowTruncated`);
  return scanned(path).then((scan) => scan.result);
};

/**
 * A parsing worker that converts no page (ingest's parsingWorker option): for the tests whose claim is about the
 * reading of a dump (its damage, its pages' raw text), not about the conversion of its pages.
 */
const readingWorker = (() => {
  let script: string | undefined;
  return () => {
    if (!script) {
      script = join(tempDir("tome-worker-"), "reads.ts");
      writeFileSync(
        script,
        `self.onmessage = (e) => { if (e.data.type === "batch") self.postMessage({ type: "done", id: e.data.id, articles: [], failures: [] }); };\n`,
      );
    }
    return script;
  };
})();

describe("counts on the real dumps", () => {
  // Expected figures were counted independently, with Python's ElementTree over the same files.
  test("enwiki-2016-sample: 106 articles, 99 namespace-0 redirects", async () => {
    const r = await converted(EN_2016);
    expect(r.articles.length).toBe(106);
    expect(r.redirects.length).toBe(99);
    expect(r.sources[0]).toMatchObject({
      schema: "0.10",
      compression: "bzip2",
      articles: 106,
      redirects: 99,
      truncated: false,
    });
    expect(r.wiki).toMatchObject({ host: "en.wikipedia.org", dbname: "enwiki", lang: "en" });
    expect(r.truncated).toBe(false);
    expect(r.failures).toEqual([]);
  });

  test("squad-dev-articles: 48 articles, no redirects", async () => {
    const r = await converted(SQUAD);
    expect(r.articles.length).toBe(48);
    expect(r.redirects.length).toBe(0);
    const chunks = r.articles.reduce((n, a) => n + a.chunks.length, 0);
    expect(chunks).toBeGreaterThan(48 * 5);
  });

  test("redirects are kept as a title → target map", async () => {
    const r = await converted(EN_2016);
    expect(r.redirects).toContainEqual({ title: "AccessibleComputing", target: "Computer accessibility" });
    expect(r.articles.some((a) => a.title === "AccessibleComputing")).toBe(false);
  });
});

describe("schema 0.3 export (enwik8, 2006)", () => {
  test("namespace from the title prefix, redirects from #REDIRECT text", async () => {
    const r = await converted(EN_2006);
    expect(r.sources[0]!.schema).toBe("0.3");
    expect(r.wiki.host).toBe("en.wikipedia.org");
    expect(r.articles.length).toBe(248);
    expect(r.redirects.length).toBe(242);
    // "AaA" is `#REDIRECT [[AAA]]` with no <redirect> element in 0.3.
    expect(r.redirects).toContainEqual({ title: "AaA", target: "AAA" });
    // No page of another namespace (Wikipedia:, Talk:, Image:, ...) is indexed.
    expect(
      r.articles.filter((a) => /^(Talk|User|Wikipedia|Image|Template|Category|Help|Portal|MediaWiki):/.test(a.title)),
    ).toEqual([]);
  });
});

describe("merging dumps of one wiki", () => {
  test("the 2006 and 2016 samples merge, and the newest revision wins", async () => {
    const [merged, old, recent] = await Promise.all([
      ingested({ dumps: [EN_2006, EN_2016] }),
      converted(EN_2006),
      converted(EN_2016),
    ]);
    // Counted independently: 248 page ids whose newest revision is an article, 242 redirects.
    expect(merged.articles.length).toBe(248);
    expect(merged.redirects.length).toBe(242);
    const oldIds = new Map(old.articles.map((a) => [a.pageId, a]));
    const shared = recent.articles.filter((a) => oldIds.has(a.pageId));
    expect(shared.length).toBe(101);
    for (const a of shared) {
      const m = merged.articles.find((x) => x.pageId === a.pageId)!;
      expect(m.revId).toBe(a.revId);
      expect(m.timestamp.startsWith("2016") || m.timestamp > oldIds.get(a.pageId)!.timestamp).toBe(true);
    }
    // A 2006 redirect that became an article by 2016 is an article.
    expect(merged.articles.find((a) => a.pageId === 643)?.title).toBe("Appellate court");
  });

  test("the order of --dump does not matter", async () => {
    const [a, b] = await Promise.all([
      ingested({ dumps: [EN_2006, EN_2016] }),
      ingested({ dumps: [EN_2016, EN_2006] }),
    ]);
    expect(a.articles.map((x) => [x.pageId, x.revId])).toEqual(b.articles.map((x) => [x.pageId, x.revId]));
  });

  test("a title two page ids claim goes to the newest claim (on a tie, the first read), whatever the order of the dumps", async () => {
    // The articles as this file's other tests read them; the raw pages from a reading of the dump that converts none.
    const raw: RawPage[] = [];
    const [base] = await Promise.all([
      converted(EN_2016),
      ingest({ dumps: [EN_2016], onPage: (p) => raw.push(p), parsingWorker: readingWorker() }),
    ]);
    const [moved, kept, tied] = base.articles.filter((a) => a.chunks.length > 2);
    const oldRedirect = base.redirects[0]!;
    const rawOf = (id: number) => raw.find((p) => p.pageId === id)!;
    const escapeXml = (s: string) =>
      s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
    const page = (id: number, title: string, rev: number, timestamp: string, text: string, redirect?: string) =>
      `<page><title>${escapeXml(title)}</title><ns>0</ns><id>${id}</id>${redirect ? `<redirect title="${escapeXml(redirect)}" />` : ""}<revision><id>${rev}</id><timestamp>${timestamp}</timestamp><text xml:space="preserve">${escapeXml(text)}</text></revision></page>`;
    const extra = join(tempDir(), "extra.xml");
    writeFileSync(
      extra,
      [
        `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en"><siteinfo><sitename>Wikipedia</sitename><dbname>enwiki</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base><namespaces><namespace key="0" /></namespaces></siteinfo>`,
        // A newer page with the title of `moved` (a move): it takes the title, and the old page id is left out.
        page(900000001, moved!.title, 900000001, "2030-01-01T00:00:00Z", rawOf(moved!.pageId).text),
        // An older redirect with the title of `kept`: the article keeps it.
        page(900000002, kept!.title, 1, "2001-01-01T00:00:00Z", `#REDIRECT [[${moved!.title}]]`, moved!.title),
        // A newer redirect on the title of an existing redirect, elsewhere: it replaces it.
        page(
          900000003,
          oldRedirect.title,
          900000003,
          "2030-01-01T00:00:00Z",
          `#REDIRECT [[${kept!.title}]]`,
          kept!.title,
        ),
        // Another page id with the very revision and time of `tied`: the first read keeps the title.
        page(900000004, tied!.title, tied!.revId, rawOf(tied!.pageId).timestamp, rawOf(tied!.pageId).text),
        "</mediawiki>",
      ].join("\n"),
    );
    for (const [dumps, tiedHolder] of [
      [[EN_2016, extra], tied!.pageId],
      [[extra, EN_2016], 900000004],
    ] as const) {
      const r = await ingest({ dumps: [...dumps] });
      const holder = (title: string) => r.articles.filter((a) => a.title === title).map((a) => a.pageId);
      expect(holder(moved!.title)).toEqual([900000001]);
      expect(r.articles.some((a) => a.pageId === moved!.pageId)).toBe(false);
      expect(holder(kept!.title)).toEqual([kept!.pageId]);
      expect(r.redirects.some((x) => x.title === kept!.title)).toBe(false);
      const replaced = r.redirects.findIndex((x) => x.title === oldRedirect.title);
      expect(r.redirects[replaced]).toEqual({ title: oldRedirect.title, target: kept!.title });
      expect(r.redirectIds.pageIds[replaced]).toBe(900000003);
      expect(holder(tied!.title)).toEqual([tiedHolder]);
      expect(r.articles.length).toBe(base.articles.length);
      expect(r.redirects.length).toBe(base.redirects.length);
    }
  });

  test("dumps of different wikis are refused", async () => {
    // Refused by the reader at the second dump's <siteinfo>: the first one's pages need no converting.
    const err = await ingest({
      dumps: [EN_2016, TRUNCATED_XZ[3]!],
      allowTruncated: true,
      parsingWorker: readingWorker(),
    }).catch((e) => e);
    expect(err).toBeInstanceOf(DumpError);
    expect(err.message).toContain("one snapshot holds one wiki");
    expect(err.message).toContain("ja.wikipedia.org");
  });
});

describe("damaged dumps", () => {
  test("a truncated dump fails by default and says where", async () => {
    // The reader's refusal, at the damage: the pages before it need no converting (readingWorker).
    const err = await ingest({ dumps: [EN_2006_TRUNCATED], parsingWorker: readingWorker() }).catch((e) => e);
    expect(err).toBeInstanceOf(DumpError);
    expect(err.damaged).toBe(true);
    expect(err.message).toContain("enwik8-head-truncated.xml.bz2");
    expect(err.message).toMatch(/line \d+, byte \d+/);
    expect(err.message).toContain('the last was "Alliaceae"');
    expect(err.message).toContain("--allow-truncated");
  });

  test("--allow-truncated keeps every complete page before the damage", async () => {
    const [cut, whole] = await Promise.all([
      scanned(EN_2006_TRUNCATED).then((scan) => scan.result),
      converted(EN_2006),
    ]);
    expect(cut.truncated).toBe(true);
    expect(cut.sources[0]!.truncated).toBe(true);
    expect(cut.sources[0]!.damage).toContain("line");
    // The truncated copy holds the same 491 complete pages, then a page cut in half.
    expect(cut.articles.map((a) => a.revId)).toEqual(whole.articles.map((a) => a.revId));
  });

  test.each(TRUNCATED_XZ.map((p) => [p.split("/").pop()!, p]))(
    "%s fails by default, works with --allow-truncated",
    async (_name, path) => {
      // The refusal is the reader's, at the damage: the pages before it are read by parsing workers that convert none
      // (converted, they were thrown away with the error, 8 s of CPU a dump).
      const err = await ingest({ dumps: [path], limit: 1_000_000, parsingWorker: readingWorker() }).catch((e) => e);
      expect(err).toBeInstanceOf(DumpError);
      expect(err.message).toContain("truncated or corrupt");
      const r = (await scanned(path)).result;
      expect(r.truncated).toBe(true);
      expect(r.articles.length).toBeGreaterThan(150);
    },
  );
});

describe("clean text", () => {
  test("no chunk or heading of any shared dump leaks markup, undefined or NaN (what `bun run leaks` checks)", async () => {
    for (const path of ALL_DUMPS) {
      const { texts, counts } = await scanned(path);
      expect(texts).toBeGreaterThan(500);
      expect(Object.keys(counts)).toEqual(expect.arrayContaining(["{{", "()", "undefined", "NaN", "[object"]));
      expect({ dump: path.split("/").pop(), counts }).toEqual({
        dump: path.split("/").pop(),
        counts: Object.fromEntries(Object.keys(counts).map((k) => [k, 0])),
      });
    }
  });

  test("source-only sections are dropped, in every language", async () => {
    const dropped =
      /^(References|Notes|External links|Further reading|Bibliography|See also|Παραπομπές|Εξωτερικοί σύνδεσμοι|Примітки|Посилання|Див\. також|脚注|出典|外部リンク|関連項目|Tham khảo|Liên kết ngoài|Xem thêm|Ծանոթագրություններ|Արտաքին հղումներ|তথ্যসূত্র|বহিঃসংযোগ|संदर्भ|बाह्य दुवे)$/;
    for (const path of ALL_DUMPS) {
      const r = (await scanned(path)).result;
      const found = r.articles.flatMap((a) =>
        a.sections.filter((s) => dropped.test(s.heading)).map((s) => `${a.title}: ${s.heading}`),
      );
      expect(found).toEqual([]);
    }
  });

  test("no chunk starts or ends with whitespace, or holds runs of spaces", async () => {
    const r = await converted(EN_2016);
    for (const a of r.articles)
      for (const c of a.chunks) {
        expect(c.text).toBe(c.text.trim());
        expect(c.text).not.toMatch(/ {2}| ,|,,|\( *\)/);
      }
  });

  test("Albedo: a section and a chunk, word for word", async () => {
    const r = await converted(EN_2016);
    const albedo = byTitle(r, "Albedo");
    expect(albedo.pageId).toBe(39);
    expect(albedo.revId).toBe(715952044);
    expect(albedo.timestamp).toBe("2016-04-18T23:12:22Z");
    expect(albedo.tsUnix).toBe(Date.UTC(2016, 3, 18, 23, 12, 22) / 1000);
    expect(albedo.sections.slice(0, 5)).toEqual([
      { heading: "", level: 0 },
      { heading: "Terrestrial albedo", level: 1 },
      { heading: "White-sky and black-sky albedo", level: 2 },
      { heading: "Astronomical albedo", level: 1 },
      { heading: "Examples of terrestrial albedo effects", level: 1 },
    ]);
    const chunk = albedo.chunks[2]!;
    expect(albedo.sections[chunk.section]!.heading).toBe("White-sky and black-sky albedo");
    expect(chunk.text).toBe(
      "It has been shown that for many applications involving terrestrial albedo, the albedo at a particular solar zenith angle θᵢ can reasonably be approximated by the proportionate sum of two terms: the directional-hemispherical reflectance at that solar zenith angle, ᾱ(θᵢ), and the bi-hemispherical reflectance, ᾱ̄ the proportion concerned being defined as the proportion of diffuse illumination D.\n\n" +
        "Albedo α can then be given as:\n\n" +
        "α = (1 − D)ᾱ(θᵢ) + Dᾱ̄.\n\n" +
        "Directional-hemispherical reflectance is sometimes referred to as black-sky albedo and bi-hemispherical reflectance as white-sky albedo. These terms are important because they allow the albedo to be calculated for any given illumination conditions from a knowledge of the intrinsic properties of the surface.",
    );
    expect(albedo.chunks[0]!.text.split("\n\n")[0]).toBe(
      'Albedo or reflection coefficient, derived from Latin albedo "whiteness" (or reflected sunlight) in turn from albus "white", is the diffuse reflectivity or reflecting power of a surface.',
    );
    // Sections that only list sources are gone; "Other types of albedo" is the last one kept.
    expect(albedo.sections.at(-1)!.heading).toBe("Other types of albedo");
  });

  test("list items are kept one per line", async () => {
    const r = await converted(EN_2016);
    const lists = r.articles
      .flatMap((a) => a.chunks)
      .filter((c) => c.text.split("\n").length > 5 && !c.text.includes("\n\n"));
    expect(lists.length).toBeGreaterThan(10);
  });
});

describe("sections and chunks", () => {
  test("chunks stay within --chunk-words and within their section", async () => {
    for (const words of [300, 80]) {
      // The default's conversion is the one the other tests read (helpers.ts' ingested takes the two as one).
      const r = await (words === DEFAULT_CHUNK_WORDS
        ? converted(EN_2016)
        : ingested({ dumps: [EN_2016], chunkWords: words }));
      for (const a of r.articles) {
        let last = 0;
        for (const c of a.chunks) {
          expect(wordCount(c.text)).toBeLessThanOrEqual(words);
          expect(c.section).toBeGreaterThanOrEqual(last); // in order, never interleaved
          expect(c.section).toBeLessThan(a.sections.length);
          last = c.section;
        }
      }
    }
  });

  test("smaller budgets give more chunks, and paragraphs are packed whole", async () => {
    const [big, small] = await Promise.all([converted(EN_2016), ingested({ dumps: [EN_2016], chunkWords: 80 })]);
    const count = (r: typeof big) => r.articles.reduce((n, a) => n + a.chunks.length, 0);
    expect(count(small)).toBeGreaterThan(count(big) * 2);
    const albedo = byTitle(big, "Albedo");
    // The intro's five paragraphs fit in 300 words: one chunk holds them all.
    expect(albedo.chunks[0]!.text.split("\n\n").length).toBe(5);
  });

  test("Japanese is sized by characters (two to a word)", async () => {
    const r = (await scanned(TRUNCATED_XZ[3]!)).result;
    const kana = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;
    // Chunks written mostly in Japanese; chunks of Latin names separated by spaces count by words.
    const japanese = r.articles
      .flatMap((a) => a.chunks)
      .filter((c) => (c.text.match(kana)?.length ?? 0) > 0.8 * [...c.text].length);
    const lengths = japanese.map((c) => [...c.text].length);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(300 * 2 + 50);
    // Full chunks are hundreds of characters, not the 300 words' worth of a spaced script.
    const full = lengths.filter((n) => n > 400).length;
    expect(full).toBeGreaterThan(100);
    // Japanese full stops survive as they are.
    expect(r.articles.some((a) => a.chunks.some((c) => c.text.includes("。")))).toBe(true);
  });

  test("--limit stops after n articles", async () => {
    const r = await ingest({ dumps: [EN_2016], limit: 7 });
    expect(r.articles.length).toBe(7);
  });
});

describe("inputs", () => {
  test("compression is known by magic bytes, not by name; plain and gzip XML work too", async () => {
    const dir = tempDir();
    const bz = `${dir}/misnamed.xml`;
    await Bun.write(bz, Bun.file(SQUAD));
    const plain = `${dir}/plain.bin`;
    const xml = await new Response(Bun.spawn(["bzip2", "-dc", SQUAD]).stdout).arrayBuffer();
    await Bun.write(plain, xml);
    const gz = `${dir}/gz.dat`;
    await Bun.write(gz, Bun.gzipSync(new Uint8Array(xml)));
    // The claim is the reading (the decoder chosen, the XML it gives): read by parsing workers that convert none, each
    // file's article pages must be the 48 that squad-dev-articles.xml.bz2 converts into its 48 articles (the counts
    // test), text for text.
    const pagesOf = async (path: string) => {
      const pages: RawPage[] = [];
      const r = await ingest({ dumps: [path], onPage: (p) => pages.push(p), parsingWorker: readingWorker() });
      return { compression: r.sources[0]!.compression, pages };
    };
    const misnamed = await pagesOf(bz);
    expect(misnamed.compression).toBe("bzip2");
    expect(misnamed.pages.length).toBe(48);
    for (const [path, compression] of [
      [plain, "none"],
      [gz, "gzip"],
    ] as const) {
      const read = await pagesOf(path);
      expect(read.compression).toBe(compression);
      expect(read.pages).toEqual(misnamed.pages);
    }
  });

  test("an http URL is streamed", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(Bun.file(SQUAD)) });
    try {
      // The claim is the reading: read by parsing workers that convert none, the URL's article pages must be the 48
      // of the file it serves (which convert into 48 articles: the counts test), text for text.
      const pagesOf = async (dump: string) => {
        const pages: RawPage[] = [];
        await ingest({ dumps: [dump], onPage: (p) => pages.push(p), parsingWorker: readingWorker() });
        return pages;
      };
      const [streamed, file] = await Promise.all([
        pagesOf(`http://127.0.0.1:${server.port}/squad.xml.bz2`),
        pagesOf(SQUAD),
      ]);
      expect(streamed.length).toBe(48);
      expect(streamed).toEqual(file);
    } finally {
      server.stop(true);
    }
  });

  test("an unreachable URL, a missing file and a non-dump give clear errors", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("no", { status: 404 }) });
    try {
      const e404 = await ingest({ dumps: [`http://127.0.0.1:${server.port}/x.xml`] }).catch((e) => e);
      expect(e404.message).toContain("HTTP 404");
    } finally {
      server.stop(true);
    }
    const missing = await ingest({ dumps: ["/nonexistent/dump.xml.bz2"] }).catch((e) => e);
    expect(missing.message).toContain("dump not found");
    const notXml = await ingest({ dumps: [dump("../../spec/api.md")] }).catch((e) => e);
    expect(notXml).toBeInstanceOf(DumpError);
    expect(notXml.message).toContain("not a MediaWiki XML export");
  });

  test("a device as the dump (/dev/null, /dev/zero) is refused as one, not said missing nor failed with EPERM; a FIFO is read", async () => {
    // /dev/null was "dump not found" (Bun.file().exists() is false for it); /dev/zero failed "EPERM: epoll_ctl".
    for (const device of ["/dev/null", "/dev/zero"]) {
      const err = await ingest({ dumps: [device] }).catch((e) => e);
      expect(err).toBeInstanceOf(DumpError);
      expect(err.message).toBe(`${device} is a device, not a dump: give a dump file, a pipe or an http(s) URL.`);
    }
    const fifo = join(tempDir(), "dump.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const writer = Bun.spawn([
      "sh",
      "-c",
      'cat "$0" > "$1"',
      writeExport([{ title: "Alpha", text: "Alpha is a word." }]),
      fifo,
    ]);
    const r = await ingest({ dumps: [fifo], workers: 1 });
    await writer.exited;
    expect(r.articles.map((a) => a.title)).toEqual(["Alpha"]);
  });

  test("a corrupt compressed stream is reported as damage", async () => {
    const bytes = new Uint8Array(await Bun.file(SQUAD).arrayBuffer());
    bytes.fill(0x55, 400_000, 400_400); // in the second bzip2 block: the first one decodes
    const path = `${tempDir()}/corrupt.xml.bz2`;
    await Bun.write(path, bytes);
    // The reader's refusal, at the damage: the pages before it need no converting (readingWorker).
    const err = await ingest({ dumps: [path], parsingWorker: readingWorker() }).catch((e) => e);
    expect(err).toBeInstanceOf(DumpError);
    expect(err.damaged).toBe(true);
    // A parallel decoder (lbzip2, when installed) had the blocks before the damage in flight and writes none; with
    // --allow-truncated the serial bzip2 decodes, and writes them (D111).
    expect(err.message).toContain(
      decoderFor("bzip2")[0] === "bzip2"
        ? "the bzip2 stream is damaged (Data integrity error when decompressing)"
        : "the bzip2 stream is damaged (compressed data error",
    );
    const kept = await ingest({ dumps: [path], allowTruncated: true });
    expect(kept.truncated).toBe(true);
    expect(kept.articles.length).toBeGreaterThan(0);
    expect(kept.articles.length).toBeLessThan(48);
  });

  test('a dump this user may not read is said so, not as a write refused ("may not write there: write elsewhere (--out)")', async () => {
    const path = writeExport([{ title: "Alpha", text: "Alpha is a word." }]);
    // Root reads every file: the refusal is made as chmod 600 made it for another user.
    const refused = spyOn(fs, "accessSync").mockImplementation(() => {
      throw Object.assign(new Error(`EACCES: permission denied, access '${path}'`), { code: "EACCES" });
    });
    try {
      const err = await ingest({ dumps: [path], workers: 1 }).catch((e) => e);
      expect(err).toBeInstanceOf(DumpError);
      expect(err.message).toBe(
        `the dump ${path} cannot be read by this user (EACCES): make it readable to this user, or run as a user who may read it.`,
      );
    } finally {
      refused.mockRestore();
    }
  });

  test("a bzip2 dump cut short is said damaged in bzip2's words, without its trailing ';'", async () => {
    const bytes = new Uint8Array(await Bun.file(SQUAD).arrayBuffer());
    const path = `${tempDir()}/cut.xml.bz2`;
    await Bun.write(path, bytes.subarray(0, 420_000)); // past the first block: its pages are kept
    const kept = await ingest({ dumps: [path], workers: 1, allowTruncated: true });
    // Was "(Compressed file ends unexpectedly;)".
    expect(kept.sources[0]!.damage).toBe(`${path}: the bzip2 stream is damaged (Compressed file ends unexpectedly).`);
  });

  test("a snapshot given as the dump is said to be one, not XML with a disallowed character", async () => {
    const snapshot = await snapshotFor({ dumps: [SQUAD] });
    const err = await ingest({ dumps: [snapshot], workers: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(DumpError);
    expect(err.message).toBe(
      `${snapshot} is a Tome snapshot, not a dump: give the MediaWiki dump it is to be built from, or apply dumps to it with snapshot:update --base ${snapshot}.`,
    );
  });

  test("a disallowed character is said at its own byte of the XML, not at the end of the read that held it", async () => {
    const pages = Array.from({ length: 40 }, (_, i) => ({
      title: `Сторінка ${i}`,
      text: "Слово за словом. ".repeat(400),
    }));
    const xml = await Bun.file(writeExport(pages)).text();
    const at = xml.indexOf("Сторінка 30");
    const path = join(tempDir(), "control.xml");
    await Bun.write(path, `${xml.slice(0, at)}\u0001${xml.slice(at)}`);
    const byte = Buffer.byteLength(xml.slice(0, at)) + 1; // counted from 1, as the line is
    const err = await ingest({ dumps: [path], workers: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(DumpError);
    // Was the bytes read so far: here the end of the file, read at once.
    expect(err.message).toContain(`, byte ${byte} of the decompressed XML, after 30 complete pages`);
  });

  test("a URL that cannot be reached is said without a stray '.' after Bun's question", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const url = `http://127.0.0.1:${closed.port}/dump.xml`;
    closed.stop(true);
    const err = await ingest({ dumps: [url], workers: 1 }).catch((e) => e);
    // Was "…: ECONNREFUSED: Unable to connect. Is the computer able to access the url?. Check the address…".
    expect(err.message).toBe(
      `cannot reach ${url}: ECONNREFUSED: Unable to connect. Is the computer able to access the url? Check the address and the network, or use a local dump file.`,
    );
  });

  test("a download that breaks off mid-way is said to, without a stack: plain, and through a decoder; one reset at once, without Bun's advice", async () => {
    const xml = writeExport([{ title: "Alpha", text: "Alpha is a word. ".repeat(4000) }]);
    const bz2 = `${xml}.bz2`;
    await Bun.write(bz2, Bun.spawnSync(["bzip2", "-c", xml]).stdout);
    // In a process of its own: a body stream's error in this one's server was not a reset connection.
    const script = join(tempDir(), "server.ts");
    writeFileSync(
      script,
      `const s = Bun.serve({ port: 0, hostname: "127.0.0.1", async fetch(req) {
        if (req.url.endsWith("/reset")) return new Response(new ReadableStream({ start(ctl) { ctl.error(new Error("cut")); } }));
        const bytes = await Bun.file(req.url.endsWith(".bz2") ? ${JSON.stringify(bz2)} : ${JSON.stringify(xml)}).bytes();
        return new Response(new ReadableStream({ start(ctl) {
          ctl.enqueue(bytes.subarray(0, bytes.length >> 1));
          setTimeout(() => ctl.error(new Error("cut")), 200);
        } }), { headers: { "content-length": String(bytes.length) } });
      } });
      console.log(s.port);`,
    );
    const server = Bun.spawn(["bun", script], { stdout: "pipe", stderr: "ignore" });
    try {
      const port = (await server.stdout.getReader().read()).value;
      for (const [name, file] of [
        ["dump.xml", xml],
        ["dump.xml.bz2", bz2],
      ]) {
        const url = `http://127.0.0.1:${new TextDecoder().decode(port).trim()}/${name}`;
        const half = (Bun.file(file!).size >> 1).toLocaleString("en-US");
        const err = await ingest({ dumps: [url], workers: 1 }).catch((e) => e);
        // Was fetch's "TypeError: ECONNRESET: The socket connection was closed unexpectedly…" with its stack; through
        // bzip2, "the bzip2 stream is damaged (Compressed file ends unexpectedly)".
        expect(err).toBeInstanceOf(DumpError);
        expect(err.message).toStartWith(
          `the download of ${url} broke off after ${half} bytes (ECONNRESET): run the command again, or download the dump first and build from its file.`,
        );
      }
      // Reset before any byte: Bun's advice to fetch()'s programmer ("For more information, pass `verbose: true`…") was
      // said to the person at the terminal.
      const reset = `http://127.0.0.1:${new TextDecoder().decode(port).trim()}/reset`;
      const refused = await ingest({ dumps: [reset], workers: 1 }).catch((e) => e);
      expect(refused.message).toBe(
        `cannot reach ${reset}: ECONNRESET: The socket connection was closed unexpectedly. Check the address and the network, or use a local dump file.`,
      );
    } finally {
      server.kill();
    }
  });

  test("kept with allowTruncated, a damage before the first complete page (or before <siteinfo>) fails, saying so: no empty snapshot", async () => {
    const bytes = new Uint8Array(await Bun.file(SQUAD).arrayBuffer());
    bytes.fill(0x55, 100, 400); // in the first bzip2 block: nothing decodes
    const corrupt = `${tempDir()}/first-block.xml.bz2`;
    await Bun.write(corrupt, bytes);
    const xml = await Bun.file(writeExport([{ title: "Alpha", text: "Alpha is a word." }])).text();
    const cut = `${tempDir()}/cut.xml`;
    await Bun.write(cut, xml.slice(0, xml.indexOf("Alpha is")));
    for (const path of [corrupt, cut]) {
      // Were "no <siteinfo> found in the dumps: they are not MediaWiki exports" and an empty result (written: 0 pages).
      const err = await ingest({ dumps: [path], workers: 1, allowTruncated: true }).catch((e) => e);
      expect(err).toBeInstanceOf(DumpError);
      expect(err.damaged).toBe(true);
      expect(err.message).toStartWith(
        path === cut ? `${cut} is truncated or corrupt at` : `${corrupt}: the bzip2 stream is damaged`,
      );
      expect(err.message).toEndWith(
        "No complete page comes before the damage, so there is nothing to keep: no snapshot was written. Use a complete dump.",
      );
    }
  });

  test("a page whose conversion does not end (templates nested 6,000 deep keep wtf busy for hours) is left out in time, as a failure; the pages around it are kept", async () => {
    const nested = `Intro. ${"{{a|".repeat(6000)}x${"}}".repeat(6000)} after.`;
    const pages = [
      { title: "Alpha", text: "Alpha is a word." },
      { title: "Nested", text: nested },
      { title: "Gamma", text: "Gamma is a word." },
    ];
    // Not timed: the test's own limit shows the build ends; a fresh worker's first page on a busy machine may be slow.
    const r = await ingest({ dumps: [writeExport(pages)], workers: 1, pageLimitMs: 2000 });
    expect(r.articles.map((a) => a.title)).toEqual(["Alpha", "Gamma"]);
    expect(r.failures).toEqual([{ pageId: 2, title: "Nested", error: "its conversion took longer than 2 s" }]);
  }, 30_000);

  test("a page whose id or revision id is not an unsigned 32-bit integer, as MediaWiki's are, or missing, whose title is empty, or that has no revision, is left out and reported, not kept under another id", async () => {
    const page = (id: string, rev: string, title: string) =>
      `<page><title>${title}</title><ns>0</ns><id>${id}</id><revision><id>${rev}</id><timestamp>2024-01-01T00:00:00Z</timestamp><text>${title} is a page.</text></revision></page>`;
    const path = join(tempDir(), "ids.xml");
    writeFileSync(
      path,
      `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en"><siteinfo><dbname>enwiki</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base></siteinfo>
${page("1", "10", "One")}${page("4294967297", "20", "Wrapped")}${page("-1", "30", "Negative")}${page("4294967295", "40", "Last")}
${page("5", "-7", "Negative revision")}${page("6", "abc", "Revision not a number")}${page("7", "4294967296", "Revision too large")}
${page("8", "80", "")}${page("9", "90", " ")}${page("", "100", "No id")}
${page("10", "", "Revision without an id").replace("<id></id>", "")}<page><title>No revision</title><ns>0</ns><id>11</id></page>
<page><title>User:Nobody</title><ns>2</ns><id>-2</id><revision><id>110</id><text>Not an article.</text></revision></page></mediawiki>`,
    );
    const r = await ingest({ dumps: [path], workers: 1 });
    expect(r.articles.map((a) => [a.pageId, a.title])).toEqual([
      [1, "One"],
      [4294967295, "Last"],
    ]);
    expect(r.sources[0]!.articles).toBe(2);
    const pageId = "its page id is missing or not MediaWiki's (a whole number from 0 to 4294967295)";
    const revId = "its revision id is missing or not MediaWiki's (a whole number from 0 to 4294967295)";
    // In the build's report as the pages the workers could not convert; a page outside the articles' namespace is not.
    expect(r.failures).toEqual([
      { pageId: 4294967297, title: "Wrapped", error: pageId },
      { pageId: -1, title: "Negative", error: pageId },
      { pageId: 5, title: "Negative revision", error: revId },
      { pageId: 6, title: "Revision not a number", error: revId },
      { pageId: 7, title: "Revision too large", error: revId },
      { pageId: 8, title: "", error: "its title is empty" },
      { pageId: 9, title: " ", error: "its title is empty" },
      { pageId: Number.NaN, title: "No id", error: pageId },
      { pageId: 10, title: "Revision without an id", error: revId },
      { pageId: 11, title: "No revision", error: "it has no revision" },
    ]);
    const lines: string[] = [];
    logSources(r, (line) => lines.push(line));
    expect(lines).toContain(`  left out page without an id "No id": ${pageId}`);
    expect(lines).toContain('  left out page 8 "": its title is empty');
  });

  test("the library's ingest takes 1 to 64 parsing threads, as the commands do (D113): others are a RangeError", async () => {
    for (const workers of [2.5, 65, 0])
      await expect(ingest({ dumps: [EN_2016], workers })).rejects.toThrow(
        `workers must be a whole number of parsing threads from 1 to 64, not ${workers}`,
      );
  });

  test("a revision dated before 1970 is read as 1970-01-01, as a malformed date is: the export and the changes list it (they start at time 0)", async () => {
    const page = (id: number, timestamp: string) =>
      `<page><title>Page ${id}</title><ns>0</ns><id>${id}</id><revision><id>${id}0</id><timestamp>${timestamp}</timestamp><text>Page ${id} is a page.</text></revision></page>`;
    const dir = tempDir();
    const path = join(dir, "dates.xml");
    writeFileSync(
      path,
      `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en"><siteinfo><dbname>enwiki</dbname><base>https://en.wikipedia.org/wiki/Main_Page</base></siteinfo>
${page(1, "2024-01-01T00:00:00Z")}${page(2, "1000-01-01T00:00:00Z")}${page(3, "1969-12-31T23:59:59Z")}${page(4, "yesterday")}</mediawiki>`,
    );
    const r = await ingest({ dumps: [path], workers: 1 });
    expect(r.articles.map((a) => [a.pageId, a.tsUnix, a.timestamp])).toEqual([
      [1, 1704067200, "2024-01-01T00:00:00Z"],
      [2, 0, "1970-01-01T00:00:00Z"],
      [3, 0, "1970-01-01T00:00:00Z"],
      [4, 0, "1970-01-01T00:00:00Z"],
    ]);
    const out = join(dir, "dates.tome");
    writeIngested(r, out, 300);
    const snapshot = openSnapshot(out);
    expect(exportedRows(snapshot, 0).rows.map((row) => snapshot.pages.ids[row])).toEqual([1, 2, 3, 4]);
  });

  test("a page of more wikitext than a page may have (8 M characters) is left out, as a failure, before its conversion takes 30 bytes a character", async () => {
    const pages = [
      { title: "Alpha", text: "Alpha is a word." },
      { title: "Huge", text: "Word. ".repeat(1_500_000) },
    ];
    const r = await ingest({ dumps: [writeExport(pages)], workers: 1 });
    expect(r.articles.map((a) => a.title)).toEqual(["Alpha"]);
    expect(r.failures).toEqual([
      { pageId: 2, title: "Huge", error: "its wikitext is 8.6 M characters, over the 8 M a page may have" },
    ]);
  });

  test("a wiki whose language is a name every object has (constructor, __proto__, toString) is built and searched as one of no known language", async () => {
    for (const lang of ["constructor", "__proto__", "toString"]) {
      const engine = await wikiOf([{ title: "Alpha", text: "Alpha is a word.\n== References ==\nA source." }], lang);
      expect({ lang, hits: engine.search("alpha word").hits.map((h) => h.page.title) }).toEqual({
        lang,
        hits: ["Alpha"],
      });
    }
  });

  test("headings and link prefixes named as members of every object (constructor, __proto__) are text as any other: their sections kept, their links not files", async () => {
    // Albedo's text (the 2016 sample) under such headings, in a wiki of English and of such a language.
    const albedo = byTitle(await converted(EN_2016), "Albedo");
    const [intro, white] = [albedo.chunks[0]!.text, albedo.chunks[2]!.text];
    const text = `${intro}\n== constructor ==\n${white}\n== __proto__ ==\n[[constructor:Albedo|Albedo]] and [[__proto__:Albedo]] of snow.\n== References ==\nA source.`;
    for (const lang of ["en", "constructor", "__proto__"]) {
      const r = await ingest({ dumps: [writeExport([{ title: "Albedo", text }], lang)], workers: 1 });
      const [article] = r.articles;
      expect({ lang, headings: article!.sections.map((s) => s.heading) }).toEqual({
        lang,
        headings: ["", "constructor", "__proto__"],
      });
      const last = article!.chunks.at(-1)!;
      expect({ lang, heading: article!.sections[last.section]!.heading, text: last.text }).toEqual({
        lang,
        heading: "__proto__",
        text: "Albedo and __proto__:Albedo of snow.",
      });
    }
  });

  test("a dump with neither <siteinfo> nor xml:lang is of en.wikipedia.org, the language it is taken to be in, not of '.wikipedia.org'", async () => {
    const path = join(tempDir(), "bare.xml");
    writeFileSync(
      path,
      `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10"><page><title>Alpha</title><ns>0</ns><id>1</id><revision><id>10</id><timestamp>2024-01-01T00:00:00Z</timestamp><text>Alpha is a word.</text></revision></page></mediawiki>`,
    );
    const r = await ingest({ dumps: [path], workers: 1 });
    expect(r.wiki).toMatchObject({ host: "en.wikipedia.org", lang: "en" });
  });

  test("a wiki whose language is no language tag (en_US) keeps its pages of Japanese, finds their words, and breaks their lines in a PDF", async () => {
    const engine = await wikiOf([{ title: "Alpha", text: "Alpha は日本語の文です。" }], "en_US");
    expect(engine.search("日本語").hits.map((h) => h.page.title)).toEqual(["Alpha"]);
    expect([...new LineBreaker("en_US").units("日本語の文")].join("|")).toContain("|");
  });

  test("a run of text longer than any page (64 M characters without markup) is damage, not held whole: 1 MB of gzip held 1 GB", async () => {
    const page = (id: number, title: string) =>
      `<page><title>${title}</title><ns>0</ns><id>${id}</id><revision><id>${id}0</id><timestamp>2024-01-01T00:00:00Z</timestamp><text>${title} is a word.</text></revision></page>`;
    const path = join(tempDir(), "spaces.xml.gz");
    const xml = `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en"><siteinfo><dbname>enwiki</dbname></siteinfo>${page(1, "Alpha")}${" ".repeat(65 << 20)}${page(2, "Beta")}</mediawiki>`;
    writeFileSync(path, Bun.gzipSync(Buffer.from(xml)));
    const err = await ingest({ dumps: [path], workers: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(DumpError);
    expect(err.message).toContain("more than 64 M characters without markup");
    const kept = await ingest({ dumps: [path], workers: 1, allowTruncated: true });
    expect(kept.articles.map((a) => a.title)).toEqual(["Alpha"]);
  });

  test("a UTF-16 export is said to be UTF-16, with what to do, not 'not a MediaWiki XML export'", async () => {
    const xml = `<?xml version="1.0" encoding="UTF-16"?><mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en"></mediawiki>`;
    const path = join(tempDir(), "utf16.xml");
    writeFileSync(path, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, "utf16le")]));
    const err = await ingest({ dumps: [path], workers: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(DumpError);
    expect(err.message).toBe(
      `${path} is UTF-16: Tome reads UTF-8, as MediaWiki writes its dumps. Convert it first (iconv -f UTF-16 -t UTF-8).`,
    );
  });
});

describe("parsing workers rest between one process's ingests (D159)", () => {
  afterEach(endResting);
  const pagesOf = (text: string) => [{ title: "Alpha", text }];

  test("a clean ingest's workers rest, and the next ingest takes them rather than starting its own", async () => {
    endResting();
    await ingest({ dumps: [writeExport(pagesOf("Alpha is a word."))], workers: 2 });
    expect(restingWorkers()).toBe(2);
    const next = ingest({ dumps: [writeExport(pagesOf("Alpha is a word."))], workers: 1 });
    expect(restingWorkers()).toBe(1);
    await next;
    expect(restingWorkers()).toBe(2);
    endResting();
    expect(restingWorkers()).toBe(0);
  });

  test("a worker that read another wiki converts a page as a new worker does", async () => {
    // চিত্র is the File namespace of the Bengali wiki, and no namespace of the English one.
    const english = writeExport(pagesOf("[[চিত্র:x.jpg|thumb|A caption.]] Alpha is a word."), "en");
    endResting();
    const fresh = await ingest({ dumps: [english], workers: 1 });
    await ingest({ dumps: [writeExport(pagesOf("[[চিত্র:x.jpg|thumb|A caption.]] আলফা একটি শব্দ।"), "bn")], workers: 1 });
    expect(restingWorkers()).toBe(1);
    const rested = await ingest({ dumps: [english], workers: 1 });
    expect(rested.articles).toEqual(fresh.articles);
    expect(rested.articles[0]!.chunks.length).toBeGreaterThan(0);
  });

  test("the workers of a pool that failed are ended, not kept", async () => {
    endResting();
    const script = join(tempDir("tome-worker-"), "crashes.ts");
    writeFileSync(script, `self.onmessage = (e) => { if (e.data.type === "batch") throw new Error("boom"); };\n`);
    await expect(ingest({ dumps: [EN_2016], workers: 2, parsingWorker: script })).rejects.toThrow(
      "a parsing worker crashed",
    );
    expect(restingWorkers()).toBe(0);
  });

  test("a build ends them at once: its index's steps want the memory", async () => {
    endResting();
    const out = join(tempDir("tome-rest-"), "a.tome");
    await buildFromDumps({ dumps: [writeExport(pagesOf("Alpha is a word."))], workers: 2 }, { out, chunkWords: 300 });
    expect(restingWorkers()).toBe(0);
  });

  test("resting workers end after 5 s, and do not keep the process alive meanwhile", async () => {
    endResting();
    await ingest({ dumps: [writeExport(pagesOf("Alpha is a word."))], workers: 1 });
    expect(restingWorkers()).toBe(1);
    const child = Bun.spawn(
      [
        "bun",
        "-e",
        `import { ingest } from ${JSON.stringify(join(ROOT, "src/ingest"))};
         import { restingWorkers } from ${JSON.stringify(join(ROOT, "src/ingest/pool.ts"))};
         await ingest({ dumps: [${JSON.stringify(writeExport(pagesOf("Alpha is a word.")))}], workers: 1 });
         console.log("resting " + restingWorkers());
         process.on("exit", () => console.log("resting at exit " + restingWorkers()));`,
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    const [said, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    // Exited with its worker still resting: the worker kept it no longer (a referenced one is ended only by its 5 s timer).
    expect({ said, code }).toEqual({ said: "resting 1\nresting at exit 1\n", code: 0 });
    const deadline = performance.now() + 15_000;
    while (restingWorkers() && performance.now() < deadline) await Bun.sleep(100);
    expect(restingWorkers()).toBe(0);
  }, 30_000);
});
