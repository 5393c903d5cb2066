/**
 * Markup handled before wtf_wikipedia parses the page: formulas (<math>, <chem>) become
 * plain text, as wtf would drop them and leave a hole in the sentence; extension tags
 * whose content is not prose (galleries, code, maps...) and references, which wtf would
 * otherwise leave as stray punctuation, are removed.
 */
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

const PAIRED = new RegExp(`<(${DROPPED_TAGS.join("|")})\\b[^>]*?(?<!/)>[\\s\\S]*?</\\1\\s*>`, "gi");
const SELF_CLOSING = new RegExp(`<(${DROPPED_TAGS.join("|")}|templatestyles)\\b[^>]*/>`, "gi");
/** An opening tag never closed (truncated revisions, typos) would swallow nothing: drop the tag alone. */
const UNPAIRED = new RegExp(`</?(${DROPPED_TAGS.join("|")}|templatestyles)\\b[^>]*>`, "gi");
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;
const NOWIKI = /<nowiki\s*>([\s\S]*?)<\/nowiki\s*>|<nowiki\s*\/>/gi;
const MAGIC_WORDS = /__[A-ZÀ-ÿ\p{Lu}]+__/gu;
const MATH = /<math\b[^>]*?(?<!\/)>([\s\S]*?)<\/math\s*>/gi;
const CHEM = /<(chem|ce)\b[^>]*?(?<!\/)>([\s\S]*?)<\/\1\s*>/gi;
/** Formula tags never closed, or empty ones: dropped alone. */
const FORMULA_TAG = /<\/?(math|chem|ce)\b[^>]*>/gi;

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

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

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

export function stripMarkup(wikitext: string, normalizeNamespaces: (s: string) => string = (s) => s): string {
  let s = normalizeNamespaces(wikitext.replace(COMMENT, ""));
  s = s.replace(MATH, (_m, tex: string) => texToText(tex).replace(WIKI_SYNTAX_OR_AMPERSAND, asEntity));
  s = s.replace(CHEM, (_m, _tag, formula: string) => chemToText(formula).replace(WIKI_SYNTAX_OR_AMPERSAND, asEntity));
  s = s.replace(FORMULA_TAG, "");
  s = s.replace(PAIRED, "");
  s = s.replace(SELF_CLOSING, "");
  s = s.replace(UNPAIRED, "");
  // nowiki content is literal text; escape what wtf would read as markup.
  s = s.replace(NOWIKI, (_m, inner: string | undefined) => (inner ?? "").replace(WIKI_SYNTAX, asEntity));
  s = s.replace(MAGIC_WORDS, "");
  s = dropFileLinks(s);
  return s.replaceAll(IDEOGRAPHIC_STOP, STOP_PLACEHOLDER);
}

/**
 * Removes "[[File:…]]" links with their captions, however deeply the caption nests links
 * and templates. An unclosed one (broken wikitext) is dropped to the end of its line.
 */
function dropFileLinks(s: string): string {
  const open = "[[File:";
  let at = s.indexOf(open);
  if (at < 0) return s;
  let out = "";
  let from = 0;
  while (at >= 0) {
    out += s.slice(from, at);
    let depth = 0;
    let i = at;
    let end = -1;
    while (i < s.length) {
      if (s.startsWith("[[", i)) {
        depth++;
        i += 2;
      } else if (s.startsWith("]]", i)) {
        depth--;
        i += 2;
        if (depth === 0) {
          end = i;
          break;
        }
      } else if (s.startsWith("\n\n", i)) {
        break;
      } else i++;
    }
    if (end < 0) {
      const eol = s.indexOf("\n", at);
      end = eol < 0 ? s.length : eol;
    }
    from = end;
    at = s.indexOf(open, from);
  }
  return out + s.slice(from);
}
