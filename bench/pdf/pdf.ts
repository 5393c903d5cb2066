/**
 * bun bench/pdf/pdf.ts [--rounds R] [--duration S]
 *
 * PDF rendering on the shared dumps (one snapshot per wiki, built in a temporary directory):
 *   - render time (median of R renders, fonts already loaded) and size, for the longest
 *     article of all the shared dumps and for the article of median length;
 *   - /v1/chunk requests/s on the real server while PDFs render (a client asking for PDFs of
 *     different pages, one at a time), against requests/s without them, in the same run.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Snapshot, SnapshotPage } from "../../src/snapshot";
import { median } from "../stats";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "5" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log("Usage: bun bench/pdf/pdf.ts [--rounds R] [--duration S]");
  process.exit(0);
}

// The modules that measure, loaded once the arguments are read: --help answers at once.
const { default: autocannon } = await import("autocannon");
const { PDFDocument } = await import("pdf-lib");
const { Attributions } = await import("../../src/http/attribution");
const { Resources } = await import("../../src/http/resources");
const { renderPdf } = await import("../../src/pdf/render");
const { openSnapshot } = await import("../../src/snapshot");
const { buildSnapshot, dump, START } = await import("../support");
const { spawnServer } = await import("../servers");

const rounds = Number(values.rounds);
const duration = Number(values.duration);
const tmp = (await Bun.$`mktemp -d`.text()).trim();

const WIKIS: Record<string, string[]> = {
  en: ["enwiki-2016-sample.xml.bz2", "enwik8-head.xml.bz2"],
  squad: ["squad-dev-articles.xml.bz2"],
  ...Object.fromEntries(["bn", "el", "hy", "ja", "mr", "uk", "vi"].map((l) => [l, [`${l}wiki-head-truncated.xml.xz`]])),
};

console.error("building one snapshot per wiki…");
const snapshots: { name: string; path: string; snapshot: Snapshot }[] = [];
for (const [name, files] of Object.entries(WIKIS)) {
  const path = join(tmp, `${name}.tome`);
  await buildSnapshot({ dumps: files.map(dump), allowTruncated: true }, path);
  snapshots.push({ name, path, snapshot: openSnapshot(path) });
}

const textLength = (p: SnapshotPage) => p.chunks.reduce((n, c) => n + c.text.length, 0);
const all = snapshots.flatMap((s) =>
  s.snapshot.pages
    .list()
    .filter((p) => p.chunks.length)
    .map((page) => ({ s, page, length: textLength(page) })),
);
all.sort((a, b) => a.length - b.length);
const longest = all.at(-1)!;
const medianPage = all[Math.floor(all.length / 2)]!;

async function renderFigures(entry: (typeof all)[number]) {
  const resources = new Resources(entry.s.snapshot.meta, new Attributions(entry.s.snapshot.meta));
  const article = resources.pdfArticle(entry.page);
  await renderPdf(article); // fonts loaded, code warm
  const times: number[] = [];
  let bytes: Uint8Array = new Uint8Array();
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    bytes = await renderPdf(article);
    times.push(performance.now() - t);
  }
  const pages = (await PDFDocument.load(bytes)).getPageCount();
  return {
    wiki: entry.s.name,
    title: entry.page.title,
    pageId: entry.page.pageId,
    chunks: entry.page.chunks.length,
    characters: entry.length,
    renderMs: median(times),
    bytes: bytes.byteLength,
    pdfPages: pages,
  };
}

console.error("rendering…");
const renders = { longest: await renderFigures(longest), median: await renderFigures(medianPage) };

// The server, on the snapshot of the longest article, without keys (the renderer is the subject).
console.error("starting the server…");
const server = await spawnServer(["bun", START], {
  TOME_SNAPSHOT: longest.s.path,
  TOME_AUTH: "off",
  TOME_DATA: join(tmp, "data"),
});
const base = server.url;

const pagesWithText = longest.s.snapshot.pages
  .list()
  .filter((p) => p.chunks.length >= 10)
  .sort((a, b) => b.chunks.length - a.chunks.length);
const chunkPaths = pagesWithText.slice(0, 200).map((p) => ({ path: `/v1/chunk/${p.pageId}_0` }));
const chunkLoad = async () =>
  (await autocannon({ url: base, connections: 10, duration, requests: chunkPaths })).requests.average;

/** Asks for PDFs of different pages (so none comes from the cache), one at a time, until stopped. */
function pdfClient() {
  let stop = false;
  let rendered = 0;
  const done = (async () => {
    let i = 0;
    while (!stop) {
      const page = pagesWithText[i++ % pagesWithText.length]!;
      const r = await fetch(`${base}/v1/pdf/${page.pageId}?round=${i}`);
      await r.arrayBuffer();
      if (r.status === 200) rendered++;
    }
  })();
  return {
    stop: async () => {
      stop = true;
      await done;
      return rendered;
    },
  };
}

await chunkLoad();
const quiet: number[] = [];
const busy: number[] = [];
let pdfsDuringLoad = 0;
for (let round = 1; round <= rounds; round++) {
  quiet.push(await chunkLoad());
  const client = pdfClient();
  await Bun.sleep(200);
  busy.push(await chunkLoad());
  pdfsDuringLoad += await client.stop();
  console.error(
    `round ${round}: /v1/chunk ${quiet.at(-1)!.toFixed(0)} req/s alone, ${busy.at(-1)!.toFixed(0)} req/s while PDFs render`,
  );
}
await server.stop();

const report = {
  renders,
  chunkRequestsPerSecond: {
    alone: median(quiet),
    whilePdfsRender: median(busy),
    ratio: median(busy) / median(quiet),
    pdfsRendered: pdfsDuringLoad,
  },
};
console.log(JSON.stringify(report, null, 2));
