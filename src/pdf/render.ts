/**
 * One article → an A4 PDF (pdf-lib): the title, each heading at its level's size, the
 * paragraphs wrapped where a line may break (linebreak.ts: Japanese between words, by its rules),
 * lists as bulleted items, a footer on every page ("page N of M" and the license), and the
 * source attribution with links at the end.
 *
 * Glyphs are drawn where fontkit's shaper places them (glyphs.ts); what that does not cover: docs/api.md, "PDFs".
 */
import {
  PDFDocument,
  PDFString,
  popGraphicsState,
  pushGraphicsState,
  rgb,
  setLineWidth,
  setStrokingColor,
  setTextRenderingMode,
  TextRenderingMode,
  type PDFPage,
} from "pdf-lib";
import type { PdfArticle } from "./article";
import { creditFor } from "./credit";
import { FontSet, type Run, undrawn } from "./fonts";
import { drawShaped, widthOf } from "./glyphs";
import { LineBreaker } from "./linebreak";

const A4: [number, number] = [595.28, 841.89];
const MARGIN = { top: 64, bottom: 72, side: 62 };
const TEXT_WIDTH = A4[0] - 2 * MARGIN.side;
const FOOTER_Y = 36;

interface Style {
  size: number;
  bold: boolean;
  /** Space above and below a block, in points. */
  before: number;
  after: number;
}

const STYLE = {
  title: { size: 22, bold: true, before: 0, after: 14 },
  body: { size: 10.5, bold: false, before: 0, after: 7 },
  small: { size: 9, bold: false, before: 0, after: 4 },
  footer: { size: 8, bold: false, before: 0, after: 0 },
} satisfies Record<string, Style>;

/** Headings by level, "== h ==" (1) to "====== h ======" (5): each smaller than the one above, all between the title and the text. */
const HEADINGS: Style[] = [
  { size: 16, bold: true, before: 16, after: 6 },
  { size: 14, bold: true, before: 13, after: 5 },
  { size: 12.5, bold: true, before: 11, after: 4 },
  { size: 11.5, bold: true, before: 10, after: 4 },
  { size: 11, bold: true, before: 9, after: 3 },
];
const heading = (level: number): Style => HEADINGS[Math.min(Math.max(level, 1), HEADINGS.length) - 1]!;

const LINE_HEIGHT = 1.4;
const LIST_INDENT = 16;
const INK = rgb(0.1, 0.1, 0.1);
const GREY = rgb(0.4, 0.4, 0.4);
const LINK = rgb(0.05, 0.3, 0.7);

interface Piece extends Run {
  width: number;
  link?: string;
}

interface Line {
  pieces: Piece[];
  style: Style;
  indent: number;
  bullet?: boolean;
}

export interface RenderOptions {
  /** The document's creation date (default: now). */
  now?: Date;
  /** Asked before each block of text and before the document is written: true stops the render (RenderAbandoned). */
  abandoned?: () => boolean;
}

/** The render was given up (its `abandoned` said so): nobody waits for it any more. */
export class RenderAbandoned extends Error {
  constructor() {
    super("the render was abandoned");
    this.name = "RenderAbandoned";
  }
}

