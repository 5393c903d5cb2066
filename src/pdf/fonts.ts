/**
 * Fonts: the Noto families from npm, chosen per run of text by which font has the glyphs
 * (Noto Sans for Latin, Vietnamese, Greek, Cyrillic and Devanagari; then Armenian, Bengali,
 * Japanese). Each is embedded subsetted, and only if the document uses it.
 */
// @pdf-lib/fontkit's Indic shaper (Bengali, Devanagari) expects Babel's regenerator runtime as a global.
import "regenerator-runtime/runtime";
import fontkit from "@pdf-lib/fontkit";
import type { PDFDocument, PDFFont } from "pdf-lib";
import { readFileSync } from "node:fs";
import { shapeByWord } from "./glyphs";
import notoSansLatinRegular from "@fontsource/noto-sans/files/noto-sans-latin-400-normal.woff" with { type: "file" };
import notoSansLatinBold from "@fontsource/noto-sans/files/noto-sans-latin-700-normal.woff" with { type: "file" };
import notoSansLatinExtRegular from "@fontsource/noto-sans/files/noto-sans-latin-ext-400-normal.woff" with {
  type: "file",
};
import notoSansLatinExtBold from "@fontsource/noto-sans/files/noto-sans-latin-ext-700-normal.woff" with {
  type: "file",
};
import notoSansVietnameseRegular from "@fontsource/noto-sans/files/noto-sans-vietnamese-400-normal.woff" with {
  type: "file",
};
import notoSansVietnameseBold from "@fontsource/noto-sans/files/noto-sans-vietnamese-700-normal.woff" with {
  type: "file",
};
import notoSansGreekRegular from "@fontsource/noto-sans/files/noto-sans-greek-400-normal.woff" with { type: "file" };
import notoSansGreekBold from "@fontsource/noto-sans/files/noto-sans-greek-700-normal.woff" with { type: "file" };
import notoSansGreekExtRegular from "@fontsource/noto-sans/files/noto-sans-greek-ext-400-normal.woff" with {
  type: "file",
};
import notoSansGreekExtBold from "@fontsource/noto-sans/files/noto-sans-greek-ext-700-normal.woff" with {
  type: "file",
};
import notoSansCyrillicRegular from "@fontsource/noto-sans/files/noto-sans-cyrillic-400-normal.woff" with {
  type: "file",
};
import notoSansCyrillicBold from "@fontsource/noto-sans/files/noto-sans-cyrillic-700-normal.woff" with { type: "file" };
import notoSansCyrillicExtRegular from "@fontsource/noto-sans/files/noto-sans-cyrillic-ext-400-normal.woff" with {
  type: "file",
};
import notoSansCyrillicExtBold from "@fontsource/noto-sans/files/noto-sans-cyrillic-ext-700-normal.woff" with {
  type: "file",
};
import notoSansDevanagariRegular from "@fontsource/noto-sans/files/noto-sans-devanagari-400-normal.woff" with {
  type: "file",
};
import notoSansDevanagariBold from "@fontsource/noto-sans/files/noto-sans-devanagari-700-normal.woff" with {
  type: "file",
};
import notoSansArmenianRegular from "@expo-google-fonts/noto-sans-armenian/400Regular/NotoSansArmenian_400Regular.ttf" with {
  type: "file",
};
import notoSansArmenianBold from "@expo-google-fonts/noto-sans-armenian/700Bold/NotoSansArmenian_700Bold.ttf" with {
  type: "file",
};
import notoSansBengaliRegular from "@expo-google-fonts/noto-sans-bengali/400Regular/NotoSansBengali_400Regular.ttf" with {
  type: "file",
};
import notoSansBengaliBold from "@expo-google-fonts/noto-sans-bengali/700Bold/NotoSansBengali_700Bold.ttf" with {
  type: "file",
};
import notoSansJpRegular from "@expo-google-fonts/noto-sans-jp/400Regular/NotoSansJP_400Regular.ttf" with {
  type: "file",
};

interface Family {
  name: string;
  regular: string;
  /** Without one, bold text is the regular face drawn with its outline stroked (Run.emboldened). */
  bold?: string;
}

