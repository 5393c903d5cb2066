/**
 * Markup handled before wtf_wikipedia parses the page: formulas (<math>, <chem>) become
 * plain text, as wtf would drop them and leave a hole in the sentence; extension tags
 * whose content is not prose (galleries, code, maps...) and references, which wtf would
 * otherwise leave as stray punctuation, are removed.
 */
import { escapeRegExp } from "../../scripts";
import { chemToText } from "./chem";
import { texToText } from "./tex";

/** Tags dropped with everything inside them. */
const DROPPED_TAGS = [
  "ref",
  "references",
  "score",
  "timeline",
  "graph",
  "mapframe",
  "maplink",
  "gallery",
  "imagemap",
  "templatedata",
  "syntaxhighlight",
  "source",
  "code",
  "pre",
  "noinclude",
  "includeonly",
  "hiero",
  "inputbox",
  "categorytree",
  "section",
  "indicator",
];

const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
const NOWIKI_SELF_CLOSING = /^<nowiki\s*\/>$/i;
const MAGIC_WORDS = /__[A-ZÀ-ÿ\p{Lu}]+__/gu;

/** Characters wtf would read as markup; "&" too in text that holds no entities (formulas). */
const WIKI_SYNTAX = /[[\]{}|'<>*#:;=]/g;
const WIKI_SYNTAX_OR_AMPERSAND = /[[\]{}|'<>*#:;=&]/g;
/** Written as numeric entities, which wtf leaves alone and cleanText decodes. */
const asEntity = (c: string) => `&#${c.charCodeAt(0)};`;

/** Japanese full stops survive wtf's sentence splitter only when hidden from it. */
export const IDEOGRAPHIC_STOP = "\u3002";
export const STOP_PLACEHOLDER = "\uE000";

/** Namespace names of the wiki that wtf_wikipedia may not know in this language. */
export interface WikiNames {
  /** Names of namespace 6 (File), local and English. */
  file: string[];
  /** Names of namespace 14 (Category). */
  category: string[];
}

/** Rewrites "[[চিত্র:x.jpg|…]]" as "[[File:x.jpg|…]]" so wtf removes it as it removes English ones. */
export function namespaceNormalizer(names: WikiNames): (s: string) => string {
  const alt = (list: string[]) =>
    list
      .filter(Boolean)
      .map((n) => escapeRegExp(n).replace(/[ _]/g, "[ _]"))
      .join("|");
  const file = alt(names.file);
  const category = alt(names.category);
  const fileRe = file ? new RegExp(`\\[\\[\\s*(?:${file})\\s*:`, "giu") : null;
  const categoryRe = category ? new RegExp(`\\[\\[\\s*(?:${category})\\s*:`, "giu") : null;
  return (s) => {
    if (fileRe) s = s.replace(fileRe, "[[File:");
    if (categoryRe) s = s.replace(categoryRe, "[[Category:");
    return s;
  };
}

const drop = () => "";
const keep = (tag: string) => tag;

export function stripMarkup(wikitext: string, normalizeNamespaces: (s: string) => string = (s) => s): string {
  let s = normalizeNamespaces(wikitext.replace(COMMENT, ""));
  s = replaceTags(s, ["math"], (tex) => texToText(tex).replace(WIKI_SYNTAX_OR_AMPERSAND, asEntity), keep);
  s = replaceTags(s, ["chem", "ce"], (f) => chemToText(f).replace(WIKI_SYNTAX_OR_AMPERSAND, asEntity), keep);
  // Formula tags never closed, or empty ones: dropped alone.
  s = replaceTags(s, [], drop, drop, ["math", "chem", "ce"]);
  // A tag never closed (truncated revisions, typos) would swallow nothing: it is dropped alone.
  s = replaceTags(s, DROPPED_TAGS, drop, drop, ["templatestyles"]);
  // nowiki content is literal text; escape what wtf would read as markup.
  s = replaceTags(
    s,
    ["nowiki"],
    (inner) => inner.replace(WIKI_SYNTAX, asEntity),
    (tag) => (NOWIKI_SELF_CLOSING.test(tag) ? "" : tag),
  );
  s = s.replace(MAGIC_WORDS, "");
  s = dropFileLinks(s);
  return s.replaceAll(IDEOGRAPHIC_STOP, STOP_PLACEHOLDER);
}

/**
 * Each `<name …>…</name>` of the `paired` names (any case) replaced by pair(inner), to its first closing tag; a
 * tag of these or of the `alone` names that is self-closing, closing or never closed, by lone(tag). In one pass, as
 * MediaWiki's preprocessor reads tags: the closing tags of each name are looked up in order from where the last look
 * stopped, and where no `>` is left no tag is. (A regex per pair searched to the end again from every unclosed tag:
 * 100 KB of them took seconds.)
 */
function replaceTags(
  s: string,
  paired: string[],
  pair: (inner: string) => string,
  lone: (tag: string) => string,
  alone: string[] = [],
): string {
  const opening = new RegExp(`<(/?)(${[...paired, ...alone].join("|")})\\b`, "gi");
  const closers = new Map<string, { at: number[]; end: number[]; next: number }>();
  if (paired.length) {
    for (const m of s.matchAll(new RegExp(`</(${paired.join("|")})\\s*>`, "gi"))) {
      const name = m[1]!.toLowerCase();
      let c = closers.get(name);
      if (!c) closers.set(name, (c = { at: [], end: [], next: 0 }));
      c.at.push(m.index);
      c.end.push(m.index + m[0].length);
    }
  }
  let out = "";
  let from = 0;
  let gt = -1;
  for (let m = opening.exec(s); m; m = opening.exec(s)) {
    if (gt < m.index) gt = s.indexOf(">", m.index);
    if (gt < 0) break;
    let end = gt + 1;
    let replacement: string | undefined;
    const c = m[1] || s[gt - 1] === "/" ? undefined : closers.get(m[2]!.toLowerCase());
    if (c) {
      while (c.next < c.at.length && c.at[c.next]! < end) c.next++;
      if (c.next < c.at.length) {
        replacement = pair(s.slice(end, c.at[c.next]));
        end = c.end[c.next]!;
      }
    }
    out += s.slice(from, m.index) + (replacement ?? lone(s.slice(m.index, end)));
    from = opening.lastIndex = end;
  }
  return out + s.slice(from);
}

/**
 * Removes "[[File:…]]" links with their captions, however deeply the caption nests links
 * and templates. An unclosed one (broken wikitext) is dropped to the end of its line.
 */
function dropFileLinks(s: string): string {
  let at = s.indexOf(FILE_LINK);
  if (at < 0) return s;
  const ends = fileLinkEnds(s, at);
  let out = "";
  let from = 0;
  while (at >= 0) {
    out += s.slice(from, at);
    let end = ends.get(at);
    if (end === undefined) {
      const eol = s.indexOf("\n", at);
      end = eol < 0 ? s.length : eol;
    }
    from = end;
    at = s.indexOf(FILE_LINK, from);
  }
  return out + s.slice(from);
}

const FILE_LINK = "[[File:";

/**
 * Where each "[[File:" from `start` on ends: past the "]]" that closes its "[[", counting the "[[" and "]]" between;
 * none where a blank line or the end comes first. One pass, the brackets matched on a stack: a scan from each link
 * went to its paragraph's end again from every unclosed one. A link's "[[" is its own, as a scan from it read it,
 * even after a "[" ("[[[File:").
 */
function fileLinkEnds(s: string, start: number): Map<number, number> {
  const ends = new Map<number, number>();
  const opened: number[] = [];
  let i = start;
  while (i < s.length) {
    if (s.startsWith("[[", i) && !s.startsWith(FILE_LINK, i + 1)) {
      opened.push(i);
      i += 2;
    } else if (s.startsWith("]]", i)) {
      const o = opened.pop();
      i += 2;
      if (o !== undefined && s.startsWith(FILE_LINK, o)) ends.set(o, i);
    } else {
      if (s.startsWith("\n\n", i)) opened.length = 0;
      i++;
    }
  }
  return ends;
}
