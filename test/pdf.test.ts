/**
 * /v1/pdf (api.md 4.6): headers, errors, the document as pdfinfo and pdftotext read it, links,
 * and the server answering while a long article renders. Real snapshots of the shared dumps.
 */
import { afterAll, beforeAll, describe, expect, jest, setDefaultTimeout, spyOn, test } from "bun:test";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import * as hb from "harfbuzzjs";
import fontkit from "@pdf-lib/fontkit";
import { decodeXML } from "entities";
import {
  decodePDFRawStream,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFName,
  type PDFNumber,
  type PDFPage,
  PDFRawStream,
  type PDFString,
} from "pdf-lib";
import devanagariRegular from "@fontsource/noto-sans/files/noto-sans-devanagari-400-normal.woff" with { type: "file" };
import bengaliRegular from "@expo-google-fonts/noto-sans-bengali/400Regular/NotoSansBengali_400Regular.ttf" with {
  type: "file",
};
import { Access, type PlanName, readUsage, usagePath } from "../src/access";
import { writeUsage } from "../src/access/usage";
import { type App, createApp, type RunningServer, serve } from "../src/http";
import { cutForPdf, type PdfArticle, PdfRenderer } from "../src/pdf";
import { canRender } from "../src/pdf/fonts";
import { renderPdf } from "../src/pdf/render";
import { articleUrl, LICENSE } from "../src/http/attribution";
import { creditFor } from "../src/pdf/credit";
import * as scripts from "../src/scripts";
import { contentDisposition } from "../src/http/routes/pdf";
import type { Engine } from "../src/search";
import type { SnapshotPage } from "../src/snapshot";
import { dump, EN_2016, engineFor, keyMade, ROOT, tempDir } from "./helpers";

interface Shaper {
  unitsPerEm: number;
  layout(text: string): {
    glyphs: { id: number }[];
    positions: { xAdvance: number; xOffset: number; yOffset: number }[];
  };
  getGlyph(id: number): { path: { toSVG(): string } };
}

// Per file (bun applies it to the current file only): these tests build snapshots from the real dumps.
setDefaultTimeout(120_000);

type Json = Record<string, any>;
const EN = { dumps: [EN_2016] };
const lang = (l: string) => ({ dumps: [dump(`${l}wiki-head-truncated.xml.xz`)], allowTruncated: true });

