/**
 * Lists kept where they stand in the text, and definition terms kept with their text.
 *
 * wtf_wikipedia takes the list lines out of a paragraph and puts them after its prose, so
 * a list inside a paragraph ends up after the sentences that follow it, and a definition
 * term (";Animals") written above plain text after that text. Here, before wtf parses:
 * - a blank line between a run of list lines and the prose next to it makes each its own
 *   paragraph, in order;
 * - "; term : text" and ";term" followed by ":text" become one line, "; term: text";
 * - a term alone above prose (a pseudo-heading) opens that prose's paragraph, between
 *   TERM_START and TERM_END, so that no chunk boundary falls between them.
 */

export const TERM_START = "\uE001";
export const TERM_END = "\uE002";

const LIST_LINE = /^[*#:;]/;
const DEFINITION_LINE = /^([*#:;]*;)(.*)$/;
/** The definition of the term above: one colon, not a deeper indent. */
const DEFINITION_TEXT = /^:(?![*#:;])\s*(.*)$/;
const TABLE_START = /^[:*#;]*\s*\{\|/;
const TABLE_END = /^\s*\|\}/;

type Kind = "list" | "prose" | "blank" | "nested";

export function separateLists(wikitext: string): string {
  const lines = wikitext.split("\n");
  const kinds = classify(lines);
  const out: string[] = [];
  let previous = "blank" as Kind;
  const push = (line: string, kind: Kind) => {
    if (kind !== "nested" && kind !== "blank" && previous !== "blank" && previous !== "nested" && kind !== previous)
      out.push("");
    out.push(line);
    previous = kind;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const kind = kinds[i]!;
    if (kind !== "list") {
      push(line, kind);
      continue;
    }
    // A term alone on its line: ";Term", not "; term : text".
    const term = /^;([^:;*#].*)$/.exec(line)?.[1]?.trim();
    if (term && definitionColon(term) < 0) {
      const definition = DEFINITION_TEXT.exec(lines[i + 1] ?? "");
      if (definition && kinds[i + 1] === "list") {
        push(`; ${term}: ${definition[1]}`, "list");
        i++;
        continue;
      }
      let next = i + 1;
      while (kinds[next] === "blank") next++;
      if (kinds[next] === "prose") {
        // The term opens the paragraph of the prose it heads.
        if (previous !== "blank" && previous !== "nested") out.push("");
        out.push(TERM_START + term + TERM_END);
        previous = "prose";
        i = next - 1;
        continue;
      }
    }
    push(labelDefinition(line), "list");
  }
  return out.join("\n");
}

/** Each line's kind; lines inside a template or table are "nested": a blank line there would change what wtf parses. */
function classify(lines: string[]): Kind[] {
  let templateDepth = 0;
  let tableDepth = 0;
  return lines.map((line) => {
    const kind: Kind =
      templateDepth > 0 || tableDepth > 0 ? "nested" : !line.trim() ? "blank" : LIST_LINE.test(line) ? "list" : "prose";
    templateDepth = Math.max(0, templateDepth + count(line, "{{") - count(line, "}}"));
    if (TABLE_START.test(line)) tableDepth++;
    else if (TABLE_END.test(line)) tableDepth = Math.max(0, tableDepth - 1);
    // A line that opens a template or table belongs to it.
    return kind !== "blank" && (templateDepth > 0 || tableDepth > 0) ? "nested" : kind;
  });
}

function count(s: string, token: string): number {
  let n = 0;
  for (let at = s.indexOf(token); at >= 0; at = s.indexOf(token, at + token.length)) n++;
  return n;
}

/** "; term : text" → "; term: text". */
function labelDefinition(line: string): string {
  const m = DEFINITION_LINE.exec(line);
  if (!m) return line;
  const [, marker, rest] = m as unknown as [string, string, string];
  const colon = definitionColon(rest);
  if (colon < 0) return line;
  const term = rest.slice(0, colon).trim();
  const text = rest.slice(colon + 1).trim();
  return term && text ? `${marker} ${term}: ${text}` : line;
}

/** Where the term of a definition line ends: the first colon outside links, templates and tags, as in MediaWiki; -1 if none. */
function definitionColon(rest: string): number {
  let links = 0;
  let templates = 0;
  let inTag = false;
  for (let i = 0; i < rest.length; i++) {
    const pair = rest.slice(i, i + 2);
    if (pair === "[[" || pair === "]]" || pair === "{{" || pair === "}}") {
      if (pair === "[[") links++;
      else if (pair === "]]") links = Math.max(0, links - 1);
      else if (pair === "{{") templates++;
      else templates = Math.max(0, templates - 1);
      i++;
      continue;
    }
    const c = rest[i];
    if (c === "<") inTag = true;
    else if (c === ">") inTag = false;
    else if (c === ":" && !links && !templates && !inTag && !rest.startsWith("//", i + 1)) return i;
  }
  return -1;
}
