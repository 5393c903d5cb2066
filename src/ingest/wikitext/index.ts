/**
 * Wikitext → clean sections of plain-text blocks.
 * wtf_wikipedia does the parsing; formulas and lists are prepared for it beforehand
 * (./markup, ./lists), and this module removes what it leaves behind and drops the
 * sections that only list sources.
 */
import wtf from "wtf_wikipedia";
import { separateLists, TERM_END, TERM_START } from "./lists";
import { namespaceNormalizer, stripMarkup } from "./markup";
import { wikiNames } from "./namespaces";
import { isSourceSection } from "./sections";
import { installTemplates } from "./templates";
import { cleanText } from "./text";

export { countLeaks, findLeaks, LEAK_PATTERNS } from "./text";

/** A paragraph, or a list with one item per line. */
interface Block {
  list: boolean;
  text: string;
}

export interface ArticleSection {
  /** Heading text; "" for the intro. */
  heading: string;
  /** 0 for the intro, 1 for "== h ==", 2 for "=== h ===", and so on. */
  level: number;
  blocks: Block[];
}

export interface WikiContext {
  lang: string;
  /** Namespace name → key, from the dump's <siteinfo>. */
  namespaces: Map<string, number>;
}

export type Converter = (wikitext: string) => ArticleSection[];

/** A converter for one wiki: it knows that wiki's language and namespace names. */
export function makeConverter(wiki: WikiContext): Converter {
  installTemplates();
  const normalize = namespaceNormalizer(wikiNames(wiki.lang, wiki.namespaces));
  return (wikitext) => toSections(separateLists(stripMarkup(wikitext, normalize)), wiki.lang);
}

function toSections(wikitext: string, lang: string): ArticleSection[] {
  const doc = wtf(wikitext);
  const out: ArticleSection[] = [];
  let droppingBelow = Infinity;
  let first = true;
  for (const section of doc.sections()) {
    const isIntro = first && section.title() === "";
    first = false;
    const level = isIntro ? 0 : section.depth() + 1;
    if (level > droppingBelow) continue;
    droppingBelow = Infinity;
    const heading = isIntro ? "" : cleanText(section.title());
    if (!isIntro && isSourceSection(heading, lang)) {
      droppingBelow = level;
      continue;
    }
    const blocks: Block[] = [];
    for (const paragraph of section.paragraphs() as unknown as WtfParagraph[]) {
      const prose = cleanText(
        paragraph
          .sentences()
          .map((s) => s.text())
          .join(" ")
          .replace(TERM_LINE, "$1\n"),
      );
      if (hasWords(prose)) blocks.push({ list: false, text: prose });
      for (const list of paragraph.lists()) {
        const items = list
          .lines()
          .map((line) => cleanText(line.text()).replace(/\n+/g, " "))
          .filter(hasWords);
        if (items.length) blocks.push({ list: true, text: items.join("\n") });
      }
    }
    out.push({ heading, level, blocks });
  }
  return out;
}

/** The part of wtf_wikipedia's paragraph its type declarations leave loose. */
interface WtfParagraph {
  sentences(): { text(): string }[];
  lists(): { lines(): { text(): string }[] }[];
}

/** A definition term heading its paragraph (./lists): a line of its own above the text. */
const TERM_LINE = new RegExp(`${TERM_START}\\s*([^${TERM_END}]*?)\\s*${TERM_END}\\s*`, "g");

const WORD = /[\p{L}\p{N}]/u;
function hasWords(s: string): boolean {
  return WORD.test(s);
}
