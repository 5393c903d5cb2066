/**
 * What TeX commands stand for in plain text: symbols, operators, font and layout commands.
 * Used by ./tex; names follow TeX and texvc (MediaWiki's math), aliases included.
 */

/** Greek letters. */
export const GREEK: Record<string, string> = {
  alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ϵ", varepsilon: "ε", zeta: "ζ", eta: "η",
  theta: "θ", vartheta: "ϑ", iota: "ι", kappa: "κ", varkappa: "ϰ", lambda: "λ", mu: "μ", nu: "ν",
  xi: "ξ", omicron: "ο", pi: "π", varpi: "ϖ", rho: "ρ", varrho: "ϱ", sigma: "σ", varsigma: "ς",
  tau: "τ", upsilon: "υ", phi: "ϕ", varphi: "φ", chi: "χ", psi: "ψ", omega: "ω",
  Gamma: "Γ", Delta: "Δ", Theta: "Θ", Lambda: "Λ", Xi: "Ξ", Pi: "Π", Sigma: "Σ", Upsilon: "Υ",
  Phi: "Φ", Psi: "Ψ", Omega: "Ω", digamma: "ϝ",
};

/** Binary operators: a space either side, unless nothing stands before them ("−1"). */
export const BINARY: Record<string, string> = {
  times: "×", cdot: "·", sdot: "·", div: "÷", pm: "±", plusmn: "±", mp: "∓", ast: "∗", star: "⋆", circ: "∘",
  bullet: "•", bull: "•", oplus: "⊕", ominus: "⊖", otimes: "⊗", odot: "⊙", cup: "∪", cap: "∩",
  setminus: "∖", wedge: "∧", land: "∧", and: "∧", vee: "∨", lor: "∨", or: "∨", sqcup: "⊔", sqcap: "⊓",
};

/** Relations and arrows: a space either side. */
export const RELATIONS: Record<string, string> = {
  leq: "≤", le: "≤", geq: "≥", ge: "≥", neq: "≠", ne: "≠", ll: "≪", gg: "≫", approx: "≈", sim: "∼",
  simeq: "≃", cong: "≅", equiv: "≡", propto: "∝", thicksim: "∼", doteq: "≐", prec: "≺", succ: "≻",
  in: "∈", isin: "∈", ni: "∋", notin: "∉", subset: "⊂", sub: "⊂", supset: "⊃",
  subseteq: "⊆", sube: "⊆", supseteq: "⊇", supe: "⊇", perp: "⊥", parallel: "∥", mid: "∣",
  models: "⊨", vdash: "⊢", dashv: "⊣", to: "→", rightarrow: "→", rarr: "→", leftarrow: "←",
  larr: "←", gets: "←", leftrightarrow: "↔", harr: "↔", Rightarrow: "⇒", Rarr: "⇒", Leftarrow: "⇐",
  Larr: "⇐", Leftrightarrow: "⇔", Harr: "⇔", implies: "⟹", iff: "⟺", mapsto: "↦",
  longrightarrow: "⟶", longleftarrow: "⟵", Longrightarrow: "⟹", longmapsto: "⟼", uparrow: "↑",
  uarr: "↑", downarrow: "↓", darr: "↓", hookrightarrow: "↪", rightleftharpoons: "⇌",
};

/** Sums and integrals: spaced from what stands either side, like function names. */
export const BIG_OPERATORS: Record<string, string> = {
  sum: "∑", prod: "∏", coprod: "∐", int: "∫", iint: "∬", iiint: "∭", oint: "∮", bigcup: "⋃", bigcap: "⋂",
  bigoplus: "⨁", bigotimes: "⨂", bigvee: "⋁", bigwedge: "⋀",
};

