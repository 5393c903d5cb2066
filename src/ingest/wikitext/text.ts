/**
 * Cleans the plain text wtf_wikipedia produces: decodes entities, drops markup it left
 * behind, and removes the traces that removed markup leaves in prose, such as "()",
 * "( , )", ",," or " ,".
 */
import { decodeHTML } from "entities";
import { withoutSoftHyphens } from "../../scripts";
import { ARTIFACT_PATTERNS } from "./artifacts";
import { TERM_END, TERM_START } from "./lists";
import { IDEOGRAPHIC_STOP, STOP_PLACEHOLDER } from "./markup";

const LEFTOVER_TAG = /<\/?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?\/?>/g;
const LEFTOVER_TEMPLATE = /\{\{[^{}]*\}\}/g;
const WIKI_TOKENS = /\{\{|\}\}|\[\[|\]\]|\{\||\|\}|'{2,}/g;
/** Brackets holding nothing but punctuation, spaces and dashes: what is left where markup was. */
const EMPTY_BRACKETS = /[(（]\s*(?:[,，、;；:：.。\-–—/|·]\s*)*[)）]|\[\s*(?:[,;:.\-–—/|]\s*)*\]/g;
const SPACE_BEFORE_PUNCT = /[ \t\u00a0]+([,.;:!?)\]}，、。；：）])/g;
const SPACE_AFTER_OPEN = /([([（])[ \t\u00a0]+/g;
const REPEATED_COMMA = /([,，、])(?:\s*[,，、])+/g;
const COMMA_BEFORE_STOP = /[,，、;]\s*([.。!?)）])/g;
const OPEN_THEN_COMMA = /([(（])\s*[,，、;]\s*/g;
/** Quotes left empty where a template inside them was dropped. */
const EMPTY_QUOTES = /«\s*»|„\s*“|“\s*”|(?<=\s)""(?=[\s,.;:])/g;
/**
 * Table cell attributes wtf leaves when a table is malformed. An unquoted value runs to the next space or
 * bar, so that a run of attributes splits one way only: "a=a=a=…" split every way took seconds at 26 of them.
 */
const CELL_ATTRIBUTE = String.raw`[a-z-]+\s*=\s*(?:"[^"]*"|[^\s|"]+(?=[\s|])|(?=\|))\s*`;
const CELL_ATTRIBUTES = new RegExp(String.raw`(?:^|\s)(?:${CELL_ATTRIBUTE}){1,16}\|(?!\|)`, "gim");
/** List markers of nested or malformed lists. */
const LINE_MARKERS = /^[*#:;]+\s*/gm;
const SPACES = /[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+/g;

export function cleanText(raw: string): string {
  let s = raw.replaceAll(STOP_PLACEHOLDER, IDEOGRAPHIC_STOP).replaceAll(TERM_START, "").replaceAll(TERM_END, "");
  s = withoutSoftHyphens(decodeHTML(s));
  s = s.replace(LEFTOVER_TAG, " ");
  for (let i = 0; i < 3 && s.includes("{{"); i++) s = s.replace(LEFTOVER_TEMPLATE, "");
  s = s.replace(WIKI_TOKENS, "");
  s = s.replace(CELL_ATTRIBUTES, " ");
  s = s.replace(LINE_MARKERS, "");
  s = s.replace(SPACES, " ");
  // Each pass can expose another empty pair, e.g. "( () )".
  for (let i = 0; i < 3; i++) {
    const before = s;
    s = s.replace(WIKI_TOKENS, "");
    s = s.replace(EMPTY_BRACKETS, "");
    s = s.replace(EMPTY_QUOTES, "");
    s = s.replace(OPEN_THEN_COMMA, "$1");
    s = s.replace(COMMA_BEFORE_STOP, "$1");
    s = s.replace(REPEATED_COMMA, "$1");
    s = s.replace(SPACE_BEFORE_PUNCT, "$1");
    s = s.replace(SPACE_AFTER_OPEN, "$1");
    s = s.replace(SPACES, " ");
    if (s === before) break;
  }
  return s
    .split("\n")
    .map((line) => line.trim())
    .join("\n")
    .replace(/^[,;:，、]\s*/, "")
    .trim();
}

/**
 * What must never reach a chunk: markup, and the words JavaScript writes for a missing
 * value (./artifacts). Counted by tests and by `bun run leaks`.
 */
export const LEAK_PATTERNS: readonly string[] = [
  "{{",
  "}}",
  "[[",
  "]]",
  "<ref",
  "</",
  "{|",
  "|}",
  "'''",
  "&nbsp;",
  "&amp;",
  "()",
  ...Object.keys(ARTIFACT_PATTERNS),
];

const EMPTY_PARENS = /\(\s*\)/;

/** How often artifact word `p` occurs in `text`; for markup, 1 when it occurs at all. */
function occurrences(p: string, text: string): number {
  const artifact = ARTIFACT_PATTERNS[p];
  if (artifact) return text.match(artifact)?.length ?? 0;
  if (p === "()") return EMPTY_PARENS.test(text) ? 1 : 0;
  return text.includes(p) ? 1 : 0;
}

/** The leak patterns found in a text (each at most once). */
export function findLeaks(text: string): string[] {
  return LEAK_PATTERNS.filter((p) => occurrences(p, text) > 0);
}

/**
 * How many texts contain each leak pattern; every pattern is listed, 0 included.
 * `authored` is how often the wikitext of the page the texts come from holds each artifact
 * word: that many of them are the page's own words ("some undefined position"), not leaks.
 */
export function countLeaks(texts: Iterable<string>, authored?: ReadonlyMap<string, number>): Record<string, number> {
  const counts = Object.fromEntries(LEAK_PATTERNS.map((p) => [p, 0])) as Record<string, number>;
  const allowance = new Map(authored);
  for (const text of texts) {
    for (const p of LEAK_PATTERNS) {
      const n = occurrences(p, text);
      if (!n) continue;
      const allowed = allowance.get(p) ?? 0;
      allowance.set(p, Math.max(0, allowed - n));
      if (n > allowed) counts[p]!++;
    }
  }
  return counts;
}