export async function renderPdf(article: PdfArticle, options: RenderOptions = {}): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const fonts = await FontSet.for(pdf);
  const w = new Writer(pdf, fonts, article.lang, options.abandoned);

  await w.block(article.title, STYLE.title);
  for (const section of article.sections) {
    if (section.heading) await w.block(section.heading, heading(section.level), { keepWithNext: true });
    for (const p of section.paragraphs) {
      const lines = p
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean);
      if (lines.length > 1) for (const item of lines) await w.block(item, STYLE.body, { bullet: true, after: 2 });
      else if (lines[0]) await w.block(lines[0], STYLE.body);
    }
  }

  // Attribution (D16): where the text comes from, under which license, what was changed.
  // Kept whole, so that it is all on the last page.
  const retrieved = article.retrievedAt.slice(0, 10);
  const credit = creditFor(article.project, article.lang, article.title);
  const attribution: [Parts, Style, BlockOptions][] = [
    ["Source and license", heading(1), {}],
    [
      [
        { text: `This document reproduces the text of the ${credit.article} (` },
        { text: article.url, link: article.url },
        { text: `), written by ${credit.authors}: revision ${article.revId} of ${article.timestamp.slice(0, 10)} (` },
        { text: article.permalink, link: article.permalink },
        { text: `), retrieved ${retrieved}.` },
      ],
      STYLE.small,
      {},
    ],
    [
      [
        { text: `It is available under the ${article.license.full_name} license (${article.license.name}): ` },
        { text: article.license.url, link: article.license.url },
        { text: ". You may share and adapt it if you credit the authors, link to the license and share alike." },
      ],
      STYLE.small,
      {},
    ],
    ["The text was modified from the original:", STYLE.small, { after: 2 }],
    ...[...article.modifications, ...cutNote(article), ...leftOut(article)].map((m): [Parts, Style, BlockOptions] => [
      m,
      STYLE.small,
      { bullet: true, after: 2 },
    ]),
  ];
  const laidOut = [];
  for (const [parts, style, opts] of attribution)
    laidOut.push({ lines: await w.lines(parts, style, opts), style, opts });
  w.ensure(laidOut.reduce((h, b) => h + w.heightOf(b.lines, b.style, b.opts), 0));
  for (const b of laidOut) w.place(b.lines, b.style, b.opts);

  w.footers(article.license);

  pdf.setTitle(article.title, { showInWindowTitleBar: true });
  pdf.setAuthor(credit.authors);
  pdf.setSubject(
    `${credit.article[0]!.toUpperCase()}${credit.article.slice(1)}, revision ${article.revId} (${article.url}); ${article.license.name}`,
  );
  pdf.setKeywords([article.sitename, article.title, article.license.name]);
  pdf.setLanguage(article.lang);
  pdf.setCreator("Tome");
  pdf.setProducer("Tome with pdf-lib");
  const now = options.now ?? new Date();
  pdf.setCreationDate(now);
  pdf.setModificationDate(now);
  w.goOn();
  return pdf.save();
}

/** D182: a text cut at the PDF's bound says where it stops, and where the rest is. */
function cutNote({ cut, url }: PdfArticle): string[] {
  if (!cut) return [];
  const n = (x: number) => x.toLocaleString("en");
  return [
    `Cut after ${n(cut.shown)} of the article's ${n(cut.total)} characters (a PDF holds at most ${n(cut.max)}): the article continues online at ${url}`,
  ];
}

/**
 * D177: the characters no font has are left out of the document, a change to the text the attribution must state:
 * how many, of which scripts. Without it a Korean or Arabic page was a blank PDF that said it reproduced the article.
 */
function leftOut(article: PdfArticle): string[] {
  const texts = [article.title, ...article.sections.flatMap((s) => [s.heading, ...s.paragraphs])];
  const { count, kinds } = undrawn(texts);
  if (count === 0) return [];
  const what = count === 1 ? "1 character" : `${count.toLocaleString("en")} characters`;
  return [`Left out ${what} that no font of this document has (${kinds.join(", ")}): the article online has them`];
}

type Parts = string | { text: string; link?: string }[];

interface BlockOptions {
  bullet?: boolean;
  keepWithNext?: boolean;
  after?: number;
}

/** Lays out blocks of text down the pages. */
class Writer {
  private page!: PDFPage;
  private y = 0;
  private readonly pages: PDFPage[] = [];
  private readonly breaker: LineBreaker;

  constructor(
    private readonly pdf: PDFDocument,
    private readonly fonts: FontSet,
    lang: string,
    private readonly abandoned: (() => boolean) | undefined,
  ) {
    this.breaker = new LineBreaker(lang);
    this.newPage();
  }

  /** Throws RenderAbandoned if the render has been given up. */
  goOn(): void {
    if (this.abandoned?.()) throw new RenderAbandoned();
  }

  private newPage(): void {
    this.page = this.pdf.addPage(A4);
    this.pages.push(this.page);
    this.y = A4[1] - MARGIN.top;
  }