/** Symbols written as they are. */
export const SYMBOLS: Record<string, string> = {
  infty: "∞", infin: "∞", partial: "∂", part: "∂", empty: "∅", alef: "ℵ", alefsym: "ℵ", real: "ℜ",
  image: "ℑ", weierp: "℘", lang: "⟨", rang: "⟩", Complex: "ℂ", Reals: "ℝ", natnums: "ℕ", O: "∅", nabla: "∇", forall: "∀", exists: "∃", exist: "∃", nexists: "∄",
  neg: "¬", lnot: "¬", emptyset: "∅", varnothing: "∅", aleph: "ℵ", beth: "ℶ", hbar: "ℏ", ell: "ℓ",
  wp: "℘", Re: "ℜ", Im: "ℑ", angle: "∠", triangle: "△", Box: "□", square: "□", Diamond: "◇",
  bigstar: "★", prime: "′", degree: "°", ldots: "…", dots: "…", dotsc: "…", dotsb: "…", cdots: "⋯",
  vdots: "⋮", ddots: "⋱", langle: "⟨", rangle: "⟩", lfloor: "⌊", rfloor: "⌋", lceil: "⌈", rceil: "⌉", vert: "|", Vert: "‖",
  lbrace: "{", rbrace: "}", surd: "√", top: "⊤", bot: "⊥", dagger: "†", ddagger: "‡", S: "§",
  checkmark: "✓", clubsuit: "♣", diamondsuit: "♢", heartsuit: "♡", spadesuit: "♠", natural: "♮",
  flat: "♭", sharp: "♯", N: "ℕ", Z: "ℤ", Q: "ℚ", R: "ℝ", C: "ℂ", Alpha: "Α", Beta: "Β", Epsilon: "Ε",
  Zeta: "Ζ", Eta: "Η", Iota: "Ι", Kappa: "Κ", Mu: "Μ", Nu: "Ν", Omicron: "Ο", Rho: "Ρ", Tau: "Τ", Chi: "Χ",
};

/** Named functions, written upright and followed by a space before their argument. */
export const FUNCTIONS = new Set([
  "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "coth", "arcsin", "arccos", "arctan",
  "log", "ln", "lg", "exp", "lim", "liminf", "limsup", "max", "min", "sup", "inf", "det", "dim", "ker",
  "deg", "gcd", "arg", "hom", "Pr", "mod", "bmod",
]);

/** Commands whose one argument is shown as it is (fonts). */
export const SHOW_ARGUMENT = new Set([
  "mathbf", "mathrm", "mathit", "mathsf", "mathtt", "mathcal", "mathfrak", "mathscr", "mathnormal",
  "boldsymbol", "bold", "bm", "pmb", "mathop", "mathbin", "mathrel", "mathord", "underline", "underbrace",
  "overbrace", "boxed", "ensuremath",
]);

/** Commands whose argument is text: its spaces are kept. */
export const TEXT_ARGUMENT = new Set(["text", "textrm", "textit", "textbf", "textsf", "texttt", "textnormal", "mbox", "hbox", "fbox", "emph"]);

/** Commands dropped with their one argument. */
export const DROP_ARGUMENT = new Set(["label", "tag", "color", "hspace", "vspace", "phantom", "hphantom", "vphantom", "begin", "end"]);

/** Commands that only change size or style: dropped. */
export const DROPPED = new Set([
  "left", "right", "middle", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr",
  "Biggl", "Biggr", "displaystyle", "textstyle", "scriptstyle", "scriptscriptstyle", "limits", "nolimits",
  "rm", "bf", "it", "sf", "tt", "cal", "nonumber", "notag", "mathstrut", "strut", "relax", "Huge", "huge",
  "LARGE", "Large", "large", "small", "tiny", "normalsize",
]);

/** Spacing commands (\\, \\; \\quad…): one space. */
export const SPACES = new Set([",", ":", ";", " ", ">", "quad", "qquad", "enspace", "thinspace", "medspace", "thickspace"]);

/** Accents: the combining mark they put on their argument. */
export const ACCENTS: Record<string, string> = {
  bar: "\u0304", overline: "\u0305", hat: "\u0302", widehat: "\u0302", tilde: "\u0303", widetilde: "\u0303",
  vec: "\u20d7", overrightarrow: "\u20d7", dot: "\u0307", ddot: "\u0308", acute: "\u0301", grave: "\u0300",
  check: "\u030c", breve: "\u0306",
};

/** \\mathbb letters Unicode has in its basic plane. */
export const DOUBLE_STRUCK: Record<string, string> = { C: "ℂ", H: "ℍ", N: "ℕ", P: "ℙ", Q: "ℚ", R: "ℝ", Z: "ℤ" };

/** \\not before these: the negated symbol; before others, a combining stroke. */
export const NEGATED: Record<string, string> = { "=": "≠", "∈": "∉", "≡": "≢", "⊂": "⊄", "⊆": "⊈", "∃": "∄", "<": "≮", ">": "≯" };