/**
 * Noto Sans as Google Fonts cuts it by script (@fontsource: unhinted WOFF; the hinted TTF
 * of Noto Sans loses glyphs when fontkit subsets it), then Armenian, Bengali and Japanese.
 * Japanese has no bold: fontkit's subset of NotoSansJP Bold leaves a third of a heading's
 * glyphs undecodable, drawn as nothing (the title 音楽 and the heading 定義 were blank).
 * Imported as files: paths into node_modules when run from source, into the executable
 * when compiled (bun run compile).
 */
const FAMILIES: Family[] = [
  { name: "NotoSans latin", regular: notoSansLatinRegular, bold: notoSansLatinBold },
  { name: "NotoSans latin-ext", regular: notoSansLatinExtRegular, bold: notoSansLatinExtBold },
  { name: "NotoSans vietnamese", regular: notoSansVietnameseRegular, bold: notoSansVietnameseBold },
  { name: "NotoSans greek", regular: notoSansGreekRegular, bold: notoSansGreekBold },
  { name: "NotoSans greek-ext", regular: notoSansGreekExtRegular, bold: notoSansGreekExtBold },
  { name: "NotoSans cyrillic", regular: notoSansCyrillicRegular, bold: notoSansCyrillicBold },
  { name: "NotoSans cyrillic-ext", regular: notoSansCyrillicExtRegular, bold: notoSansCyrillicExtBold },
  { name: "NotoSans devanagari", regular: notoSansDevanagariRegular, bold: notoSansDevanagariBold },
  { name: "NotoSansArmenian", regular: notoSansArmenianRegular, bold: notoSansArmenianBold },
  { name: "NotoSansBengali", regular: notoSansBengaliRegular, bold: notoSansBengaliBold },
  { name: "NotoSansJP", regular: notoSansJpRegular },
];

interface LoadedFace {
  bytes: Uint8Array;
  /** For glyph coverage (fontkit's own parse of the file). */
  coverage: { hasGlyphForCodePoint(cp: number): boolean };
}

let faces: { regular: LoadedFace; bold: LoadedFace | undefined }[] | undefined;

/** Reads every font once per process (about 11 MB, most of it Japanese): at a render worker's start, else at first use. */
export function loadFaces() {
  faces ??= FAMILIES.map((f) => {
    const load = (path: string): LoadedFace => {
      const bytes = new Uint8Array(readFileSync(path));
      return { bytes, coverage: fontkit.create(bytes) as unknown as LoadedFace["coverage"] };
    };
    return { regular: load(f.regular), bold: f.bold ? load(f.bold) : undefined };
  });
  return faces;
}

/** family index of each code point asked about: the first family that has it; -1 for none. */
const familyOf = new Map<number, number>();

function familyFor(cp: number): number {
  let f = familyOf.get(cp);
  if (f === undefined) {
    f = loadFaces().findIndex((face) => face.regular.coverage.hasGlyphForCodePoint(cp));
    familyOf.set(cp, f);
  }
  return f;
}

/** Whether some font can draw this character (others are left out of the PDF). */
export function canRender(char: string): boolean {
  return familyFor(char.codePointAt(0)!) >= 0;
}

/** Scripts of wikis no font here draws, by name when a PDF leaves their letters out (D177). */
const UNDRAWN_SCRIPTS = [
  "Arabic",
  "Hebrew",
  "Hangul",
  "Han",
  "Thai",
  "Lao",
  "Khmer",
  "Myanmar",
  "Georgian",
  "Ethiopic",
  "Tibetan",
  "Sinhala",
  "Tamil",
  "Telugu",
  "Kannada",
  "Malayalam",
  "Gujarati",
  "Gurmukhi",
  "Oriya",
  "Syriac",
  "Thaana",
  "Mongolian",
  "Cherokee",
  "Canadian_Aboriginal",
  "Tifinagh",
  "Javanese",
  "Ol_Chiki",
  "Nko",
  "Yi",
  "Coptic",
  "Gothic",
  "Runic",
].map((name) => ({ name: name.replace("_", " "), pattern: new RegExp(`^\\p{Script=${name}}$`, "u") }));

const SYMBOLS = "emoji and other symbols";
/** Letters of a script not in the list, or of none (mathematical 𝔘), and digits or punctuation so left out. */
const OTHERS = "other characters";
/** What a reader misses when it is left out: letters, digits, punctuation, symbols (not marks, joiners or spaces). */
const CONTENT = /^[\p{L}\p{N}\p{P}\p{S}]$/u;