  private lineHeight(style: Style): number {
    return style.size * LINE_HEIGHT;
  }

  /** The height lines take as one block. */
  heightOf(lines: Line[], style: Style, options: BlockOptions): number {
    return style.before + lines.length * this.lineHeight(style) + (options.after ?? style.after);
  }

  /** Starts a new page unless `height` fits on this one. */
  ensure(height: number): void {
    if (this.y - height < MARGIN.bottom && this.y !== A4[1] - MARGIN.top) this.newPage();
  }

  /** A block's text, wrapped into lines (its fonts embedded). */
  async lines(text: Parts, style: Style, options: BlockOptions = {}): Promise<Line[]> {
    this.goOn();
    const parts = typeof text === "string" ? [{ text }] : text;
    for (const p of parts) await this.fonts.prepare(p.text, style.bold);
    const indent = options.bullet ? LIST_INDENT : 0;
    return this.wrap(parts, style, TEXT_WIDTH - indent, indent);
  }

  async block(text: Parts, style: Style, options: BlockOptions = {}): Promise<void> {
    this.place(await this.lines(text, style, options), style, options);
  }

  /** Draws a block's lines down the page, starting a new page where they run out. */
  place(lines: Line[], style: Style, options: BlockOptions = {}): void {
    if (!lines.length) return;
    if (options.bullet) lines[0]!.bullet = true;
    const lh = this.lineHeight(style);
    if (this.y !== A4[1] - MARGIN.top) this.y -= style.before;
    // A heading stays with at least two lines of what follows.
    const need = options.keepWithNext ? lines.length * lh + 2 * this.lineHeight(STYLE.body) : lh;
    if (this.y - need < MARGIN.bottom) this.newPage();
    for (const line of lines) {
      if (this.y - lh < MARGIN.bottom) this.newPage();
      this.y -= lh;
      this.draw(line);
    }
    this.y -= options.after ?? style.after;
  }

  private draw(line: Line): void {
    const { size } = line.style;
    let x = MARGIN.side + line.indent;
    if (line.bullet) {
      const bullet = this.fonts.runs("•", false)[0];
      if (bullet) drawShaped(this.page, bullet.font, "•", { x: MARGIN.side + 4, y: this.y, size, color: INK });
    }
    for (const p of line.pieces) {
      const color = p.link ? LINK : INK;
      // Fill, then stroke the outline: bold for a family without a bold face.
      if (p.emboldened)
        this.page.pushOperators(
          pushGraphicsState(),
          setTextRenderingMode(TextRenderingMode.FillAndOutline),
          setLineWidth(size * 0.04),
          setStrokingColor(color),
        );
      drawShaped(this.page, p.font, p.text, { x, y: this.y, size, color });
      if (p.emboldened) this.page.pushOperators(popGraphicsState());
      if (p.link) this.linkArea(this.page, x, this.y - size * 0.25, p.width, size * 1.15, p.link);
      x += p.width;
    }
  }

  private linkArea(page: PDFPage, x: number, y: number, width: number, height: number, url: string): void {
    const annot = this.pdf.context.obj({
      Type: "Annot",
      Subtype: "Link",
      Rect: [x, y, x + width, y + height],
      Border: [0, 0, 0],
      // PDFString.of writes its text as it is: an unbalanced parenthesis (a title "Smile :)") would end the string early.
      A: { Type: "Action", S: "URI", URI: PDFString.of(url.replace(/[\\()]/g, "\\$&")) },
    });
    page.node.addAnnot(this.pdf.context.register(annot));
  }

