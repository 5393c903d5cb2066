/**
 * TeX (the content of <math> and {{tmath}}) → readable plain text, so a sentence keeps its
 * formula: "where <math>A</math> is the albedo" → "where A is the albedo", and
 * "\frac{1329\times10^{-H/5}}{D}" → "(1329 × 10^(−H/5))/D". Symbols become their Unicode
 * characters, fractions a/b, scripts ² ₙ where Unicode has them and ^(…) _(…) where not.
 * Unknown commands keep their name: never a formula dropped for one command we do not know.
 */
import { chemToText } from "./chem";
import { toSubscript, toSuperscript } from "./scripts";
import {
  ACCENTS,
  BIG_OPERATORS,
  BINARY,
  DOUBLE_STRUCK,
  DROP_ARGUMENT,
  DROPPED,
  FUNCTIONS,
  GREEK,
  NEGATED,
  RELATIONS,
  SHOW_ARGUMENT,
  SPACES,
  SYMBOLS,
  TEXT_ARGUMENT,
} from "./tex-symbols";

/** Marks the end of a function name or fraction; becomes a space only before a letter or digit. */
const AFTER_TERM = "\u0001";
/** Marks the start of a function name; becomes a space only after a letter, digit or bracket ("ab sin C"). */
const BEFORE_TERM = "\u0003";
/** Marks a comma or semicolon; becomes a space unless it separates digits ("332,946"). */
const AFTER_PUNCTUATION = "\u0002";

/** After these (or nothing) a "+" or "−" is a sign, not an operation between two terms. */
const NO_OPERAND = new Set([..."([{⟨,;=<>:≤≥≠→←↔⇒⇐⇔∈∉⊂⊃⊆⊇≈∼≡∣+−×·÷±∓|^_", AFTER_PUNCTUATION, BEFORE_TERM]);

/** The last character of s that is not a space; "" if none. */
function lastVisible(s: string): string {
  let i = s.length - 1;
  while (i >= 0 && /\s/.test(s[i]!)) i--;
  return i < 0 ? "" : s[i]!;
}

const withoutEndMark = (s: string) => (s.endsWith(AFTER_TERM) ? s.slice(0, -1) : s);

type Token = { command: string } | { char: string };

function tokenize(tex: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < tex.length; ) {
    const c = tex[i]!;
    if (c === "\\") {
      const name = /^[a-zA-Z]+/.exec(tex.slice(i + 1))?.[0];
      if (name) {
        tokens.push({ command: name });
        i += 1 + name.length;
      } else {
        tokens.push({ command: tex[i + 1] ?? " " });
        i += 2;
      }
    } else if (/\s/.test(c)) {
      tokens.push({ char: " " });
      while (i < tex.length && /\s/.test(tex[i]!)) i++;
    } else {
      const cp = String.fromCodePoint(tex.codePointAt(i)!);
      tokens.push({ char: cp });
      i += cp.length;
    }
  }
  return tokens;
}

/**
 * Renders like TeX spaces a formula: the source's spaces are ignored (outside \text), and
 * relations and binary operators get a space either side.
 */
class Renderer {
  private at = 0;
  /** In \text{…}: spaces are kept. */
  private textMode = false;
  /** What the current sequence has rendered so far, to tell "a − b" from "−b". */
  private before = "";

  constructor(private readonly tokens: Token[]) {}

  /** The whole formula; a stray closing brace is skipped. */
  document(): string {
    let out = "";
    while (this.at < this.tokens.length) {
      out += this.sequence();
      this.at++;
    }
    return out;
  }

  /** Everything up to the closing brace of the current group (or the end). */
  private sequence(): string {
    let out = "";
    let numerator: string | null = null;
    let binomial = false;
    while (this.at < this.tokens.length) {
      const t = this.tokens[this.at]!;
      if ("char" in t && t.char === "}") break;
      if ("command" in t && (t.command === "over" || t.command === "choose")) {
        this.at++;
        numerator = out;
        binomial = t.command === "choose";
        out = "";
        continue;
      }
      this.before = out;
      out += this.atomWithScripts();
    }
    if (numerator === null) return out;
    return binomial ? `C(${numerator.trim()}, ${out.trim()})` : fraction(numerator, out);
  }

  private atomWithScripts(): string {
    let out = this.atom();
    for (;;) {
      const c = this.peekChar();
      if (c === "^" || c === "_") {
        this.at++;
        const script = c === "^" ? superscript(this.argument().trim()) : subscript(this.argument().trim());
        // "\log_2 x": the script belongs to the name, before the space that follows it.
        const spaced = out.endsWith(AFTER_TERM) || script.endsWith(AFTER_TERM);
        out = withoutEndMark(out) + withoutEndMark(script) + (spaced ? AFTER_TERM : "");
      } else if (c === "'") {
        this.at++;
        out += "′";
      } else return out;
    }
  }

