/**
 * Text drawn as fontkit's shaper lays it out: the glyphs it chooses, each at the position it
 * gives (advance, and the x and y offsets GPOS gives marks and kerning). pdf-lib's own
 * drawText places glyphs by their advance widths alone, which leaves Bengali and Devanagari
 * vowel signs and marks off their base.
 *
 * Each glyph is shown through the embedded font (pdf-lib's encodeText, so the subset holds
 * every glyph drawn), with the x offsets as TJ adjustments and the y offsets as text rise.
 * A word whose glyphs do not read back as its text (reordered, shared or offset glyphs) is
 * wrapped in an /ActualText span, so that text extraction gives the source characters.
 */
import {
  beginText,
  endText,
  PDFOperator,
  PDFOperatorNames,
  popGraphicsState,
  pushGraphicsState,
  setFillingColor,
  setCharacterSpacing,
  setFontAndSize,
  setTextMatrix,
  setTextRise,
  type Color,
  type PDFFont,
  type PDFName,
  type PDFPage,
} from "pdf-lib";

interface Glyph {
  id: number;
  advanceWidth: number;
  codePoints: number[];
}
interface Position {
  xAdvance: number;
  xOffset: number;
  yOffset: number;
}
type Layout = (text: string, features?: unknown) => { glyphs: Glyph[]; positions: Position[] };
interface Fontkit {
  layout: Layout;
  unitsPerEm: number;
}

/** One word (or one space) laid out, in font units. */
interface Word {
  text: string;
  glyphs: Glyph[];
  positions: Position[];
  /** The pen's move over the word: the sum of the shaper's advances. */
  advance: number;
  /** The glyphs' codes in the embedded subset (hex, as pdf-lib encodes them), filled when first drawn. */
  codes?: string[];
  /** Extraction from the glyphs would not give `text`, or a glyph is moved off its pen position. */
  actual: boolean;
}

interface Shaper {
  fk: Fontkit;
  words: Map<string, Word>;
  /** Per page, the name the page's resources give this font. */
  keys: WeakMap<PDFPage, PDFName>;
}

const shapers = new WeakMap<PDFFont, Shaper>();

const fontkitOf = (font: PDFFont) => (font as unknown as { embedder: { font: Fontkit } }).embedder.font;

/** Shaping never crosses a space. */
const parts = (text: string) => text.split(/(?<= )|(?= )/);

/**
 * Caches `font`'s layouts by word: fontkit's layout is slow, and pdf-lib lays out every
 * string it encodes or measures. Call once, when the font is embedded.
 */
export function shapeByWord(font: PDFFont): void {
  const fk = fontkitOf(font);
  const layout = fk.layout.bind(fk);
  const shaper: Shaper = { fk, words: new Map(), keys: new WeakMap() };
  shapers.set(font, shaper);
  fk.layout = (text, features) => {
    const glyphs: Glyph[] = [];
    const positions: Position[] = [];
    for (const part of parts(text)) {
      let w = shaper.words.get(part);
      if (!w) {
        const laid = layout(part, features);
        const extracted = laid.glyphs.map((g) => String.fromCodePoint(...g.codePoints)).join("");
        w = {
          text: part,
          glyphs: laid.glyphs,
          positions: laid.positions,
          advance: laid.positions.reduce((n, p) => n + p.xAdvance, 0),
          actual: extracted !== part || laid.positions.some((p) => p.xOffset !== 0 || p.yOffset !== 0),
        };
        shaper.words.set(part, w);
      }
      glyphs.push(...w.glyphs);
      positions.push(...w.positions);
    }
    return { glyphs, positions };
  };
}

function shaperOf(font: PDFFont): Shaper {
  const s = shapers.get(font);
  if (!s) throw new Error(`font ${font.name} was not set up with shapeByWord`);
  return s;
}

function words(font: PDFFont, text: string): Word[] {
  const s = shaperOf(font);
  return parts(text).map((part) => {
    let w = s.words.get(part);
    if (!w) {
      s.fk.layout(part);
      w = s.words.get(part)!;
    }
    return w;
  });
}

/** The width of `text` at `size`, by the shaper's advances (kerning included). */
export function widthOf(font: PDFFont, text: string, size: number): number {
  let units = 0;
  for (const w of words(font, text)) units += w.advance;
  return (units * size) / shaperOf(font).fk.unitsPerEm;
}

const num = (n: number) => String(Math.round(n * 1000) / 1000);

/** UTF-16BE with a byte order mark, as a PDF hex string. */
function textString(text: string): string {
  let hex = "<FEFF";
  for (let i = 0; i < text.length; i++) hex += text.charCodeAt(i).toString(16).padStart(4, "0");
  return `${hex}>`;
}

/**
 * Draws `text` in `font` with its baseline starting at (x, y): each glyph at the position the
 * shaper gives it.
 */
export function drawShaped(
  page: PDFPage,
  font: PDFFont,
  text: string,
  at: { x: number; y: number; size: number; color: Color },
): void {
  const s = shaperOf(font);
  let key = s.keys.get(page);
  if (!key) {
    key = page.node.newFontDictionary(font.name, font.ref);
    s.keys.set(page, key);
  }
  const toText = at.size / s.fk.unitsPerEm;
  // A TJ number moves the pen left by thousandths of the font size.
  const adjust = 1000 / s.fk.unitsPerEm;
  const ops: PDFOperator[] = [
    pushGraphicsState(),
    beginText(),
    setFillingColor(at.color),
    setFontAndSize(key, at.size),
    setTextMatrix(1, 0, 0, 1, at.x, at.y),
  ];
  let shown = "";
  let rise = 0;
  // How far the pen must move, in font units, before the next glyph: where the shaper puts it,
  // less where showing the last one (by its width in the font) left it.
  let move = 0;
  const flush = () => {
    if (shown) ops.push(PDFOperator.of(PDFOperatorNames.ShowTextAdjusted, [`[${shown}]`]));
    shown = "";
  };
  for (const w of words(font, text)) {
    w.codes ??= (font.encodeText(w.text).toString().slice(1, -1).match(/.{4}/g) ?? []) as string[];
    if (w.actual) {
      flush();
      ops.push(
        PDFOperator.of(PDFOperatorNames.BeginMarkedContentSequence, ["/Span", `<</ActualText ${textString(w.text)}>>`]),
      );
    }
    w.glyphs.forEach((g, i) => {
      const p = w.positions[i]!;
      move += p.xOffset;
      const r = p.yOffset * toText;
      if (r !== rise) {
        flush();
        ops.push(setTextRise(Math.round(r * 1000) / 1000));
        rise = r;
      }
      if (move !== 0) shown += num(-move * adjust);
      move = p.xAdvance - p.xOffset - g.advanceWidth;
      // Poppler ends an /ActualText span where its last glyph ends: one left short of the pen
      // (a mark drawn back over its base) leaves a gap read as a space before what follows.
      // Character spacing on that glyph moves the pen as the TJ number would, and widens it.
      if (w.actual && i === w.glyphs.length - 1 && move !== 0) {
        flush();
        ops.push(setCharacterSpacing(Math.round(move * toText * 1000) / 1000));
        ops.push(PDFOperator.of(PDFOperatorNames.ShowTextAdjusted, [`[<${w.codes![i]}>]`]));
        ops.push(setCharacterSpacing(0));
        move = 0;
      } else shown += `<${w.codes![i]}>`;
    });
    if (w.actual) {
      flush();
      ops.push(PDFOperator.of(PDFOperatorNames.EndMarkedContent));
    }
  }
  flush();
  ops.push(endText(), popGraphicsState());
  page.pushOperators(...ops);
}