  /** Breaks text into lines no wider than `width`: where LineBreaker allows, or inside a word too long for a line. */
  private wrap(parts: { text: string; link?: string }[], style: Style, width: number, indent: number): Line[] {
    const lines: Line[] = [];
    let pieces: Piece[] = [];
    let x = 0;
    let pendingSpace: Piece[] = [];
    const push = () => {
      if (pieces.length) lines.push({ pieces, style, indent });
      pieces = [];
      x = 0;
      pendingSpace = [];
    };
    const measure = (text: string, link?: string): Piece[] =>
      this.fonts.runs(text, style.bold).map((r) => ({ ...r, link, width: widthOf(r.font, r.text, style.size) }));
    const widthOfPieces = (ps: Piece[]) => ps.reduce((n, p) => n + p.width, 0);
    // The word the line ends with, while no space follows it: a part that starts right after
    // it (a link after "(") continues that word, and moves to the next line with it.
    let lastWord: Piece[] = [];
    for (const part of parts) {
      const clean = drawable(part.text);
      let first = true;
      for (const segment of this.breaker.units(clean)) {
        if (/^\s+$/.test(segment)) {
          if (x > 0) pendingSpace = measure(" ", part.link);
          lastWord = [];
          first = false;
          continue;
        }
        const glued = first ? lastWord : [];
        first = false;
        const word = measure(segment, part.link);
        const ww = widthOfPieces(word);
        const sw = widthOfPieces(pendingSpace);
        if (x > 0 && x + sw + ww > width) {
          const carried = glued.length < pieces.length ? glued : [];
          pieces.splice(pieces.length - carried.length);
          push();
          pieces.push(...carried);
          x = widthOfPieces(carried);
        } else if (x > 0) {
          pieces.push(...pendingSpace);
          x += sw;
        }
        pendingSpace = [];
        if (x + ww > width) {
          // A word (or a run of unspaced text) longer than a line: break between graphemes.
          for (const g of this.breaker.pieces(segment)) {
            const gp = measure(g, part.link);
            const gw = widthOfPieces(gp);
            if (x > 0 && x + gw > width) push();
            pieces.push(...gp);
            x += gw;
          }
          lastWord = [];
          continue;
        }
        pieces.push(...word);
        x += ww;
        lastWord = [...glued, ...word];
      }
    }
    push();
    return lines.map((l) => ({ ...l, pieces: merge(l.pieces) }));
  }

  /** "page N of M" and the license line on every page. */
  footers(license: { name: string; url: string }): void {
    const total = this.pages.length;
    const font = this.fonts.runs("a", false)[0]!.font;
    const size = STYLE.footer.size;
    this.pages.forEach((page, i) => {
      page.drawLine({
        start: { x: MARGIN.side, y: FOOTER_Y + 14 },
        end: { x: A4[0] - MARGIN.side, y: FOOTER_Y + 14 },
        thickness: 0.5,
        color: GREY,
      });
      const left = `${license.name} · ${license.url}`;
      drawShaped(page, font, left, { x: MARGIN.side, y: FOOTER_Y, size, color: GREY });
      const prefixWidth = widthOf(font, `${license.name} · `, size);
      const urlWidth = widthOf(font, license.url, size);
      this.linkArea(page, MARGIN.side + prefixWidth, FOOTER_Y - 2, urlWidth, size * 1.2, license.url);
      const right = `page ${i + 1} of ${total}`;
      drawShaped(page, font, right, {
        x: A4[0] - MARGIN.side - widthOf(font, right, size),
        y: FOOTER_Y,
        size,
        color: GREY,
      });
    });
  }
}

/**
 * Text as drawn: no control characters or soft hyphens, no-break spaces as spaces, the
 * no-break hyphen as a hyphen. fontkit gives one glyph one set of code points (those it was
 * first asked for), and pdf-lib's ToUnicode map follows it: when two characters share a
 * glyph, the text extracted from the PDF would show one of them for both.
 */
function drawable(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B-\u001F\u007F\u00AD]/g, "")
    .replace(/[\u00A0\u2007\u202F]/g, " ")
    .replace(/\u2011/g, "-")
    .replace(/\s+/g, " ");
}

/** Joins neighbouring pieces of one font and link, so each is drawn (and extracted) as one string. */
function merge(pieces: Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    const last = out.at(-1);
    if (last && last.font === p.font && last.emboldened === p.emboldened && last.link === p.link)
      out[out.length - 1] = { ...last, text: last.text + p.text, width: last.width + p.width };
    else out.push({ ...p });
  }
  return out;
}
