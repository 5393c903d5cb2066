/**
 * Templates taught to wtf_wikipedia, and a guard around all of its template handlers.
 *
 * wtf drops unknown templates, which is right for infoboxes and citations but loses words
 * for the ones below. Its handlers also build text by interpolating parameters, so a
 * missing one renders as "undefined", a number it cannot parse as "NaN": every handler is
 * wrapped so that such a rendering is replaced by a fallback (the name a flag template was
 * given) or, like an unknown template, by nothing.
 */
import wtf from "wtf_wikipedia";
import { hasArtifact } from "./artifacts";
import { NUMBER_TEMPLATES, type Parse, type TemplateFn } from "./numbers";

/** wtf's registry: a handler, the index of the parameter to show, fixed text, or {props, out}. */
type Registry = Record<string, TemplateFn | number | string | string[] | { props: string[]; out: string }>;

/** Interlanguage-link templates: the first parameter is the text shown. */
const FIRST_PARAMETER = [
  "仮リンク",
  "нп",
  "не перекладено",
  "ill",
  "interlanguage link",
  "iw",
  "comment",
  "рус",
  "abbr",
];

const firstParameter = (body: string, parse: Parse): string => {
  const { value } = parse(body, ["value"]);
  return typeof value === "string" ? value : "";
};

/** What to show when wtf's handler fails: flags of a country wtf does not know show its name. */
const FALLBACKS: Record<string, (body: string, parse: Parse) => string> = {
  flag: firstParameter,
  flagcountry: firstParameter,
  flagcu: firstParameter,
  flagu: firstParameter,
};

/** wtf's handlers sometimes return a number, or undefined; the text of the sentence needs a string. */
function guarded(name: string, handler: TemplateFn): TemplateFn {
  return (body, list, parse, ...rest: unknown[]) => {
    // Some of wtf's handlers read the document, passed after the parser.
    const out: unknown = (handler as (...args: unknown[]) => unknown)(body, list, parse, ...rest);
    const text = typeof out === "number" ? String(out) : out;
    if (typeof text === "string" && !hasArtifact(text, body)) return text;
    return FALLBACKS[name]?.(body, parse) ?? "";
  };
}

let installed = false;

export function installTemplates(): void {
  if (installed) return;
  installed = true;
  wtf.extend((_models: unknown, templates: Registry) => {
    for (const name of FIRST_PARAMETER) templates[name] = 0;
    Object.assign(templates, NUMBER_TEMPLATES);
    for (const [name, entry] of Object.entries(templates)) {
      if (typeof entry === "function") templates[name] = guarded(name, entry);
      else if (entry && typeof entry === "object" && !Array.isArray(entry)) {
        // {props, out}: wtf returns parameter `out` as the text, undefined when it is absent ("<sup></sup>").
        const { props, out } = entry;
        templates[name] = (body, list, parse) => {
          const params = parse(body, props);
          list.push(params);
          const value = params[out];
          return typeof value === "string" ? value : "";
        };
      }
    }
  });
}
