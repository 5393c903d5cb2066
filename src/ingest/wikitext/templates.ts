/**
 * Templates whose text belongs in the prose, taught to wtf_wikipedia. It drops unknown
 * templates, which is right for infoboxes and citations but loses words for these.
 */
import wtf from "wtf_wikipedia";

type Parse = (body: string, keys?: string[]) => Record<string, string | undefined>;
type TemplateFn = (body: string, list: unknown[], parse: Parse) => string;

/** Interlanguage-link templates: the first parameter is the text shown. */
const FIRST_PARAMETER = ["仮リンク", "нп", "не перекладено", "ill", "interlanguage link", "iw", "comment", "рус", "abbr"];

let installed = false;

export function installTemplates(): void {
  if (installed) return;
  installed = true;
  wtf.extend((_models: unknown, templates: Record<string, number | TemplateFn>) => {
    for (const name of FIRST_PARAMETER) templates[name] = 0;
    // wtf renders {{math}} as a block of its own, which splits the sentence around it.
    templates.math = (body, _list, parse) => parse(body, ["formula"]).formula ?? "";
    templates.mvar = (body, _list, parse) => parse(body, ["formula"]).formula ?? "";
  });
}