async function tool(cmd: string[], input?: Uint8Array): Promise<string> {
  const proc = Bun.spawn(cmd, { stdin: input ? new Blob([input]) : "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${cmd.join(" ")}: ${err}`);
  return out;
}

async function pdfFile(bytes: Uint8Array): Promise<string> {
  const path = join(tempDir("tome-pdf-"), "doc.pdf");
  await Bun.write(path, bytes);
  return path;
}

const info = async (bytes: Uint8Array) => {
  const out = await tool(["pdfinfo", await pdfFile(bytes)]);
  return Object.fromEntries(
    out
      .split("\n")
      .filter((l) => l.includes(":"))
      .map((l) => [l.slice(0, l.indexOf(":")).trim(), l.slice(l.indexOf(":") + 1).trim()]),
  );
};
const text = async (bytes: Uint8Array) => tool(["pdftotext", "-enc", "UTF-8", await pdfFile(bytes), "-"]);
const withoutFooters = (extracted: string) =>
  extracted
    .split("\n")
    .filter(
      (l) =>
        !/^(CC BY-SA 4\.0 · https:\/\/creativecommons\.org\/licenses\/by-sa\/4\.0\/|page \d+ of \d+)$/.test(l.trim()),
    )
    .join("\n");
/** Text as compared: no whitespace, no list bullets, canonical decomposition (shapers split Bengali ো into ে + া). */
const squeeze = (s: string) => s.replace(/[\s•]+/g, "").normalize("NFD");
/** What the PDF can show: characters no font has (⁊, emoji…) are left out. */
const renderable = (s: string) => [...s.replace(/\u00AD/g, "")].filter((ch) => /\s/.test(ch) || canRender(ch)).join("");

/**
 * The lines of text pdftohtml finds (a line is split where its font changes), each with its
 * font size and right edge in points (pdftohtml's sizes are whole numbers at its zoom, 3).
 */
async function sizedLines(bytes: Uint8Array): Promise<{ text: string; size: number; right: number }[]> {
  const zoom = 3;
  const xml = await tool(["pdftohtml", "-xml", "-i", "-stdout", "-zoom", String(zoom), await pdfFile(bytes)]);
  const sizes = new Map(
    [...xml.matchAll(/<fontspec id="(\d+)" size="(\d+)"/g)].map((m) => [m[1]!, Number(m[2]) / zoom]),
  );
  return [
    ...xml.matchAll(
      /<text top="[\d.-]+" left="([\d.-]+)" width="([\d.-]+)" height="[\d.-]+" font="(\d+)">(.*?)<\/text>/g,
    ),
  ].map((m) => ({
    text: decodeXML(m[4]!.replace(/<[^>]*>/g, "")),
    size: sizes.get(m[3]!)!,
    right: (Number(m[1]) + Number(m[2])) / zoom,
  }));
}

/**
 * Per embedded font, its glyphs that draw nothing: undecodable, or without contours. A
 * broken subset shows in pdftotext (the text is mapped) but not on the page.
 */
async function blankGlyphs(bytes: Uint8Array): Promise<Record<string, number>> {
  const doc = await PDFDocument.load(bytes);
  const blank: Record<string, number> = {};
  for (const [, obj] of doc.context.enumerateIndirectObjects()) {
    if (!(obj instanceof PDFDict) || obj.get(PDFName.of("Type")) !== PDFName.of("FontDescriptor")) continue;
    const file = obj.lookup(PDFName.of("FontFile2"));
    if (!(file instanceof PDFRawStream)) continue;
    const font = fontkit.create(decodePDFRawStream(file).decode()) as unknown as {
      numGlyphs: number;
      getGlyph(id: number): { _decode(): { numberOfContours: number } | null };
    };
    let n = 0;
    for (let id = 1; id < font.numGlyphs; id++) {
      try {
        if (!font.getGlyph(id)._decode()?.numberOfContours) n++;
      } catch {
        n++;
      }
    }
    blank[obj.get(PDFName.of("FontName"))!.toString()] = n;
  }
  return blank;
}

/** A glyph a page draws: its font's resource name, its code, its origin and its line's baseline, in points. */
interface Drawn {
  font: string;
  code: number;
  size: number;
  x: number;
  y: number;
  baseline: number;
}

/** The widths (W) of a Type0 font's descendant, by code, in thousandths of the size. */
function cidWidths(font: PDFDict): (code: number) => number {
  const cid = (font.lookup(PDFName.of("DescendantFonts")) as PDFArray).lookup(0) as PDFDict;
  const w = (cid.lookup(PDFName.of("W")) as PDFArray | undefined)?.asArray() ?? [];
  const widths = new Map<number, number>();
  for (let i = 0; i + 1 < w.length; i += 2) {
    const first = (w[i] as PDFNumber).asNumber();
    for (const [k, n] of (w[i + 1] as PDFArray).asArray().entries()) widths.set(first + k, (n as PDFNumber).asNumber());
  }
  return (code) => widths.get(code) ?? 1000;
}

/**
 * Reads a page's content streams as a viewer does (BT, Tf, Tm, T*, Tc, Ts, Tj, TJ, q and Q):
 * every glyph it draws with a Type0 font, where it draws it. pdf-lib writes text matrices
 * without rotation or scale.
 */
function drawnGlyphs(page: PDFPage): Drawn[] {
  const fonts = page.node.Resources()!.lookup(PDFName.of("Font"), PDFDict);
  const widths = new Map<string, (code: number) => number>();
  const widthOf = (font: string) => {
    let w = widths.get(font);
    if (!w) widths.set(font, (w = cidWidths(fonts.lookup(PDFName.of(font.slice(1)), PDFDict))));
    return w;
  };
  const contents = page.node.Contents()!;
  const streams = contents instanceof PDFArray ? contents.asArray().map((r) => page.doc.context.lookup(r)) : [contents];
  const source = streams
    .map((s) => new TextDecoder("latin1").decode(decodePDFRawStream(s as PDFRawStream).decode()))
    .join("\n");
  const tokens = source.match(
    /<<|>>|<[0-9A-Fa-f\s]*>|\[|\]|\/[^\s/[\]<>()]+|\((?:\\.|[^\\)])*\)|[-+]?(?:\d+\.?\d*|\.\d+)|[A-Za-z'"*]+/g,
  )!;
  type Operand = number | string | Operand[];
  const drawn: Drawn[] = [];
  let state = { font: "", size: 0, charSpace: 0, rise: 0, leading: 0 };
  const saved: (typeof state)[] = [];
  let x = 0;
  let y = 0;
  let lineY = 0;
  const stack: Operand[][] = [[]];
  const show = (hex: string) => {
    const codes = hex.replace(/[<>\s]/g, "").match(/.{4}/g) ?? [];
    for (const c of codes) {
      const code = Number.parseInt(c, 16);
      drawn.push({ font: state.font, code, size: state.size, x, y: y + state.rise, baseline: y });
      x += (widthOf(state.font)(code) / 1000) * state.size + state.charSpace;
    }
  };
  for (const t of tokens) {
    const top = stack.at(-1)!;
    if (t === "[" || t === "<<") stack.push([]);
    else if (t === "]" || t === ">>") {
      const done = stack.pop()!;
      stack.at(-1)!.push(done);
    } else if (/^[-+.\d]/.test(t)) top.push(Number(t));
    else if (/^[</(]/.test(t)) top.push(t);
    else {
      const args = top.splice(0);
      const n = (i: number) => args[i] as number;
      if (t === "q") saved.push({ ...state });
      else if (t === "Q") state = saved.pop()!;
      else if (t === "BT") x = y = lineY = 0;
      else if (t === "Tf") {
        state.font = args[0] as string;
        state.size = n(1);
      } else if (t === "Tc") state.charSpace = n(0);
      else if (t === "Ts") state.rise = n(0);
      else if (t === "TL") state.leading = n(0);
      else if (t === "Tm") {
        expect(args.slice(0, 4).join(" ")).toBe("1 0 0 1");
        x = n(4);
        y = lineY = n(5);
      } else if (t === "T*") y = lineY -= state.leading;
      else if (t === "Tj") show(args[0] as string);
      else if (t === "TJ")
        for (const item of args[0] as Operand[]) {
          if (typeof item === "number") x -= (item / 1000) * state.size;
          else show(item as string);
        }
    }
  }
  return drawn;
}

/** The regular face the PDF draws a language's script with, as fontkit reads it. */
const faceOf = async (l: "bn" | "mr") =>
  fontkit.create(await Bun.file(l === "bn" ? bengaliRegular : devanagariRegular).bytes()) as unknown as Shaper;

/** A WOFF (1.0) font's plain sfnt: its tables inflated. */
function unwoff(woff: Uint8Array): Uint8Array {
  const view = new DataView(woff.buffer, woff.byteOffset, woff.byteLength);
  const count = view.getUint16(12);
  const tables = Array.from({ length: count }, (_, i) => {
    const at = 44 + i * 20;
    const [offset, packed, size] = [view.getUint32(at + 4), view.getUint32(at + 8), view.getUint32(at + 12)];
    const raw = woff.subarray(offset, offset + packed);
    return {
      entry: woff.subarray(at, at + 4),
      check: view.getUint32(at + 16),
      data: packed < size ? inflateSync(raw) : raw,
    };
  });
  const out = new Uint8Array(12 + 16 * count + tables.reduce((n, t) => n + ((t.data.length + 3) & ~3), 0));
  const w = new DataView(out.buffer);
  w.setUint32(0, view.getUint32(4));
  w.setUint16(4, count);
  let at = 12 + 16 * count;
  tables.forEach((t, i) => {
    out.set(t.entry, 12 + 16 * i);
    w.setUint32(16 + 16 * i, t.check);
    w.setUint32(20 + 16 * i, at);
    w.setUint32(24 + 16 * i, t.data.length);
    out.set(t.data, at);
    at += (t.data.length + 3) & ~3;
  });
  return out;
}

type Placement = { xAdvance: number; xOffset: number; yOffset: number };

/**
 * The bn or mr page the tests use, of 3 to 10 chunks, among the first 60 articles (pages of every length, without
 * building the whole dump), and its PDF (pdfResponse renders it once for the three tests that read it, 3 s each).
 */
async function renderedPage(l: "bn" | "mr"): Promise<{ page: SnapshotPage; bytes: Uint8Array }> {
  const engine = await engineFor({ ...lang(l), limit: 60 });
  const page = engine.snapshot.pages.list().find((p) => p.chunks.length >= 3 && p.chunks.length <= 10)!;
  return { page, bytes: await pdfOf(engine, page) };
}

/**
 * Renders the bn or mr page the tests use and finds in its content streams each word of the
 * script with vowel signs, viramas (conjuncts) or anusvara, by the outlines of the glyphs
 * `shape` gives it (in the regular face); then holds each glyph drawn to the position `shape`
 * gives: the pen's advances plus its x offset, its y offset off the baseline, within 0.01 pt.
 */
async function placements(l: "bn" | "mr", shape: (word: string) => { ids: number[]; positions: Placement[] }) {
  const face = await faceOf(l);
  const { page, bytes } = await renderedPage(l);
  const doc = await PDFDocument.load(bytes);
  const script = l === "bn" ? /[\u0980-\u09FF]+/g : /[\u0900-\u0963\u0966-\u097F]+/g;
  const signs = l === "bn" ? /[িো্]/ : /[ि्ं]/;
  const words = [
    ...new Set(
      page.chunks
        .map((c) => c.text)
        .join(" ")
        .match(script),
    ),
  ].filter((w) => signs.test(w));
  // What each drawn glyph looks like, from the embedded subset.
  const outlines = new Map<string, (code: number) => string>();
  const outline = (page: PDFPage, font: string, code: number) => {
    const fonts = page.node.Resources()!.lookup(PDFName.of("Font"), PDFDict);
    const ref = String(fonts.get(PDFName.of(font.slice(1))));
    let of = outlines.get(ref);
    if (!of) {
      const dict = fonts.lookup(PDFName.of(font.slice(1)), PDFDict);
      const cid = (dict.lookup(PDFName.of("DescendantFonts")) as PDFArray).lookup(0) as PDFDict;
      const file = cid.lookup(PDFName.of("FontDescriptor"), PDFDict).lookup(PDFName.of("FontFile2")) as PDFRawStream;
      const subset = fontkit.create(decodePDFRawStream(file).decode()) as unknown as Shaper;
      const svg = new Map<number, string>();
      of = (c) => svg.get(c) ?? svg.set(c, subset.getGlyph(c).path.toSVG()).get(c)!;
      outlines.set(ref, of);
    }
    return of(code);
  };
  const drawn = doc
    .getPages()
    .flatMap((p) => drawnGlyphs(p).map((g) => ({ ...g, outline: outline(p, g.font, g.code) })));
  // Where each outline is drawn, in order: the places a word whose first glyph it is may start.
  const drawnAt = new Map<string, number[]>();
  drawn.forEach((g, at) => {
    const places = drawnAt.get(g.outline);
    if (places) places.push(at);
    else drawnAt.set(g.outline, [at]);
  });
  const failures: Json[] = [];
  let checked = 0;
  let withOffsets = 0;
  for (const word of words) {
    const { ids, positions } = shape(word);
    const wanted = ids.map((id) => face.getGlyph(id).path.toSVG());
    let found = 0;
    for (const at of drawnAt.get(wanted[0]!) ?? []) {
      if (at + wanted.length > drawn.length) break;
      if (!wanted.every((o, k) => drawn[at + k]!.outline === o && drawn[at + k]!.font === drawn[at]!.font)) continue;
      found++;
      const first = drawn[at]!;
      const scale = first.size / face.unitsPerEm;
      const origin = first.x - positions[0]!.xOffset * scale;
      let pen = 0;
      positions.forEach((p, k) => {
        const g = drawn[at + k]!;
        const dx = g.x - (origin + (pen + p.xOffset) * scale);
        const dy = g.y - g.baseline - p.yOffset * scale;
        if (Math.abs(dx) > 0.01 || Math.abs(dy) > 0.01) failures.push({ word, glyph: k, dx, dy });
        pen += p.xAdvance;
      });
    }
    if (!found) continue;
    checked++;
    if (positions.some((p) => p.xOffset || p.yOffset)) withOffsets++;
  }
  return { failures, checked, withOffsets };
}

/** A page with text in several sections, not too long for a test. */
const sample = (engine: Engine): SnapshotPage =>
  engine.snapshot.pages
    .list()
    .find((p) => p.chunks.length >= 8 && p.chunks.length <= 25 && p.sections.filter((s) => s.heading).length >= 3)!;

let en: Engine;
/**
 * One renderer (one worker thread, its fonts loaded once) for the apps of the tests that only read a PDF: the server
 * here and pdfResponse's apps. A test that needs a renderer with no PDF kept, or other options, makes its own.
 */
let renderer: PdfRenderer;
let access: Access;
let running: RunningServer;
let key: string;

/** A key of `plan` made in the data folder `dir`, as `bun run keys create` makes it. */
const keyIn = async (dir: string, name: string, plan: PlanName): Promise<string> =>
  (await keyMade(dir, { name, account: name, plan, scope: "full" })).key;

beforeAll(async () => {
  en = await engineFor(EN);
  renderer = new PdfRenderer();
  // In this process, as `bun run start` serves (the key it makes at its first start: enterprise, unlimited); the work
  // share off, as startServer has it.
  const data = tempDir("tome-data-");
  key = await keyIn(data, "default", "enterprise");
  access = new Access({ dataDir: data, keyMsPerSecond: 0 });
  access.start();
  running = serve(createApp(en, { access, pdf: renderer }), { port: 0 });
});

afterAll(async () => {
  await running?.stop();
  await access?.stop();
  renderer?.close();
});

const get = (path: string, apiKey = key) => fetch(running.url.origin + path, { headers: { "X-API-Key": apiKey } });

describe("GET /v1/pdf/{page_id}", () => {
  test("headers: PDF, attachment with an ASCII filename and the real title, credit cost, length, quota", async () => {
    for (const path of ["/v1/pdf/39", "/v1/pdf/39.pdf"]) {
      const r = await get(path);
      const bytes = new Uint8Array(await r.arrayBuffer());
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/pdf");
      expect(r.headers.get("content-disposition")).toBe(
        `attachment; filename="Albedo.pdf"; filename*=UTF-8''Albedo.pdf`,
      );
      expect(r.headers.get("x-credit-cost")).toBe("10");
      expect(Number(r.headers.get("content-length"))).toBe(bytes.byteLength);
      expect(r.headers.get("x-quota-remaining")).toBe("unlimited");
      expect(r.headers.get("x-ratelimit-limit")).toBeTruthy();
      expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe("%PDF-");
    }
    expect(contentDisposition('Café "AC/DC" (band)', 1)).toBe(
      `attachment; filename="Cafe _AC_DC_ (band).pdf"; filename*=UTF-8''Caf%C3%A9%20%22AC%2FDC%22%20%28band%29.pdf`,
    );
  });

  test("the ASCII filename of a title in another script: transliterated, or the page id when nothing readable remains", () => {
    expect(contentDisposition("Ελλάδα", 12)).toBe(
      `attachment; filename="Ellada.pdf"; filename*=UTF-8''%CE%95%CE%BB%CE%BB%CE%AC%CE%B4%CE%B1.pdf`,
    );
    expect(contentDisposition("Україна", 7)).toStartWith(`attachment; filename="Ukraina.pdf"; filename*=UTF-8''%D0%A3`);
    expect(contentDisposition("Ωμέγα (γράμμα)", 7)).toStartWith(`attachment; filename="Omega (gramma).pdf";`);
    // Kana have one reading; a Han character's depends on the language (音楽 is ongaku, not yinle).
    expect(contentDisposition("アンパサンド", 5)).toStartWith(`attachment; filename="anpasando.pdf";`);
    expect(contentDisposition("音楽", 5)).toBe(
      `attachment; filename="page-5.pdf"; filename*=UTF-8''%E9%9F%B3%E6%A5%BD.pdf`,
    );
    expect(contentDisposition("東京タワー", 9)).toStartWith(`attachment; filename="page-9.pdf";`);
    expect(contentDisposition("???", 3)).toStartWith(`attachment; filename="page-3.pdf";`);
    // A leading dot would save it hidden (curl -OJ, wget --content-disposition take filename as it is): left out of the
    // ASCII name; filename* keeps the title.
    expect(contentDisposition(".NET Framework", 4)).toBe(
      `attachment; filename="NET Framework.pdf"; filename*=UTF-8''.NET%20Framework.pdf`,
    );
    expect(contentDisposition("...", 6)).toStartWith(`attachment; filename="page-6.pdf";`);
  });

  test("errors: page_id must be an integer; page not found; HEAD works", async () => {
    for (const id of ["abc", "39.pdfx", "39.PDF", "-1", "1e3", "39.pdf.pdf", ".pdf"]) {
      const r = await get(`/v1/pdf/${id}`);
      expect({ id, status: r.status }).toEqual({ id, status: 400 });
      expect(((await r.json()) as Json).error).toBe("page_id must be an integer");
    }
    // Past 2^53 - 1 it is refused saying the bound, as /v1/page says it; the details' rule names the .pdf form too.
    const constraint = "an integer from 0 to 9007199254740991 (base-10 digits), optionally followed by .pdf";
    for (const id of ["9007199254740992", "9007199254740992.pdf"]) {
      const r = await get(`/v1/pdf/${id}`);
      expect({ id, status: r.status, body: await r.json() }).toEqual({
        id,
        status: 400,
        body: {
          error: "page_id must be an integer",
          message: `page_id must be ${constraint}.`,
          details: { parameter: "page_id", value: id, constraint },
        },
      });
    }
    for (const id of ["999999999", "999999999.pdf"]) {
      const r = await get(`/v1/pdf/${id}`);
      expect(r.status).toBe(404);
      expect(await r.json()).toEqual({ error: "page not found", message: expect.any(String) });
    }
    // A HEAD has the GET's length when the PDF is kept (D26): made here, so that the test does not need the one before.
    const made = await get("/v1/pdf/39");
    expect({ status: made.status, bytes: (await made.arrayBuffer()).byteLength > 1000 }).toEqual({
      status: 200,
      bytes: true,
    });
    const head = await fetch(`${running.url.origin}/v1/pdf/39.pdf`, { method: "HEAD", headers: { "X-API-Key": key } });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("application/pdf");
    expect(Number(head.headers.get("content-length"))).toBeGreaterThan(1000);
  });

  test("quota: a PDF costs 10; with 9 credits left, 429 quota_exceeded and nothing spent", async () => {
    const dir = tempDir("tome-data-");
    const ten = await keyIn(dir, "ten", "free");
    const nine = await keyIn(dir, "nine", "free");
    const month = new Date().toISOString().slice(0, 7);
    writeUsage(usagePath(dir), { months: { [month]: { ten: 4990, nine: 4991 } }, last_used: {} });
    // Its own renderer: no PDF of page 39 kept yet.
    const pdf = new PdfRenderer();
    const quotaAccess = new Access({ dataDir: dir, keyMsPerSecond: 0 });
    quotaAccess.start();
    const s = serve(createApp(en, { access: quotaAccess, pdf }), { port: 0 });
    const url = s.url.origin;
    try {
      // A HEAD renders nothing when no PDF of the page is kept: it costs nothing, so 9 credits are enough (D26).
      const free = await fetch(`${url}/v1/pdf/39`, { method: "HEAD", headers: { "X-API-Key": nine } });
      expect([free.status, free.headers.get("x-credit-cost"), free.headers.get("x-quota-remaining")]).toEqual([
        200,
        "0",
        "9",
      ]);
      const refused = await fetch(`${url}/v1/pdf/39`, { headers: { "X-API-Key": nine } });
      expect(refused.status).toBe(429);
      const body = (await refused.json()) as Json;
      expect(body).toEqual({
        error: "quota_exceeded",
        message: expect.stringContaining("10 credits"),
        quota_limit: 5000,
        quota_used: 4991,
        retry_after: expect.any(Number),
      });
      expect(refused.headers.get("x-quota-remaining")).toBe("9");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      // One credit is still there for anything else.
      const chunk = await fetch(`${url}/v1/chunk/39_0`, { headers: { "X-API-Key": nine } });
      expect(chunk.status).toBe(200);
      expect(chunk.headers.get("x-quota-remaining")).toBe("8");
      const ok = await fetch(`${url}/v1/pdf/39.pdf`, { headers: { "X-API-Key": ten } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("x-quota-remaining")).toBe("0");
      await ok.arrayBuffer();
      // Now the PDF is kept: its HEAD costs 10 like the GET, more than the 8 credits left.
      const kept = await fetch(`${url}/v1/pdf/39`, { method: "HEAD", headers: { "X-API-Key": nine } });
      expect([kept.status, kept.headers.get("x-quota-remaining")]).toEqual([429, "8"]);
    } finally {
      await s.stop(); // closes the renderer too
      await quotaAccess.stop();
    }
    // The counts as saved once the server has stopped (it saves the last of them then).
    expect(readUsage(usagePath(dir)).months[month]).toEqual({ ten: 5000, nine: 4992 });
  });

  test("a rendering fault is 500 PDF generation failed: no detail leaked, nothing charged", async () => {
    const dir = tempDir("tome-data-");
    const k = await keyIn(dir, "f", "free");
    const access = new Access({ dataDir: dir });
    const logged: unknown[] = [];
    const app = createApp(en, {
      access,
      pdf: { render: async () => Promise.reject(new Error(`font table broken at ${ROOT}/src/pdf/fonts.ts:1`)) },
      logError: (e) => logged.push(e),
    });
    const running = serve(app, { port: 0 });
    try {
      const r = await fetch(`${running.url.origin}/v1/pdf/39`, { headers: { "X-API-Key": k } });
      const text = await r.text();
      expect(r.status).toBe(500);
      expect(JSON.parse(text)).toEqual({ error: "PDF generation failed", message: expect.any(String) });
      expect(text).not.toContain("font table");
      expect(text).not.toContain("/src/");
      expect(r.headers.get("x-quota-remaining")).toBe("5000");
      expect(logged.length).toBe(1);
      await Bun.sleep(20);
      await access.stop();
      expect(readUsage(usagePath(dir)).months).toEqual({});
    } finally {
      await running.stop();
    }
  });

  test("a render past its time limit (a loaded machine) is 503 service_unavailable with Retry-After, logged, not 500", async () => {
    // At a load average of 50 the renderer's thread (10 nice steps below the others, D143) got too little of a core to
    // start and render within its limit, and the route answered 500 PDF generation failed. The renderer's clock is the
    // test's (fake timers), so that how long a render takes here does not matter: its limit passes while it renders,
    // or, its worker new, while the worker starts (its start's limit, the same here: answered the same, D26).
    const limit = 1000;
    const slow = new PdfRenderer({ timeoutMs: limit });
    const logged: unknown[] = [];
    const app = createApp(en, { pdf: slow, logError: (e) => logged.push(e) });
    jest.useFakeTimers();
    try {
      const answer = app.handle(new Request("http://localhost/v1/pdf/39"));
      while (!slow.load().rendering) await Bun.sleep(0);
      jest.advanceTimersByTime(limit + 1);
      const r = await answer;
      const body = (await r.json()) as { error: string; message: string; retry_after: number };
      expect([r.status, body.error]).toEqual([503, "service_unavailable"]);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(body.retry_after).toBe(Number(r.headers.get("retry-after")));
      expect(body.message).toContain(`within its time limit of ${limit / 1000} s`);
      // One line, naming the page, not a stack a loaded machine would repeat for every request.
      expect(logged).toEqual([expect.stringMatching(new RegExp(`^/v1/pdf/\\d+: [^\\n]*took longer than ${limit} ms`))]);
    } finally {
      jest.useRealTimers();
      slow.close();
    }
  });

  test("a PDF worker that dies under a render is api.md's 500 PDF generation failed, logged in one line; the request queued behind it is rendered by a new worker", async () => {
    // A server-side generation error (api.md). Before, one whose thread ended without an error (terminated, exited)
    // left its request and those queued behind it waiting for ever.
    const crashing = new PdfRenderer();
    const logged: unknown[] = [];
    const app = createApp(en, { pdf: crashing, logError: (e) => logged.push(e) });
    const small = en.snapshot.pages
      .list()
      .filter((p) => p.chunks.length && p.pageId !== 39)
      .sort((a, b) => a.chunks.length - b.chunks.length)[0]!;
    try {
      const first = app.handle(new Request("http://localhost/v1/pdf/39"));
      const behind = app.handle(new Request(`http://localhost/v1/pdf/${small.pageId}`));
      while (crashing.load().queued < 1) await Bun.sleep(1);
      crashing.terminate(0);
      const r = await first;
      expect(r.status).toBe(500);
      expect(await r.json()).toEqual({
        error: "PDF generation failed",
        message: "The PDF could not be generated; nothing was charged. Please try again later.",
      });
      expect(logged).toEqual([expect.stringMatching(/^\/v1\/pdf\/39: the PDF worker stopped: [^\n]+$/)]);
      const next = await behind;
      expect(next.status).toBe(200);
      expect(new TextDecoder().decode(new Uint8Array(await next.arrayBuffer()).slice(0, 5))).toBe("%PDF-");
    } finally {
      crashing.close();
    }
  }, 60_000);
});

const responses = new WeakMap<Engine, Map<number, Promise<{ bytes: Uint8Array; disposition: string }>>>();
const apps = new WeakMap<Engine, App>();
/** An app over the engine with the file's renderer (no key needed without an Access): one per engine. */
const appOf = (engine: Engine): App => {
  let app = apps.get(engine);
  if (!app) apps.set(engine, (app = createApp(engine, { pdf: renderer })));
  return app;
};
/**
 * A page's PDF as an app over the engine answers GET /v1/pdf/{page_id}, in process (no key needed without an
 * Access): rendered once per engine and page for the
 * tests that read it (English page 39 is read by three, Japanese page 141 by two), which only read the bytes.
 */
function pdfResponse(engine: Engine, page: SnapshotPage): Promise<{ bytes: Uint8Array; disposition: string }> {
  let made = responses.get(engine);
  if (!made) responses.set(engine, (made = new Map()));
  let response = made.get(page.pageId);
  if (!response) {
    response = (async () => {
      const r = await appOf(engine).handle(new Request(`http://localhost/v1/pdf/${page.pageId}`));
      expect(r.status).toBe(200);
      return { bytes: new Uint8Array(await r.arrayBuffer()), disposition: r.headers.get("content-disposition")! };
    })();
    made.set(page.pageId, response);
  }
  return response;
}
const pdfOf = async (engine: Engine, page: SnapshotPage) => (await pdfResponse(engine, page)).bytes;

/** An article of English Wikipedia (page 1, revision 2) made here, not read from a snapshot: one section of these paragraphs. */
const articleWith = (title: string, paragraphs: string[], overrides: Partial<PdfArticle> = {}): PdfArticle => ({
  pageId: 1,
  revId: 2,
  title,
  lang: "en",
  sitename: "Wikipedia",
  project: "en.wikipedia.org",
  url: articleUrl("en.wikipedia.org", title),
  permalink: "https://en.wikipedia.org/w/index.php?curid=1&oldid=2",
  timestamp: "2016-01-01T00:00:00Z",
  retrievedAt: "2016-01-02T00:00:00Z",
  sections: [{ heading: "", level: 0, paragraphs }],
  license: LICENSE,
  modifications: [],
  ...overrides,
});

describe("the document", () => {
  const cases = [
    ["English", EN],
    ["Greek", lang("el")],
    ["Japanese", lang("ja")],
    ["Ukrainian", lang("uk")],
  ] as const;

  for (const [name, opts] of cases) {
    test(`${name}: A4, its properties, and its title, headings, text, footer and license as text`, async () => {
      const engine = await engineFor(opts);
      const page = name === "English" ? engine.page(39)! : sample(engine);
      const { bytes, disposition } = await pdfResponse(engine, page);
      // The ASCII filename says something readable, or names the page.
      const ascii = /filename="([^"]*)\.pdf"/.exec(disposition)![1]!;
      expect({ ascii, readable: /[A-Za-z0-9]/.test(ascii) }).toEqual({ ascii, readable: true });
      expect(disposition).toEndWith(
        `filename*=UTF-8''${encodeURIComponent(page.title).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}.pdf`,
      );
      const props = await info(bytes);
      expect(props["Page size"]).toBe("595.28 x 841.89 pts (A4)");
      expect(props.Title).toBe(page.title);
      expect(props.Author).toBe("Wikipedia contributors");
      expect(props.Subject).toStartWith(`${name} Wikipedia article "${page.title}"`);
      expect(props.Subject).toContain("CC BY-SA 4.0");
      expect(props.Producer).toContain("Tome");
      expect(props.CreationDate).toBeTruthy();
      const pages = Number(props.Pages);
      expect(pages).toBeGreaterThan(0);

      // Every glyph drawn has its outline (a space has none: at most one such per font).
      const blank = await blankGlyphs(bytes);
      expect(Object.keys(blank).length).toBeGreaterThan(0);
      for (const [font, n] of Object.entries(blank))
        expect({ font, blank: n }).toEqual({ font, blank: Math.min(n, 1) });

      const extracted = await text(bytes);
      // A paragraph may go on over a page break, past the footer.
      const flat = squeeze(withoutFooters(extracted));
      expect(flat).toContain(squeeze(renderable(page.title)));
      for (const s of page.sections) {
        if (s.heading)
          expect({ heading: s.heading, found: flat.includes(squeeze(renderable(s.heading))) }).toEqual({
            heading: s.heading,
            found: true,
          });
      }
      // The article's text: every chunk, as long runs of its characters.
      for (const c of page.chunks) {
        const t = squeeze(renderable(c.text));
        for (const at of [0, Math.floor(t.length / 2), Math.max(0, t.length - 30)]) {
          const piece = t.slice(at, at + 30);
          expect({ piece, found: flat.includes(piece) }).toEqual({ piece, found: true });
        }
      }
      // The footer on every page, and the license line.
      for (let n = 1; n <= pages; n++) expect(extracted).toContain(`page ${n} of ${pages}`);
      expect(extracted.split("CC BY-SA 4.0 · https://creativecommons.org/licenses/by-sa/4.0/").length - 1).toBe(pages);
      expect(extracted).toContain("Creative Commons Attribution-ShareAlike 4.0 International");
      // The attribution, whole on the last page: source, revision, retrieval date, modifications.
      const last = await tool([
        "pdftotext",
        "-enc",
        "UTF-8",
        "-f",
        String(pages),
        "-l",
        String(pages),
        await pdfFile(bytes),
        "-",
      ]);
      expect(last).toContain("Source and license");
      // The attribution's sentences are English throughout: they name the wiki in English, and
      // the only other script in them is the article's title (the wiki's own name, Βικιπαίδεια, is not).
      const attribution = last.slice(last.indexOf("Source and license"));
      expect(attribution.replace(/\s+/g, " ")).toContain(`text of the ${name} Wikipedia article "`);
      expect(attribution.replace(/\s+/g, " ")).toContain("written by Wikipedia contributors");
      const foreign = squeeze(attribution)
        .replaceAll(squeeze(renderable(page.title)), "")
        .match(/[^\p{Script=Latin}\p{Script=Common}\p{Script=Inherited}]/gu);
      expect(foreign).toBeNull();
      // A link that follows "(" is one word with it: no line ends with the parenthesis.
      expect(last.split("\n").filter((l) => l.trimEnd().endsWith("("))).toEqual([]);
      expect(last).toContain(`revision ${page.revId}`);
      expect(last).toContain(`curid=${page.pageId}&oldid=${page.revId}`);
      expect(last).toContain(`retrieved ${engine.snapshot.meta.createdAt.slice(0, 10)}`);
      expect(last).toContain("Creative Commons Attribution-ShareAlike 4.0 International");
      for (const m of ["Converted from wikitext markup to plain text", "Split into sections by heading hierarchy"])
        expect(last).toContain(m);
    });
  }

  test("links: the article, the revision's permalink and the license, as link annotations", async () => {
    const page = en.page(39)!;
    const doc = await PDFDocument.load(await pdfOf(en, page));
    const links: string[] = [];
    const lastPage: string[] = [];
    for (const p of doc.getPages()) {
      const annots = p.node.Annots();
      if (!annots) continue;
      for (let i = 0; i < annots.size(); i++) {
        const a = annots.lookup(i, PDFDict);
        expect(a.get(PDFName.of("Subtype"))).toEqual(PDFName.of("Link"));
        const action = a.lookup(PDFName.of("A"), PDFDict);
        const uri = (action.lookup(PDFName.of("URI")) as PDFString).decodeText();
        links.push(uri);
        if (p === doc.getPages().at(-1)) lastPage.push(uri);
      }
    }
    // The attribution, with its links, is whole on the last page.
    expect(lastPage).toContain("https://en.wikipedia.org/wiki/Albedo");
    expect(lastPage).toContain(`https://en.wikipedia.org/w/index.php?curid=39&oldid=${page.revId}`);
    // The license link in every page's footer, and in the attribution (where a line break may cut it in two).
    expect(links.filter((l) => l === "https://creativecommons.org/licenses/by-sa/4.0/").length).toBeGreaterThanOrEqual(
      doc.getPageCount() + 1,
    );
    for (const p of doc.getPages()) expect(p.node.Annots()?.size() ?? 0).toBeGreaterThan(0);
  });

  test("a link to a title with an unbalanced parenthesis is one whole URI: the PDF parses, the link is the article's", async () => {
    const bytes = await renderPdf(articleWith("Smile :)", ["A face."]));
    const uris = (await PDFDocument.load(bytes)).getPages().flatMap((p) => {
      const annots = p.node.Annots();
      return Array.from({ length: annots?.size() ?? 0 }, (_, i) =>
        (
          annots!.lookup(i, PDFDict).lookup(PDFName.of("A"), PDFDict).lookup(PDFName.of("URI")) as PDFString
        ).decodeText(),
      );
    });
    expect(uris).toContain("https://en.wikipedia.org/wiki/Smile_:)");
  });

  test("characters no font has are counted among the modifications, by script: a Korean or Arabic page is not a silently blank PDF (D177)", async () => {
    const article = (title: string, paragraphs: string[]) =>
      renderPdf(articleWith(title, paragraphs, { modifications: ["Converted from wikitext markup to plain text"] }));
    // 한국어 (3), مرحبا (5), שלום (4) and 😀 (1, with its zero-width joiner and variation selector not counted).
    const mixed = await text(await article("Hangul 한국어", ["Some text, مرحبا שלום, and 😀\u200d\ufe0f."]));
    const note = mixed.slice(mixed.indexOf("The text was modified")).replace(/\s+/g, " ");
    expect(note).toContain("Converted from wikitext markup to plain text");
    expect(note).toContain(
      "Left out 13 characters that no font of this document has (Arabic, Hangul, Hebrew, emoji and other symbols): the article online has them",
    );
    // Everything drawn: no such line.
    const plain = await text(await article("Albedo", ["Plain text, Ελληνικά, русский, 日本語."]));
    expect(plain).not.toContain("Left out");
  });

  test("a page longer than a PDF holds is cut there and says so, in the document and in X-PDF-Truncated; a shorter one is whole (D182)", async () => {
    const long = en.page(39)!;
    const words = (page: SnapshotPage) => page.chunks.flatMap((c) => c.text.split("\n\n")).join("");
    const total = words(long).length;
    const max = Math.floor(total / 2);
    const short = en.snapshot.pages
      .list()
      .find((p) => p.chunks.length && words(p).length <= max && words(p).length > 200)!;
    const pdf = new PdfRenderer({ maxCharacters: max });
    const app = createApp(en, { pdf });
    const get = (page: SnapshotPage, method = "GET") =>
      app.handle(new Request(`http://localhost/v1/pdf/${page.pageId}`, { method }));
    try {
      // Known before any render: a HEAD says it too.
      const head = await get(long, "HEAD");
      expect(head.headers.get("x-pdf-truncated")).toMatch(new RegExp(`^\\d+ of ${total} characters$`));
      const r = await get(long);
      expect(r.status).toBe(200);
      const shown = Number(r.headers.get("x-pdf-truncated")!.split(" ")[0]);
      expect(shown).toBeGreaterThan(max / 2);
      expect(shown).toBeLessThanOrEqual(max);
      const extracted = (await text(new Uint8Array(await r.arrayBuffer()))).replace(/\s+/g, " ");
      const url = `https://en.wikipedia.org/wiki/${encodeURIComponent(long.title.replace(/ /g, "_"))}`;
      expect(squeeze(extracted)).toContain(
        squeeze(
          `Cut after ${shown.toLocaleString("en")} of the article's ${total.toLocaleString("en")} characters ` +
            `(a PDF holds at most ${max.toLocaleString("en")}): the article continues online at ${url}`,
        ),
      );
      // The text stops at the cut: its last paragraph is not there.
      const last = long.chunks.at(-1)!.text.split("\n\n").at(-1)!;
      expect(squeeze(withoutFooters(extracted))).not.toContain(squeeze(renderable(last)));
      const whole = await get(short);
      expect(whole.headers.get("x-pdf-truncated")).toBeNull();
      const all = await text(new Uint8Array(await whole.arrayBuffer()));
      expect(all).not.toContain("Cut after");
      const end = short.chunks.at(-1)!.text.split("\n\n").at(-1)!;
      expect(squeeze(withoutFooters(all))).toContain(squeeze(renderable(end)));
    } finally {
      pdf.close();
    }
  });

  test("a cut page asked for again is not hashed again: its cut article is kept (D182)", async () => {
    const long = en.page(39)!;
    const max = 2_000;
    const pdf = new PdfRenderer({ maxCharacters: max });
    const app = createApp(en, { pdf });
    const get = (method: string) => app.handle(new Request(`http://localhost/v1/pdf/${long.pageId}`, { method }));
    const hash = spyOn(Bun, "hash");
    try {
      for (const method of ["HEAD", "GET", "HEAD", "GET"]) {
        const r = await get(method);
        expect(r.headers.get("x-pdf-truncated")).toMatch(/^\d+ of \d+ characters$/);
        await r.arrayBuffer();
      }
      // Only an article's key hashes text that long: once, for the four requests.
      const articles = hash.mock.calls.filter(([data]) => typeof data === "string" && data.length > max);
      expect(articles.length).toBe(1);
    } finally {
      hash.mockRestore();
      pdf.close();
    }
  });

  test("a whole page asked for again is neither hashed nor counted again: its checked article is kept (D182)", async () => {
    const max = 2_000;
    const paragraphs = (page: SnapshotPage) => page.chunks.flatMap((c) => c.text.split("\n\n"));
    const short = en.snapshot.pages.list().find((p) => {
      const length = paragraphs(p).join("").length;
      return p.chunks.length && length <= max && length > 200;
    })!;
    const first = paragraphs(short)[0]!;
    const pdf = new PdfRenderer({ maxCharacters: max });
    const app = createApp(en, { pdf });
    const get = (method: string) => app.handle(new Request(`http://localhost/v1/pdf/${short.pageId}`, { method }));
    const hash = spyOn(Bun, "hash");
    const counted = spyOn(scripts, "codePoints");
    try {
      for (const method of ["HEAD", "GET", "HEAD", "GET"]) {
        const r = await get(method);
        expect(r.headers.get("x-pdf-truncated")).toBeNull();
        await r.arrayBuffer();
      }
      // The article's key hashes its JSON, and its length counts each paragraph: once each, for the four requests.
      const keys = hash.mock.calls.filter(
        ([data]) => typeof data === "string" && data.startsWith(`{"pageId":${short.pageId},`),
      );
      expect(keys.length).toBe(1);
      expect(counted.mock.calls.filter(([text]) => text === first).length).toBe(1);
    } finally {
      hash.mockRestore();
      counted.mockRestore();
      pdf.close();
    }
  });

  test("the cut counts characters as code points, and never splits a surrogate pair (D182)", () => {
    // 𝔘 and 😀 are one character each, two UTF-16 units: 24 characters in all, 12 astral.
    const paragraph = "𝔘😀 ".repeat(8);
    const article = articleWith("Astral", [paragraph]);
    expect(cutForPdf(article, 24)).toBe(article);
    for (let max = 1; max < 24; max++) {
      const cut = cutForPdf(article, max);
      expect(cut.cut).toEqual({ shown: expect.any(Number), total: 24, max });
      const kept = cut.sections.flatMap((s) => s.paragraphs).join("");
      expect(kept).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
      expect(kept).toBe(kept ? `${[...paragraph].slice(0, cut.cut!.shown).join("").trimEnd()}…` : "");
      expect(cut.cut!.shown).toBeLessThanOrEqual(max);
    }
    // 23 of 24: the whole paragraph but its last space, cut at the last space before it.
    expect(cutForPdf(article, 23).cut!.shown).toBe(20);
  });

  test("each heading level has its own size: smaller with depth, below the title, above the text", async () => {
    // Albedo: == and === headings; 1780 (Ukrainian): == to =====; 音楽家 (Japanese): == to ====.
    for (const [opts, id] of [
      [EN, 39],
      [lang("uk"), 1044],
      [lang("ja"), 141],
    ] as const) {
      const engine = await engineFor(opts);
      const page = engine.page(id)!;
      const lines = await sizedLines(await pdfOf(engine, page));
      // Headings are looked for in order, each after the one before.
      let from = 0;
      const sizeOf = (text: string): number[] => {
        const wanted = squeeze(renderable(text));
        // A heading is one line or several in a row (pdftohtml also splits a line where the font changes).
        for (let i = from; i < lines.length; i++) {
          let joined = "";
          for (let j = i; j < lines.length && wanted.startsWith(joined + squeeze(lines[j]!.text)); j++) {
            joined += squeeze(lines[j]!.text);
            if (joined !== wanted) continue;
            from = j + 1;
            return [...new Set(lines.slice(i, j + 1).map((l) => l.size))];
          }
        }
        return [];
      };
      const title = sizeOf(page.title)[0]!;
      const byLevel = new Map<number, Set<number>>();
      for (const s of page.sections.filter((s) => s.heading)) {
        const sizes = sizeOf(s.heading);
        expect({ heading: s.heading, sizes: sizes.length }).toEqual({ heading: s.heading, sizes: 1 });
        byLevel.set(s.level, (byLevel.get(s.level) ?? new Set()).add(sizes[0]!));
      }
      const levels = [...byLevel.keys()].sort();
      expect(levels.length).toBeGreaterThanOrEqual(id === 39 ? 2 : 3);
      const counts = new Map<number, number>();
      for (const l of lines) counts.set(l.size, (counts.get(l.size) ?? 0) + 1);
      const body = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
      const sizes = [title, ...levels.map((l) => [...byLevel.get(l)!]), body];
      // Title, then one size per level (largest first), then the body text: strictly decreasing.
      for (const s of sizes.slice(1, -1))
        expect({ title: page.title, sizes: (s as number[]).length }).toEqual({ title: page.title, sizes: 1 });
      const flat = sizes.flat();
      expect({ title: page.title, flat }).toEqual({ title: page.title, flat: [...flat].sort((a, b) => b - a) });
      expect(new Set(flat).size).toBe(flat.length);
    }
  });

  test("Japanese lines follow kinsoku: none starts with closing punctuation or small kana, none ends with an opening bracket", async () => {
    const engine = await engineFor(lang("ja"));
    // Pages whose lines broke against these rules: こどもの文化, 自然言語処理, 音楽家, 言語学, 合理主義哲学.
    for (const id of [59, 67, 141, 159, 215]) {
      const page = engine.page(id)!;
      const bytes = await pdfOf(engine, page);
      const lines = (await text(bytes))
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean);
      expect(
        lines.filter((l) =>
          /^[、。，．・：；！？）］｝〕〉》」』】ー々ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ]/u.test(l),
        ),
      ).toEqual([]);
      expect(lines.filter((l) => /[（［｛〔〈《「『【]$/u.test(l))).toEqual([]);
      // Nothing is lost or pushed past the right margin by keeping those characters together.
      const flat = squeeze(withoutFooters(lines.join("\n")));
      for (const c of page.chunks) {
        const t = squeeze(renderable(c.text));
        expect({ end: t.slice(-30), found: flat.includes(t.slice(-30)) }).toEqual({ end: t.slice(-30), found: true });
      }
      const right = Math.max(...(await sizedLines(bytes)).map((l) => l.right));
      expect(right).toBeLessThanOrEqual(595.28 - 62 + 0.5);
    }
  });

  test("the attribution names a wiki in English: its language and project (as Wikimedia names a wiki its host names otherwise: Simple English, Alemannic), or its host (D30)", () => {
    expect(creditFor("fr.wiktionary.org", "fr", "chat")).toEqual({
      article: 'French Wiktionary article "chat"',
      authors: "Wiktionary contributors",
    });
    // A host that names the wiki otherwise than its dump's xml:lang does: Simple English's dumps say "en", which alone
    // credited the English Wikipedia; als.wikipedia.org's say "gsw" (Swiss German), Wikimedia calls it Alemannic.
    expect(creditFor("simple.wikipedia.org", "en", "Cat")).toEqual({
      article: 'Simple English Wikipedia article "Cat"',
      authors: "Wikipedia contributors",
    });
    expect(creditFor("als.wikipedia.org", "gsw", "Katze").article).toBe('Alemannic Wikipedia article "Katze"');
    expect(creditFor("zh-yue.wikipedia.org", "yue", "貓").article).toBe('Cantonese Wikipedia article "貓"');
    expect(creditFor("no.wikipedia.org", "nb", "Katt").article).toBe('Norwegian Bokmål Wikipedia article "Katt"');
    expect(creditFor("wiki.example.org", "de", "Katze")).toEqual({
      article: 'article "Katze" from wiki.example.org',
      authors: "wiki.example.org contributors",
    });
  });

  test("Bengali and Marathi come out as their own characters, in their order (/ActualText)", async () => {
    for (const l of ["bn", "mr"] as const) {
      const { page, bytes } = await renderedPage(l);
      const extracted = await text(bytes);
      // The glyphs alone would read back reordered (Bengali ি before its consonant) or as other
      // characters (a glyph a shaper shares between two); each such word carries its text.
      const flat = squeeze(withoutFooters(extracted));
      const words = page.chunks.flatMap(
        (c) =>
          renderable(c.text)
            .normalize("NFD")
            .match(l === "bn" ? /[ঀ-৿]+/gu : /[ऀ-ॿ]+/gu) ?? [],
      );
      expect(words.length).toBeGreaterThan(200);
      expect({ l, missing: words.filter((w) => !flat.includes(w)).slice(0, 5) }).toEqual({ l, missing: [] });
      // And the text as a whole, spaces included: none where the source has none (before a danda).
      const spaced = (s: string) => s.replace(/[\s•]+/g, " ").normalize("NFD");
      const all = spaced(withoutFooters(extracted));
      for (const c of page.chunks) {
        const t = spaced(renderable(c.text));
        for (let at = 0; at < t.length; at += 40) {
          const piece = t.slice(at, at + 40);
          expect({ piece, found: all.includes(piece) }).toEqual({ piece, found: true });
        }
      }
    }
  });

  test("Bengali and Marathi glyphs are drawn where the shaper places them: advances, and marks at their GPOS offsets", async () => {
    for (const l of ["bn", "mr"] as const) {
      const face = await faceOf(l);
      const { failures, checked, withOffsets } = await placements(l, (word) => {
        const { glyphs, positions } = face.layout(word);
        return { ids: glyphs.map((g) => g.id), positions };
      });
      expect({ l, failures: failures.slice(0, 5) }).toEqual({ l, failures: [] });
      // Enough words found on the page, and enough of them with marks the shaper moves off their pen position.
      expect({ l, checked: checked >= 30, withOffsets: withOffsets >= 10 }).toEqual({
        l,
        checked: true,
        withOffsets: true,
      });
    }
  });

  test("Marathi glyphs are where HarfBuzz places them too (an independent shaper; fontkit's Bengali differs from it)", async () => {
    // HarfBuzz reads no WOFF: the face as the plain font file it wraps.
    const font = new hb.Font(new hb.Face(new hb.Blob(unwoff(await Bun.file(devanagariRegular).bytes()))));
    const { failures, checked, withOffsets } = await placements("mr", (word) => {
      const buffer = new hb.Buffer();
      buffer.addText(word);
      buffer.guessSegmentProperties();
      hb.shape(font, buffer);
      return { ids: buffer.getGlyphInfos().map((g) => g.codepoint), positions: buffer.getGlyphPositions() };
    });
    expect(failures.slice(0, 5)).toEqual([]);
    expect({ checked: checked >= 30, withOffsets: withOffsets >= 10 }).toEqual({ checked: true, withOffsets: true });
  });
});

describe("rendering does not freeze the server", () => {
  test("/v1/chunk keeps being answered while a long article renders", async () => {
    const engine = await engineFor(lang("el"));
    const longest = engine.snapshot.pages.list().reduce((a, b) => (b.chunks.length > a.chunks.length ? b : a));
    // The file's renderer: a worker thread, as every app's.
    const running = serve(appOf(engine), { port: 0 });
    try {
      const started = performance.now();
      let pdfDone = 0;
      const pdf = fetch(`${running.url.origin}/v1/pdf/${longest.pageId}`).then(async (r) => {
        await r.arrayBuffer();
        pdfDone = performance.now();
        return r.status;
      });
      const latencies: number[] = [];
      while (!pdfDone) {
        const t = performance.now();
        const r = await fetch(`${running.url.origin}/v1/chunk/${longest.pageId}_0`);
        await r.arrayBuffer();
        latencies.push(performance.now() - t);
        await Bun.sleep(5);
      }
      expect(await pdf).toBe(200);
      latencies.sort((a, b) => a - b);
      const renderMs = pdfDone - started;
      // Many answers during the render, each far quicker than the render itself.
      expect(renderMs).toBeGreaterThan(500);
      expect(latencies.length).toBeGreaterThan(10);
      expect(latencies[Math.floor(latencies.length / 2)]!).toBeLessThan(50);
      expect(latencies.at(-1)!).toBeLessThan(renderMs / 2);
    } finally {
      await running.stop();
    }
  });
});

describe("line breaks in scripts written without spaces (one list with the chunker and the search, src/scripts.ts)", () => {
  test.each([
    ["km", "ភាសាខ្មែរគឺជាភាសាផ្លូវការរបស់ប្រទេសកម្ពុជា"],
    ["lo", "ພາສາລາວເປັນພາສາທາງການ"],
    ["my", "မြန်မာဘာသာစကားသည်မြန်မာနိုင်ငံ၏ရုံးသုံးဘာသာစကားဖြစ်သည်"],
    ["th", "ภาษาไทยเป็นภาษาราชการของประเทศไทย"],
  ])("%s: a line may break between the words Intl.Segmenter finds, not only at spaces", async (lang, text) => {
    const { LineBreaker } = await import("../src/pdf/linebreak");
    const units = [...new LineBreaker(lang).units(text)];
    expect(units.length).toBeGreaterThan(2);
    expect(units.join("")).toBe(text);
  });
});