  /** One argument: a {group}, or a single token. Spaces before it are skipped. */
  private argument(): string {
    while (this.peekChar() === " ") this.at++;
    if (this.at >= this.tokens.length) return "";
    if (this.peekChar() === "{") return this.group();
    return this.atom();
  }

  /** An argument whose spaces are kept, as in \text{if } x. */
  private textArgument(): string {
    const saved = this.textMode;
    this.textMode = true;
    const text = this.argument();
    this.textMode = saved;
    return text;
  }

  /** An optional [argument], as for \sqrt[3]{x}. */
  private optional(): string | null {
    while (this.peekChar() === " ") this.at++;
    if (this.peekChar() !== "[") return null;
    let depth = 0;
    const start = ++this.at;
    while (this.at < this.tokens.length) {
      const c = this.peekChar();
      if (c === "{") depth++;
      else if (c === "}") depth--;
      else if (c === "]" && depth === 0) break;
      this.at++;
    }
    const inner = new Renderer(this.tokens.slice(start, this.at)).document();
    this.at++;
    return inner;
  }

  /** An argument as it was written, for notations of their own (\ce{H2O}). */
  private rawArgument(): string {
    while (this.peekChar() === " ") this.at++;
    if (this.peekChar() !== "{") return this.atom();
    let depth = 0;
    let raw = "";
    for (; this.at < this.tokens.length; this.at++) {
      const t = this.tokens[this.at]!;
      if ("char" in t) {
        if (t.char === "{" && depth++ === 0) continue;
        if (t.char === "}" && --depth === 0) break;
        raw += t.char;
      } else raw += `\\${t.command}`;
    }
    this.at++;
    return raw;
  }

  private group(): string {
    this.at++; // {
    const inner = this.sequence();
    this.at++; // }
    return inner;
  }

  private peekChar(): string | undefined {
    const t = this.tokens[this.at];
    return t && "char" in t ? t.char : undefined;
  }

  private binary(op: string): string {
    const last = lastVisible(this.before);
    return !last || NO_OPERAND.has(last) ? op : ` ${op} `;
  }

  private atom(): string {
    const t = this.tokens[this.at++];
    if (!t) return "";
    if ("command" in t) return this.command(t.command);
    switch (t.char) {
      case " ":
        return this.textMode ? " " : "";
      case "{":
        this.at--;
        return this.group();
      case "}":
        return "";
      case "-":
        return this.binary("−");
      case "+":
        return this.binary("+");
      case "=":
      case "<":
      case ">":
      case ":":
        return this.textMode ? t.char : ` ${t.char} `;
      case ",":
      case ";":
        // "1, 2" keeps its space; "332,946" may be a grouped number.
        return this.peekChar() === " " ? `${t.char} ` : t.char + AFTER_PUNCTUATION;
      case "&":
      case "~":
        return " ";
      case "^":
        return superscript(this.argument().trim());
      case "_":
        return subscript(this.argument().trim());
      default:
        return t.char;
    }
  }

  private command(name: string): string {
    if (name in GREEK) return GREEK[name]!;
    if (name in BINARY) return this.binary(BINARY[name]!);
    if (name in RELATIONS) return ` ${RELATIONS[name]} `;
    if (name in SYMBOLS) return SYMBOLS[name]!;
    if (FUNCTIONS.has(name)) return BEFORE_TERM + name + AFTER_TERM;
    if (name in BIG_OPERATORS) return BEFORE_TERM + BIG_OPERATORS[name]! + AFTER_TERM;
    if (SPACES.has(name)) return " ";
    if (name === "!" || name === "/") return "";
    if (name === "\\" || name === "cr" || name === "newline") return "; ";
    if (name === "|") return "‖";
    if (name === "colon") return `:${AFTER_PUNCTUATION}`;
    if (DROPPED.has(name)) {
      // "\left." is an invisible delimiter.
      while (this.peekChar() === " ") this.at++;
      if (this.peekChar() === ".") this.at++;
      return "";
    }
    if (SHOW_ARGUMENT.has(name)) return this.argument();
    if (TEXT_ARGUMENT.has(name)) return this.textArgument();
    if (name === "operatorname") return BEFORE_TERM + this.argument() + AFTER_TERM;
    if (DROP_ARGUMENT.has(name)) {
      this.argument();
      // \begin{array}{cc}: the column layout is not text either.
      if (name === "begin" && this.peekChar() === "{") this.argument();
      return "";
    }
    if (name === "textcolor") {
      this.argument();
      return this.argument();
    }
    if (name === "frac" || name === "tfrac" || name === "dfrac" || name === "cfrac") {
      const numerator = this.argument();
      return fraction(numerator, this.argument());
    }
    if (name === "binom" || name === "tbinom" || name === "dbinom") {
      const n = this.argument().trim();
      return `C(${n}, ${this.argument().trim()})`;
    }
    if (name === "sqrt") {
      const degree = this.optional();
      const radicand = this.argument().trim();
      const root = `√${atomic(radicand) ? radicand : `(${radicand})`}`;
      return degree ? (toSuperscript(degree) ?? degree.trim()) + root : root;
    }
    if (name in ACCENTS) return accent(this.argument().trim(), ACCENTS[name]!);
    if (name === "mathbb") return [...this.argument()].map((c) => DOUBLE_STRUCK[c] ?? c).join("");
    if (name === "stackrel" || name === "overset" || name === "underset") {
      this.argument();
      return this.argument();
    }
    if (name === "xrightarrow" || name === "xleftarrow") {
      this.optional();
      this.argument();
      return name === "xrightarrow" ? " → " : " ← ";
    }
    if (name === "ce") return chemToText(this.rawArgument()) + AFTER_TERM;
    if (name === "pmod") return ` (mod ${this.argument().trim()})`;
    if (name === "not") {
      const next = this.argument().trim();
      return ` ${NEGATED[next] ?? `${next}\u0338`} `;
    }
    // An escaped character (\{ \% \$ \# \& \_) is itself; an unknown command keeps its name.
    return name;
  }
}

