/**
 * Templates that write numbers, units and formulas, rendered as plain text. wtf_wikipedia's
 * own handlers for these interpolate parameters that may be missing ("1/undefined" for
 * {{frac|2}}), reformat numbers they cannot parse ("NaN" for {{formatnum:299 792 458}}) or
 * drop them ({{e}}, {{chem}}), which takes the value out of the sentence.
 */
import { decodeHTML } from "entities";
import { toSubscript, toSuperscript } from "./scripts";
import { fractionText, texToText } from "./tex";
import { ownTable } from "./tex-symbols";

/** wtf_wikipedia's template parameter parser: named and positional values as plain text. */
export type Parse = (body: string, order?: string[]) => Record<string, string | string[] | undefined>;
export type TemplateFn = (body: string, list: unknown[], parse: Parse) => string;

const text = (value: string | string[] | undefined): string => (typeof value === "string" ? value.trim() : "");
/** A parameter's text, "" when absent (looked up by a name held in a variable: the parameters are an index signature). */
const arg = (params: ReturnType<Parse>, name: string): string => text(params[name]);
const positional = ({ list }: Record<string, string | string[] | undefined>): string[] =>
  Array.isArray(list) ? list.map((v) => v.trim()) : [];

/** "²³", or "^(…)" when Unicode has no superscript for some character. */
function raised(s: string): string {
  const plain = decodeHTML(s).trim();
  return toSuperscript(plain) ?? `^${[...plain].length === 1 ? plain : `(${plain})`}`;
}

/** {{frac|2}} → "1/2", {{frac|3|4}} → "3/4", {{frac|1|1|2}} → "1 1/2", {{sfrac|3n + 1|2}} → "(3n + 1)/2". */
const fraction: TemplateFn = (body, _list, parse) => {
  const p = parse(body, ["a", "b", "c"]);
  const [a, b, c] = [arg(p, "a"), arg(p, "b"), arg(p, "c")];
  if (c) return `${a} ${fractionText(b, c)}`.trim();
  if (b) return fractionText(a, b);
  return a ? `1/${a}` : "/";
};

/** {{formatnum:299 792 458}}: the number as written; MediaWiki's grouping depends on the wiki's language. */
const formatnum: TemplateFn = (body, _list, parse) => arg(parse(body.replace(":", "|"), ["number"]), "number");

/** {{e|-7}} → "×10⁻⁷". */
const exponent: TemplateFn = (body, _list, parse) => {
  const e = arg(parse(body, ["exponent"]), "exponent");
  return e ? `×10${raised(e)}` : "×10";
};

/** {{val|6.02214076|e=23|u=mol-1}}, {{val|1.2|0.3}}, {{val|2.79|(23)|u=μN}}. */
const val: TemplateFn = (body, _list, parse) => {
  const p = parse(body, ["number", "upper", "lower"]);
  const [number, upper, lower] = [arg(p, "number"), arg(p, "upper"), arg(p, "lower")];
  let s = arg(p, "p") + number;
  if (upper.startsWith("(")) s += upper;
  else if (upper && lower) s += ` +${upper.replace(/^\+/, "")} −${lower.replace(/^[-−]/, "")}`;
  else if (upper) s += ` ± ${upper}`;
  const e = arg(p, "e");
  if (e) s += number ? `×10${raised(e)}` : `10${raised(e)}`;
  s += arg(p, "end");
  const unit = arg(p, "u") || arg(p, "ul");
  const per = arg(p, "up") || arg(p, "upl");
  if (unit) s += ` ${unit}`;
  if (per) s += `/${per}`;
  return s + arg(p, "s");
};

/** Words of {{convert}} that join the two ends of a range. */
const RANGE = ownTable({
  "-": "–",
  "–": "–",
  to: " to ",
  and: " and ",
  or: " or ",
  "to(-)": " to ",
  "and(-)": " and ",
  "+/-": " ± ",
  "±": " ± ",
  by: " × ",
  x: " × ",
  "×": " × ",
});

/** {{convert|5|mi|km}} → "5 mi"; {{convert|1|-|2|km}} → "1–2 km": the value as the author wrote it. */
const convert: TemplateFn = (body, _list, parse) => {
  const [value = "", second = "", third = "", fourth = ""] = positional(parse(body));
  const joint = RANGE[second];
  if (joint !== undefined && third) return `${value}${joint}${third} ${fourth}`.trim();
  return `${value} ${second}`.trim();
};

/** {{chem|H|2|O}} → "H₂O": elements and counts alternate. */
const chem: TemplateFn = (body, _list, parse) =>
  positional(parse(body))
    .map((part, i) => (i % 2 === 1 ? (toSubscript(decodeHTML(part)) ?? part) : part))
    .join("");

/** <sup>/{{sup}} and <sub>/{{sub}} (wtf turns the tags into the templates): "km²", "H₂O"; empty ones vanish. */
const sup: TemplateFn = (body, _list, parse) => {
  const t = arg(parse(body, ["text"]), "text");
  return toSuperscript(decodeHTML(t)) ?? t;
};
const sub: TemplateFn = (body, _list, parse) => {
  const t = arg(parse(body, ["text"]), "text");
  return toSubscript(decodeHTML(t)) ?? t;
};

/** {{math|…}}, {{mvar|x}}: wikitext formulas. wtf's own {{math}} makes a paragraph of it, splitting the sentence. */
const formula: TemplateFn = (body, _list, parse) => arg(parse(body, ["formula"]), "formula");

/** {{tmath|\frac{1}{2}}}: TeX, read as written (the parameter parser would take its markup for wikitext). */
const tmath: TemplateFn = (body) =>
  texToText(
    body
      .replace(/^\{\{\s*[^|]*\|\s*(?:1\s*=)?/, "")
      .replace(/\}\}$/, "")
      .replace(/\{\{=\}\}/g, "="),
  );

export const NUMBER_TEMPLATES: Record<string, TemplateFn> = {
  frac: fraction,
  sfrac: fraction,
  fraction,
  fract: fraction,
  formatnum,
  e: exponent,
  val,
  convert,
  cvt: convert,
  chem,
  sup,
  sub,
  math: formula,
  mvar: formula,
  bigmath: formula,
  tmath,
  pi: () => "π",
};