/**
 * Each code point's kind when left out (null: drawn, or nothing a reader misses), found once: up to 34 patterns a
 * character made 150,000 characters of Hangul, Ethiopic and 𝔘 cost 110 ms a render.
 */
const kindOf = new Map<number, string | null>();

function kindFor(ch: string): string | null {
  const cp = ch.codePointAt(0)!;
  let kind = kindOf.get(cp);
  if (kind === undefined) {
    kind =
      canRender(ch) || !CONTENT.test(ch)
        ? null
        : (UNDRAWN_SCRIPTS.find((s) => s.pattern.test(ch))?.name ?? (/^\p{S}$/u.test(ch) ? SYMBOLS : OTHERS));
    kindOf.set(cp, kind);
  }
  return kind;
}

/**
 * The characters of these texts that no font has, which the PDF leaves out (D177): how many, and what they are, by
 * script (then SYMBOLS and OTHERS).
 */
export function undrawn(texts: Iterable<string>): { count: number; kinds: string[] } {
  let count = 0;
  const kinds = new Set<string>();
  for (const text of texts)
    for (const ch of text) {
      const kind = kindFor(ch);
      if (kind === null) continue;
      count++;
      kinds.add(kind);
    }
  const named = [...kinds].filter((k) => k !== SYMBOLS && k !== OTHERS).sort();
  return { count, kinds: [...named, ...[SYMBOLS, OTHERS].filter((k) => kinds.has(k))] };
}

export interface Run {
  text: string;
  font: PDFFont;
  /** Bold asked of a family without a bold face: draw the regular one with its outline stroked. */
  emboldened: boolean;
}

/** The face drawn for a family's regular or bold text: its bold, or its regular to be stroked. */
function faceFor(family: number, bold: boolean): { key: string; face: LoadedFace; emboldened: boolean } {
  const faces = loadFaces()[family]!;
  if (bold && faces.bold) return { key: `${family}b`, face: faces.bold, emboldened: false };
  return { key: `${family}r`, face: faces.regular, emboldened: bold };
}

/** The fonts of one document: which family covers a character, embedded on first use. */
export class FontSet {
  private readonly embedded = new Map<string, PDFFont>();

  private constructor(private readonly pdf: PDFDocument) {}

  static async for(pdf: PDFDocument): Promise<FontSet> {
    pdf.registerFontkit(fontkit);
    loadFaces();
    const set = new FontSet(pdf);
    await set.font(0, false);
    await set.font(0, true);
    return set;
  }

  private async font(family: number, bold: boolean): Promise<PDFFont> {
    const { key, face } = faceFor(family, bold);
    let f = this.embedded.get(key);
    if (!f) {
      f = await this.pdf.embedFont(face.bytes, { subset: true });
      shapeByWord(f);
      this.embedded.set(key, f);
    }
    return f;
  }

  /** Embeds what `text` needs (call before runs()). */
  async prepare(text: string, bold: boolean): Promise<void> {
    const needed = new Set<number>();
    for (const ch of text) {
      const f = familyFor(ch.codePointAt(0)!);
      if (f > 0) needed.add(f);
    }
    for (const f of needed) await this.font(f, bold);
  }

  /**
   * Splits text into runs of one font each. Spaces stay with the run they are in; characters
   * no font has are dropped.
   */
  runs(text: string, bold: boolean): Run[] {
    const out: Run[] = [];
    let current = -1;
    let buf = "";
    const flush = () => {
      if (buf) {
        const { key, emboldened } = faceFor(current, bold);
        out.push({ text: buf, font: this.embedded.get(key)!, emboldened });
      }
      buf = "";
    };
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      let f = familyFor(cp);
      // Left out rather than drawn as a box.
      if (f < 0) continue;
      // A space continues the current run; anything else takes the first font that has it (a
      // script's subset may map common punctuation without a usable glyph).
      if (current >= 0 && f !== current && cp === 0x20) f = current;
      if (f !== current) {
        flush();
        current = f;
      }
      buf += ch;
    }
    flush();
    return out;
  }
}