/** True when s reads as one term without brackets: "2", "x", "αβ", "(a+b)", "x²". */
function atomic(s: string): boolean {
  const t = s.trim();
  if (/^[\p{L}\p{N}\p{M}.′⁺⁻₊₋]+$/u.test(t)) return true;
  return /^\([^()]*\)$/.test(t) || /^\[[^[\]]*\]$/.test(t);
}

/** A denominator that needs no brackets: a number, one letter with its marks and scripts ("x²"), a differential ("dx"). */
const SIMPLE_DENOMINATOR = /^(?:\d+(?:\.\d+)?|[d∂]?\p{L}[\p{M}′⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿⁱ₀-₉₊₋ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ]*)$/u;

/** "a/b"; "(a + 1)/(2b)" where a side is more than one term ("m/3M" would read as (m/3)M). */
export function fractionText(numerator: string, denominator: string): string {
  return withoutEndMark(fraction(numerator, denominator));
}

function fraction(numerator: string, denominator: string): string {
  const n = numerator.trim();
  const d = denominator.trim();
  const bracketed = (s: string) => /^\([^()]*\)$/.test(s);
  const top = atomic(n) ? n : `(${n})`;
  const bottom = SIMPLE_DENOMINATOR.test(d) || bracketed(d) ? d : `(${d})`;
  return `${top}/${bottom}${AFTER_TERM}`;
}

function superscript(s: string): string {
  if (s === "∘" || s === "°") return "°";
  if (/^[′″*∗†‡]+$/.test(s)) return s.replace("∗", "*");
  const raised = toSuperscript(s);
  if (raised) return raised;
  return [...s].length === 1 ? `^${s}${AFTER_TERM}` : `^(${s})`;
}

function subscript(s: string): string {
  const lowered = toSubscript(s);
  if (lowered) return lowered;
  // "F_B v_B", not "F_Bv_B".
  return [...s].length === 1 ? `_${s}${AFTER_TERM}` : `_(${s})`;
}

/** x̄, p⃗; composed where Unicode has the letter with its accent (ᾱ), as MediaWiki stores text. */
function accent(s: string, mark: string): string {
  const chars = [...s];
  const marked = chars.length <= 1 || mark === "\u0305" ? chars.map((c) => c + mark).join("") : s + mark;
  return marked.normalize("NFC");
}

const DIGIT_GROUPS = new RegExp(`(\\d,)${AFTER_PUNCTUATION}(?=\\d)`, "g");
const WORD_BEFORE_TERM = new RegExp(`([\\p{L}\\p{N}\\p{M})\\]′⁰¹²³⁴⁵⁶⁷⁸⁹])${BEFORE_TERM}`, "gu");
const TERM_BEFORE_WORD = new RegExp(`${AFTER_TERM}(?=\\s*[\\p{L}\\p{N}])`, "gu");

export function texToText(tex: string): string {
  let text: string;
  try {
    text = new Renderer(tokenize(tex)).document();
  } catch {
    // Nesting too deep for the stack: the formula's words and symbols, unformatted.
    text = tex.replace(/\\[a-zA-Z]+|[{}\\]/g, " ");
  }
  return text
    .replace(TERM_BEFORE_WORD, " ")
    .replaceAll(AFTER_TERM, "")
    .replace(WORD_BEFORE_TERM, "$1 ")
    .replaceAll(BEFORE_TERM, "")
    .replace(DIGIT_GROUPS, "$1")
    .replaceAll(AFTER_PUNCTUATION, " ")
    .replace(/\s+/g, " ")
    .replace(/([([{⟨]) /g, "$1")
    .replace(/ ([)\]}⟩,;.])/g, "$1")
    .replace(/^[\s;]+|[\s;]+$/g, "");
}
