/**
 * Cuts an article's sections into passages. Chunks never cross a section; whole blocks
 * (paragraphs, lists) are packed up to a word budget; a block over the budget is split at
 * sentence ends (list items first), and a sentence over it at word boundaries.
 */
import { UNSPACED } from "../scripts";
import type { ArticleSection } from "./wikitext";

export interface SectionHead {
  heading: string;
  level: number;
}

export interface Chunk {
  /** Index into the page's sections. */
  section: number;
  text: string;
}

/**
 * Scripts written without spaces count by characters: two of them weigh one word, so a
 * 300-word budget holds about 600 Japanese characters.
 */
const UNSPACED_CHARS_PER_WORD = 2;

function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export function wordCount(text: string): number {
  let n = 0;
  for (const token of text.split(/\s+/)) {
    if (!token) continue;
    // A run mixing unspaced script with digits or Latin letters is weighed by all its characters.
    n += UNSPACED.test(token) ? Math.ceil(charLength(token) / UNSPACED_CHARS_PER_WORD) : 1;
  }
  return n;
}

const sentences = new Intl.Segmenter(undefined, { granularity: "sentence" });

function splitSentences(text: string): string[] {
  return Array.from(sentences.segment(text), (s) => s.segment.trim()).filter(Boolean);
}

/** Splits a piece over the budget at word boundaries (characters, for unspaced scripts). */
function splitHard(text: string, budget: number): string[] {
  const out: string[] = [];
  let current = "";
  let size = 0;
  for (const token of text.split(/(\s+)/)) {
    if (!token.trim()) {
      if (current) current += " ";
      continue;
    }
    const w = wordCount(token);
    if (w > budget) {
      // One unspaced run longer than the budget: cut it by characters.
      if (current.trim()) out.push(current.trim());
      const step = budget * UNSPACED_CHARS_PER_WORD;
      const chars = Array.from(token);
      for (let i = 0; i < chars.length; i += step) out.push(chars.slice(i, i + step).join(""));
      current = "";
      size = 0;
      continue;
    }
    if (size + w > budget && current.trim()) {
      out.push(current.trim());
      current = "";
      size = 0;
    }
    current += token;
    size += w;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

function pack(parts: string[], joiner: string, budget: number, emit: (text: string) => void): void {
  let current: string[] = [];
  let size = 0;
  const flush = () => {
    if (current.length) emit(current.join(joiner));
    current = [];
    size = 0;
  };
  for (const part of parts) {
    const w = wordCount(part);
    if (w > budget) {
      flush();
      // A list item over the budget is split at its sentences; a sentence at its words.
      if (joiner === "\n") pack(splitSentences(part), " ", budget, emit);
      else for (const piece of splitHard(part, budget)) emit(piece);
      continue;
    }
    if (size + w > budget) flush();
    current.push(part);
    size += w;
  }
  flush();
}

export function chunkSections(
  sections: ArticleSection[],
  budget: number,
): { sections: SectionHead[]; chunks: Chunk[] } {
  const heads: SectionHead[] = [];
  const chunks: Chunk[] = [];
  sections.forEach((section, index) => {
    heads.push({ heading: section.heading, level: section.level });
    let current: string[] = [];
    let size = 0;
    const flush = () => {
      if (current.length) chunks.push({ section: index, text: current.join("\n\n") });
      current = [];
      size = 0;
    };
    for (const block of section.blocks) {
      const w = wordCount(block.text);
      if (w > budget) {
        flush();
        const emit = (text: string) => chunks.push({ section: index, text });
        if (block.list) pack(block.text.split("\n"), "\n", budget, emit);
        else pack(splitSentences(block.text), " ", budget, emit);
        continue;
      }
      if (size + w > budget) flush();
      current.push(block.text);
      size += w;
    }
    flush();
  });
  return { sections: heads, chunks };
}
