/**
 * Lists kept where they stand in the text. wtf_wikipedia takes the list lines out of a
 * paragraph and puts them after its prose, so a definition term (";Animals") followed by
 * its text on plain lines ends up after that text, and a list inside a paragraph after the
 * sentences that follow it. A blank line between a run of list lines and the prose next to
 * it makes each its own paragraph, in order. Definition lines "; term : text" become
 * "; term: text", so the term reads as the label of its text.
 */

const LIST_LINE = /^[*#:;]/;
const DEFINITION_LINE = /^([*#:;]*;)(.*)$/;
const TABLE_START = /^\s*\{\|/;
const TABLE_END = /^\s*\|\}/;

export function separateLists(wikitext: string): string {
  const lines = wikitext.split("\n");
  const out: string[] = [];
  let templateDepth = 0;
  let tableDepth = 0;
  let previous: "list" | "prose" | "blank" = "blank";
  for (const line of lines) {
    // Inside a template or a table a blank line would change what wtf parses.
    const nested = templateDepth > 0 || tableDepth > 0;
    if (!nested) {
      const kind = !line.trim() ? "blank" : LIST_LINE.test(line) ? "list" : "prose";
      if (kind !== "blank" && previous !== "blank" && kind !== previous) out.push("");
      previous = kind;
      out.push(kind === "list" ? labelDefinition(line) : line);
    } else out.push(line);
    templateDepth = Math.max(0, templateDepth + count(line, "{{") - count(line, "}}"));
    if (TABLE_START.test(line)) tableDepth++;
    else if (TABLE_END.test(line)) tableDepth = Math.max(0, tableDepth - 1);
    if (templateDepth > 0 || tableDepth > 0) previous = "blank";
  }
  return out.join("\n");
}

function count(s: string, token: string): number {
  let n = 0;
  for (let at = s.indexOf(token); at >= 0; at = s.indexOf(token, at + token.length)) n++;
  return n;
}

/** "; term : text" → "; term: text". The term ends at the first colon outside links, templates and tags, as in MediaWiki. */
function labelDefinition(line: string): string {
  const m = DEFINITION_LINE.exec(line);
  if (!m) return line;
  const [, marker, rest] = m as unknown as [string, string, string];
  let links = 0;
  let templates = 0;
  let inTag = false;
  for (let i = 0; i < rest.length; i++) {
    const pair = rest.slice(i, i + 2);
    if (pair === "[[") links++;
    else if (pair === "]]") links = Math.max(0, links - 1);
    else if (pair === "{{") templates++;
    else if (pair === "}}") templates = Math.max(0, templates - 1);
    const c = rest[i];
    if (c === "<") inTag = true;
    else if (c === ">") inTag = false;
    else if (c === ":" && !links && !templates && !inTag && !rest.startsWith("//", i + 1)) {
      const term = rest.slice(0, i).trim();
      const text = rest.slice(i + 1).trim();
      return term && text ? `${marker} ${term}: ${text}` : line;
    }
    if (pair === "[[" || pair === "]]" || pair === "{{" || pair === "}}") i++;
  }
  return line;
}
